import { describe, expect, it } from 'vitest'
import { offsetCommitCodec as codec } from '../../../ts/protocol/apis/offset-commit.js'
import { decode, encode, expectGolden, groupCodecSuite, hex } from './group-codec-suite.js'
import { offsetCommitSamples } from './group-samples.js'

describe('OffsetCommit', () => {
  groupCodecSuite(codec, offsetCommitSamples, 8)

  it('golden v2 request and v3 response', () => {
    expectGolden(
      codec,
      'request',
      2,
      hex(`
        0001 67               // groupId "g"
        00000001              // generationIdOrMemberEpoch
        0001 6d               // memberId "m"
        ffffffffffffffff      // retentionTimeMs -1
        00000001              // topics: 1
        0001 74               //   name "t"
        00000001              //   partitions: 1
        00000000              //     partitionIndex
        0000000000000064      //     committedOffset 100
        ffff                  //     committedMetadata: null
      `),
      {
        groupId: 'g',
        generationIdOrMemberEpoch: 1,
        memberId: 'm',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [{ name: 't', topicId: Buffer.alloc(16), partitions: [{ partitionIndex: 0, committedOffset: 100n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      },
    )
    expectGolden(
      codec,
      'response',
      3,
      hex(`
        00000000      // throttleTimeMs
        00000001      // topics: 1
        0001 74       //   name "t"
        00000001      //   partitions: 1
        00000000      //     partitionIndex
        0000          //     errorCode
      `),
      { throttleTimeMs: 0, topics: [{ name: 't', topicId: Buffer.alloc(16), partitions: [{ partitionIndex: 0, errorCode: 0 }] }] },
    )
  })

  it('golden v8 request and v9 response', () => {
    expectGolden(
      codec,
      'request',
      8,
      hex(`
        02 67                 // groupId "g"
        00000001              // generationIdOrMemberEpoch
        02 6d                 // memberId "m"
        00                    // groupInstanceId: null
        02                    // topics: 1 (+1)
        02 74                 //   name "t"
        02                    //   partitions: 1 (+1)
        00000000              //     partitionIndex
        0000000000000064      //     committedOffset 100
        00000003              //     committedLeaderEpoch 3
        01                    //     committedMetadata ""
        00                    //     tagged fields
        00                    //   tagged fields
        00                    // tagged fields
      `),
      {
        groupId: 'g',
        generationIdOrMemberEpoch: 1,
        memberId: 'm',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [{ name: 't', topicId: Buffer.alloc(16), partitions: [{ partitionIndex: 0, committedOffset: 100n, committedLeaderEpoch: 3, committedMetadata: '' }] }],
      },
    )
    expectGolden(
      codec,
      'response',
      9,
      hex(`
        00000000      // throttleTimeMs
        02            // topics: 1 (+1)
        02 74         //   name "t"
        02            //   partitions: 1 (+1)
        00000000      //     partitionIndex
        0044          //     errorCode 68
        00            //     tagged fields
        00            //   tagged fields
        00            // tagged fields
      `),
      { throttleTimeMs: 0, topics: [{ name: 't', topicId: Buffer.alloc(16), partitions: [{ partitionIndex: 0, errorCode: 68 }] }] },
    )
  })

  it('skips unknown tagged fields', () => {
    const bytes = hex(`
      00000000                      // throttleTimeMs
      02 02 74                      // topics: 1, "t"
      02 00000001 0000 01 00 01 ee  //   partitions: 1, tag 0 (1 byte)
      00                            //   no tagged fields
      01 7f 00                      // tag 127 (empty)
    `)
    expect(decode(codec, 'response', 8, bytes)).toStrictEqual({
      throttleTimeMs: 0,
      topics: [{ name: 't', topicId: Buffer.alloc(16), partitions: [{ partitionIndex: 1, errorCode: 0 }] }],
    })
  })

  it('will not encode what a version cannot carry', () => {
    expect(() => encode(codec, 'request', 6, offsetCommitSamples.request(7))).toThrow(/groupInstanceId/)
  })
})
