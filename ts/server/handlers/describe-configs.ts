/**
 * DescribeConfigs for TOPIC and BROKER resources, with Kafka's config names, sources and types.
 *
 * A topic config is the topic's own value (source DYNAMIC_TOPIC_CONFIG) when CreateTopics set it,
 * else the broker's (`log.*` settings): STATIC_BROKER_CONFIG when it differs from Kafka's
 * default, DEFAULT_CONFIG otherwise. With includeSynonyms, each config lists where its value
 * could come from, most specific first (topic override, broker setting, default), as Kafka does.
 * A BROKER resource is this broker by its node id; the cluster-wide default resource ("") has no
 * dynamic configs, hence none. A GROUP resource: the group's configs (./group-configs.ts).
 * Other broker ids and other resource types -> INVALID_REQUEST.
 */
import {
  ConfigResourceType,
  type DescribeConfigsRequest,
  type DescribeConfigsResourceResult,
  type DescribeConfigsResponse,
  type DescribeConfigsResult,
  type DescribeConfigsSynonym,
} from '../../protocol/apis/describe-configs.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { DEFAULT_LOG_CONFIG, type LogConfig } from '../../storage/types.js'
import type { BrokerContext } from './broker-context.js'
import { brokerConfigFrom, DEFAULT_MIN_INSYNC_REPLICAS, REPLICA_SELECTOR_CLASSES, type BrokerConfig } from '../config.js'
import { DEFAULT_REPLICA_LAG_TIME_MAX_MS } from '../../replica/partition.js'
import type { ApiHandler } from '../kafka-apis.js'
import { describeGroupConfigs } from './group-configs.js'

/** Kafka's DescribeConfigsResponse ConfigSource codes. */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
  CLIENT_METRICS_CONFIG: 7,
  GROUP_CONFIG: 8,
} as const

/** Kafka's DescribeConfigsResponse ConfigType codes. */
export const ConfigType = { UNKNOWN: 0, BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7, CLASS: 8, PASSWORD: 9 } as const

const LONG_MAX = '9223372036854775807'

/** A number of LogConfig as Kafka prints it (our "never" is Number.MAX_SAFE_INTEGER, Kafka's Long.MAX_VALUE). */
function long(n: number): string {
  return n === Number.MAX_SAFE_INTEGER ? LONG_MAX : String(n)
}

interface TopicConfigDef {
  name: string
  /** The broker setting that provides the default. */
  brokerName: string
  type: number
  /** The effective broker-level value; null when the broker has no setting for it here. */
  brokerValue: (log: LogConfig, broker: BrokerConfig) => string | null
  kafkaDefault: string
}

