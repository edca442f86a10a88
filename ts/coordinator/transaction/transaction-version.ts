/**
 * Kafka's `TransactionVersion` (the `transaction.version` feature, KIP-890): which transaction
 * protocol a request speaks, and what the coordinator does for it.
 *
 * - TV_0: the original protocol (KIP-98). TV_1: the same, with flexible `__transaction_state`
 *   records (TransactionLogValue v1, ./transaction-log.ts). TV_2 (KIP-890 part 2): the producer
 *   epoch is bumped at every transaction end (EndTxn v5 answers the new producer id and epoch;
 *   an exhausted epoch moves to a new producer id), the markers carry the bumped epoch, and the
 *   partitions join the transaction implicitly, through the transactional Produce (v12+) and
 *   TxnOffsetCommit (v5+) themselves (no AddPartitionsToTxn or AddOffsetsToTxn from the client).
 * - The version is the client's, per request, as Kafka derives it: EndTxn v5+ is TV_2;
 *   AddPartitionsToTxn v4+ (a partition leader adding a partition for a TV_2 Produce or
 *   TxnOffsetCommit) is TV_2; AddPartitionsToTxn v0-v3 and AddOffsetsToTxn (only TV_0/TV_1
 *   clients send them) are TV_0. A client speaks TV_2 once the broker finalizes
 *   transaction.version at 2 (ApiVersions, ts/server/finalized-features.ts); a client that does
 *   not know it (kafkajs) keeps TV_0 with every broker.
 * - Aborts the coordinator starts itself (a timeout, a new InitProducerId fencing an ongoing
 *   transaction) use the cluster's finalized level (Kafka's `transactionVersionLevel()`,
 *   ts/server/finalized-features.ts: DEFAULT_TRANSACTION_VERSION until UpdateFeatures changes
 *   it), and so does the version of the `__transaction_state` records written.
 */

export const TRANSACTION_VERSION_FEATURE = 'transaction.version'

export const TransactionVersion = { TV_0: 0, TV_1: 1, TV_2: 2 } as const
export type TransactionVersionLevel = (typeof TransactionVersion)[keyof typeof TransactionVersion]

/** The highest level this broker supports, and the level a new data dir or cluster finalizes (Kafka 4.4's default on a new cluster). */
export const MAX_TRANSACTION_VERSION: TransactionVersionLevel = TransactionVersion.TV_2
export const DEFAULT_TRANSACTION_VERSION: TransactionVersionLevel = TransactionVersion.TV_2

/** Kafka's `supportsEpochBump`: TV_2 and above bump the epoch at every transaction end. */
export function supportsEpochBump(tv: number): boolean {
  return tv >= TransactionVersion.TV_2
}

/** Kafka's `transactionLogValueVersion`: TV_1 and above write TransactionLogValue v1 (flexible). */
export function transactionLogValueVersion(tv: number): 0 | 1 {
  return tv >= TransactionVersion.TV_1 ? 1 : 0
}

/** Kafka's `transactionVersionForEndTxn`: v5+ is a TV_2 client. */
export function transactionVersionForEndTxn(apiVersion: number): TransactionVersionLevel {
  return apiVersion > 4 ? TransactionVersion.TV_2 : TransactionVersion.TV_0
}

/** Kafka's `transactionVersionForAddPartitionsToTxn`: v4+ (broker to coordinator) is TV_2. */
export function transactionVersionForAddPartitionsToTxn(apiVersion: number): TransactionVersionLevel {
  return apiVersion > 3 ? TransactionVersion.TV_2 : TransactionVersion.TV_0
}

/** A level read from a record or a request, within what this broker knows (unknown ones are TV_0's). */
export function transactionVersionOf(level: number): TransactionVersionLevel {
  return level === 1 || level === 2 ? level : TransactionVersion.TV_0
}
