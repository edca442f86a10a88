import { describe, expect, it } from 'vitest'
import { leaveGroupCodec as codec } from '../../../ts/protocol/apis/leave-group.js'
import { decode, encode, expectGolden, groupCodecSuite, hex } from './group-codec-suite.js'
import { leaveGroupSamples } from './group-samples.js'

describe('LeaveGroup', () => {
  groupCodecSuite(codec, leaveGroupSamples, 13)

  it('golden v0 request and v2 response', () => {
    expectGolden(
      codec,
      'request',
      0,
      hex(`
        0001 67     // groupId "g"
        0001 6d     // memberId "m"
      `),
      { groupId: 'g', memberId: 'm', members: [] },
    )
    expectGolden(
      codec,
      'response',
      2,
      hex(`
        00000000    // throttleTimeMs
        0019        // errorCode 25 (UNKNOWN_MEMBER_ID)
      `),
      { throttleTimeMs: 0, errorCode: 25, members: [] },
    )
  })

  it('golden v5 request and v4 response (batches of members)', () => {
    expectGolden(
      codec,
      'request',
      5,
      hex(`
        02 67       // groupId "g"
        02          // members: 1 (+1)
        02 6d       //   memberId "m"
        00          //   groupInstanceId: null
        02 72       //   reason "r"
        00          //   tagged fields
        00          // tagged fields
      `),
      { groupId: 'g', memberId: '', members: [{ memberId: 'm', groupInstanceId: null, reason: 'r' }] },
    )
    expectGolden(
      codec,
      'response',
      4,
      hex(`
        00000000    // throttleTimeMs
        0000        // errorCode
        02          // members: 1 (+1)
        02 6d       //   memberId "m"
        02 69       //   groupInstanceId "i"
        0052        //   errorCode 82 (FENCED_INSTANCE_ID)
        00          //   tagged fields
        00          // tagged fields
      `),
      { throttleTimeMs: 0, errorCode: 0, members: [{ memberId: 'm', groupInstanceId: 'i', errorCode: 82 }] },
    )
  })

  it('skips unknown tagged fields', () => {
    const bytes = hex(`
      02 67                  // groupId
      02 02 6d 00 00 01 04 00 // members: "m", null, null reason, tag 4 (empty)
      00                     // no tagged fields
    `)
    expect(decode(codec, 'request', 5, bytes)).toStrictEqual({
      groupId: 'g',
      memberId: '',
      members: [{ memberId: 'm', groupInstanceId: null, reason: null }],
    })
  })

  it('will not encode what a version cannot carry', () => {
    expect(() => encode(codec, 'request', 3, leaveGroupSamples.request(2))).toThrow(/v3 cannot carry memberId/)
    expect(() => encode(codec, 'request', 2, leaveGroupSamples.request(3))).toThrow(/v2 cannot carry members/)
    expect(() => encode(codec, 'response', 2, leaveGroupSamples.response(3))).toThrow(/LeaveGroupResponse v2 cannot carry members/)
  })
})
