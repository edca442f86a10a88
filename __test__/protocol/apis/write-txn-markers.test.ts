import { describe, expect, it } from 'vitest'
import { writeTxnMarkersCodec, type WriteTxnMarkersRequest } from '../../../ts/protocol/apis/write-txn-markers.js'
import { ProtocolError } from '../../../ts/protocol/protocol-error.js'
import { decode, describeCodecVersions, encode, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = writeTxnMarkersCodec

describeCodecVersions(codec, {
  request: () => {
    const input: WriteTxnMarkersRequest = {
      markers: [
        { producerId: 5n, producerEpoch: 1, transactionResult: true, topics: [{ name: 'a', partitionIndexes: [0, 1] }], coordinatorEpoch: 3, transactionVersion: 0 },
        { producerId: 6n, producerEpoch: 0, transactionResult: false, topics: [], coordinatorEpoch: 3, transactionVersion: 0 },
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
  it("serves v1-v2 as Kafka 4.4, flexible: v0 is gone since Kafka 4.0 (KIP-896), v2 carries the marker's transaction version (KIP-1228)", () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([27, 1, 2, 1])
  })

  it('refuses v0, which Kafka 4.4 neither serves nor sends, on either side', () => {
    const value: WriteTxnMarkersRequest = { markers: [] }
    expect(() => encode(codec, 'request', 0, value)).toThrow(ProtocolError)
    expect(() => decode(codec, 'request', 0, hex('00000000 // no markers'))).toThrow(ProtocolError)
  })

  it('golden v1 request', () => {
    const value: WriteTxnMarkersRequest = {
      markers: [{ producerId: 5n, producerEpoch: 1, transactionResult: true, topics: [{ name: 'a', partitionIndexes: [2] }], coordinatorEpoch: 3, transactionVersion: 0 }],
    }
    const bytes = hex(
      '02 // one marker',
      '0000000000000005 0001 01 // producerId, producerEpoch, COMMIT',
      `02 02${utf8('a')} 02 00000002 00 // topics [a [2]]`,
      '00000003 // coordinatorEpoch',
      '00 // marker tagged fields',
      '00 // tagged fields',
    )
    expectGolden(codec, 'request', 1, value, bytes)
  })

  it('golden v2 request: the marker ends with its transaction version (int8), which v1 drops', () => {
    const value: WriteTxnMarkersRequest = {
      markers: [{ producerId: 5n, producerEpoch: 2, transactionResult: false, topics: [{ name: 'a', partitionIndexes: [2] }], coordinatorEpoch: 3, transactionVersion: 2 }],
    }
    const bytes = hex(
      '02 // one marker',
      '0000000000000005 0002 00 // producerId, producerEpoch, ABORT',
      `02 02${utf8('a')} 02 00000002 00 // topics [a [2]]`,
      '00000003 // coordinatorEpoch',
      '02 // transactionVersion',
      '00 // marker tagged fields',
      '00 // tagged fields',
    )
    expectGolden(codec, 'request', 2, value, bytes)
    // Ignorable: a v1 request carries no version, and is read as version 0's.
    expect((decode(codec, 'request', 1, encode(codec, 'request', 1, value)) as WriteTxnMarkersRequest).markers[0]!.transactionVersion).toBe(0)
  })
})
