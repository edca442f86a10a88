/**
 * The admin APIs through a socket: DeleteTopics (by name, by id in v6), CreatePartitions,
 * DescribeConfigs (topic and broker, with sources and synonyms), DeleteRecords (low watermark)
 * and OffsetForLeaderEpoch, each answered in the shape of the version asked.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'
import { createPartitionsCodec } from '../../ts/protocol/apis/create-partitions.js'
import { deleteRecordsCodec } from '../../ts/protocol/apis/delete-records.js'
import { deleteTopicsCodec } from '../../ts/protocol/apis/delete-topics.js'
import { ConfigResourceType, describeConfigsCodec } from '../../ts/protocol/apis/describe-configs.js'
import { offsetForLeaderEpochCodec } from '../../ts/protocol/apis/offset-for-leader-epoch.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { ConfigSource } from '../../ts/server/handlers/describe-configs.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import { ConfigError } from '../../ts/config/config-def.js'
import { startBroker } from '../helpers/broker.js'

const ZERO_UUID = Buffer.alloc(16)
let broker: Broker
let client: NetworkClient

beforeEach(async () => {
  broker = await startBroker({ props: { 'log.retention.ms': '3600000' } })
  client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
})
afterEach(async () => {
  await client.close()
  await broker.stop()
})

describe('CreateTopics', () => {
  it("answers v5+ with the topic's configs and their sources (Kafka's AdminClient needs them)", async () => {
    const create = (version: number, name: string, validateOnly = false) =>
      client.send(createTopicsCodec, version, {
        topics: [{ name, numPartitions: 2, replicationFactor: -1, assignments: [], configs: [{ name: 'segment.bytes', value: '1048576' }] }],
        timeoutMs: 1000,
        validateOnly,
      })
    const [created] = (await create(7, 'with-configs')).topics
    expect(created).toMatchObject({ errorCode: ErrorCode.NONE, numPartitions: 2, replicationFactor: 1 })
    const byName = new Map(created.configs!.map((c) => [c.name, c]))
    expect(byName.get('segment.bytes')).toEqual({ name: 'segment.bytes', value: '1048576', readOnly: false, configSource: ConfigSource.DYNAMIC_TOPIC_CONFIG, isSensitive: false })
    expect(byName.get('retention.ms')).toMatchObject({ value: '3600000', configSource: ConfigSource.STATIC_BROKER_CONFIG })
    expect((await create(5, 'validated', true)).topics[0].configs).not.toBeNull()
    expect(broker.topics.get('validated')).toBeUndefined()
    expect((await create(4, 'old-shape')).topics[0].configs).toEqual([])
  })

  it('places replicas by replication factor or by assignment, on the brokers there are (a standalone broker: itself)', async () => {
    const create = (topic: { name: string; numPartitions?: number; replicationFactor?: number; assignments?: number[][] }) =>
      client.send(createTopicsCodec, 7, {
        topics: [
          {
            name: topic.name,
            numPartitions: topic.numPartitions ?? -1,
            replicationFactor: topic.replicationFactor ?? -1,
            assignments: (topic.assignments ?? []).map((brokerIds, partitionIndex) => ({ partitionIndex, brokerIds })),
            configs: [],
          },
        ],
        timeoutMs: 1000,
        validateOnly: false,
      })
    const result = async (topic: Parameters<typeof create>[0]) => (await create(topic)).topics[0]
    expect(await result({ name: 'assigned', assignments: [[0], [0], [0]] })).toMatchObject({ errorCode: ErrorCode.NONE, numPartitions: 3, replicationFactor: 1 })
    expect(broker.topics.get('assigned')?.partitions).toBe(3)
    expect(await result({ name: 'rf1', numPartitions: 2, replicationFactor: 1 })).toMatchObject({ errorCode: ErrorCode.NONE, numPartitions: 2, replicationFactor: 1 })
    expect(await result({ name: 'rf2', numPartitions: 2, replicationFactor: 2 })).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICATION_FACTOR })
    expect(await result({ name: 'rf0', numPartitions: 2, replicationFactor: 0 })).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICATION_FACTOR })
    expect(await result({ name: 'elsewhere', assignments: [[0], [3]] })).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT })
    expect(await result({ name: 'two-replicas', assignments: [[0, 1]] })).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT })
    expect(await result({ name: 'both', numPartitions: 1, assignments: [[0]] })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST })
    for (const name of ['rf2', 'rf0', 'elsewhere', 'two-replicas', 'both']) expect(broker.topics.get(name)).toBeUndefined()
  })
})

describe('DeleteTopics', () => {
  it('deletes by name (v1-v5) and answers unknown and duplicate names', async () => {
    for (const version of [1, 4, 5]) {
      await broker.createTopic('gone', 2, {})
      const r = await client.send(deleteTopicsCodec, version, { topics: [], topicNames: ['gone', 'never', 'twice', 'twice'], timeoutMs: 1000 })
      expect(r.responses.map((x) => [x.name, x.errorCode])).toEqual([
        ['gone', ErrorCode.NONE],
        ['never', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
        ['twice', ErrorCode.INVALID_REQUEST],
        ['twice', ErrorCode.INVALID_REQUEST],
      ])
      expect(r.responses[1].errorMessage).toBe(version >= 5 ? 'no topic never' : null)
      expect(broker.topics.get('gone')).toBeUndefined()
      expect(broker.logManager.getLog('gone', 0)).toBeUndefined()
    }
  })

  it('deletes by id and by name in v6, with the topic id in the answer', async () => {
    const byId = (await broker.createTopic('by-id', 1, {}))!
    const byName = (await broker.createTopic('by-name', 1, {}))!
    const unknownId = Buffer.alloc(16, 7)
    const r = await client.send(deleteTopicsCodec, 6, {
      topics: [
        { name: null, topicId: byId.topicId },
        { name: 'by-name', topicId: ZERO_UUID },
        { name: null, topicId: unknownId },
      ],
      topicNames: [],
      timeoutMs: 1000,
    })
    expect(r.responses).toEqual([
      { name: 'by-id', topicId: byId.topicId, errorCode: ErrorCode.NONE, errorMessage: null },
      { name: 'by-name', topicId: byName.topicId, errorCode: ErrorCode.NONE, errorMessage: null },
      { name: null, topicId: unknownId, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: 'no topic with this id' },
    ])
    expect(broker.topics.all()).toEqual([])
  })

  it('refuses a v6 entry with both or neither of name and id', async () => {
    const kept = (await broker.createTopic('kept', 1, {}))!
    const r = await client.send(deleteTopicsCodec, 6, {
      topics: [
        { name: 'kept', topicId: kept.topicId },
        { name: null, topicId: ZERO_UUID },
      ],
      topicNames: [],
      timeoutMs: 1000,
    })
    expect(r.responses.map((x) => x.errorCode)).toEqual([ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST])
    expect(broker.topics.get('kept')).toBeDefined()
  })
})

describe('CreatePartitions', () => {
  it('adds partitions, refuses a smaller or equal count and unknown topics, and validates only when asked', async () => {
    await broker.createTopic('grow', 1, {})
    for (const version of [0, 2, 3]) {
      const count = broker.topics.get('grow')!.partitions + 1
      const r = await client.send(createPartitionsCodec, version, {
        topics: [
          { name: 'grow', count, assignments: null },
          { name: 'nope', count: 3, assignments: null },
        ],
        timeoutMs: 1000,
        validateOnly: false,
      })
      expect(r.results.map((x) => [x.name, x.errorCode])).toEqual([
        ['grow', ErrorCode.NONE],
        ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ])
      expect(broker.topics.get('grow')!.partitions).toBe(count)
      expect(broker.logManager.getLog('grow', count - 1)).toBeDefined()
    }
    const same = await client.send(createPartitionsCodec, 3, { topics: [{ name: 'grow', count: 4, assignments: null }], timeoutMs: 1000, validateOnly: false })
    expect(same.results[0].errorCode).toBe(ErrorCode.INVALID_PARTITIONS)
    const fewer = await client.send(createPartitionsCodec, 3, { topics: [{ name: 'grow', count: 2, assignments: null }], timeoutMs: 1000, validateOnly: false })
    expect(fewer.results[0].errorCode).toBe(ErrorCode.INVALID_PARTITIONS)
    const dry = await client.send(createPartitionsCodec, 3, { topics: [{ name: 'grow', count: 9, assignments: null }], timeoutMs: 1000, validateOnly: true })
    expect(dry.results[0].errorCode).toBe(ErrorCode.NONE)
    expect(broker.topics.get('grow')!.partitions).toBe(4)
    const badAssignment = await client.send(createPartitionsCodec, 3, { topics: [{ name: 'grow', count: 5, assignments: [{ brokerIds: [42] }] }], timeoutMs: 1000, validateOnly: false })
    expect(badAssignment.results[0].errorCode).toBe(ErrorCode.INVALID_REPLICA_ASSIGNMENT)
    const goodAssignment = await client.send(createPartitionsCodec, 3, { topics: [{ name: 'grow', count: 5, assignments: [{ brokerIds: [0] }] }], timeoutMs: 1000, validateOnly: false })
    expect(goodAssignment.results[0].errorCode).toBe(ErrorCode.NONE)
  })
})

describe('DescribeConfigs', () => {
  it('describes topic configs with their sources and synonyms', async () => {
    await broker.createTopic('conf', 1, { 'segment.bytes': '1048576' })
    for (const version of [1, 2, 3, 4]) {
      const r = await client.send(describeConfigsCodec, version, {
        resources: [
          { resourceType: ConfigResourceType.TOPIC, resourceName: 'conf', configurationKeys: null },
          { resourceType: ConfigResourceType.TOPIC, resourceName: 'missing', configurationKeys: null },
        ],
        includeSynonyms: true,
        includeDocumentation: false,
      })
      const [conf, missing] = r.results
      expect(missing.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
      expect(conf.errorCode).toBe(ErrorCode.NONE)
      const byName = new Map(conf.configs.map((c) => [c.name, c]))
      expect(byName.get('segment.bytes')).toMatchObject({
        value: '1048576',
        configSource: ConfigSource.DYNAMIC_TOPIC_CONFIG,
        synonyms: [
          { name: 'segment.bytes', value: '1048576', source: ConfigSource.DYNAMIC_TOPIC_CONFIG },
          { name: 'log.segment.bytes', value: '1073741824', source: ConfigSource.DEFAULT_CONFIG },
        ],
        configType: version >= 3 ? 3 : 0,
      })
      expect(byName.get('retention.ms')).toMatchObject({ value: '3600000', configSource: ConfigSource.STATIC_BROKER_CONFIG })
      expect(byName.get('cleanup.policy')).toMatchObject({ value: 'delete', configSource: ConfigSource.DEFAULT_CONFIG })
      expect(byName.get('flush.messages')!.value).toBe('9223372036854775807')
    }
  })

  it('filters by configuration keys and omits synonyms unless asked', async () => {
    await broker.createTopic('conf', 1, {})
    const r = await client.send(describeConfigsCodec, 4, {
      resources: [{ resourceType: ConfigResourceType.TOPIC, resourceName: 'conf', configurationKeys: ['retention.bytes'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    })
    expect(r.results[0].configs).toEqual([
      { name: 'retention.bytes', value: '-1', readOnly: false, configSource: ConfigSource.DEFAULT_CONFIG, isSensitive: false, synonyms: [], configType: 5, documentation: null },
    ])
  })

  it('describes the broker by its node id, nothing for the default resource, and refuses other ids and types', async () => {
    const r = await client.send(describeConfigsCodec, 4, {
      resources: [
        { resourceType: ConfigResourceType.BROKER, resourceName: '0', configurationKeys: null },
        { resourceType: ConfigResourceType.BROKER, resourceName: '', configurationKeys: null },
        { resourceType: ConfigResourceType.BROKER, resourceName: '7', configurationKeys: null },
        { resourceType: ConfigResourceType.BROKER_LOGGER, resourceName: '0', configurationKeys: null },
      ],
      includeSynonyms: false,
      includeDocumentation: false,
    })
    const [self, defaults, other, logger] = r.results
    const byName = new Map(self.configs.map((c) => [c.name, c]))
    // Dynamic keys (KIP-226) are not read-only; static ones are.
    expect(byName.get('log.retention.ms')).toMatchObject({ value: '3600000', configSource: ConfigSource.STATIC_BROKER_CONFIG, readOnly: false })
    expect(byName.get('num.partitions')).toMatchObject({ readOnly: true })
    expect(byName.get('num.partitions')).toMatchObject({ value: '1', configSource: ConfigSource.DEFAULT_CONFIG })
    expect(byName.get('log.dirs')!.value).toBe(broker.config.dataDir)
    expect(byName.get('max.broker.partitions')).toMatchObject({ value: '10000', configSource: ConfigSource.DEFAULT_CONFIG })
    expect(byName.get('broker.rack')).toMatchObject({ value: null, configSource: ConfigSource.DEFAULT_CONFIG })
    expect(byName.get('cluster.metadata')).toMatchObject({ value: null, configSource: ConfigSource.DEFAULT_CONFIG })
    expect(defaults).toMatchObject({ errorCode: ErrorCode.NONE, configs: [] })
    expect(other.errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(logger.errorCode).toBe(ErrorCode.INVALID_REQUEST)
    // A key Kafka defines as internal is described only when set.
    expect(byName.has('group.consumer.regex.refresh.interval.ms')).toBe(false)
  })

  it('describes a key Kafka defines as internal when set: group.consumer.regex.refresh.interval.ms, at least 10000', async () => {
    expect(() => brokerConfigFrom({ 'group.consumer.regex.refresh.interval.ms': '9999' })).toThrow(ConfigError)
    expect(brokerConfigFrom({}).groupConsumerRegexRefreshIntervalMs).toBe(600_000)
    const tuned = await startBroker({ props: { 'group.consumer.regex.refresh.interval.ms': '30000' } })
    const tunedClient = await NetworkClient.connect(`127.0.0.1:${tuned.port}`)
    try {
      const r = await tunedClient.send(describeConfigsCodec, 4, {
        resources: [{ resourceType: ConfigResourceType.BROKER, resourceName: '0', configurationKeys: ['group.consumer.regex.refresh.interval.ms'] }],
        includeSynonyms: false,
        includeDocumentation: false,
      })
      expect(r.results[0]!.configs).toMatchObject([{ name: 'group.consumer.regex.refresh.interval.ms', value: '30000', configSource: ConfigSource.STATIC_BROKER_CONFIG, readOnly: true }])
    } finally {
      await tunedClient.close()
      await tuned.stop()
    }
  })
})

describe('DeleteRecords', () => {
  it('raises the log start offset and answers the low watermark', async () => {
    await broker.createTopic('trim', 1, {})
    const log = broker.logManager.getLog('trim', 0)!
    for (let i = 0; i < 10; i++) log.append(buildBatch([{ value: `v${i}` }]))
    const ask = async (version: number, offset: bigint, partition = 0) =>
      (await client.send(deleteRecordsCodec, version, { topics: [{ name: 'trim', partitions: [{ partitionIndex: partition, offset }] }], timeoutMs: 1000 })).topics[0].partitions[0]
    expect(await ask(0, 4n)).toEqual({ partitionIndex: 0, lowWatermark: 4n, errorCode: ErrorCode.NONE })
    expect(log.logStartOffset()).toBe(4n)
    expect(await ask(1, 2n)).toEqual({ partitionIndex: 0, lowWatermark: 4n, errorCode: ErrorCode.NONE })
    expect(await ask(2, 11n)).toMatchObject({ errorCode: ErrorCode.OFFSET_OUT_OF_RANGE })
    expect(await ask(2, -1n)).toEqual({ partitionIndex: 0, lowWatermark: 10n, errorCode: ErrorCode.NONE })
    expect(await ask(2, 0n, 5)).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1n })
  })
})

describe('OffsetForLeaderEpoch', () => {
  it('answers the end offset of an epoch and fences stale or future leader epochs', async () => {
    await broker.createTopic('epochs', 1, {})
    const log = broker.logManager.getLog('epochs', 0)!
    for (let i = 0; i < 3; i++) log.append(buildBatch([{ value: `v${i}` }]))
    for (const version of [2, 3, 4]) {
      const r = await client.send(offsetForLeaderEpochCodec, version, {
        replicaId: -1,
        topics: [
          {
            topic: 'epochs',
            partitions: [
              { partition: 0, currentLeaderEpoch: 0, leaderEpoch: 0 },
              { partition: 0, currentLeaderEpoch: 1, leaderEpoch: 0 },
              { partition: 9, currentLeaderEpoch: -1, leaderEpoch: 0 },
            ],
          },
        ],
      })
      expect(r.topics[0].partitions).toEqual([
        { errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: 0, endOffset: 3n },
        { errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH, partition: 0, leaderEpoch: -1, endOffset: -1n },
        { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partition: 9, leaderEpoch: -1, endOffset: -1n },
      ])
    }
  })
})
