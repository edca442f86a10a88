/**
 * Every topic-level config ferrolog knows, once: Kafka's name (`LogConfig`, `TopicConfig`), the
 * broker config that is its default (Kafka's `ServerTopicConfigSynonyms`), type, validator,
 * default, and where each engine keeps it:
 *
 * - `LOG_CONFIG_KEYS`, keyed by the field of `LogConfig` (the settings both storage engines are
 *   handed, ts/storage/types.ts): `rust` names the field of crates/storage/src/config.rs
 *   `LogConfig`, whose defaults and ranges are generated from here
 *   (crates/storage/src/config/generated.rs, `npm run generate:configs`); null when the Rust
 *   engine does not read it (the cleaner's settings, which reach it in each cleaning request).
 * - `OTHER_TOPIC_CONFIG_KEYS`: topic configs that are not the log's: min.insync.replicas (the
 *   replica manager reads it) and those accepted, kept and described but changing nothing here.
 *
 * The `LogConfig` type, `DEFAULT_LOG_CONFIG`, the broker's `log.*` keys (broker-configs.ts),
 * DescribeConfigs' answers and docs/configs.md all come from these tables.
 */
import { bool, double, int, listOf, long, oneOf, type ValueType } from './config-def.js'

export interface TopicConfigKey<T> {
  /** Kafka's topic-level name. */
  name: string
  /** The broker config whose value is this key's default (Kafka's ServerTopicConfigSynonyms). */
  brokerName: string
  /**
   * Broker configs in other units that set the same default when `brokerName` is absent, most
   * specific first (log.retention.minutes, then log.retention.hours), with their factor to this
   * key's unit; a negative value in one of them is -1 (Kafka's "unlimited").
   */
  brokerUnits?: ReadonlyArray<{ name: string; factor: number }>
  value: ValueType<T>
  default: T
  /** The Rust engine's field (crates/storage/src/config.rs) and how the value is written in Rust; null: not read by it. */
  rust: RustField<T> | null
  /** Where ferrolog differs from Kafka 4.4 in this key (checked against Kafka's ConfigDef otherwise). */
  differs?: string
  doc: string
}

export interface RustField<T> {
  field: string
  type: 'i32' | 'i64' | 'bool' | 'TimestampType'
  /** The value as a Rust expression (default: its number). */
  rust?: (value: T) => string
}

function key<T>(k: TopicConfigKey<T>): TopicConfigKey<T> {
  return k
}

export type CleanupPolicy = 'compact' | 'delete'
export type TimestampTypeName = 'CreateTime' | 'LogAppendTime'

const DAY_MS = 24 * 60 * 60 * 1000

