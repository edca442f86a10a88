import { describe, expect, it } from 'vitest'
import { addPartitionsToTxnCodec, type AddPartitionsToTxnRequest, type AddPartitionsToTxnResponse } from '../../../ts/protocol/apis/add-partitions-to-txn.js'
import { describeCodecVersions, encode, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = addPartitionsToTxnCodec

describeCodecVersions(codec, {
  request(version) {
    const one = { transactionalId: 'tx', producerId: 1000n, producerEpoch: 3, verifyOnly: false, topics: [{ name: 't', partitions: [0, 2] }] }
    const input: AddPartitionsToTxnRequest = { transactions: version >= 4 ? [one, { ...one, transactionalId: 'tx2', verifyOnly: true }] : [one] }
    return { input, expected: input }
  },
  response(version) {
    const topicResults = [
      {
        name: 't',
        resultsByPartition: [
          { partitionIndex: 0, partitionErrorCode: 0 },
          { partitionIndex: 2, partitionErrorCode: 51 },
        ],
      },
    ]
    const input: AddPartitionsToTxnResponse = { throttleTimeMs: 5, errorCode: version >= 4 ? 0 : 0, resultsByTransaction: [{ transactionalId: version >= 4 ? 'tx' : '', topicResults }] }
    return { input, expected: input }
  },
})

describe('AddPartitionsToTxn', () => {
  it('serves v0-v4 (v5, transaction version 2, is not), flexible from v3', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([24, 0, 4, 3])
  })

  it('golden v1 request (non-flexible, one transaction at the top level)', () => {
    const value: AddPartitionsToTxnRequest = { transactions: [{ transactionalId: 'tx', producerId: 7n, producerEpoch: 1, verifyOnly: false, topics: [{ name: 't', partitions: [3] }] }] }
    const bytes = hex(
      `0002 ${utf8('tx')} // v3AndBelowTransactionalId`,
      '0000000000000007 // producerId',
      '0001 // producerEpoch',
      '00000001 // one topic',
      `0001 ${utf8('t')} // name`,
      '00000001 00000003 // partitions [3]',
    )
    expectGolden(codec, 'request', 1, value, bytes)
  })

  it('golden v4 request (flexible, batched, verifyOnly)', () => {
    const value: AddPartitionsToTxnRequest = { transactions: [{ transactionalId: 'tx', producerId: 7n, producerEpoch: 1, verifyOnly: true, topics: [{ name: 't', partitions: [3] }] }] }
    const bytes = hex(
      '02 // one transaction (compact)',
      `03 ${utf8('tx')} // transactionalId`,
      '0000000000000007 0001 // producerId, producerEpoch',
      '01 // verifyOnly',
      `02 02 ${utf8('t')} 02 00000003 00 // topics [t [3]]`,
      '00 // transaction tagged fields',
      '00 // request tagged fields',
    )
    expectGolden(codec, 'request', 4, value, bytes)
  })

  it('refuses to encode more than one transaction before v4', () => {
    const one = { transactionalId: 'a', producerId: 1n, producerEpoch: 0, verifyOnly: false, topics: [] }
    expect(() => encode(codec, 'request', 3, { transactions: [one, one] })).toThrow(/cannot carry/)
  })
})
