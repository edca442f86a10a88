/**
 * Kafka's internal topics, as ferrolog has them: `__consumer_offsets` (the group coordinator's,
 * ts/group/offsets-topic.ts), `__transaction_state` (the transaction coordinator's,
 * ts/coordinator/transaction/transaction-log.ts) and `__share_group_state` (the share
 * coordinator's, ts/coordinator/share/share-group-state-topic.ts). Metadata lists them with is_internal; clients
 * may not produce to them or delete them; each log is configured by the module that owns it,
 * compacted by the log cleaner like any compacted topic.
 *
 * Their partition count (offsets.topic.num.partitions, transaction.state.log.num.partitions,
 * share.coordinator.state.topic.num.partitions: 50
 * by default, as Kafka) is chosen once, when the topic is made, and never changes after, as in
 * Kafka: group ids and transactional ids are hashed over it (ts/coordinator/partition-for.ts), so
 * another count would move every key away from its state. In a cluster the count is the topic's
 * in the cluster metadata. A standalone broker keeps no record of its internal topics besides
 * their directories: the count is one more than the highest partition directory found at start
 * (a data dir of ferrolog before 50 partitions has `__consumer_offsets-0` only, and keeps one
 * partition), else the setting, and a fresh data dir makes its partitions highest first, so that
 * a start cut short still leaves the count it chose (`standalonePartitionCount`).
 */
import { DEFAULT_TRANSACTION_STATE_LOG_SEGMENT_BYTES, TRANSACTION_STATE_TOPIC, transactionLogConfig } from '../coordinator/transaction/transaction-log.js'
import { DEFAULT_SHARE_COORDINATOR_STATE_TOPIC_SEGMENT_BYTES, SHARE_GROUP_STATE_TOPIC, shareGroupStateLogConfig } from '../coordinator/share/share-group-state-topic.js'
import { DEFAULT_OFFSETS_TOPIC_SEGMENT_BYTES, OFFSETS_TOPIC, offsetsLogConfig } from '../group/offsets-topic.js'
import type { LogConfig } from '../storage/types.js'

export const INTERNAL_TOPICS: ReadonlySet<string> = new Set([OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC, SHARE_GROUP_STATE_TOPIC])

export function isInternalTopic(name: string): boolean {
  return INTERNAL_TOPICS.has(name)
}

/** The broker settings of the internal topics' logs (Kafka's names). */
export interface InternalTopicSettings {
  /** offsets.topic.segment.bytes */
  offsetsTopicSegmentBytes: number
  /** transaction.state.log.segment.bytes */
  transactionStateLogSegmentBytes: number
  /** share.coordinator.state.topic.segment.bytes */
  shareCoordinatorStateTopicSegmentBytes: number
}

export const DEFAULT_INTERNAL_TOPIC_SETTINGS: InternalTopicSettings = {
  offsetsTopicSegmentBytes: DEFAULT_OFFSETS_TOPIC_SEGMENT_BYTES,
  transactionStateLogSegmentBytes: DEFAULT_TRANSACTION_STATE_LOG_SEGMENT_BYTES,
  shareCoordinatorStateTopicSegmentBytes: DEFAULT_SHARE_COORDINATOR_STATE_TOPIC_SEGMENT_BYTES,
}

/** The log config of an internal topic; undefined for others. */
export function internalTopicLogConfig(name: string, settings: InternalTopicSettings = DEFAULT_INTERNAL_TOPIC_SETTINGS): Partial<LogConfig> | undefined {
  if (name === OFFSETS_TOPIC) return offsetsLogConfig(settings.offsetsTopicSegmentBytes)
  if (name === TRANSACTION_STATE_TOPIC) return transactionLogConfig(settings.transactionStateLogSegmentBytes)
  if (name === SHARE_GROUP_STATE_TOPIC) return shareGroupStateLogConfig(settings.shareCoordinatorStateTopicSegmentBytes)
  return undefined
}

/**
 * An internal topic's configs as Kafka 4.4 records them when it makes the topic (shown by
 * DescribeConfigs and kafka-configs --describe as the topic's own); undefined for others. Besides
 * the log's own (cleanup.policy, segment.bytes): `__consumer_offsets` keeps the producer's
 * compression, `__transaction_state` is uncompressed (its coordinator writes it so) and never
 * elects an unclean leader (ferrolog never does); `__share_group_state` keeps the producer's
 * compression and its records forever (retention.ms -1: its coordinator prunes it). Kafka also records
 * `transaction.state.log.min.isr` as the transaction log's min.insync.replicas; ferrolog has no
 * such setting, the topic follows min.insync.replicas.
 */
export function internalTopicConfigs(name: string, settings: InternalTopicSettings = DEFAULT_INTERNAL_TOPIC_SETTINGS): Record<string, string> | undefined {
  const config = internalTopicLogConfig(name, settings)
  if (config === undefined) return undefined
  const own = { 'cleanup.policy': config.cleanupPolicy!.join(','), 'segment.bytes': String(config.segmentBytes) }
  if (name === OFFSETS_TOPIC) return { ...own, 'compression.type': 'producer' }
  if (name === SHARE_GROUP_STATE_TOPIC) return { ...own, 'compression.type': 'producer', 'retention.ms': '-1' }
  return { ...own, 'compression.type': 'uncompressed', 'unclean.leader.election.enable': 'false' }
}

/**
 * The partition count of a standalone broker's internal topic: one more than the highest of its
 * partitions among `logs` (the directories found at start), else `configured`.
 */
export function standalonePartitionCount(logs: ReadonlyArray<{ topic: string; partition: number }>, topic: string, configured: number): number {
  let highest = -1
  for (const log of logs) if (log.topic === topic && log.partition > highest) highest = log.partition
  return highest >= 0 ? highest + 1 : configured
}
