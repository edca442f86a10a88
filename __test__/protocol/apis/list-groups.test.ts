import { describe, expect, it } from 'vitest'
import { listGroupsCodec as codec } from '../../../ts/protocol/apis/list-groups.js'
import { decode, encode, expectGolden, groupCodecSuite, hex } from './group-codec-suite.js'
import { listGroupsSamples } from './group-samples.js'

describe('ListGroups', () => {
  groupCodecSuite(codec, listGroupsSamples, 16)

  it('golden v0 request and response', () => {
    expectGolden(codec, 'request', 0, Buffer.alloc(0), { statesFilter: [], typesFilter: [] })
    expectGolden(
      codec,
      'response',
      0,
      hex(`
        0000                    // errorCode
        00000001                // groups: 1
        0001 67                 //   groupId "g"
        0008 636f6e73756d6572   //   protocolType "consumer"
      `),
      { throttleTimeMs: 0, errorCode: 0, groups: [{ groupId: 'g', protocolType: 'consumer', groupState: '', groupType: '' }] },
    )
  })

  it('golden v3 and v5 requests, v4 response', () => {
    expectGolden(codec, 'request', 3, hex('00 // tagged fields'), { statesFilter: [], typesFilter: [] })
    expectGolden(
      codec,
      'request',
      5,
      hex(`
        02 07 537461626c65      // statesFilter: ["Stable"]
        02 08 636c6173736963    // typesFilter: ["classic"]
        00                      // tagged fields
      `),
      { statesFilter: ['Stable'], typesFilter: ['classic'] },
    )
    expectGolden(
      codec,
      'response',
      4,
      hex(`
        00000000              // throttleTimeMs
        0000                  // errorCode
        02                    // groups: 1 (+1)
        02 67                 //   groupId "g"
        09 636f6e73756d6572   //   protocolType "consumer"
        07 537461626c65       //   groupState "Stable"
        00                    //   tagged fields
        00                    // tagged fields
      `),
      { throttleTimeMs: 0, errorCode: 0, groups: [{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: '' }] },
    )
  })

  it('skips unknown tagged fields', () => {
    expect(decode(codec, 'request', 4, hex('01 01 02 01 ab // statesFilter [], tag 2 (1 byte)'))).toStrictEqual({ statesFilter: [], typesFilter: [] })
  })

  it('will not encode what a version cannot carry', () => {
    expect(() => encode(codec, 'request', 3, listGroupsSamples.request(4))).toThrow(/statesFilter/)
    expect(() => encode(codec, 'request', 4, listGroupsSamples.request(5))).toThrow(/typesFilter/)
  })
})