const TOPIC_CONFIGS: TopicConfigDef[] = [
  { name: 'cleanup.policy', brokerName: 'log.cleanup.policy', type: ConfigType.LIST, brokerValue: (l) => l.cleanupPolicy.join(','), kafkaDefault: 'delete' },
  { name: 'compression.type', brokerName: 'compression.type', type: ConfigType.STRING, brokerValue: () => null, kafkaDefault: 'producer' },
  { name: 'delete.retention.ms', brokerName: 'log.cleaner.delete.retention.ms', type: ConfigType.LONG, brokerValue: (l) => long(l.deleteRetentionMs), kafkaDefault: '86400000' },
  { name: 'file.delete.delay.ms', brokerName: 'log.segment.delete.delay.ms', type: ConfigType.LONG, brokerValue: () => null, kafkaDefault: '60000' },
  { name: 'flush.messages', brokerName: 'log.flush.interval.messages', type: ConfigType.LONG, brokerValue: (l) => long(l.flushMessages), kafkaDefault: LONG_MAX },
  { name: 'flush.ms', brokerName: 'log.flush.interval.ms', type: ConfigType.LONG, brokerValue: (l) => long(l.flushMs), kafkaDefault: LONG_MAX },
  { name: 'index.interval.bytes', brokerName: 'log.index.interval.bytes', type: ConfigType.INT, brokerValue: (l) => String(l.indexIntervalBytes), kafkaDefault: '4096' },
  { name: 'max.compaction.lag.ms', brokerName: 'log.cleaner.max.compaction.lag.ms', type: ConfigType.LONG, brokerValue: (l) => long(l.maxCompactionLagMs), kafkaDefault: LONG_MAX },
  { name: 'max.message.bytes', brokerName: 'message.max.bytes', type: ConfigType.INT, brokerValue: (l) => String(l.maxMessageBytes), kafkaDefault: '1048588' },
  { name: 'message.timestamp.type', brokerName: 'log.message.timestamp.type', type: ConfigType.STRING, brokerValue: (l) => l.messageTimestampType, kafkaDefault: 'CreateTime' },
  { name: 'min.cleanable.dirty.ratio', brokerName: 'log.cleaner.min.cleanable.ratio', type: ConfigType.DOUBLE, brokerValue: (l) => String(l.minCleanableDirtyRatio), kafkaDefault: '0.5' },
  { name: 'min.compaction.lag.ms', brokerName: 'log.cleaner.min.compaction.lag.ms', type: ConfigType.LONG, brokerValue: (l) => long(l.minCompactionLagMs), kafkaDefault: '0' },
  { name: 'min.insync.replicas', brokerName: 'min.insync.replicas', type: ConfigType.INT, brokerValue: (_, c) => String(c.minInsyncReplicas ?? DEFAULT_MIN_INSYNC_REPLICAS), kafkaDefault: '1' },
  { name: 'preallocate', brokerName: 'log.preallocate', type: ConfigType.BOOLEAN, brokerValue: () => null, kafkaDefault: 'false' },
  { name: 'retention.bytes', brokerName: 'log.retention.bytes', type: ConfigType.LONG, brokerValue: (l) => String(l.retentionBytes), kafkaDefault: '-1' },
  { name: 'retention.ms', brokerName: 'log.retention.ms', type: ConfigType.LONG, brokerValue: (l) => String(l.retentionMs), kafkaDefault: '604800000' },
  { name: 'segment.bytes', brokerName: 'log.segment.bytes', type: ConfigType.INT, brokerValue: (l) => String(l.segmentBytes), kafkaDefault: '1073741824' },
  { name: 'segment.index.bytes', brokerName: 'log.index.size.max.bytes', type: ConfigType.INT, brokerValue: (l) => String(l.segmentIndexBytes), kafkaDefault: '10485760' },
  { name: 'segment.ms', brokerName: 'log.roll.ms', type: ConfigType.LONG, brokerValue: (l) => String(l.segmentMs), kafkaDefault: '604800000' },
  { name: 'unclean.leader.election.enable', brokerName: 'unclean.leader.election.enable', type: ConfigType.BOOLEAN, brokerValue: () => null, kafkaDefault: 'false' },
]

interface BrokerConfigDef {
  name: string
  type: number
  value: (c: BrokerConfig) => string | null
}

