import { describe, expect, it } from 'vitest'
import { endTxnCodec, type EndTxnRequest } from '../../../ts/protocol/apis/end-txn.js'
import { describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = endTxnCodec

describeCodecVersions(codec, {
  request: () => {
    const input = { transactionalId: 'tx', producerId: 12n, producerEpoch: 2, committed: true }
    return { input, expected: input }
  },
  response: () => {
    const input = { throttleTimeMs: 0, errorCode: 48, producerId: -1n, producerEpoch: -1 }
    return { input, expected: input }
  },
})

describe('EndTxn', () => {
  it('serves v0-v5 (v5: transaction version 2), flexible from v3', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([26, 0, 5, 3])
  })

  it('golden v5 response: the producer id and epoch to use next (below v5 not on the wire)', () => {
    const value = { throttleTimeMs: 0, errorCode: 0, producerId: 12n, producerEpoch: 3 }
    expectGolden(codec, 'response', 5, value, hex('00000000 // throttleTimeMs', '0000 // errorCode', '000000000000000c // producerId', '0003 // producerEpoch', '00 // no tagged fields'))
    expectGolden(codec, 'response', 4, { ...value, producerId: -1n, producerEpoch: -1 }, hex('00000000 // throttleTimeMs', '0000 // errorCode', '00 // no tagged fields'))
  })

  it('golden v0 request: an abort', () => {
    const value: EndTxnRequest = { transactionalId: 'tx', producerId: 12n, producerEpoch: 2, committed: false }
    expectGolden(codec, 'request', 0, value, hex(`0002 ${utf8('tx')}`, '000000000000000c // producerId', '0002 // producerEpoch', '00 // committed false'))
  })
})
