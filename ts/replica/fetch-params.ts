/**
 * What a fetch asks and what each partition's read answers, shared by the `ReplicaManager`
 * (which reads), the `DelayedFetch` (which waits and re-reads) and the Fetch handler (which
 * decodes and encodes): Kafka's `FetchParams`, `FetchRequest.PartitionData` and `LogReadResult`.
 * A module of its own so that the replica manager and the purgatory both depend on it, not on
 * each other.
 */
import type { LogSlice } from '../storage/log.js'
import type { FetchDataInfo, FetchIsolation } from '../storage/types.js'
import type { DivergingEpoch } from './leader-epoch.js'
import type { ClientMetadata } from './replica-selector.js'

export const IsolationLevel = { READ_UNCOMMITTED: 0, READ_COMMITTED: 1 } as const

export interface TopicPartition {
  topic: string
  partition: number
}

/** One partition of a fetch (Kafka's `FetchRequest.PartitionData`). */
export interface FetchPartitionRequest extends TopicPartition {
  fetchOffset: bigint
  partitionMaxBytes: number
  /** Fetch v9+; -1 (or absent) = no check. */
  currentLeaderEpoch?: number
  /** Fetch v12+; -1 (or absent) = not sent. */
  lastFetchedEpoch?: number
  /** The follower's log start offset (Fetch v5+); -1 (or absent) = not sent. */
  logStartOffset?: bigint
}

/** One partition's read (Kafka's `LogReadResult`); errors are data, in `errorCode`. */
export interface FetchPartitionResult extends TopicPartition {
  errorCode: number
  highWatermark: bigint
  lastStableOffset: bigint
  logStartOffset: bigint
  /** The read, or null when the partition erred, diverged or was sent to another replica. */
  info: FetchDataInfo<LogSlice> | null
  /** The fetcher's log diverged from ours: truncate to this, then fetch on. */
  divergingEpoch?: DivergingEpoch
  /** The follower a consumer should read from instead (KIP-392); -1 or absent = this broker. */
  preferredReadReplica?: number
}

/** Kafka's `FetchParams`: who fetches, the limits of the whole fetch, how long it may wait. */
export interface FetchParams {
  /** >= 0 for a follower (reads to the log end), -1 for a consumer. */
  replicaId: number
  maxBytes: number
  isolationLevel: number
  /** Request versions <= 2 had no minOneMessage (a hard limit). */
  hardMaxBytesLimit: boolean
  /** A consumer's rack and id (v11+), for the replica selector; absent = no preferred replica. */
  clientMetadata?: ClientMetadata
}

/** A fetch that may wait: answered once minBytes are readable or maxWaitMs passed. */
export interface DelayedFetchParams extends FetchParams {
  minBytes: number
  maxWaitMs: number
}

/** The upper bound of a read, in one place (Kafka's `FetchParams.isolation`). */
export function fetchIsolation(params: Pick<FetchParams, 'replicaId' | 'isolationLevel'>): FetchIsolation {
  if (params.replicaId >= 0) return 'LOG_END'
  return params.isolationLevel === IsolationLevel.READ_COMMITTED ? 'TXN_COMMITTED' : 'HIGH_WATERMARK'
}