const BROKER_CONFIGS: BrokerConfigDef[] = [
  { name: 'advertised.listeners', type: ConfigType.STRING, value: (c) => `PLAINTEXT://${c.advertisedHost}:${c.advertisedPort}` },
  { name: 'auto.create.topics.enable', type: ConfigType.BOOLEAN, value: (c) => String(c.autoCreateTopics) },
  { name: 'broker.rack', type: ConfigType.STRING, value: (c) => c.rack },
  { name: 'cluster.metadata', type: ConfigType.STRING, value: (c) => (c.clusterMetadata.length > 0 ? c.clusterMetadata.map((u) => u.replace(/^http:\/\//, 'etcd://')).join(',') : null) },
  { name: 'connections.max.idle.ms', type: ConfigType.LONG, value: (c) => String(c.connectionsMaxIdleMs) },
  { name: 'default.replication.factor', type: ConfigType.INT, value: (c) => String(c.defaultReplicationFactor) },
  { name: 'listeners', type: ConfigType.STRING, value: (c) => `PLAINTEXT://${c.host}:${c.port}` },
  { name: 'log.cleaner.backoff.ms', type: ConfigType.LONG, value: (c) => String(c.cleaner.backOffMs) },
  { name: 'log.cleaner.dedupe.buffer.size', type: ConfigType.LONG, value: (c) => String(c.cleaner.dedupeBufferSize) },
  { name: 'log.cleaner.delete.retention.ms', type: ConfigType.LONG, value: (c) => long(c.logDefaults.deleteRetentionMs) },
  { name: 'log.cleaner.enable', type: ConfigType.BOOLEAN, value: (c) => String(c.cleaner.enableCleaner) },
  { name: 'log.cleaner.io.buffer.size', type: ConfigType.INT, value: (c) => String(c.cleaner.ioBufferSize) },
  { name: 'log.cleaner.max.compaction.lag.ms', type: ConfigType.LONG, value: (c) => long(c.logDefaults.maxCompactionLagMs) },
  { name: 'log.cleaner.min.cleanable.ratio', type: ConfigType.DOUBLE, value: (c) => String(c.logDefaults.minCleanableDirtyRatio) },
  { name: 'log.cleaner.min.compaction.lag.ms', type: ConfigType.LONG, value: (c) => long(c.logDefaults.minCompactionLagMs) },
  { name: 'log.cleaner.threads', type: ConfigType.INT, value: (c) => String(c.cleaner.numThreads) },
  { name: 'log.cleanup.policy', type: ConfigType.LIST, value: (c) => c.logDefaults.cleanupPolicy.join(',') },
  { name: 'log.dirs', type: ConfigType.STRING, value: (c) => c.dataDir },
  { name: 'log.flush.interval.messages', type: ConfigType.LONG, value: (c) => long(c.logDefaults.flushMessages) },
  { name: 'log.flush.interval.ms', type: ConfigType.LONG, value: (c) => long(c.logDefaults.flushMs) },
  { name: 'log.index.interval.bytes', type: ConfigType.INT, value: (c) => String(c.logDefaults.indexIntervalBytes) },
  { name: 'log.index.size.max.bytes', type: ConfigType.INT, value: (c) => String(c.logDefaults.segmentIndexBytes) },
  { name: 'log.message.timestamp.type', type: ConfigType.STRING, value: (c) => c.logDefaults.messageTimestampType },
  { name: 'log.retention.bytes', type: ConfigType.LONG, value: (c) => String(c.logDefaults.retentionBytes) },
  { name: 'log.retention.check.interval.ms', type: ConfigType.LONG, value: (c) => String(c.retentionCheckIntervalMs) },
  { name: 'log.retention.ms', type: ConfigType.LONG, value: (c) => String(c.logDefaults.retentionMs) },
  { name: 'log.roll.ms', type: ConfigType.LONG, value: (c) => String(c.logDefaults.segmentMs) },
  { name: 'log.segment.bytes', type: ConfigType.INT, value: (c) => String(c.logDefaults.segmentBytes) },
  { name: 'max.broker.partitions', type: ConfigType.INT, value: (c) => String(c.maxBrokerPartitions) },
  { name: 'message.max.bytes', type: ConfigType.INT, value: (c) => String(c.logDefaults.maxMessageBytes) },
  { name: 'min.insync.replicas', type: ConfigType.INT, value: (c) => String(c.minInsyncReplicas ?? DEFAULT_MIN_INSYNC_REPLICAS) },
  { name: 'node.id', type: ConfigType.INT, value: (c) => String(c.nodeId) },
  { name: 'num.partitions', type: ConfigType.INT, value: (c) => String(c.numPartitions) },
  { name: 'offsets.topic.segment.bytes', type: ConfigType.INT, value: (c) => String(c.offsetsTopicSegmentBytes) },
  { name: 'replica.lag.time.max.ms', type: ConfigType.LONG, value: (c) => String(c.replicaLagTimeMaxMs ?? DEFAULT_REPLICA_LAG_TIME_MAX_MS) },
  { name: 'replica.selector.class', type: ConfigType.CLASS, value: (c) => REPLICA_SELECTOR_CLASSES[c.replicaSelector] },
  { name: 'socket.request.max.bytes', type: ConfigType.INT, value: (c) => String(c.maxRequestBytes) },
  { name: 'transaction.state.log.segment.bytes', type: ConfigType.INT, value: (c) => String(c.transactionStateLogSegmentBytes) },
  { name: 'transfer.mode', type: ConfigType.STRING, value: (c) => c.transfer },
]

/** The broker's settings when nothing is configured: what tells a static setting from a default. */
const DEFAULT_BROKER = brokerConfigFrom({})

function entry(name: string, value: string | null, source: number, type: number, readOnly: boolean, synonyms: DescribeConfigsSynonym[]): DescribeConfigsResourceResult {
  return { name, value, readOnly, configSource: source, isSensitive: false, synonyms, configType: type, documentation: null }
}

/** Every config of a topic with these overrides: value, source, synonyms (CreateTopics v5+ returns them too). */
export function topicConfigEntries(broker: BrokerContext, overrides: Record<string, string>, synonymsToo: boolean): DescribeConfigsResourceResult[] {
  return TOPIC_CONFIGS.map((def) => {
    const own = overrides[def.name]
    const brokerValue = def.brokerValue(broker.config.logDefaults, broker.config)
    const defaultValue = def.brokerValue(DEFAULT_LOG_CONFIG, DEFAULT_BROKER) ?? def.kafkaDefault
    const synonyms: DescribeConfigsSynonym[] = []
    if (own !== undefined) synonyms.push({ name: def.name, value: own, source: ConfigSource.DYNAMIC_TOPIC_CONFIG })
    if (brokerValue !== null && brokerValue !== defaultValue) synonyms.push({ name: def.brokerName, value: brokerValue, source: ConfigSource.STATIC_BROKER_CONFIG })
    synonyms.push({ name: def.brokerName, value: defaultValue, source: ConfigSource.DEFAULT_CONFIG })
    const effective = synonyms[0]
    return entry(def.name, effective.value, effective.source, def.type, false, synonymsToo ? synonyms : [])
  })
}

export function describeConfigsHandler(broker: BrokerContext): ApiHandler<DescribeConfigsRequest, DescribeConfigsResponse> {
  const wanted = (keys: string[] | null, name: string) => keys === null || keys.length === 0 || keys.includes(name)

  const describeTopic = (name: string, keys: string[] | null, synonymsToo: boolean): DescribeConfigsResult => {
    const topic = broker.topics.get(name)
    if (!topic) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `no topic ${name}`, resourceType: ConfigResourceType.TOPIC, resourceName: name, configs: [] }
    const configs = topicConfigEntries(broker, topic.configs, synonymsToo).filter((c) => wanted(keys, c.name))
    return { errorCode: ErrorCode.NONE, errorMessage: null, resourceType: ConfigResourceType.TOPIC, resourceName: name, configs }
  }

  const describeBroker = (name: string, keys: string[] | null, synonymsToo: boolean): DescribeConfigsResult => {
    const result: DescribeConfigsResult = { errorCode: ErrorCode.NONE, errorMessage: null, resourceType: ConfigResourceType.BROKER, resourceName: name, configs: [] }
    if (name === '') return result // the cluster-wide dynamic defaults: none
    if (name !== String(broker.config.nodeId)) {
      return { ...result, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `unexpected broker id, expected ${broker.config.nodeId} or the empty string, but received ${name}` }
    }
    for (const def of BROKER_CONFIGS) {
      if (!wanted(keys, def.name)) continue
      const value = def.value(broker.config)
      const source = value !== def.value(DEFAULT_BROKER) ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG
      const synonyms = synonymsToo ? [{ name: def.name, value, source }] : []
      result.configs.push(entry(def.name, value, source, def.type, true, synonyms))
    }
    return result
  }

  const describeGroup = async (name: string, keys: string[] | null, synonymsToo: boolean): Promise<DescribeConfigsResult> => ({
    errorCode: ErrorCode.NONE,
    // Kafka 4.4 answers a GROUP resource with an empty message, not null.
    errorMessage: '',
    resourceType: ConfigResourceType.GROUP,
    resourceName: name,
    configs: await describeGroupConfigs(broker, name, keys, synonymsToo),
  })

  return async (request) => ({
    throttleTimeMs: 0,
    results: await Promise.all(request.resources.map(async (r): Promise<DescribeConfigsResult> => {
      if (r.resourceType === ConfigResourceType.GROUP) return describeGroup(r.resourceName, r.configurationKeys, request.includeSynonyms)
      if (r.resourceType === ConfigResourceType.TOPIC) return describeTopic(r.resourceName, r.configurationKeys, request.includeSynonyms)
      if (r.resourceType === ConfigResourceType.BROKER) return describeBroker(r.resourceName, r.configurationKeys, request.includeSynonyms)
      return {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: `resource type ${r.resourceType} is not supported`,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        configs: [],
      }
    })),
  })
}
