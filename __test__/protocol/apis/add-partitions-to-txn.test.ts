import { describe, expect, it } from 'vitest'
import { addPartitionsToTxnCodec, type AddPartitionsToTxnRequest, type AddPartitionsToTxnResponse } from '../../../ts/protocol/apis/add-partitions-to-txn.js'
import { describeCodecVersions, encode, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = addPartitionsToTxnCodec

/** v0-v3's top-level transaction at its defaults (what a v4 request carries there). */
const NO_V3_TRANSACTION = { v3AndBelowTransactionalId: '', v3AndBelowProducerId: 0n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [] }

describeCodecVersions(codec, {
  request(version) {
    const one = { transactionalId: 'tx', producerId: 1000n, producerEpoch: 3, verifyOnly: false, topics: [{ name: 't', partitions: [0, 2] }] }
    const input: AddPartitionsToTxnRequest =
      version >= 4
        ? { transactions: [one, { ...one, transactionalId: 'tx2', verifyOnly: true }], ...NO_V3_TRANSACTION }
        : { transactions: [], v3AndBelowTransactionalId: 'tx', v3AndBelowProducerId: 1000n, v3AndBelowProducerEpoch: 3, v3AndBelowTopics: one.topics }
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
    const input: AddPartitionsToTxnResponse =
      version >= 4
        ? { throttleTimeMs: 5, errorCode: 0, resultsByTransaction: [{ transactionalId: 'tx', topicResults }], resultsByTopicV3AndBelow: [] }
        : { throttleTimeMs: 5, errorCode: 0, resultsByTransaction: [], resultsByTopicV3AndBelow: topicResults }
    return { input, expected: input }
  },
})

describe('AddPartitionsToTxn', () => {
  it('serves v0-v5 (v4+ from brokers; v5 may answer TRANSACTION_ABORTABLE), flexible from v3', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([24, 0, 5, 3])
  })

  it('golden v1 request (non-flexible, one transaction at the top level)', () => {
    const value: AddPartitionsToTxnRequest = {
      transactions: [],
      v3AndBelowTransactionalId: 'tx',
      v3AndBelowProducerId: 7n,
      v3AndBelowProducerEpoch: 1,
      v3AndBelowTopics: [{ name: 't', partitions: [3] }],
    }
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
    const value: AddPartitionsToTxnRequest = {
      transactions: [{ transactionalId: 'tx', producerId: 7n, producerEpoch: 1, verifyOnly: true, topics: [{ name: 't', partitions: [3] }] }],
      ...NO_V3_TRANSACTION,
    }
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

  it('refuses to encode batched transactions before v4, and a top-level one from v4 (neither is ignorable)', () => {
    const one = { transactionalId: 'a', producerId: 1n, producerEpoch: 0, verifyOnly: false, topics: [] }
    expect(() => encode(codec, 'request', 3, { transactions: [one], ...NO_V3_TRANSACTION })).toThrow(/cannot carry transactions/)
    expect(() => encode(codec, 'request', 4, { transactions: [one], ...NO_V3_TRANSACTION, v3AndBelowTransactionalId: 'a' })).toThrow(/cannot carry v3AndBelowTransactionalId/)
  })
})
