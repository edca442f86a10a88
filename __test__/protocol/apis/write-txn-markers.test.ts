import { describe, expect, it } from 'vitest'
import { writeTxnMarkersCodec, type WriteTxnMarkersRequest } from '../../../ts/protocol/apis/write-txn-markers.js'
import { describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = writeTxnMarkersCodec

describeCodecVersions(codec, {
  request: () => {
    const input: WriteTxnMarkersRequest = {
      markers: [
        { producerId: 5n, producerEpoch: 1, transactionResult: true, topics: [{ name: 'a', partitionIndexes: [0, 1] }], coordinatorEpoch: 3 },
        { producerId: 6n, producerEpoch: 0, transactionResult: false, topics: [], coordinatorEpoch: 3 },
      ],
    }
    return { input, expected: input }
  },
  response: () => {
    const input = {
      markers: [
        {
          producerId: 5n,
          topics: [
            {
              name: 'a',
              partitions: [
                { partitionIndex: 0, errorCode: 0 },
                { partitionIndex: 1, errorCode: 6 },
              ],
            },
          ],
        },
      ],
    }
    return { input, expected: input }
  },
})

describe('WriteTxnMarkers', () => {
  it('serves v0-v1, flexible from v1', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([27, 0, 1, 1])
  })

  it('golden v0 request', () => {
    const value: WriteTxnMarkersRequest = { markers: [{ producerId: 5n, producerEpoch: 1, transactionResult: true, topics: [{ name: 'a', partitionIndexes: [2] }], coordinatorEpoch: 3 }] }
    const bytes = hex(
      '00000001 // one marker',
      '0000000000000005 0001 01 // producerId, producerEpoch, COMMIT',
      `00000001 0001 ${utf8('a')} 00000001 00000002 // topics [a [2]]`,
      '00000003 // coordinatorEpoch',
    )
    expectGolden(codec, 'request', 0, value, bytes)
  })
})
