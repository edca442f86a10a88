import { describe, expect, it } from 'vitest'
import { AUTHORIZED_OPERATIONS_OMITTED, metadataCodec, type MetadataRequest, type MetadataResponse } from '../../../ts/protocol/apis/metadata.js'
import { decode, describeCodecVersions, encode, expectGolden, expectRoundTrip, hex, utf8 } from './codec-harness.js'

const codec = metadataCodec
const ID_A = Buffer.from('0123456789abcdeffedcba9876543210', 'hex')
const ID_B = Buffer.from('00000000000000010000000000000002', 'hex')
const ZERO_ID = Buffer.alloc(16)

function request(version: number) {
  const input: MetadataRequest = {
    topics:
      version >= 10
        ? [
            { topicId: ZERO_ID, name: 'orders' },
            { topicId: ID_B, name: null },
          ]
        : [
            { topicId: ID_A, name: 'orders' }, // topicId is ignorable: dropped before v10
            { topicId: ZERO_ID, name: 'payments' },
          ],
    allowAutoTopicCreation: version < 4,
    includeClusterAuthorizedOperations: version >= 8 && version <= 10,
    includeTopicAuthorizedOperations: version >= 8,
  }
  const expected: MetadataRequest = {
    ...input,
    topics: input.topics!.map((t) => ({ ...t, topicId: version >= 10 ? t.topicId : ZERO_ID })),
  }
  return { input, expected }
}

function response(version: number) {
  const input: MetadataResponse = {
    throttleTimeMs: 10,
    brokers: [
      { nodeId: 1, host: 'broker-1.local', port: 9092, rack: 'rack-a' },
      { nodeId: 2, host: 'broker-2.local', port: 9093, rack: null },
    ],
    clusterId: 'ferrolog-cluster',
    controllerId: 1,
    topics: [
      {
        errorCode: 0,
        name: 'orders',
        topicId: ID_A,
        isInternal: true,
        partitions: [
          { errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 3, replicaNodes: [1, 2], isrNodes: [1], offlineReplicas: [2] },
          { errorCode: 5, partitionIndex: 1, leaderId: -1, leaderEpoch: 0, replicaNodes: [], isrNodes: [], offlineReplicas: [] },
        ],
        topicAuthorizedOperations: version >= 8 ? 0x0ff8 : AUTHORIZED_OPERATIONS_OMITTED,
      },
      {
        errorCode: 100,
        name: version >= 12 ? null : 'ghost',
        topicId: ID_B,
        isInternal: false,
        partitions: [],
        topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      },
    ],
    clusterAuthorizedOperations: version >= 8 && version <= 10 ? 0x1234 : AUTHORIZED_OPERATIONS_OMITTED,
    errorCode: 0, // v13+, not served
  }
  const expected: MetadataResponse = {
    ...input,
    throttleTimeMs: version >= 3 ? input.throttleTimeMs : 0,
    brokers: input.brokers.map((b) => ({ ...b, rack: version >= 1 ? b.rack : null })),
    clusterId: version >= 2 ? input.clusterId : null,
    controllerId: version >= 1 ? input.controllerId : -1,
    topics: input.topics.map((t) => ({
      ...t,
      topicId: version >= 10 ? t.topicId : ZERO_ID,
      isInternal: version >= 1 ? t.isInternal : false,
      partitions: t.partitions.map((p) => ({
        ...p,
        leaderEpoch: version >= 7 ? p.leaderEpoch : -1,
        offlineReplicas: version >= 5 ? p.offlineReplicas : [],
      })),
    })),
  }
  return { input, expected }
}

describeCodecVersions(codec, { request, response })

