import { describe, expect, it } from 'vitest'
import { deleteRecordsCodec, type DeleteRecordsRequest, type DeleteRecordsResponse } from '../../../ts/protocol/apis/delete-records.js'
import { describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = deleteRecordsCodec

function request(_version: number) {
  const input: DeleteRecordsRequest = {
    topics: [
      {
        name: 'orders',
        partitions: [
          { partitionIndex: 0, offset: 1234567890123n },
          { partitionIndex: 1, offset: -1n },
        ],
      },
      { name: 'none', partitions: [] },
    ],
    timeoutMs: 30000,
  }
  return { input, expected: input }
}

function response(_version: number) {
  const input: DeleteRecordsResponse = {
    throttleTimeMs: 2,
    topics: [
      {
        name: 'orders',
        partitions: [
          { partitionIndex: 0, lowWatermark: 1234567890123n, errorCode: 0 },
          { partitionIndex: 1, lowWatermark: -1n, errorCode: 1 },
        ],
      },
    ],
  }
  return { input, expected: input }
}

describeCodecVersions(codec, { request, response })

describe('DeleteRecords', () => {
  it('serves v0-v2, flexible from v2', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([21, 0, 2, 2])
  })

  it('golden v1 request (non-flexible)', () => {
    const value: DeleteRecordsRequest = { topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, offset: 100n }] }], timeoutMs: 500 }
    const bytes = hex('00000001 // topics: 1', `0006 ${utf8('orders')} // name`, '00000001 // partitions: 1', '00000002 0000000000000064 // partitionIndex 2, offset 100', '000001f4 // timeoutMs 500')
    expectGolden(codec, 'request', 1, value, bytes)
  })

  it('golden v2 request (flexible)', () => {
    const value: DeleteRecordsRequest = { topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, offset: -1n }] }], timeoutMs: 500 }
    const bytes = hex(
      '02 // topics: compact count 1',
      `07 ${utf8('orders')} // name`,
      '02 // partitions: 1',
      '00000002 ffffffffffffffff 00 // partitionIndex 2, offset -1 (high watermark), no tagged fields',
      '00 // topic: no tagged fields',
      '000001f4 00 // timeoutMs 500, no tagged fields',
    )
    expectGolden(codec, 'request', 2, value, bytes)
  })

  it('golden v0 response (non-flexible)', () => {
    const value: DeleteRecordsResponse = {
      throttleTimeMs: 0,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, lowWatermark: 100n, errorCode: 0 }] }],
    }
    const bytes = hex(
      '00000000 // throttleTimeMs',
      '00000001 // topics: 1',
      `0006 ${utf8('orders')} // name`,
      '00000001 // partitions: 1',
      '00000002 0000000000000064 0000 // partitionIndex 2, lowWatermark 100, errorCode 0',
    )
    expectGolden(codec, 'response', 0, value, bytes)
  })

  it('golden v2 response (flexible)', () => {
    const value: DeleteRecordsResponse = {
      throttleTimeMs: 0,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, lowWatermark: -1n, errorCode: 1 }] }],
    }
    const bytes = hex(
      '00000000 // throttleTimeMs',
      '02 // topics: 1',
      `07 ${utf8('orders')} // name`,
      '02 // partitions: 1',
      '00000002 ffffffffffffffff 0001 00 // partitionIndex 2, lowWatermark -1, OFFSET_OUT_OF_RANGE, no tagged fields',
      '00 00 // topic and response: no tagged fields',
    )
    expectGolden(codec, 'response', 2, value, bytes)
  })
})
