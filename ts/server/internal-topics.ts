/**
 * Kafka's internal topics, as ferrolog has them: `__consumer_offsets` (the group coordinator's,
 * ts/group/offsets-topic.ts) and `__transaction_state` (the transaction coordinator's,
 * ts/coordinator/transaction/transaction-log.ts). One partition each; Metadata lists them with
 * is_internal; clients may not produce to them or delete them; each log is configured by the
 * module that owns it, compacted by the log cleaner like any compacted topic.
 */
import { DEFAULT_TRANSACTION_STATE_LOG_SEGMENT_BYTES, TRANSACTION_STATE_TOPIC, transactionLogConfig } from '../coordinator/transaction/transaction-log.js'
import { DEFAULT_OFFSETS_TOPIC_SEGMENT_BYTES, OFFSETS_TOPIC, offsetsLogConfig } from '../group/offsets-topic.js'
import type { LogConfig } from '../storage/types.js'

export const INTERNAL_TOPICS: ReadonlySet<string> = new Set([OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC])

export function isInternalTopic(name: string): boolean {
  return INTERNAL_TOPICS.has(name)
}

/** The broker settings of the internal topics' logs (Kafka's names). */
export interface InternalTopicSettings {
  /** offsets.topic.segment.bytes */
  offsetsTopicSegmentBytes: number
  /** transaction.state.log.segment.bytes */
  transactionStateLogSegmentBytes: number
}

export const DEFAULT_INTERNAL_TOPIC_SETTINGS: InternalTopicSettings = {
  offsetsTopicSegmentBytes: DEFAULT_OFFSETS_TOPIC_SEGMENT_BYTES,
  transactionStateLogSegmentBytes: DEFAULT_TRANSACTION_STATE_LOG_SEGMENT_BYTES,
}

/** The log config of an internal topic; undefined for others. */
export function internalTopicLogConfig(name: string, settings: InternalTopicSettings = DEFAULT_INTERNAL_TOPIC_SETTINGS): Partial<LogConfig> | undefined {
  if (name === OFFSETS_TOPIC) return offsetsLogConfig(settings.offsetsTopicSegmentBytes)
  if (name === TRANSACTION_STATE_TOPIC) return transactionLogConfig(settings.transactionStateLogSegmentBytes)
  return undefined
}

/** An internal topic's configs as Kafka names them (recorded with the topic, shown by DescribeConfigs); undefined for others. */
export function internalTopicConfigs(name: string, settings: InternalTopicSettings = DEFAULT_INTERNAL_TOPIC_SETTINGS): Record<string, string> | undefined {
  const config = internalTopicLogConfig(name, settings)
  if (config === undefined) return undefined
  return { 'cleanup.policy': config.cleanupPolicy!.join(','), 'segment.bytes': String(config.segmentBytes) }
}
