import { describe, expect, it } from 'vitest'
import { joinGroupCodec as codec, type JoinGroupResponse } from '../../../ts/protocol/apis/join-group.js'
import { decode, encode, expectGolden, hex, groupCodecSuite } from './group-codec-suite.js'
import { joinGroupSamples } from './group-samples.js'

const METADATA = Buffer.from('0102', 'hex')

describe('JoinGroup', () => {
  groupCodecSuite(codec, joinGroupSamples, 11)

  it('golden v1 request and v0 response', () => {
    expectGolden(
      codec,
      'request',
      1,
      hex(`
        0001 67                   // groupId "g"
        00007530                  // sessionTimeoutMs 30000
        0000ea60                  // rebalanceTimeoutMs 60000
        0000                      // memberId ""
        0008 636f6e73756d6572     // protocolType "consumer"
        00000001                  // protocols: 1
        0005 72616e6765           //   name "range"
        00000002 0102             //   metadata
      `),
      {
        groupId: 'g',
        sessionTimeoutMs: 30000,
        rebalanceTimeoutMs: 60000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: METADATA }],
        reason: null,
      },
    )
    expectGolden(
      codec,
      'response',
      0,
      hex(`
        0000              // errorCode
        00000001          // generationId
        0005 72616e6765   // protocolName "range"
        0001 6d           // leader "m"
        0001 6d           // memberId "m"
        00000000          // members: 0
      `),
      {
        throttleTimeMs: 0,
        errorCode: 0,
        generationId: 1,
        protocolType: null,
        protocolName: 'range',
        leader: 'm',
        skipAssignment: false,
        memberId: 'm',
        members: [],
      },
    )
  })

  it('golden v8 request and v9 response', () => {
    expectGolden(
      codec,
      'request',
      8,
      hex(`
        02 67                 // groupId "g" (length + 1)
        00007530              // sessionTimeoutMs 30000
        0000ea60              // rebalanceTimeoutMs 60000
        02 6d                 // memberId "m"
        00                    // groupInstanceId: null
        09 636f6e73756d6572   // protocolType "consumer"
        02                    // protocols: 1 (+1)
        06 72616e6765         //   name "range"
        03 0102               //   metadata (length + 1)
        00                    //   tagged fields
        02 72                 // reason "r"
        00                    // tagged fields
      `),
      {
        groupId: 'g',
        sessionTimeoutMs: 30000,
        rebalanceTimeoutMs: 60000,
        memberId: 'm',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: METADATA }],
        reason: 'r',
      },
    )
    expectGolden(
      codec,
      'response',
      9,
      hex(`
        00000000              // throttleTimeMs
        0000                  // errorCode
        00000001              // generationId
        09 636f6e73756d6572   // protocolType "consumer"
        06 72616e6765         // protocolName "range"
        02 6d                 // leader "m"
        01                    // skipAssignment
        02 6d                 // memberId "m"
        02                    // members: 1 (+1)
        02 6d                 //   memberId "m"
        00                    //   groupInstanceId: null
        03 0102               //   metadata
        00                    //   tagged fields
        00                    // tagged fields
      `),
      {
        throttleTimeMs: 0,
        errorCode: 0,
        generationId: 1,
        protocolType: 'consumer',
        protocolName: 'range',
        leader: 'm',
        skipAssignment: true,
        memberId: 'm',
        members: [{ memberId: 'm', groupInstanceId: null, metadata: METADATA }],
      },
    )
  })

  it('metadata is a view of the request buffer', () => {
    const bytes = encode(codec, 'request', 6, joinGroupSamples.request(6))
    const req = decode(codec, 'request', 6, bytes) as ReturnType<typeof joinGroupSamples.request>
    expect(req.protocols[0].metadata.buffer).toBe(bytes.buffer)
  })

  it('sends a null protocolName as "" before v7, as Kafka does', () => {
    const error: JoinGroupResponse = {
      throttleTimeMs: 0,
      errorCode: 79,
      generationId: -1,
      protocolType: null,
      protocolName: null,
      leader: '',
      skipAssignment: false,
      memberId: 'member-1',
      members: [],
    }
    expect(decode(codec, 'response', 6, encode(codec, 'response', 6, error))).toStrictEqual({ ...error, protocolName: '' })
    expect(decode(codec, 'response', 7, encode(codec, 'response', 7, error))).toStrictEqual(error)
  })

  it('skips unknown tagged fields', () => {
    const bytes = hex(`
      00000000 0000 00000001 00 00 02 6d 00 02 6d  // throttle, error, generation, nulls, leader, skip, member
      02 02 6d 00 01 01 2a 00                        // members: one, with tag 42 (empty)
      01 00 02 abcd                                  // tag 0 (2 bytes)
    `)
    expect(decode(codec, 'response', 9, bytes)).toStrictEqual({
      throttleTimeMs: 0,
      errorCode: 0,
      generationId: 1,
      protocolType: null,
      protocolName: null,
      leader: 'm',
      skipAssignment: false,
      memberId: 'm',
      members: [{ memberId: 'm', groupInstanceId: null, metadata: Buffer.alloc(0) }],
    })
  })

  it('will not encode what a version cannot carry', () => {
    expect(() => encode(codec, 'request', 4, joinGroupSamples.request(5))).toThrow(/groupInstanceId/)
    expect(() => encode(codec, 'response', 8, joinGroupSamples.response(9))).toThrow(/skipAssignment/)
  })
})
