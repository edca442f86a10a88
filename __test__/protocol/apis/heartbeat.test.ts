import { describe, expect, it } from 'vitest'
import { heartbeatCodec as codec } from '../../../ts/protocol/apis/heartbeat.js'
import { decode, encode, expectGolden, groupCodecSuite, hex } from './group-codec-suite.js'
import { heartbeatSamples } from './group-samples.js'

describe('Heartbeat', () => {
  groupCodecSuite(codec, heartbeatSamples, 12)

  it('golden v0 request and response', () => {
    expectGolden(
      codec,
      'request',
      0,
      hex(`
        0001 67     // groupId "g"
        00000001    // generationId
        0001 6d     // memberId "m"
      `),
      { groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null },
    )
    expectGolden(codec, 'response', 0, hex('001b // errorCode 27 (REBALANCE_IN_PROGRESS)'), { throttleTimeMs: 0, errorCode: 27 })
  })

  it('golden v4 request and response', () => {
    expectGolden(
      codec,
      'request',
      4,
      hex(`
        02 67       // groupId "g" (length + 1)
        00000001    // generationId
        02 6d       // memberId "m"
        03 6931     // groupInstanceId "i1"
        00          // tagged fields
      `),
      { groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: 'i1' },
    )
    expectGolden(
      codec,
      'response',
      4,
      hex(`
        00000064    // throttleTimeMs 100
        0000        // errorCode
        00          // tagged fields
      `),
      { throttleTimeMs: 100, errorCode: 0 },
    )
  })

  it('skips unknown tagged fields', () => {
    expect(decode(codec, 'response', 4, hex('00000000 0000 02 00 01 aa 09 00'))).toStrictEqual({ throttleTimeMs: 0, errorCode: 0 })
  })

  it('will not encode what a version cannot carry', () => {
    expect(() => encode(codec, 'request', 2, heartbeatSamples.request(3))).toThrow(/groupInstanceId/)
  })
})
