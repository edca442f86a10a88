import { describe, expect, it } from 'vitest'
import { deleteTopicsCodec, type DeleteTopicsRequest, type DeleteTopicsResponse } from '../../../ts/protocol/apis/delete-topics.js'
import { describeCodecVersions, encode, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = deleteTopicsCodec
const ID_A = Buffer.from('0123456789abcdeffedcba9876543210', 'hex')
const ID_B = Buffer.from('00000000000000010000000000000002', 'hex')
const ZERO_ID = Buffer.alloc(16)

function request(version: number) {
  const input: DeleteTopicsRequest =
    version >= 6
      ? {
          topics: [
            { name: 'orders', topicId: ZERO_ID },
            { name: null, topicId: ID_B },
          ],
          topicNames: ['ignored'], // ignorable in Kafka: v6 drops it
          timeoutMs: 15000,
        }
      : { topics: [], topicNames: ['orders', 'payments'], timeoutMs: 15000 }
  return { input, expected: { ...input, topicNames: version >= 6 ? [] : input.topicNames } }
}

function response(version: number) {
  const input: DeleteTopicsResponse = {
    throttleTimeMs: 3,
    responses: [
      { name: 'orders', topicId: ID_A, errorCode: 0, errorMessage: null },
      { name: version >= 6 ? null : 'ghost', topicId: ID_B, errorCode: 100, errorMessage: 'unknown id' },
    ],
  }
  const expected: DeleteTopicsResponse = {
    ...input,
    responses: input.responses.map((r) => ({
      ...r,
      topicId: version >= 6 ? r.topicId : ZERO_ID,
      errorMessage: version >= 5 ? r.errorMessage : null,
    })),
  }
  return { input, expected }
}

describeCodecVersions(codec, { request, response })

describe('DeleteTopics', () => {
  it('serves v1-v6 (v0 is gone since Kafka 4.0), flexible from v4', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([20, 1, 6, 4])
  })

  it('golden v1 request (non-flexible): topic names', () => {
    const value: DeleteTopicsRequest = { topics: [], topicNames: ['orders'], timeoutMs: 15000 }
    const bytes = hex('00000001 // topicNames: count 1', `0006 ${utf8('orders')}`, '00003a98 // timeoutMs 15000')
    expectGolden(codec, 'request', 1, value, bytes)
  })

  it('golden v4 request (flexible): compact topic names', () => {
    const value: DeleteTopicsRequest = { topics: [], topicNames: ['orders'], timeoutMs: 15000 }
    const bytes = hex('02 // topicNames: compact count 1', `07 ${utf8('orders')}`, '00003a98 // timeoutMs', '00 // no tagged fields')
    expectGolden(codec, 'request', 4, value, bytes)
  })

  it('golden v6 request (flexible): topics by name or id', () => {
    const value: DeleteTopicsRequest = {
      topics: [
        { name: 'orders', topicId: ZERO_ID },
        { name: null, topicId: ID_B },
      ],
      topicNames: [],
      timeoutMs: 15000,
    }
    const bytes = hex(
      '03 // topics: compact count 2',
      `07 ${utf8('orders')} 00000000000000000000000000000000 00 // by name, zero id, no tagged fields`,
      '00 00000000000000010000000000000002 00 // name null, by id, no tagged fields',
      '00003a98 // timeoutMs 15000',
      '00 // no tagged fields',
    )
    expectGolden(codec, 'request', 6, value, bytes)
  })

  it('golden v3 response (non-flexible)', () => {
    const value: DeleteTopicsResponse = {
      throttleTimeMs: 0,
      responses: [{ name: 'orders', topicId: ZERO_ID, errorCode: 0, errorMessage: null }],
    }
    const bytes = hex('00000000 // throttleTimeMs', '00000001 // responses: 1', `0006 ${utf8('orders')} 0000 // name, errorCode 0`)
    expectGolden(codec, 'response', 3, value, bytes)
  })

  it('golden v6 response (flexible)', () => {
    const value: DeleteTopicsResponse = {
      throttleTimeMs: 0,
      responses: [{ name: null, topicId: ID_B, errorCode: 100, errorMessage: 'unknown id' }],
    }
    const bytes = hex(
      '00000000 // throttleTimeMs',
      '02 // responses: compact count 1',
      '00 // name null (v6+)',
      '00000000000000010000000000000002 // topicId',
      '0064 // errorCode 100 UNKNOWN_TOPIC_ID',
      `0b ${utf8('unknown id')} // errorMessage (v5+)`,
      '00 00 // result and response: no tagged fields',
    )
    expectGolden(codec, 'response', 6, value, bytes)
  })

  it('refuses topics by id before v6 and null names before v6', () => {
    expect(() => encode(codec, 'request', 5, request(6).input)).toThrow(/v5 cannot carry topics/)
    expect(() => encode(codec, 'response', 5, response(6).input)).toThrow(/v5 cannot carry a null name/)
  })
})
