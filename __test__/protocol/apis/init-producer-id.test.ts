import { describe, expect, it } from 'vitest'
import { initProducerIdCodec, type InitProducerIdRequest, type InitProducerIdResponse } from '../../../ts/protocol/apis/init-producer-id.js'
import { describeCodecVersions, encode, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = initProducerIdCodec

function request(version: number) {
  const input: InitProducerIdRequest = {
    transactionalId: 'txn-1',
    transactionTimeoutMs: 60000,
    producerId: version >= 3 ? 4000n : -1n,
    producerEpoch: version >= 3 ? 7 : -1,
    enable2Pc: false,
    keepPreparedTxn: false,
  }
  return { input, expected: input }
}

function response(_version: number) {
  const input: InitProducerIdResponse = { throttleTimeMs: 0, errorCode: 0, producerId: 9007199254740993n, producerEpoch: 32767, ongoingTxnProducerId: -1n, ongoingTxnProducerEpoch: -1 }
  return { input, expected: input }
}

describeCodecVersions(codec, { request, response })

describe('InitProducerId', () => {
  it('serves v0-v5, flexible from v2', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([22, 0, 5, 2])
  })

  it('golden v0 request (non-flexible): idempotent producer', () => {
    const value: InitProducerIdRequest = { transactionalId: null, transactionTimeoutMs: 2147483647, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false }
    const bytes = hex('ffff // transactionalId null', '7fffffff // transactionTimeoutMs')
    expectGolden(codec, 'request', 0, value, bytes)
  })

  it('golden v4 request (flexible): epoch bump', () => {
    const value: InitProducerIdRequest = { transactionalId: 'txn', transactionTimeoutMs: 60000, producerId: 4000n, producerEpoch: 7, enable2Pc: false, keepPreparedTxn: false }
    const bytes = hex(
      `04 ${utf8('txn')} // transactionalId: compact nullable string`,
      '0000ea60 // transactionTimeoutMs 60000',
      '0000000000000fa0 // producerId 4000 (v3+)',
      '0007 // producerEpoch 7 (v3+)',
      '00 // no tagged fields',
    )
    expectGolden(codec, 'request', 4, value, bytes)
  })

  it('golden v1 response (non-flexible)', () => {
    const value: InitProducerIdResponse = { throttleTimeMs: 0, errorCode: 0, producerId: 1000n, producerEpoch: 0, ongoingTxnProducerId: -1n, ongoingTxnProducerEpoch: -1 }
    const bytes = hex('00000000 // throttleTimeMs', '0000 // errorCode', '00000000000003e8 // producerId 1000', '0000 // producerEpoch 0')
    expectGolden(codec, 'response', 1, value, bytes)
  })

  it('golden v5 response (flexible)', () => {
    const value: InitProducerIdResponse = { throttleTimeMs: 0, errorCode: 47, producerId: -1n, producerEpoch: -1, ongoingTxnProducerId: -1n, ongoingTxnProducerEpoch: -1 }
    const bytes = hex('00000000 // throttleTimeMs', '002f // errorCode 47 INVALID_PRODUCER_EPOCH', 'ffffffffffffffff ffff // producerId -1, producerEpoch -1', '00 // no tagged fields')
    expectGolden(codec, 'response', 5, value, bytes)
  })

  it('refuses a producer id and epoch before v3 (not ignorable in Kafka)', () => {
    expect(() => encode(codec, 'request', 2, request(3).input)).toThrow(/v2 cannot carry producerId/)
  })
})
