/**
 * The internal topic `__transaction_state` (Kafka's `TransactionLog`): where it is, how its log
 * is configured, and its records, which the transaction coordinator writes for every change of a
 * transactional id's state (./transaction-state-manager.ts) and replays when it becomes the
 * coordinator. transaction.state.log.num.partitions partitions (50, as Kafka), fixed when the
 * topic is made (an existing topic keeps its count, one partition for a data dir or cluster of
 * ferrolog before them: ts/server/internal-topics.ts); a transactional id's records are in the
 * partition of Kafka's `partitionFor` (ts/coordinator/partition-for.ts), whose leader is the
 * id's coordinator (./transaction-state-manager.ts).
 *
 * Kafka's TransactionLogKey v0 and TransactionLogValue v0 (its JSON schemas in
 * transaction-coordinator/src/main/resources/common/message), big-endian, strings int16 length +
 * UTF-8, arrays int32 count (-1 null):
 *
 *   key    version int16 = 0 | transactionalId string
 *   value  version int16 = 0 | producerId int64 | producerEpoch int16 |
 *          transactionTimeoutMs int32 | transactionStatus int8 (./transaction-state.ts) |
 *          transactionPartitions [topic string | partitionIds [int32]] (nullable) |
 *          transactionLastUpdateTimestampMs int64 | transactionStartTimestampMs int64
 *
 * Value v1 (flexible, with tagged previousProducerId, nextProducerId and
 * clientTransactionVersion; Kafka writes it for transaction version 2) is read too, never
 * written. A record with a null value (tombstone) removes an expired transactional id. Each write
 * is one record in one batch; later records win on replay. The log is compacted
 * (`transactionLogConfig`): a replay over a cleaned log meets each id's latest record, or its
 * tombstone until delete.retention.ms has passed, or nothing. Kafka writes the partitions only for
 * Ongoing and Prepare* states (empty for the others), as here.
 */
import { Reader } from '../../protocol/reader.js'
import { Writer } from '../../protocol/writer.js'
import type { LogConfig } from '../../storage/types.js'
import { isTransactionStateId, type TransactionStateId } from './transaction-state.js'

export const TRANSACTION_STATE_TOPIC = '__transaction_state'

const KEY_VERSION = 0
const VALUE_VERSION = 0

/** transaction.state.log.segment.bytes: Kafka's default, 100 MiB. */
export const DEFAULT_TRANSACTION_STATE_LOG_SEGMENT_BYTES = 100 * 1024 * 1024

/**
 * The log config of `__transaction_state`, as Kafka's `TransactionLog` topic configs: compacted
 * (the broker's log cleaner keeps each transactional id's latest record, the tombstone of a
 * removed id for delete.retention.ms), segments of transaction.state.log.segment.bytes. (Kafka
 * also sets compression.type=uncompressed, what the coordinator writes; min.insync.replicas and
 * unclean leader election are the cluster's.)
 */
export function transactionLogConfig(segmentBytes: number = DEFAULT_TRANSACTION_STATE_LOG_SEGMENT_BYTES): Partial<LogConfig> {
  return { cleanupPolicy: ['compact'], segmentBytes }
}

export const TRANSACTION_LOG_CONFIG: Partial<LogConfig> = transactionLogConfig()

/** What a record of the log says of one transactional id. */
export interface TxnLogValue {
  producerId: bigint
  producerEpoch: number
  transactionTimeoutMs: number
  state: TransactionStateId
  /** topic -> partitions. */
  partitions: Map<string, number[]>
  lastUpdateTimestampMs: bigint
  startTimestampMs: bigint
}

export function encodeTxnLogKey(transactionalId: string): Buffer {
  return new Writer(32).int16(KEY_VERSION).string(transactionalId).finish()
}

export function decodeTxnLogKey(key: Buffer): string {
  const r = new Reader(key)
  const version = r.int16()
  if (version !== KEY_VERSION) throw new Error(`unknown transaction log key version ${version}`)
  return r.string()
}

export function encodeTxnLogValue(v: TxnLogValue): Buffer {
  const w = new Writer(64).int16(VALUE_VERSION).int64(v.producerId).int16(v.producerEpoch).int32(v.transactionTimeoutMs).int8(v.state)
  w.array([...v.partitions], (w, [topic, partitions]) => {
    w.string(topic).int32(partitions.length)
    for (const p of partitions) w.int32(p)
  })
  return w.int64(v.lastUpdateTimestampMs).int64(v.startTimestampMs).finish()
}

export function decodeTxnLogValue(value: Buffer): TxnLogValue {
  const r = new Reader(value)
  const version = r.int16()
  if (version !== 0 && version !== 1) throw new Error(`unknown transaction log value version ${version}`)
  const flexible = version >= 1
  const producerId = r.int64()
  const producerEpoch = r.int16()
  const transactionTimeoutMs = r.int32()
  const state = r.int8()
  if (!isTransactionStateId(state)) throw new Error(`unknown transaction state ${state}`)
  const partitions = new Map<string, number[]>()
  const list = r.flexNullableArray(flexible, (r) => {
    const entry = { topic: r.flexString(flexible), ids: r.flexInt32Array(flexible) }
    r.endStruct(flexible)
    return entry
  })
  for (const { topic, ids } of list ?? []) partitions.set(topic, ids)
  const lastUpdateTimestampMs = r.int64()
  const startTimestampMs = r.int64()
  r.endStruct(flexible)
  return { producerId, producerEpoch, transactionTimeoutMs, state, partitions, lastUpdateTimestampMs, startTimestampMs }
}
