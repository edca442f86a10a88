import { describe, expect, it } from 'vitest'
import { CoordinatorType, findCoordinatorCodec as codec } from '../../../ts/protocol/apis/find-coordinator.js'
import { decode, encode, expectGolden, hex, groupCodecSuite } from './group-codec-suite.js'
import { findCoordinatorSamples } from './group-samples.js'

describe('FindCoordinator', () => {
  groupCodecSuite(codec, findCoordinatorSamples, 10)

  it('golden v1 request (one key) and v0 response', () => {
    expectGolden(
      codec,
      'request',
      1,
      hex(`
        0007 6772c3bc707065  // key "grüppe" (7 bytes of UTF-8)
        01                   // keyType: transaction
      `),
      { key: 'grüppe', keyType: CoordinatorType.TRANSACTION, coordinatorKeys: [] },
    )
    expectGolden(
      codec,
      'response',
      0,
      hex(`
        0000         // errorCode
        00000001     // nodeId
        0001 68      // host "h"
        00002384     // port 9092
      `),
      { throttleTimeMs: 0, errorCode: 0, errorMessage: '', nodeId: 1, host: 'h', port: 9092, coordinators: [] },
    )
  })

  it('golden v4 request (batched keys) and response', () => {
    expectGolden(
      codec,
      'request',
      4,
      hex(`
        00          // keyType: group
        03          // coordinatorKeys: 2 (+1)
        03 6731     //   "g1"
        03 6732     //   "g2"
        00          // tagged fields: none
      `),
      { key: '', keyType: CoordinatorType.GROUP, coordinatorKeys: ['g1', 'g2'] },
    )
    expectGolden(
      codec,
      'response',
      4,
      hex(`
        00000000    // throttleTimeMs
        02          // coordinators: 1 (+1)
        03 6731     //   key "g1"
        00000001    //   nodeId
        02 68       //   host "h"
        00002384    //   port 9092
        0000        //   errorCode
        00          //   errorMessage: null
        00          //   tagged fields
        00          // tagged fields
      `),
      {
        throttleTimeMs: 0,
        errorCode: 0,
        errorMessage: '',
        nodeId: 0,
        host: '',
        port: 0,
        coordinators: [{ key: 'g1', nodeId: 1, host: 'h', port: 9092, errorCode: 0, errorMessage: null }],
      },
    )
  })

  it('skips unknown tagged fields', () => {
    const bytes = hex(`
      00                // keyType
      02 03 6731        // coordinatorKeys ["g1"]
      02 05 01 ff 07 00 // tagged fields: tag 5 (1 byte), tag 7 (0 bytes)
    `)
    expect(decode(codec, 'request', 6, bytes)).toStrictEqual({ key: '', keyType: 0, coordinatorKeys: ['g1'] })
  })

  it('will not encode what a version cannot carry', () => {
    const one = { key: 'g', keyType: 0, coordinatorKeys: [] }
    const batch = { key: '', keyType: 0, coordinatorKeys: ['g'] }
    expect(() => encode(codec, 'request', 4, one)).toThrow(/v4 cannot carry key/)
    expect(() => encode(codec, 'request', 3, batch)).toThrow(/coordinatorKeys/)
    expect(() => encode(codec, 'request', 0, { ...one, keyType: CoordinatorType.TRANSACTION })).toThrow(/keyType/)
    const top = findCoordinatorSamples.response(3)
    expect(() => encode(codec, 'response', 4, top)).toThrow(/FindCoordinatorResponse v4 cannot carry/)
    expect(() => encode(codec, 'response', 3, findCoordinatorSamples.response(4))).toThrow(/coordinators/)
  })
})
