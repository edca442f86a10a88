import { describe, expect, it } from 'vitest'
import { createPartitionsCodec, type CreatePartitionsRequest, type CreatePartitionsResponse } from '../../../ts/protocol/apis/create-partitions.js'
import { describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = createPartitionsCodec

function request(_version: number) {
  const input: CreatePartitionsRequest = {
    topics: [
      { name: 'orders', count: 6, assignments: null },
      { name: 'manual', count: 3, assignments: [{ brokerIds: [1, 2] }, { brokerIds: [3] }] },
      { name: 'empty', count: 1, assignments: [] },
    ],
    timeoutMs: 10000,
    validateOnly: true,
  }
  return { input, expected: input }
}

function response(_version: number) {
  const input: CreatePartitionsResponse = {
    throttleTimeMs: 7,
    results: [
      { name: 'orders', errorCode: 0, errorMessage: null },
      { name: 'manual', errorCode: 37, errorMessage: 'Topic already has 3 partitions.' },
    ],
  }
  return { input, expected: input }
}

describeCodecVersions(codec, { request, response })

describe('CreatePartitions', () => {
  it('serves v0-v3, flexible from v2', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([37, 0, 3, 2])
  })

  it('golden v1 request (non-flexible)', () => {
    const value: CreatePartitionsRequest = { topics: [{ name: 'orders', count: 6, assignments: null }], timeoutMs: 10000, validateOnly: false }
    const bytes = hex(
      '00000001 // topics: count 1',
      `0006 ${utf8('orders')} // name`,
      '00000006 // count 6',
      'ffffffff // assignments: null',
      '00002710 // timeoutMs 10000',
      '00 // validateOnly false',
    )
    expectGolden(codec, 'request', 1, value, bytes)
  })

  it('golden v2 request (flexible)', () => {
    const value: CreatePartitionsRequest = {
      topics: [{ name: 'orders', count: 3, assignments: [{ brokerIds: [1, 2] }] }],
      timeoutMs: 10000,
      validateOnly: true,
    }
    const bytes = hex(
      '02 // topics: compact count 1',
      `07 ${utf8('orders')} // name`,
      '00000003 // count 3',
      '02 // assignments: compact nullable count 1',
      '03 00000001 00000002 00 // brokerIds [1, 2], no tagged fields',
      '00 // topic: no tagged fields',
      '00002710 01 // timeoutMs 10000, validateOnly true',
      '00 // no tagged fields',
    )
    expectGolden(codec, 'request', 2, value, bytes)
  })

  it('golden v0 response (non-flexible)', () => {
    const value: CreatePartitionsResponse = { throttleTimeMs: 0, results: [{ name: 'orders', errorCode: 37, errorMessage: 'bad' }] }
    const bytes = hex('00000000 // throttleTimeMs', '00000001 // results: 1', `0006 ${utf8('orders')} // name`, '0025 // errorCode 37 INVALID_PARTITIONS', `0003 ${utf8('bad')} // errorMessage`)
    expectGolden(codec, 'response', 0, value, bytes)
  })

  it('golden v3 response (flexible)', () => {
    const value: CreatePartitionsResponse = { throttleTimeMs: 0, results: [{ name: 'orders', errorCode: 0, errorMessage: null }] }
    const bytes = hex(
      '00000000 // throttleTimeMs',
      '02 // results: compact count 1',
      `07 ${utf8('orders')} 0000 00 // name, errorCode 0, errorMessage null`,
      '00 00 // result and response: no tagged fields',
    )
    expectGolden(codec, 'response', 3, value, bytes)
  })
})
