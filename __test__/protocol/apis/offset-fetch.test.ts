import { describe, expect, it } from 'vitest'
import { offsetFetchCodec as codec, type OffsetFetchRequest } from '../../../ts/protocol/apis/offset-fetch.js'
import { decode, encode, expectGolden, groupCodecSuite, hex } from './group-codec-suite.js'
import { offsetFetchSamples } from './group-samples.js'

describe('OffsetFetch', () => {
  groupCodecSuite(codec, offsetFetchSamples, 9)

  it('golden v1 and v2 requests (v2: null topics, all of them)', () => {
    expectGolden(
      codec,
      'request',
      1,
      hex(`
        0001 67     // groupId "g"
        00000001    // topics: 1
        0001 74     //   name "t"
        00000002    //   partitionIndexes: 2
        00000000    //     0
        00000001    //     1
      `),
      { groupId: 'g', topics: [{ name: 't', partitionIndexes: [0, 1] }], groups: [], requireStable: false },
    )
    expectGolden(
      codec,
      'request',
      2,
      hex(`
        0001 67     // groupId "g"
        ffffffff    // topics: null
      `),
      { groupId: 'g', topics: null, groups: [], requireStable: false },
    )
  })

  it('golden v5 response', () => {
    expectGolden(
      codec,
      'response',
      5,
      hex(`
        00000000            // throttleTimeMs
        00000001            // topics: 1
        0001 74             //   name "t"
        00000001            //   partitions: 1
        00000000            //     partitionIndex
        0000000000000064    //     committedOffset 100
        00000003            //     committedLeaderEpoch 3
        0000                //     metadata ""
        0000                //     errorCode
        0000                // errorCode
      `),
      {
        throttleTimeMs: 0,
        topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 100n, committedLeaderEpoch: 3, metadata: '', errorCode: 0 }] }],
        errorCode: 0,
        groups: [],
      },
    )
  })

  it('golden v8 and v9 requests (groups)', () => {
    expectGolden(
      codec,
      'request',
      8,
      hex(`
        02          // groups: 1 (+1)
        02 67       //   groupId "g"
        00          //   topics: null (all)
        00          //   tagged fields
        00          // requireStable
        00          // tagged fields
      `),
      { groupId: '', topics: [], groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: null }], requireStable: false },
    )
    expectGolden(
      codec,
      'request',
      9,
      hex(`
        02          // groups: 1 (+1)
        02 67       //   groupId "g"
        02 6d       //   memberId "m"
        00000005    //   memberEpoch 5
        02          //   topics: 1 (+1)
        02 74       //     name "t"
        02 00000000 //     partitionIndexes: [0]
        00          //     tagged fields
        00          //   tagged fields
        01          // requireStable
        00          // tagged fields
      `),
      {
        groupId: '',
        topics: [],
        groups: [{ groupId: 'g', memberId: 'm', memberEpoch: 5, topics: [{ name: 't', topicId: Buffer.alloc(16), partitionIndexes: [0] }] }],
        requireStable: true,
      },
    )
  })

  it('golden v8 response', () => {
    expectGolden(
      codec,
      'response',
      8,
      hex(`
        00000000            // throttleTimeMs
        02                  // groups: 1 (+1)
        02 67               //   groupId "g"
        02                  //   topics: 1 (+1)
        02 74               //     name "t"
        02                  //     partitions: 1 (+1)
        00000000            //       partitionIndex
        0000000000000064    //       committedOffset 100
        00000003            //       committedLeaderEpoch 3
        00                  //       metadata: null
        0000                //       errorCode
        00                  //       tagged fields
        00                  //     tagged fields
        0000                //   errorCode
        00                  //   tagged fields
        00                  // tagged fields
      `),
      {
        throttleTimeMs: 0,
        topics: [],
        errorCode: 0,
        groups: [
          {
            groupId: 'g',
            topics: [{ name: 't', topicId: Buffer.alloc(16), partitions: [{ partitionIndex: 0, committedOffset: 100n, committedLeaderEpoch: 3, metadata: null, errorCode: 0 }] }],
            errorCode: 0,
          },
        ],
      },
    )
  })

  it('a v1 topics array cannot be null', () => {
    expect(() => decode(codec, 'request', 1, hex('0001 67 ffffffff'))).toThrow(/non-nullable field topics was serialized as null/)
    const all: OffsetFetchRequest = { groupId: 'g', topics: null, groups: [], requireStable: false }
    expect(() => encode(codec, 'request', 1, all)).toThrow(/null topics/)
  })

  it('skips unknown tagged fields', () => {
    const bytes = hex(`
      02 02 67 00 01 00 00  // groups: "g", all topics, tag 0 (empty)
      00                    // requireStable
      01 03 01 55           // tag 3 (1 byte)
    `)
    expect(decode(codec, 'request', 8, bytes)).toStrictEqual({
      groupId: '',
      topics: [],
      groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: null }],
      requireStable: false,
    })
  })

  it('will not encode what a version cannot carry', () => {
    expect(() => encode(codec, 'request', 7, offsetFetchSamples.request(8))).toThrow(/groups/)
    expect(() => encode(codec, 'request', 8, offsetFetchSamples.request(7))).toThrow(/OffsetFetchRequest v8 cannot carry/)
    expect(() => encode(codec, 'request', 6, offsetFetchSamples.request(7))).toThrow(/requireStable/)
    expect(() => encode(codec, 'response', 7, offsetFetchSamples.response(8))).toThrow(/groups/)
    expect(() => encode(codec, 'response', 8, offsetFetchSamples.response(7))).toThrow(/OffsetFetchResponse v8 cannot carry/)
  })
})
