/**
 * Broker and topic settings with Kafka's names. The broker reads `key=value` lines (a Kafka
 * server.properties subset) and command-line options; topics carry Kafka's topic-level configs
 * (segment.bytes, retention.ms, ...), which map onto the storage engine's LogConfig.
 */
import { readFileSync } from 'node:fs'
import { loadNative } from '../native/binding.js'
import { DEFAULT_LOG_CONFIG, type CleanupPolicy, type LogConfig } from '../storage/types.js'
import { DEFAULT_CLEANER_CONFIG, type CleanerConfig } from '../storage/log-cleaner.js'

export class ConfigError extends Error {
  readonly code = 'INVALID_CONFIG' as const
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

export interface BrokerConfig {
  nodeId: number
  dataDir: string
  host: string
  port: number
  /** The host and port clients are told to connect to (Metadata). */
  advertisedHost: string
  advertisedPort: number
  /** broker.rack: the rack (or zone) this broker is in, for rack-aware replica placement and KIP-392; null: none. */
  rack: string | null
  /**
   * cluster.metadata (`--cluster etcd://HOST:PORT[,HOST:PORT]`): the etcd endpoints that hold the
   * cluster's metadata (ts/cluster/); empty: a standalone broker, the whole cluster by itself.
   */
  clusterMetadata: string[]
  /** num.partitions: partitions of an auto-created topic. */
  numPartitions: number
  /** default.replication.factor: replicas of a topic created without one (auto-created ones too); default 1. */
  defaultReplicationFactor: number
  /** auto.create.topics.enable */
  autoCreateTopics: boolean
  /**
   * max.broker.partitions (KIP-578's name): the partitions all topics of this broker may have
   * together; a CreateTopics, CreatePartitions or auto-creation past it is refused with
   * POLICY_VIOLATION. Default 10000.
   */
  maxBrokerPartitions: number
  /**
   * log.max.open.segments (ferrolog's own): sealed segments whose `.log` the storage engine keeps
   * open at once; past it the least recently read is closed and reopened by its next read. Only
   * active segments hold descriptors from start (docs/storage.md "Open files"). Not set: 1000,
   * or a quarter of the open-file limit when that is less (the broker decides at start).
   */
  maxOpenSegments: number | undefined
  /** socket.request.max.bytes */
  maxRequestBytes: number
  /**
   * connections.max.idle.ms: a connection that read and wrote nothing and had no request in
   * flight (being handled, parked as a long poll, or being written) for this long is closed, a
   * partial frame that never completes included; negative: never. Kafka's default 600000.
   */
  connectionsMaxIdleMs: number
  /** log.retention.check.interval.ms */
  retentionCheckIntervalMs: number
  /** Defaults of every topic's log, from the broker's log.* settings. */
  logDefaults: LogConfig
  /** The log cleaner's settings (log.cleaner.*). */
  cleaner: CleanerConfig
  clusterId: string
  /** group.initial.rebalance.delay.ms: how long a new group waits for more members before its first generation. */
  groupInitialRebalanceDelayMs: number
  /** group.min.session.timeout.ms and group.max.session.timeout.ms: the session timeouts members may ask for. */
  groupMinSessionTimeoutMs: number
  groupMaxSessionTimeoutMs: number
  /** offsets.retention.check.interval.ms (600000): how often Empty groups without offsets are forgotten. */
  offsetsRetentionCheckIntervalMs: number
  /** offsets.topic.segment.bytes (100 MiB): the segment size of `__consumer_offsets`, a compacted log. */
  offsetsTopicSegmentBytes: number
  /** transaction.state.log.segment.bytes (100 MiB): the segment size of `__transaction_state`, a compacted log. */
  transactionStateLogSegmentBytes: number
  /** offsets.commit.timeout.ms: how long an offset commit (or deletion) waits for the offsets log's ISR (default 5000). */
  offsetsCommitTimeoutMs: number
  /** transaction.partition.verification.enable (true): a transactional Produce is verified with the coordinator (KIP-890 part 1). */
  transactionPartitionVerificationEnable: boolean
  /** transaction.max.timeout.ms (900000): the largest transaction.timeout.ms a producer may ask for. */
  transactionMaxTimeoutMs: number
  /** transactional.id.expiration.ms (604800000): an idle transactional id is forgotten after this long. */
  transactionalIdExpirationMs: number
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms (10000): how often timed-out transactions are looked for. */
  transactionAbortTimedOutTransactionCleanupIntervalMs: number
  /** transaction.remove.expired.transaction.cleanup.interval.ms (3600000): how often expired transactional ids are looked for. */
  transactionRemoveExpiredTransactionCleanupIntervalMs: number
  /** max.incremental.fetch.session.cache.slots: how many fetch sessions the broker keeps (default 1000). */
  fetchSessionCacheSlots?: number
  /** metrics.listen: where the Prometheus endpoint (GET /metrics) listens; absent = off. */
  metricsListen?: { host: string; port: number }
  /**
   * transfer.mode (`--transfer`): how Fetch responses' records reach the socket: `zero-copy`
   * (sendfile from the segment files, on the transfer engine's thread) or `copy` (read into
   * buffers, written with socket.write). Default: zero-copy on Linux, copy elsewhere.
   */
  transfer: TransferMode
  /** min.insync.replicas: the default of topics without their own (default 1); acks=all needs an ISR this large. */
  minInsyncReplicas?: number
  /** replica.lag.time.max.ms: how long a follower may stay behind before it leaves the ISR (default 30000). */
  replicaLagTimeMaxMs?: number
  /**
   * replica.selector.class (KIP-392): where consumers that send their rack read from. Kafka's
   * class names: org.apache.kafka.common.replica.LeaderSelector (the default: the leader) or
   * org.apache.kafka.common.replica.RackAwareReplicaSelector (an in-sync replica in the
   * consumer's rack).
   */
  replicaSelector: ReplicaSelectorName
  /** Cluster mode only: how this broker belongs to the cluster and replicates (see ClusterSettings). */
  cluster: ClusterSettings
}

/** The settings that matter in cluster mode (`cluster.metadata` set); Kafka's names and defaults. */
export interface ClusterSettings {
  /** broker.session.timeout.ms (9000): the lease of the broker's registration; past it without a keep-alive the broker is fenced. */
  brokerSessionTimeoutMs: number
  /** offsets.topic.replication.factor (3): the replicas of `__consumer_offsets`, created when first needed, once that many brokers live. */
  offsetsTopicReplicationFactor: number
  /**
   * transaction.state.log.replication.factor (3): the replicas of `__transaction_state`, created
   * when first needed, once that many brokers live. (transaction.state.log.num.partitions is not
   * supported: one partition, as `__consumer_offsets`.)
   */
  transactionStateLogReplicationFactor: number
  /** controlled.shutdown.enable (true): a SIGTERM moves this broker's leadership away before it stops. */
  controlledShutdownEnable: boolean
  /** num.replica.fetchers (1): fetcher loops per source broker. */
  numReplicaFetchers: number
  /** replica.fetch.* (Kafka's defaults: backoff 1000 ms, wait 500 ms, min 1 byte, 1 MiB a partition, 10 MiB a response). */
  replicaFetchBackoffMs: number
  replicaFetchWaitMaxMs: number
  replicaFetchMinBytes: number
  replicaFetchMaxBytes: number
  replicaFetchResponseMaxBytes: number
}

/** Kafka's default min.insync.replicas. */
export const DEFAULT_MIN_INSYNC_REPLICAS = 1

export type TransferMode = 'zero-copy' | 'copy'

export type ReplicaSelectorName = 'leader' | 'rack-aware'

/** Kafka's replica selector classes, by the names Kafka's brokers accept. */
export const REPLICA_SELECTOR_CLASSES: Record<ReplicaSelectorName, string> = {
  leader: 'org.apache.kafka.common.replica.LeaderSelector',
  'rack-aware': 'org.apache.kafka.common.replica.RackAwareReplicaSelector',
}

function replicaSelectorNamed(value: string | undefined): ReplicaSelectorName {
  if (value === undefined || value === '') return 'leader'
  for (const [name, className] of Object.entries(REPLICA_SELECTOR_CLASSES)) if (value === className) return name as ReplicaSelectorName
  throw new ConfigError(`replica.selector.class must be ${Object.values(REPLICA_SELECTOR_CLASSES).join(' or ')}, not "${value}"`)
}

/** Zero-copy on Linux when the native binding loads (it is the sendfile engine), else copy. */
export function defaultTransferMode(): TransferMode {
  return process.platform === 'linux' && loadNative() !== null ? 'zero-copy' : 'copy'
}

export function transferMode(value: string): TransferMode {
  if (value !== 'zero-copy' && value !== 'copy') throw new ConfigError(`transfer.mode must be zero-copy or copy, not "${value}"`)
  return value
}

/**
 * The most partitions one CreateTopics (all its topics together) or one CreatePartitions of a
 * topic may add: Kafka's controller refuses more (ReplicationControlManager's
 * MAX_PARTITIONS_PER_BATCH) with POLICY_VIOLATION and this message, before touching anything.
 */
export const MAX_PARTITIONS_PER_REQUEST = 10_000
export const EXCESSIVE_PARTITIONS = 'Excessively large number of partitions per request.'

export const DEFAULT_PORT = 9092
export const DEFAULT_MAX_BROKER_PARTITIONS = 10_000
export const DEFAULT_DATA_DIR = './data'

const MS_PER = { ms: 1, minutes: 60_000, hours: 3_600_000 } as const

/** Topic-level config name -> how it sets LogConfig. */
const TOPIC_CONFIGS: Record<string, (value: string, into: Partial<LogConfig>) => void> = {
  'segment.bytes': (v, c) => (c.segmentBytes = int(v, 'segment.bytes', 14)),
  'segment.ms': (v, c) => (c.segmentMs = int(v, 'segment.ms', 1)),
  'segment.index.bytes': (v, c) => (c.segmentIndexBytes = int(v, 'segment.index.bytes', 4)),
  'index.interval.bytes': (v, c) => (c.indexIntervalBytes = int(v, 'index.interval.bytes', 0)),
  'retention.bytes': (v, c) => (c.retentionBytes = int(v, 'retention.bytes', -1)),
  'retention.ms': (v, c) => (c.retentionMs = int(v, 'retention.ms', -1)),
  'flush.messages': (v, c) => (c.flushMessages = int(v, 'flush.messages', 1)),
  'flush.ms': (v, c) => (c.flushMs = int(v, 'flush.ms', 0)),
  'max.message.bytes': (v, c) => (c.maxMessageBytes = int(v, 'max.message.bytes', 0)),
  'message.timestamp.type': (v, c) => {
    if (v !== 'CreateTime' && v !== 'LogAppendTime') throw new ConfigError(`message.timestamp.type must be CreateTime or LogAppendTime, not "${v}"`)
    c.messageTimestampType = v
  },
  'cleanup.policy': (v, c) => (c.cleanupPolicy = cleanupPolicy(v, 'cleanup.policy')),
  'delete.retention.ms': (v, c) => (c.deleteRetentionMs = long(v, 'delete.retention.ms', 0)),
  'min.compaction.lag.ms': (v, c) => (c.minCompactionLagMs = long(v, 'min.compaction.lag.ms', 0)),
  'max.compaction.lag.ms': (v, c) => (c.maxCompactionLagMs = long(v, 'max.compaction.lag.ms', 1)),
  'min.cleanable.dirty.ratio': (v, c) => (c.minCleanableDirtyRatio = ratio(v, 'min.cleanable.dirty.ratio')),
}

/**
 * A cleanup.policy list (Kafka's ValidList of compact and delete, in any order, items trimmed);
 * an empty list is neither (the log is kept whole, as Kafka does with it).
 */
function cleanupPolicy(value: string, name: string): CleanupPolicy[] {
  const items = value.split(',').map((s) => s.trim()).filter((s) => s !== '')
  for (const item of items) {
    if (item !== 'compact' && item !== 'delete') throw new ConfigError(`Invalid value ${item} for configuration ${name}: String must be one of: compact, delete`)
  }
  return [...new Set(items as CleanupPolicy[])]
}

/** Kafka's LONG configs: our "never" is Number.MAX_SAFE_INTEGER, Kafka's Long.MAX_VALUE (also accepted). */
function long(value: string, name: string, min: number): number {
  if (value.trim() === LONG_MAX_TEXT) return Number.MAX_SAFE_INTEGER
  return int(value, name, min)
}

const LONG_MAX_TEXT = '9223372036854775807'

/** A DOUBLE between 0 and 1 (Kafka's `between(0, 1)`). */
function ratio(value: string, name: string): number {
  const n = Number(value.trim())
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(`Invalid value ${value} for configuration ${name}: Value must be between 0 and 1`)
  return n
}

/**
 * Kafka's `LogConfig.validateValues`: min.compaction.lag.ms may not exceed max.compaction.lag.ms
 * (each the topic's own value, else the broker's default).
 */
function checkCompactionLags(config: Pick<LogConfig, 'minCompactionLagMs' | 'maxCompactionLagMs'>): void {
  if (config.minCompactionLagMs > config.maxCompactionLagMs) {
    throw new ConfigError(`conflict topic config setting min.compaction.lag.ms (${config.minCompactionLagMs}) > max.compaction.lag.ms (${config.maxCompactionLagMs})`)
  }
}

/** Topic configs that are accepted and kept (DescribeConfigs shows them) but change nothing here. */
const ACCEPTED_TOPIC_CONFIGS = new Set(['compression.type', 'unclean.leader.election.enable', 'message.timestamp.difference.max.ms', 'file.delete.delay.ms', 'preallocate'])

function int(value: string, name: string, min: number): number {
  const n = Number(value.trim())
  if (!Number.isSafeInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, not "${value}"`)
  return n
}

function optionalInt(props: Record<string, string>, name: string, min: number, defaultValue: number): number {
  return props[name] !== undefined ? int(props[name], name, min) : defaultValue
}

/**
 * Validates topic configs (CreateTopics, AlterConfigs) and returns their effect on the log.
 * `defaults` (the broker's log defaults) complete the values checked together
 * (min.compaction.lag.ms against max.compaction.lag.ms).
 */
export function topicLogConfig(configs: Record<string, string>, defaults: LogConfig = DEFAULT_LOG_CONFIG): Partial<LogConfig> {
  const out: Partial<LogConfig> = {}
  for (const [name, value] of Object.entries(configs)) {
    const apply = TOPIC_CONFIGS[name]
    if (apply) apply(value, out)
    else if (name === MIN_INSYNC_REPLICAS) int(value, name, 1)
    else if (!ACCEPTED_TOPIC_CONFIGS.has(name)) throw new ConfigError(`unknown topic config ${name}`)
  }
  checkCompactionLags({ ...defaults, ...out })
  return out
}

export function isKnownTopicConfig(name: string): boolean {
  return name in TOPIC_CONFIGS || name === MIN_INSYNC_REPLICAS || ACCEPTED_TOPIC_CONFIGS.has(name)
}

/**
 * min.insync.replicas is a topic config that is not the log's (the replica manager reads it on
 * every acks=all produce): the topic's own value, else the broker's default.
 */
const MIN_INSYNC_REPLICAS = 'min.insync.replicas'

export function topicMinInsyncReplicas(configs: Record<string, string> | undefined, broker: Pick<BrokerConfig, 'minInsyncReplicas'>): number {
  const own = configs?.[MIN_INSYNC_REPLICAS]
  return own !== undefined ? int(own, MIN_INSYNC_REPLICAS, 1) : (broker.minInsyncReplicas ?? DEFAULT_MIN_INSYNC_REPLICAS)
}

/** Parses Kafka-style `key=value` lines; `#` starts a comment. */
export function parseProperties(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue
    const eq = line.indexOf('=')
    if (eq <= 0) throw new ConfigError(`not a key=value line: "${line}"`)
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim()
  }
  return out
}

function hostPort(text: string, what: string): { host: string; port: number } {
  const stripped = text.replace(/^[A-Z_]+:\/\//, '')
  const colon = stripped.lastIndexOf(':')
  const port = Number(stripped.slice(colon + 1))
  if (colon < 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${what} must be host:port, not "${text}"`)
  return { host: stripped.slice(0, colon) || '127.0.0.1', port }
}

/** `etcd://h1:p1,h2:p2` (or `h1:p1,etcd://h2:p2`) as etcd client URLs `http://h:p`. */
function etcdEndpoints(text: string): string[] {
  const endpoints = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
    .map((e) => {
      const m = /^(?:etcd:\/\/)?([^/:]+):(\d+)$/.exec(e)
      if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new ConfigError(`cluster.metadata must be etcd://HOST:PORT[,HOST:PORT...], not "${text}"`)
      return `http://${m[1]}:${m[2]}`
    })
  if (endpoints.length === 0) throw new ConfigError(`cluster.metadata names no etcd endpoint: "${text}"`)
  return endpoints
}

/** The broker config from server.properties-style settings (all optional). */
export function brokerConfigFrom(props: Record<string, string>): BrokerConfig {
  const listen = hostPort(props['listeners'] ?? `127.0.0.1:${DEFAULT_PORT}`, 'listeners')
  const advertised = props['advertised.listeners'] ? hostPort(props['advertised.listeners'], 'advertised.listeners') : listen
  const log: LogConfig = { ...DEFAULT_LOG_CONFIG }
  const set = (key: string, apply: (v: string) => void) => {
    if (props[key] !== undefined) apply(props[key])
  }
  set('log.segment.bytes', (v) => (log.segmentBytes = int(v, 'log.segment.bytes', 14)))
  set('log.roll.hours', (v) => (log.segmentMs = int(v, 'log.roll.hours', 1) * MS_PER.hours))
  set('log.roll.ms', (v) => (log.segmentMs = int(v, 'log.roll.ms', 1)))
  set('log.index.size.max.bytes', (v) => (log.segmentIndexBytes = int(v, 'log.index.size.max.bytes', 4)))
  set('log.index.interval.bytes', (v) => (log.indexIntervalBytes = int(v, 'log.index.interval.bytes', 0)))
  set('log.retention.bytes', (v) => (log.retentionBytes = int(v, 'log.retention.bytes', -1)))
  set('log.retention.hours', (v) => (log.retentionMs = int(v, 'log.retention.hours', -1) * MS_PER.hours))
  set('log.retention.minutes', (v) => (log.retentionMs = int(v, 'log.retention.minutes', -1) * MS_PER.minutes))
  set('log.retention.ms', (v) => (log.retentionMs = int(v, 'log.retention.ms', -1)))
  if (log.retentionMs < 0) log.retentionMs = -1
  set('log.flush.interval.messages', (v) => (log.flushMessages = int(v, 'log.flush.interval.messages', 1)))
  set('log.flush.interval.ms', (v) => (log.flushMs = int(v, 'log.flush.interval.ms', 0)))
  set('message.max.bytes', (v) => (log.maxMessageBytes = int(v, 'message.max.bytes', 0)))
  set('log.message.timestamp.type', (v) => Object.assign(log, topicLogConfig({ 'message.timestamp.type': v })))
  set('log.cleanup.policy', (v) => (log.cleanupPolicy = cleanupPolicy(v, 'log.cleanup.policy')))
  set('log.cleaner.delete.retention.ms', (v) => (log.deleteRetentionMs = long(v, 'log.cleaner.delete.retention.ms', 0)))
  set('log.cleaner.min.compaction.lag.ms', (v) => (log.minCompactionLagMs = long(v, 'log.cleaner.min.compaction.lag.ms', 0)))
  set('log.cleaner.max.compaction.lag.ms', (v) => (log.maxCompactionLagMs = long(v, 'log.cleaner.max.compaction.lag.ms', 1)))
  set('log.cleaner.min.cleanable.ratio', (v) => (log.minCleanableDirtyRatio = ratio(v, 'log.cleaner.min.cleanable.ratio')))
  checkCompactionLags(log)
  return {
    nodeId: props['node.id'] !== undefined ? int(props['node.id'], 'node.id', 0) : 0,
    dataDir: props['log.dirs'] ?? props['log.dir'] ?? DEFAULT_DATA_DIR,
    host: listen.host,
    port: listen.port,
    advertisedHost: advertised.host,
    advertisedPort: advertised.port,
    rack: props['broker.rack'] || null,
    clusterMetadata: props['cluster.metadata'] ? etcdEndpoints(props['cluster.metadata']) : [],
    defaultReplicationFactor: optionalInt(props, 'default.replication.factor', 1, 1),
    numPartitions: props['num.partitions'] !== undefined ? int(props['num.partitions'], 'num.partitions', 1) : 1,
    autoCreateTopics: (props['auto.create.topics.enable'] ?? 'true') === 'true',
    maxBrokerPartitions: optionalInt(props, 'max.broker.partitions', 1, DEFAULT_MAX_BROKER_PARTITIONS),
    maxOpenSegments: props['log.max.open.segments'] !== undefined ? int(props['log.max.open.segments'], 'log.max.open.segments', 1) : undefined,
    maxRequestBytes: props['socket.request.max.bytes'] !== undefined ? int(props['socket.request.max.bytes'], 'socket.request.max.bytes', 1) : 104_857_600,
    connectionsMaxIdleMs: optionalInt(props, 'connections.max.idle.ms', -1, 600_000),
    retentionCheckIntervalMs: props['log.retention.check.interval.ms'] !== undefined ? int(props['log.retention.check.interval.ms'], 'log.retention.check.interval.ms', 1) : 300_000,
    logDefaults: log,
    cleaner: cleanerConfigFrom(props),
    clusterId: props['cluster.id'] ?? 'ferrolog-cluster',
    groupInitialRebalanceDelayMs: optionalInt(props, 'group.initial.rebalance.delay.ms', 0, 3000),
    groupMinSessionTimeoutMs: optionalInt(props, 'group.min.session.timeout.ms', 1, 6000),
    groupMaxSessionTimeoutMs: optionalInt(props, 'group.max.session.timeout.ms', 1, 1_800_000),
    offsetsRetentionCheckIntervalMs: optionalInt(props, 'offsets.retention.check.interval.ms', 1, 600_000),
    offsetsTopicSegmentBytes: optionalInt(props, 'offsets.topic.segment.bytes', 14, 100 * 1024 * 1024),
    transactionStateLogSegmentBytes: optionalInt(props, 'transaction.state.log.segment.bytes', 14, 100 * 1024 * 1024),
    offsetsCommitTimeoutMs: optionalInt(props, 'offsets.commit.timeout.ms', 1, 5000),
    transactionPartitionVerificationEnable: (props['transaction.partition.verification.enable'] ?? 'true') === 'true',
    transactionMaxTimeoutMs: optionalInt(props, 'transaction.max.timeout.ms', 1, 900_000),
    transactionalIdExpirationMs: optionalInt(props, 'transactional.id.expiration.ms', 1, 604_800_000),
    transactionAbortTimedOutTransactionCleanupIntervalMs: optionalInt(props, 'transaction.abort.timed.out.transaction.cleanup.interval.ms', 1, 10_000),
    transactionRemoveExpiredTransactionCleanupIntervalMs: optionalInt(props, 'transaction.remove.expired.transaction.cleanup.interval.ms', 1, 3_600_000),
    fetchSessionCacheSlots: optionalInt(props, 'max.incremental.fetch.session.cache.slots', 0, 1000),
    metricsListen: props['metrics.listen'] ? hostPort(props['metrics.listen'], 'metrics.listen') : undefined,
    transfer: props['transfer.mode'] !== undefined ? transferMode(props['transfer.mode']) : defaultTransferMode(),
    minInsyncReplicas: optionalInt(props, 'min.insync.replicas', 1, DEFAULT_MIN_INSYNC_REPLICAS),
    replicaLagTimeMaxMs: optionalInt(props, 'replica.lag.time.max.ms', 1, 30_000),
    replicaSelector: replicaSelectorNamed(props['replica.selector.class']),
    cluster: {
      brokerSessionTimeoutMs: optionalInt(props, 'broker.session.timeout.ms', 1000, 9000),
      offsetsTopicReplicationFactor: optionalInt(props, 'offsets.topic.replication.factor', 1, 3),
      transactionStateLogReplicationFactor: optionalInt(props, 'transaction.state.log.replication.factor', 1, 3),
      controlledShutdownEnable: (props['controlled.shutdown.enable'] ?? 'true') === 'true',
      numReplicaFetchers: optionalInt(props, 'num.replica.fetchers', 1, 1),
      replicaFetchBackoffMs: optionalInt(props, 'replica.fetch.backoff.ms', 0, 1000),
      replicaFetchWaitMaxMs: optionalInt(props, 'replica.fetch.wait.max.ms', 0, 500),
      replicaFetchMinBytes: optionalInt(props, 'replica.fetch.min.bytes', 1, 1),
      replicaFetchMaxBytes: optionalInt(props, 'replica.fetch.max.bytes', 1, 1024 * 1024),
      replicaFetchResponseMaxBytes: optionalInt(props, 'replica.fetch.response.max.bytes', 1, 10 * 1024 * 1024),
    },
  }
}

/** The log cleaner's settings from log.cleaner.* (Kafka's CleanerConfig names and defaults). */
export function cleanerConfigFrom(props: Record<string, string>): CleanerConfig {
  const enable = props['log.cleaner.enable'] ?? 'true'
  if (enable !== 'true' && enable !== 'false') throw new ConfigError(`log.cleaner.enable must be true or false, not "${enable}"`)
  return {
    enableCleaner: enable === 'true',
    numThreads: optionalInt(props, 'log.cleaner.threads', 0, DEFAULT_CLEANER_CONFIG.numThreads),
    dedupeBufferSize: optionalInt(props, 'log.cleaner.dedupe.buffer.size', 1, DEFAULT_CLEANER_CONFIG.dedupeBufferSize),
    ioBufferSize: optionalInt(props, 'log.cleaner.io.buffer.size', 0, DEFAULT_CLEANER_CONFIG.ioBufferSize),
    backOffMs: optionalInt(props, 'log.cleaner.backoff.ms', 0, DEFAULT_CLEANER_CONFIG.backOffMs),
  }
}

export function readPropertiesFile(file: string): Record<string, string> {
  try {
    return parseProperties(readFileSync(file, 'utf8'))
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError(`${file}: ${err.message}`)
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`)
  }
}
