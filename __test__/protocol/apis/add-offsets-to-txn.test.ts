import { describe, expect, it } from 'vitest'
import { addOffsetsToTxnCodec, type AddOffsetsToTxnRequest } from '../../../ts/protocol/apis/add-offsets-to-txn.js'
import { describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = addOffsetsToTxnCodec

describeCodecVersions(codec, {
  request: () => {
    const input = { transactionalId: 'tx', producerId: 12n, producerEpoch: 2, groupId: 'g' }
    return { input, expected: input }
  },
  response: () => {
    const input = { throttleTimeMs: 0, errorCode: 51 }
    return { input, expected: input }
  },
})

describe('AddOffsetsToTxn', () => {
  it('serves v0-v3, flexible from v3', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([25, 0, 3, 3])
  })

  it('golden v3 request', () => {
    const value: AddOffsetsToTxnRequest = { transactionalId: 'tx', producerId: 12n, producerEpoch: 2, groupId: 'g' }
    expectGolden(codec, 'request', 3, value, hex(`03 ${utf8('tx')}`, '000000000000000c 0002', `02 ${utf8('g')}`, '00'))
  })
})
