import { describe, expect, it } from 'vitest'
import { createTopicsCodec, type CreateTopicsRequest, type CreateTopicsResponse } from '../../../ts/protocol/apis/create-topics.js'
import { describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = createTopicsCodec
const ID_A = Buffer.from('0123456789abcdeffedcba9876543210', 'hex')
const ZERO_ID = Buffer.alloc(16)

function request(_version: number) {
  const input: CreateTopicsRequest = {
    topics: [
      {
        name: 'orders',
        numPartitions: 3,
        replicationFactor: 1,
        assignments: [],
        configs: [
          { name: 'cleanup.policy', value: 'compact' },
          { name: 'retention.ms', value: null },
        ],
      },
      {
        name: 'manual',
        numPartitions: -1,
        replicationFactor: -1,
        assignments: [
          { partitionIndex: 0, brokerIds: [1, 2] },
          { partitionIndex: 1, brokerIds: [2, 3] },
        ],
        configs: [],
      },
    ],
    timeoutMs: 30000,
    validateOnly: true,
  }
  return { input, expected: input }
}

function response(version: number) {
  const input: CreateTopicsResponse = {
    throttleTimeMs: 5,
    topics: [
      {
        name: 'orders',
        topicId: ID_A,
        errorCode: 0,
        errorMessage: null,
        topicConfigErrorCode: 29,
        numPartitions: 3,
        replicationFactor: 1,
        configs: [
          { name: 'cleanup.policy', value: 'compact', readOnly: false, configSource: 1, isSensitive: false },
          { name: 'sasl.jaas.config', value: null, readOnly: true, configSource: 5, isSensitive: true },
        ],
      },
      {
        name: 'dup',
        topicId: ZERO_ID,
        errorCode: 36,
        errorMessage: "Topic 'dup' already exists.",
        topicConfigErrorCode: 0,
        numPartitions: -1,
        replicationFactor: -1,
        configs: null,
      },
    ],
  }
  const expected: CreateTopicsResponse = {
    ...input,
    topics: input.topics.map((t) => ({
      ...t,
      topicId: version >= 7 ? t.topicId : ZERO_ID,
      ...(version >= 5 ? {} : { topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: [] }),
    })),
  }
  return { input, expected }
}

describeCodecVersions(codec, { request, response })

describe('CreateTopics', () => {
  it('serves v2-v7 (v0-v1 are gone since Kafka 4.0), flexible from v5', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([19, 2, 7, 5])
  })

  it('golden v2 request (non-flexible)', () => {
    const value: CreateTopicsRequest = {
      topics: [
        {
          name: 'orders',
          numPartitions: 3,
          replicationFactor: 1,
          assignments: [],
          configs: [{ name: 'cleanup.policy', value: 'compact' }],
        },
      ],
      timeoutMs: 30000,
      validateOnly: false,
    }
    const bytes = hex(
      '00000001 // topics: count 1',
      `0006 ${utf8('orders')} // name`,
      '00000003 // numPartitions 3',
      '0001     // replicationFactor 1',
      '00000000 // assignments: none',
      '00000001 // configs: count 1',
      `000e ${utf8('cleanup.policy')} // name`,
      `0007 ${utf8('compact')} // value`,
      '00007530 // timeoutMs 30000',
      '00       // validateOnly false',
    )
    expectGolden(codec, 'request', 2, value, bytes)
  })

  it('golden v5 request (flexible)', () => {
    const value: CreateTopicsRequest = {
      topics: [
        {
          name: 'orders',
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }],
          configs: [{ name: 'retention.ms', value: null }],
        },
      ],
      timeoutMs: 30000,
      validateOnly: true,
    }
    const bytes = hex(
      '02 // topics: compact count 1',
      `07 ${utf8('orders')} // name`,
      'ffffffff // numPartitions -1 (manual assignment)',
      'ffff     // replicationFactor -1',
      '02 // assignments: 1',
      '00000000 03 00000001 00000002 00 // partitionIndex 0, brokerIds [1, 2], no tagged fields',
      '02 // configs: 1',
      `0d ${utf8('retention.ms')} 00 00 // name, value null, no tagged fields`,
      '00 // topic: no tagged fields',
      '00007530 // timeoutMs 30000',
      '01 // validateOnly true',
      '00 // no tagged fields',
    )
    expectGolden(codec, 'request', 5, value, bytes)
  })

  it('golden v4 response (non-flexible)', () => {
    const value: CreateTopicsResponse = {
      throttleTimeMs: 0,
      topics: [
        {
          name: 'orders',
          topicId: ZERO_ID,
          errorCode: 36,
          errorMessage: 'exists',
          topicConfigErrorCode: 0,
          numPartitions: -1,
          replicationFactor: -1,
          configs: [],
        },
      ],
    }
    const bytes = hex(
      '00000000 // throttleTimeMs 0',
      '00000001 // topics: count 1',
      `0006 ${utf8('orders')} // name`,
      '0024 // errorCode 36 TOPIC_ALREADY_EXISTS',
      `0006 ${utf8('exists')} // errorMessage`,
    )
    expectGolden(codec, 'response', 4, value, bytes)
  })

  it('golden v7 response (flexible) with tagged topicConfigErrorCode', () => {
    const value: CreateTopicsResponse = {
      throttleTimeMs: 0,
      topics: [
        {
          name: 'orders',
          topicId: ID_A,
          errorCode: 0,
          errorMessage: null,
          topicConfigErrorCode: 29,
          numPartitions: 3,
          replicationFactor: 1,
          configs: [{ name: 'cleanup.policy', value: 'compact', readOnly: false, configSource: 5, isSensitive: false }],
        },
      ],
    }
    const bytes = hex(
      '00000000 // throttleTimeMs 0',
      '02 // topics: compact count 1',
      `07 ${utf8('orders')} // name`,
      '0123456789abcdeffedcba9876543210 // topicId (v7+)',
      '0000 // errorCode 0',
      '00   // errorMessage null',
      '00000003 0001 // numPartitions 3, replicationFactor 1 (v5+)',
      '02 // configs: compact nullable count 1',
      `0f ${utf8('cleanup.policy')} 08 ${utf8('compact')} // name, value`,
      '00 05 00 00 // readOnly false, configSource 5 (DEFAULT_CONFIG), isSensitive false, no tagged fields',
      '01 00 02 001d // topic tagged fields: 1, tag 0 topicConfigErrorCode, 2 bytes, 29',
      '00 // no tagged fields',
    )
    expectGolden(codec, 'response', 7, value, bytes)
  })

  it('golden v5 response: null configs', () => {
    const value: CreateTopicsResponse = {
      throttleTimeMs: 1,
      topics: [
        {
          name: 'a',
          topicId: ZERO_ID,
          errorCode: 0,
          errorMessage: null,
          topicConfigErrorCode: 0,
          numPartitions: 1,
          replicationFactor: 1,
          configs: null,
        },
      ],
    }
    const bytes = hex(
      '00000001 02 // throttleTimeMs 1, topics: 1',
      `02 ${utf8('a')} 0000 00 // name, errorCode 0, errorMessage null`,
      '00000001 0001 // numPartitions 1, replicationFactor 1',
      '00 // configs: null',
      '00 00 // topic and response: no tagged fields',
    )
    expectGolden(codec, 'response', 5, value, bytes)
  })
})
