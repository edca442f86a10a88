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
 * Value v1 is v0 flexible (compact strings and arrays, tagged fields), with the tagged
 * clientTransactionVersion (tag 2; ./transaction-version.ts) and previousProducerId,
 * nextProducerId, nextProducerEpoch (tags 0, 1, 3: Kafka leaves them at their defaults, -1,
 * as here). Kafka writes v1 once transaction.version is finalized at 1 or more (its
 * `transactionLogValueVersion`), v0 at 0; so does this broker (its level is 2 unless
 * UpdateFeatures changed it), and it reads both. Both
 * go through the codec generated from Kafka's schema
 * (ts/protocol/messages/coordinator/transaction-log-value.ts). A record with a null value (tombstone) removes an expired transactional id. Each write
 * is one record in one batch; later records win on replay. The log is compacted
 * (`transactionLogConfig`): a replay over a cleaned log meets each id's latest record, or its
 * tombstone until delete.retention.ms has passed, or nothing. Kafka writes the partitions as
 * null for Empty, and only Ongoing and Prepare* states have any, as here.
 */
import { readTransactionLogValue, writeTransactionLogValue } from '../../protocol/messages/coordinator/transaction-log-value.js'
import { Reader } from '../../protocol/reader.js'
import { Writer } from '../../protocol/writer.js'
import type { LogConfig } from '../../storage/types.js'
import { isTransactionStateId, TransactionState, type TransactionStateId } from './transaction-state.js'
import { DEFAULT_TRANSACTION_VERSION, transactionLogValueVersion, transactionVersionOf, type TransactionVersionLevel } from './transaction-version.js'

export const TRANSACTION_STATE_TOPIC = '__transaction_state'

const KEY_VERSION = 0
/** The value version written by default: v1 at the default transaction.version (see above). */
const VALUE_VERSION = transactionLogValueVersion(DEFAULT_TRANSACTION_VERSION)

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
  /** The client's transaction version (v1's tagged field; TV_0 in a v0 record). */
  clientTransactionVersion: TransactionVersionLevel
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

export function encodeTxnLogValue(v: TxnLogValue, version: 0 | 1 = VALUE_VERSION): Buffer {
  const w = new Writer(64).int16(version)
  writeTransactionLogValue(w, version, {
    producerId: v.producerId,
    previousProducerId: -1n,
    nextProducerId: -1n,
    producerEpoch: v.producerEpoch,
    nextProducerEpoch: -1,
    transactionTimeoutMs: v.transactionTimeoutMs,
    transactionStatus: v.state,
    transactionPartitions: v.state === TransactionState.Empty ? null : [...v.partitions].map(([topic, partitionIds]) => ({ topic, partitionIds })),
    transactionLastUpdateTimestampMs: v.lastUpdateTimestampMs,
    transactionStartTimestampMs: v.startTimestampMs,
    clientTransactionVersion: version >= 1 ? v.clientTransactionVersion : 0,
  })
  return w.finish()
}

export function decodeTxnLogValue(value: Buffer): TxnLogValue {
  const r = new Reader(value)
  const version = r.int16()
  if (version !== 0 && version !== 1) throw new Error(`unknown transaction log value version ${version}`)
  const v = readTransactionLogValue(r, version)
  if (!isTransactionStateId(v.transactionStatus)) throw new Error(`unknown transaction state ${v.transactionStatus}`)
  const partitions = new Map<string, number[]>()
  for (const { topic, partitionIds } of v.transactionPartitions ?? []) partitions.set(topic, partitionIds)
  return {
    producerId: v.producerId,
    producerEpoch: v.producerEpoch,
    transactionTimeoutMs: v.transactionTimeoutMs,
    state: v.transactionStatus,
    partitions,
    lastUpdateTimestampMs: v.transactionLastUpdateTimestampMs,
    startTimestampMs: v.transactionStartTimestampMs,
    clientTransactionVersion: transactionVersionOf(v.clientTransactionVersion),
  }
}
