/** DescribeProducers (61), DescribeTransactions (65), ListTransactions (66): flexible from v0. */
import { describe, expect, it } from 'vitest'
import { describeProducersCodec } from '../../../ts/protocol/apis/describe-producers.js'
import { describeTransactionsCodec } from '../../../ts/protocol/apis/describe-transactions.js'
import { listTransactionsCodec, type ListTransactionsRequest } from '../../../ts/protocol/apis/list-transactions.js'
import { describeCodecVersions, encode, expectGolden, hex, utf8 } from './codec-harness.js'

describeCodecVersions(describeProducersCodec, {
  request: () => {
    const input = { topics: [{ name: 't', partitionIndexes: [0, 1] }] }
    return { input, expected: input }
  },
  response: () => {
    const input = {
      throttleTimeMs: 0,
      topics: [
        {
          name: 't',
          partitions: [
            {
              partitionIndex: 0,
              errorCode: 0,
              errorMessage: null,
              activeProducers: [{ producerId: 3n, producerEpoch: 1, lastSequence: 9, lastTimestamp: 1700000000000n, coordinatorEpoch: 0, currentTxnStartOffset: 12n }],
            },
            { partitionIndex: 1, errorCode: 6, errorMessage: 'not the leader', activeProducers: [] },
          ],
        },
      ],
    }
    return { input, expected: input }
  },
})

describeCodecVersions(describeTransactionsCodec, {
  request: () => {
    const input = { transactionalIds: ['a', 'b'] }
    return { input, expected: input }
  },
  response: () => {
    const input = {
      throttleTimeMs: 0,
      transactionStates: [
        {
          errorCode: 0,
          transactionalId: 'a',
          transactionState: 'Ongoing',
          transactionTimeoutMs: 60000,
          transactionStartTimeMs: 1700000000000n,
          producerId: 3n,
          producerEpoch: 2,
          topics: [{ topic: 't', partitions: [0, 1] }],
        },
        { errorCode: 105, transactionalId: 'b', transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1n, producerId: -1n, producerEpoch: -1, topics: [] },
      ],
    }
    return { input, expected: input }
  },
})

describeCodecVersions(listTransactionsCodec, {
  request: (version) => {
    const input: ListTransactionsRequest = { stateFilters: ['Ongoing'], producerIdFilters: [3n], durationFilter: version >= 1 ? 60000n : -1n, transactionalIdPattern: null }
    return { input, expected: input }
  },
  response: () => {
    const input = { throttleTimeMs: 0, errorCode: 0, unknownStateFilters: ['Bogus'], transactionStates: [{ transactionalId: 'a', producerId: 3n, transactionState: 'Ongoing' }] }
    return { input, expected: input }
  },
})

describe('transaction admin APIs', () => {
  it('serve DescribeProducers v0, DescribeTransactions v0, ListTransactions v0-v1, all flexible', () => {
    expect([describeProducersCodec.apiKey, describeProducersCodec.maxVersion, describeProducersCodec.flexibleFrom]).toEqual([61, 0, 0])
    expect([describeTransactionsCodec.apiKey, describeTransactionsCodec.maxVersion, describeTransactionsCodec.flexibleFrom]).toEqual([65, 0, 0])
    expect([listTransactionsCodec.apiKey, listTransactionsCodec.maxVersion, listTransactionsCodec.flexibleFrom]).toEqual([66, 1, 0])
  })

  it('golden ListTransactions v1 request; v0 cannot carry a duration filter', () => {
    const value: ListTransactionsRequest = { stateFilters: ['Ongoing'], producerIdFilters: [], durationFilter: 1000n, transactionalIdPattern: null }
    expectGolden(listTransactionsCodec, 'request', 1, value, hex(`02 08 ${utf8('Ongoing')} // stateFilters`, '01 // producerIdFilters []', '00000000000003e8 // durationFilter', '00'))
    expect(() => encode(listTransactionsCodec, 'request', 0, value)).toThrow(/cannot carry/)
  })
})