export const LOG_CONFIG_KEYS = {
  segmentBytes: key({
    name: 'segment.bytes',
    brokerName: 'log.segment.bytes',
    value: int(14),
    default: 1024 * 1024 * 1024,
    rust: { field: 'segment_bytes', type: 'i32' },
    differs: 'the smallest value is 14 (LegacyRecord.RECORD_OVERHEAD_V0), as before Kafka 4.0, not 1048576: tests roll small segments without internal.segment.bytes',
    doc: 'The largest size of a segment file; a batch that would pass it starts a new segment.',
  }),
  segmentMs: key({
    name: 'segment.ms',
    brokerName: 'log.roll.ms',
    brokerUnits: [{ name: 'log.roll.hours', factor: 3_600_000 }],
    value: long(1),
    default: 7 * DAY_MS,
    rust: { field: 'segment_ms', type: 'i64' },
    doc: 'The age of the active segment past which the next append starts a new one, so that retention and compaction can act on it.',
  }),
  segmentIndexBytes: key({
    name: 'segment.index.bytes',
    brokerName: 'log.index.size.max.bytes',
    value: int(4),
    default: 10 * 1024 * 1024,
    rust: { field: 'segment_index_bytes', type: 'i32' },
    doc: "The size preallocated for a segment's offset and time indexes; a full index rolls the segment.",
  }),
  indexIntervalBytes: key({
    name: 'index.interval.bytes',
    brokerName: 'log.index.interval.bytes',
    value: int(0),
    default: 4096,
    rust: { field: 'index_interval_bytes', type: 'i32' },
    doc: 'How many bytes of batches go between two offset index entries (0: an entry per batch).',
  }),
  retentionBytes: key({
    name: 'retention.bytes',
    brokerName: 'log.retention.bytes',
    value: long(-1),
    default: -1,
    rust: { field: 'retention_bytes', type: 'i64' },
    differs: 'values below -1 are refused (Kafka accepts any long and treats every negative as unlimited)',
    doc: "The size a partition's log may reach before its oldest segments are deleted (cleanup.policy delete); -1: unlimited.",
  }),
  retentionMs: key({
    name: 'retention.ms',
    brokerName: 'log.retention.ms',
    brokerUnits: [
      { name: 'log.retention.minutes', factor: 60_000 },
      { name: 'log.retention.hours', factor: 3_600_000 },
    ],
    value: long(-1),
    default: 7 * DAY_MS,
    rust: { field: 'retention_ms', type: 'i64' },
    doc: 'How long a segment is kept after its newest record before it is deleted (cleanup.policy delete); -1: forever.',
  }),
  flushMessages: key({
    name: 'flush.messages',
    brokerName: 'log.flush.interval.messages',
    value: long(1),
    default: Number.MAX_SAFE_INTEGER,
    rust: { field: 'flush_messages', type: 'i64' },
    doc: 'Unflushed records past which the log is fsynced; the default leaves flushing to the operating system.',
  }),
  flushMs: key({
    name: 'flush.ms',
    brokerName: 'log.flush.interval.ms',
    value: long(0),
    default: Number.MAX_SAFE_INTEGER,
    rust: { field: 'flush_ms', type: 'i64' },
    differs: 'log.flush.interval.ms defaults to never itself (Kafka: null, which falls back to log.flush.scheduler.interval.ms, also never)',
    doc: 'The age of the last fsync past which the log is fsynced again; the default leaves flushing to the operating system.',
  }),
  maxMessageBytes: key({
    name: 'max.message.bytes',
    brokerName: 'message.max.bytes',
    value: int(0),
    default: 1024 * 1024 + 12,
    rust: { field: 'max_message_bytes', type: 'i32' },
    doc: 'The largest record batch (as sent, compressed) a Produce may append.',
  }),
  messageTimestampType: key<TimestampTypeName>({
    name: 'message.timestamp.type',
    brokerName: 'log.message.timestamp.type',
    value: oneOf(['CreateTime', 'LogAppendTime'] as const),
    default: 'CreateTime',
    rust: { field: 'message_timestamp_type', type: 'TimestampType', rust: (v) => `TimestampType::${v}` },
    doc: "Whether records keep the producer's timestamp (CreateTime) or get the broker's clock at append (LogAppendTime).",
  }),
  messageTimestampBeforeMaxMs: key({
    name: 'message.timestamp.before.max.ms',
    brokerName: 'log.message.timestamp.before.max.ms',
    value: long(0),
    default: Number.MAX_SAFE_INTEGER,
    rust: { field: 'message_timestamp_before_max_ms', type: 'i64' },
    doc: "How far before the leader's clock a CreateTime record's timestamp may be; older: the batch is refused with INVALID_TIMESTAMP, naming the record (the default: any).",
  }),
  messageTimestampAfterMaxMs: key({
    name: 'message.timestamp.after.max.ms',
    brokerName: 'log.message.timestamp.after.max.ms',
    value: long(0),
    default: 3_600_000,
    rust: { field: 'message_timestamp_after_max_ms', type: 'i64' },
    doc: "How far after the leader's clock a CreateTime record's timestamp may be; later: the batch is refused with INVALID_TIMESTAMP, naming the record.",
  }),
  cleanupPolicy: key<readonly CleanupPolicy[]>({
    name: 'cleanup.policy',
    brokerName: 'log.cleanup.policy',
    value: listOf(['compact', 'delete'] as const),
    default: Object.freeze(['delete'] as CleanupPolicy[]),
    rust: { field: 'compact', type: 'bool', rust: (v) => String(v.includes('compact')) },
    doc: 'delete (retention by time and size), compact (the log cleaner keeps the latest record of each key), both, or neither (empty: kept whole).',
  }),
  deleteRetentionMs: key({
    name: 'delete.retention.ms',
    brokerName: 'log.cleaner.delete.retention.ms',
    value: long(0),
    default: DAY_MS,
    rust: null,
    doc: 'How long a compacted log keeps tombstones (records with a null value) once they are cleaned.',
  }),
  minCompactionLagMs: key({
    name: 'min.compaction.lag.ms',
    brokerName: 'log.cleaner.min.compaction.lag.ms',
    value: long(0),
    default: 0,
    rust: null,
    doc: 'Records younger than this are never compacted.',
  }),
  maxCompactionLagMs: key({
    name: 'max.compaction.lag.ms',
    brokerName: 'log.cleaner.max.compaction.lag.ms',
    value: long(1),
    default: Number.MAX_SAFE_INTEGER,
    rust: null,
    doc: 'A dirty record older than this makes its log cleanable whatever its dirty ratio (KIP-354).',
  }),
  minCleanableDirtyRatio: key({
    name: 'min.cleanable.dirty.ratio',
    brokerName: 'log.cleaner.min.cleanable.ratio',
    value: double(0, 1),
    default: 0.5,
    rust: null,
    doc: 'The share of dirty bytes past which a compacted log is cleaned.',
  }),
}

