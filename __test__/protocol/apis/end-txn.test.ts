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
  it('serves v0-v4 (v5, transaction version 2, is not), flexible from v3', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([26, 0, 4, 3])
  })

  it('golden v0 request: an abort', () => {
    const value: EndTxnRequest = { transactionalId: 'tx', producerId: 12n, producerEpoch: 2, committed: false }
    expectGolden(codec, 'request', 0, value, hex(`0002 ${utf8('tx')}`, '000000000000000c // producerId', '0002 // producerEpoch', '00 // committed false'))
  })
})
