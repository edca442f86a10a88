import { describe, expect, it } from 'vitest'
import { syncGroupCodec as codec } from '../../../ts/protocol/apis/sync-group.js'
import { decode, encode, expectGolden, groupCodecSuite, hex } from './group-codec-suite.js'
import { syncGroupSamples } from './group-samples.js'

const ASSIGNMENT = Buffer.from('0102', 'hex')

describe('SyncGroup', () => {
  groupCodecSuite(codec, syncGroupSamples, 14)

  it('golden v3 request and v0 response', () => {
    expectGolden(
      codec,
      'request',
      3,
      hex(`
        0001 67         // groupId "g"
        00000001        // generationId
        0001 6d         // memberId "m"
        0001 69         // groupInstanceId "i"
        00000001        // assignments: 1
        0001 6d         //   memberId "m"
        00000002 0102   //   assignment
      `),
      {
        groupId: 'g',
        generationId: 1,
        memberId: 'm',
        groupInstanceId: 'i',
        protocolType: null,
        protocolName: null,
        assignments: [{ memberId: 'm', assignment: ASSIGNMENT }],
      },
    )
    expectGolden(
      codec,
      'response',
      0,
      hex(`
        0019            // errorCode 25 (UNKNOWN_MEMBER_ID)
        00000000        // assignment: empty
      `),
      { throttleTimeMs: 0, errorCode: 25, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) },
    )
  })

  it('golden v5 request and response', () => {
    expectGolden(
      codec,
      'request',
      5,
      hex(`
        02 67           // groupId "g"
        00000001        // generationId
        02 6d           // memberId "m"
        00              // groupInstanceId: null
        00              // protocolType: null
        00              // protocolName: null
        01              // assignments: 0 (+1)
        00              // tagged fields
      `),
      {
        groupId: 'g',
        generationId: 1,
        memberId: 'm',
        groupInstanceId: null,
        protocolType: null,
        protocolName: null,
        assignments: [],
      },
    )
    expectGolden(
      codec,
      'response',
      5,
      hex(`
        00000000              // throttleTimeMs
        0000                  // errorCode
        09 636f6e73756d6572   // protocolType "consumer"
        06 72616e6765         // protocolName "range"
        03 0102               // assignment (length + 1)
        00                    // tagged fields
      `),
      { throttleTimeMs: 0, errorCode: 0, protocolType: 'consumer', protocolName: 'range', assignment: ASSIGNMENT },
    )
  })

  it('skips unknown tagged fields', () => {
    const bytes = hex(`
      02 67 00000001 02 6d 00 00 00  // groupId, generationId, memberId, three nulls
      02 02 6d 01 01 03 02 ffff      // assignments: "m", empty, tag 3 (2 bytes)
      01 01 00                       // tag 1 (empty)
    `)
    expect(decode(codec, 'request', 5, bytes)).toStrictEqual({
      groupId: 'g',
      generationId: 1,
      memberId: 'm',
      groupInstanceId: null,
      protocolType: null,
      protocolName: null,
      assignments: [{ memberId: 'm', assignment: Buffer.alloc(0) }],
    })
  })

  it('will not encode what a version cannot carry', () => {
    expect(() => encode(codec, 'request', 2, syncGroupSamples.request(3))).toThrow(/groupInstanceId/)
  })
})
