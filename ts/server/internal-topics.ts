/**
 * Kafka's internal topics, as ferrolog has them: `__consumer_offsets` (the group coordinator's,
 * ts/group/offsets-topic.ts) and `__transaction_state` (the transaction coordinator's,
 * ts/coordinator/transaction/transaction-log.ts). One partition each; Metadata lists them with
 * is_internal; clients may not produce to them or delete them; each log is configured by the
 * module that owns it.
 */
import { TRANSACTION_LOG_CONFIG, TRANSACTION_STATE_TOPIC } from '../coordinator/transaction/transaction-log.js'
import { OFFSETS_LOG_CONFIG, OFFSETS_TOPIC } from '../group/offsets-topic.js'
import type { LogConfig } from '../storage/types.js'

export const INTERNAL_TOPICS: ReadonlySet<string> = new Set([OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC])

export function isInternalTopic(name: string): boolean {
  return INTERNAL_TOPICS.has(name)
}

/** The log config of an internal topic; undefined for others. */
export function internalTopicLogConfig(name: string): Partial<LogConfig> | undefined {
  if (name === OFFSETS_TOPIC) return OFFSETS_LOG_CONFIG
  if (name === TRANSACTION_STATE_TOPIC) return TRANSACTION_LOG_CONFIG
  return undefined
}