/** The settings a storage engine is handed for a log: one field per key of `LOG_CONFIG_KEYS`. */
export type LogConfig = { [F in keyof typeof LOG_CONFIG_KEYS]: (typeof LOG_CONFIG_KEYS)[F] extends TopicConfigKey<infer T> ? T : never }

export type LogConfigField = keyof LogConfig

/** Kafka's defaults of every log setting. */
export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze(Object.fromEntries(Object.entries(LOG_CONFIG_KEYS).map(([field, k]) => [field, k.default])) as unknown as LogConfig)

/** Kafka's default min.insync.replicas. */
export const DEFAULT_MIN_INSYNC_REPLICAS = 1

/** Topic configs that are not the log's: min.insync.replicas, and those kept and described that change nothing here. */
export const OTHER_TOPIC_CONFIG_KEYS: ReadonlyArray<TopicConfigKey<unknown> & { accepted?: true }> = [
  key<unknown>({
    name: 'min.insync.replicas',
    brokerName: 'min.insync.replicas',
    value: int(1),
    default: DEFAULT_MIN_INSYNC_REPLICAS,
    rust: null,
    doc: 'The in-sync replicas an acks=all Produce needs; fewer: NOT_ENOUGH_REPLICAS.',
  }),
  {
    ...key<unknown>({
      name: 'compression.type',
      brokerName: 'compression.type',
      value: oneOf(['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'] as const),
      default: 'producer',
      rust: null,
      doc: 'Accepted and described; batches are kept as the producer compressed them (producer).',
    }),
    accepted: true,
  },
  {
    ...key<unknown>({
      name: 'file.delete.delay.ms',
      brokerName: 'log.segment.delete.delay.ms',
      value: long(0),
      default: 60_000,
      rust: null,
      doc: "Accepted and described; a deleted segment's files are removed at once.",
    }),
    accepted: true,
  },
  {
    ...key<unknown>({
      name: 'preallocate',
      brokerName: 'log.preallocate',
      value: bool,
      default: false,
      rust: null,
      doc: 'Accepted and described; segment files grow as written.',
    }),
    accepted: true,
  },
  {
    ...key<unknown>({
      name: 'unclean.leader.election.enable',
      brokerName: 'unclean.leader.election.enable',
      value: bool,
      default: false,
      rust: null,
      doc: 'Accepted and described; a leader is only ever elected from the ISR.',
    }),
    accepted: true,
  },
]

/**
 * Accepted in CreateTopics and AlterConfigs (clients of Kafka 3 send it), kept, not described:
 * Kafka 4.0 removed it for message.timestamp.before.max.ms and message.timestamp.after.max.ms.
 */
export const LEGACY_TOPIC_CONFIG_NAMES: ReadonlySet<string> = new Set(['message.timestamp.difference.max.ms'])

/** Every topic config key DescribeConfigs answers, in name order. */
export const TOPIC_CONFIG_KEYS: ReadonlyArray<TopicConfigKey<unknown> & { field?: LogConfigField }> = [
  ...Object.entries(LOG_CONFIG_KEYS).map(([field, k]) => ({ ...(k as TopicConfigKey<unknown>), field: field as LogConfigField })),
  ...OTHER_TOPIC_CONFIG_KEYS,
].sort((a, b) => (a.name < b.name ? -1 : 1))