describe('Metadata', () => {
  it('serves v0-v12, flexible from v9', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([3, 0, 12, 9])
  })

  it('golden v4 request (non-flexible)', () => {
    const value: MetadataRequest = {
      topics: [{ topicId: ZERO_ID, name: 'orders' }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }
    const bytes = hex('00000001 // topics: int32 count 1', `0006 ${utf8('orders')} // name: int16 length 6`, '00 // allowAutoTopicCreation false')
    expectGolden(codec, 'request', 4, value, bytes)
  })

  it('golden v1 request: null topics (all topics)', () => {
    const value: MetadataRequest = {
      topics: null,
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }
    expectGolden(codec, 'request', 1, value, hex('ffffffff // topics: null'))
  })

  it('golden v10 request (flexible): topic id, includeClusterAuthorizedOperations', () => {
    const value: MetadataRequest = {
      topics: [{ topicId: ID_A, name: 'orders' }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: true,
      includeTopicAuthorizedOperations: false,
    }
    const bytes = hex(
      '02 // topics: compact count 1',
      '0123456789abcdeffedcba9876543210 // topicId',
      `07 ${utf8('orders')} // name: compact nullable string, length+1`,
      '00 // topic: no tagged fields',
      '01 // allowAutoTopicCreation true',
      '01 // includeClusterAuthorizedOperations true (v8-v10)',
      '00 // includeTopicAuthorizedOperations false',
      '00 // no tagged fields',
    )
    expectGolden(codec, 'request', 10, value, bytes)
  })

  it('golden v12 request (flexible): a topic by id only', () => {
    const value: MetadataRequest = {
      topics: [{ topicId: ID_B, name: null }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: true,
    }
    const bytes = hex(
      '02 // topics: compact count 1',
      '00000000000000010000000000000002 // topicId',
      '00 // name: null',
      '00 // topic: no tagged fields',
      '01 // allowAutoTopicCreation true',
      '01 // includeTopicAuthorizedOperations true (no includeClusterAuthorizedOperations after v10)',
      '00 // no tagged fields',
    )
    expectGolden(codec, 'request', 12, value, bytes)
  })

  it('golden v1 response (non-flexible)', () => {
    const value: MetadataResponse = {
      throttleTimeMs: 0,
      brokers: [{ nodeId: 1, host: 'localhost', port: 9092, rack: null }],
      clusterId: null,
      controllerId: 1,
      topics: [
        {
          errorCode: 0,
          name: 'orders',
          topicId: ZERO_ID,
          isInternal: false,
          partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: -1, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }],
          topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
        },
      ],
      clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      errorCode: 0,
    }
    const bytes = hex(
      '00000001 // brokers: count 1',
      '00000001 // nodeId 1',
      `0009 ${utf8('localhost')} // host`,
      '00002384 // port 9092',
      'ffff     // rack: null (v1+)',
      '00000001 // controllerId 1 (v1+)',
      '00000001 // topics: count 1',
      '0000     // errorCode 0',
      `0006 ${utf8('orders')} // name`,
      '00       // isInternal false (v1+)',
      '00000001 // partitions: count 1',
      '0000 00000000 00000001 // errorCode 0, partitionIndex 0, leaderId 1',
      '00000001 00000001 // replicaNodes [1]',
      '00000001 00000001 // isrNodes [1]',
    )
    expectGolden(codec, 'response', 1, value, bytes)
  })

  it('golden v12 response (flexible)', () => {
    const value: MetadataResponse = {
      throttleTimeMs: 0,
      brokers: [{ nodeId: 1, host: 'localhost', port: 9092, rack: null }],
      clusterId: 'abc',
      controllerId: 1,
      topics: [
        {
          errorCode: 0,
          name: 'orders',
          topicId: ID_A,
          isInternal: false,
          partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }],
          topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
        },
        {
          errorCode: 100,
          name: null,
          topicId: ID_B,
          isInternal: false,
          partitions: [],
          topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
        },
      ],
      clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      errorCode: 0,
    }
    const bytes = hex(
      '00000000 // throttleTimeMs 0',
      '02 // brokers: compact count 1',
      `00000001 0a ${utf8('localhost')} 00002384 // nodeId 1, host, port 9092`,
      '00 // rack: null',
      '00 // broker: no tagged fields',
      `04 ${utf8('abc')} // clusterId`,
      '00000001 // controllerId 1',
      '03 // topics: compact count 2',
      `0000 07 ${utf8('orders')} // errorCode 0, name`,
      '0123456789abcdeffedcba9876543210 // topicId',
      '00 // isInternal false',
      '02 // partitions: compact count 1',
      '0000 00000000 00000001 00000000 // errorCode, partitionIndex 0, leaderId 1, leaderEpoch 0',
      '02 00000001 // replicaNodes [1]',
      '02 00000001 // isrNodes [1]',
      '01 // offlineReplicas []',
      '00 // partition: no tagged fields',
      '80000000 // topicAuthorizedOperations: omitted (INT32_MIN)',
      '00 // topic: no tagged fields',
      '0064 00 // errorCode 100 UNKNOWN_TOPIC_ID, name null (v12+)',
      '00000000000000010000000000000002 // topicId',
      '00 01 80000000 00 // isInternal false, no partitions, omitted operations, no tagged fields',
      '00 // no tagged fields (no clusterAuthorizedOperations after v10)',
    )
    expectGolden(codec, 'response', 12, value, bytes)
  })

  it('skips unknown tagged fields inside nested structures', () => {
    const bytes = hex(
      '02 // topics: 1',
      '00000000000000000000000000000000 // topicId',
      `07 ${utf8('orders')}`,
      '01 2a 02 ffff // topic: one unknown tagged field 42 of 2 bytes',
      '01 00 00 // allowAutoTopicCreation, includeTopicAuthorizedOperations, no tagged fields',
    )
    expect(decode(codec, 'request', 11, bytes)).toStrictEqual({
      topics: [{ topicId: ZERO_ID, name: 'orders' }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    })
  })

  it('null topics round trip from v1 (all topics) and cannot be encoded in v0', () => {
    const all: MetadataRequest = {
      topics: null,
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }
    for (let v = 1; v <= 12; v++) expectRoundTrip(codec, 'request', v, all, all)
    expect(() => encode(codec, 'request', 0, all)).toThrow(/v0 cannot carry a null topics/)
  })

  it('refuses what an older version cannot carry (not ignorable in Kafka)', () => {
    const base = request(12).input
    expect(() => encode(codec, 'request', 9, base)).toThrow(/cannot carry a null name/)
    const named = { ...base, topics: [{ topicId: ZERO_ID, name: 'a' }] }
    expect(() => encode(codec, 'request', 3, { ...named, allowAutoTopicCreation: false })).toThrow(/allowAutoTopicCreation/)
    expect(() => encode(codec, 'request', 7, { ...named, allowAutoTopicCreation: true })).toThrow(/includeTopicAuthorizedOperations/)
    expect(() => encode(codec, 'request', 11, { ...named, includeClusterAuthorizedOperations: true })).toThrow(/includeClusterAuthorizedOperations/)
    const res = response(12).input
    expect(() => encode(codec, 'response', 11, res)).toThrow(/cannot carry a null name/)
    const named2 = { ...res, topics: res.topics.map((t) => ({ ...t, name: 'x' })) }
    expect(() => encode(codec, 'response', 7, { ...named2, topics: [{ ...named2.topics[0], topicAuthorizedOperations: 8 }] })).toThrow(/topicAuthorizedOperations/)
    expect(() => encode(codec, 'response', 11, { ...named2, clusterAuthorizedOperations: 0 })).toThrow(/clusterAuthorizedOperations/)
  })

  it('reads a null topic name before v12 as a protocol error', () => {
    const bytes = hex('00000000 02 00000001 0a', utf8('localhost'), '00002384 00 00 00 00000001 02 0000 00')
    expect(() => decode(codec, 'response', 11, bytes)).toThrow(/null where a string is required/)
  })
})
