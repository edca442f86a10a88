/**
 * `ReplicaManager`: the partitions this broker holds (`Partition`, ts/replica/partition.ts, one per
 * local log, made on first use) and the paths through them. `appendRecords` is Produce's;
 * `fetchMessages` is Fetch's: it reads every partition (`readFromLocalLog`) and answers at once
 * or parks the fetch in the purgatory, as Kafka's `fetchMessages` decides. The reads follow
 * Kafka's limits:
 *
 * - partitions are read in request order; `limitBytes` starts at the request's maxBytes (capped
 *   by the broker's fetch.max.bytes) and shrinks by what each partition returned;
 * - each partition reads min(partitionMaxBytes, limitBytes);
 * - `minOneMessage` holds until the first partition that returned bytes, so that one batch
 *   larger than the limits still goes out (KIP-74);
 * - the upper bound of a read depends on who reads: a follower reads to the log end, a consumer
 *   to the high watermark (READ_UNCOMMITTED) or the last stable offset (READ_COMMITTED).
 *
 * Idempotent producers: the partition checks batches that carry a producer id against its
 * `ProducerStateManager` (producer-state.ts) before appending; a retry of one of the last 5
 * batches is answered with the original offsets and not appended.
 *
 * Long polls: `delayedFetchPurgatory` holds the fetches waiting for minBytes (DelayedFetch,
 * ts/purgatory/delayed-fetch.ts). Whatever can let one complete wakes the partition's key
 * (`tryCompleteDelayedFetch`): an append (which also advances the high watermark of a
 * single-replica log), DeleteRecords and retention (the log start offset moved), and the
 * deletion of a log (DeleteTopics: its fetches answer UNKNOWN_TOPIC_OR_PARTITION).
 *
 * Per partition before its read: a currentLeaderEpoch other than the partition's errs; a
 * consumer that the `ReplicaSelector` sends to a follower gets preferredReadReplica and no
 * records (Kafka's `findPreferredReadReplica`, here as there); the rest is the partition's
 * `fetchRecords` (divergence, the read, a follower's fetch state). A follower's fetch that moves
 * the high watermark wakes the partition's parked fetches.
 *
 * Errors are data: each partition result carries its Kafka error code.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import type { Log } from '../storage/log.js'
import type { LogManager } from '../storage/log-manager.js'
import type { FetchIsolation } from '../storage/types.js'
import { DelayedFetch, newDelayedFetchMetrics, type DelayedFetchMetrics } from '../purgatory/delayed-fetch.js'
import { DelayedOperationPurgatory, topicPartitionOperationKey } from '../purgatory/purgatory.js'
import {
  fetchIsolation,
  IsolationLevel,
  type DelayedFetchParams,
  type FetchParams,
  type FetchPartitionRequest,
  type FetchPartitionResult,
  type TopicPartition,
} from './fetch-params.js'
import { PARTITION_LEADER_EPOCH } from './leader-epoch.js'
import { Partition, type EpochEndOffsetResult, type OffsetForTimestampResult, type PartitionAppendResult } from './partition.js'
import type { ProducerStateManager } from './producer-state.js'
import { LeaderSelector, preferredReadReplicaOf, type LeaderReplicaState, type ReplicaSelector } from './replica-selector.js'

export { fetchIsolation, IsolationLevel }
export type { DelayedFetchParams, FetchParams, FetchPartitionRequest, FetchPartitionResult, PartitionAppendResult, TopicPartition }

/** fetch.max.bytes: the broker's cap on one fetch response. */
export const DEFAULT_FETCH_MAX_BYTES = 55 * 1024 * 1024

export interface ReplicaManagerOptions {
  /** This broker's node.id: the leader of every partition it holds, for now. */
  brokerId: number
  fetchMaxBytes?: number
  replicaSelector?: ReplicaSelector
}

export class ReplicaManager {
  readonly logManager: LogManager
  readonly brokerId: number
  readonly fetchMaxBytes: number
  /** The partitions made so far, by topic-partition key (Kafka's `allPartitions`). */
  private readonly partitions = new Map<string, Partition>()
  /** Fetches waiting for minBytes (Kafka's `delayedFetchPurgatory`); its counts are the metrics. */
  readonly delayedFetchPurgatory = new DelayedOperationPurgatory<DelayedFetch>('Fetch')
  /** Expired delayed fetches, by follower and consumer (Kafka's `DelayedFetchMetrics`). */
  readonly delayedFetchMetrics: DelayedFetchMetrics = newDelayedFetchMetrics()
  /** Fetches parked in the purgatory since start (completed, expired or dropped since, or not). */
  delayedFetchesParked = 0

  /** Kafka's `replica.selector.class`: where consumers should read from (default the leader). */
  readonly replicaSelector: ReplicaSelector

  constructor(logManager: LogManager, options: ReplicaManagerOptions) {
    this.logManager = logManager
    this.brokerId = options.brokerId
    this.fetchMaxBytes = options.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES
    this.replicaSelector = options.replicaSelector ?? new LeaderSelector()
    // Retention moved a log start offset, or the log was deleted: parked fetches re-check.
    logManager.onSegmentsDeleted((log) => {
      if (log.isClosed) this.partitions.delete(topicPartitionOperationKey(log.topic, log.partition))
      this.tryCompleteDelayedFetch(log)
    })
  }

  /**
   * The partition of a local log (Kafka's `getPartition`), made on first use: led by this broker
   * at PARTITION_LEADER_EPOCH with itself as its only replica. A log deleted and created again
   * gets a new partition.
   */
  getPartition(tp: TopicPartition): Partition | undefined {
    const key = topicPartitionOperationKey(tp.topic, tp.partition)
    const log = this.logManager.getLog(tp.topic, tp.partition)
    if (!log) {
      this.partitions.delete(key)
      return undefined
    }
    let partition = this.partitions.get(key)
    if (partition?.log !== log) {
      partition = new Partition(tp, log, { localBrokerId: this.brokerId, leaderEpoch: PARTITION_LEADER_EPOCH })
      this.partitions.set(key, partition)
    }
    return partition
  }

  getLog(tp: TopicPartition): Log | undefined {
    return this.getPartition(tp)?.log
  }

  /**
   * Kafka's `fetchMessages`: reads every partition, then answers at once (the callback runs
   * before this returns) when the fetch may not wait (maxWaitMs <= 0), reads nothing, or any
   * partition erred, diverged or was sent to another replica, or when minBytes are there;
   * otherwise parks a `DelayedFetch` under every partition, answered (from a fresh read) when an
   * append or another change lets it complete, or at maxWaitMs. Returns a function that drops the
   * parked fetch (its client went away; nothing is answered then), a no-op once answered.
   */
  fetchMessages(params: DelayedFetchParams, partitions: readonly FetchPartitionRequest[], responseCallback: (results: FetchPartitionResult[]) => void): () => void {
    const reads = this.readFromLocalLog(params, partitions)
    const bytesReadable = reads.reduce((sum, r) => sum + (r.info?.records.size ?? 0), 0)
    const errorReadingData = reads.some((r) => r.errorCode !== ErrorCode.NONE || r.info === null)
    if (params.maxWaitMs <= 0 || partitions.length === 0 || bytesReadable >= params.minBytes || errorReadingData) {
      responseCallback(reads)
      return () => {}
    }
    const statuses = partitions.map((fetchInfo, i) => ({ fetchInfo, fetchOffsetMetadata: reads[i].info!.fetchOffsetMetadata }))
    return this.parkDelayedFetch(new DelayedFetch(params, statuses, this, responseCallback, this.delayedFetchMetrics)).drop
  }

  /**
   * Parks a fetch that could not be answered yet, unless it can complete now (then its callback
   * ran already). Returns a function that drops it (its client went away) and whether it was parked.
   */
  parkDelayedFetch(fetch: DelayedFetch): { parked: boolean; drop: () => void } {
    const keys = fetch.watchKeys()
    if (this.delayedFetchPurgatory.tryCompleteElseWatch(fetch, keys)) return { parked: false, drop: () => {} }
    this.delayedFetchesParked++
    return { parked: true, drop: () => void this.delayedFetchPurgatory.remove(fetch, keys) }
  }

  /**
   * Wakes the fetches parked on a partition (Kafka's `Partition.tryCompleteDelayedRequests`):
   * after an append, a high watermark or log start offset change. How many completed.
   */
  tryCompleteDelayedFetch(tp: TopicPartition): number {
    return this.delayedFetchPurgatory.checkAndComplete(topicPartitionOperationKey(tp.topic, tp.partition))
  }

  /** Stops the fetch purgatory's timer; parked fetches are dropped. */
  shutdown(): void {
    this.delayedFetchPurgatory.shutdown()
  }

  /** Purgatory counts and expirations, for metrics. */
  delayedFetchStats(): { parked: number; parkedTotal: number; completed: number; expired: number; dropped: number } & DelayedFetchMetrics {
    const p = this.delayedFetchPurgatory
    return {
      parked: p.numDelayed(),
      parkedTotal: this.delayedFetchesParked,
      completed: p.completedTotal(),
      expired: p.expiredTotal(),
      dropped: p.droppedTotal(),
      ...this.delayedFetchMetrics,
    }
  }

  /** The partition's replicas as its leader sees them (the replica selector's candidates). */
  leaderReplicaState(tp: TopicPartition, _log: Log): LeaderReplicaState {
    const partition = this.getPartition(tp)
    if (!partition) throw new Error(`no partition ${tp.topic}-${tp.partition}`)
    return partition.leaderReplicaState()
  }

  /**
   * Appends producer batches as the leader (`Partition.appendRecordsToLeader`, which queues the
   * partition's appends and checks compressed batches off the event loop: then the result is a
   * promise). A successful append wakes the fetches parked on the partition as soon as it is done.
   */
  appendRecords(tp: TopicPartition, records: Buffer | null): PartitionAppendResult | Promise<PartitionAppendResult> {
    const partition = this.getPartition(tp)
    if (!partition) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, info: null, logStartOffset: -1n }
    const result = partition.appendRecordsToLeader(records)
    return result instanceof Promise ? result.then((r) => this.appended(tp, r)) : this.appended(tp, result)
  }

  private appended(tp: TopicPartition, result: PartitionAppendResult): PartitionAppendResult {
    if (result.errorCode === ErrorCode.NONE && result.info !== null && result.info.batchCount > 0) this.tryCompleteDelayedFetch(tp)
    return result
  }

  /** The producer state of a partition's log, loaded on first use. */
  producerState(log: Log): ProducerStateManager {
    const partition = this.getPartition(log)
    if (!partition || partition.log !== log) throw new Error(`no partition for the log ${log.dir}`)
    return partition.producerState()
  }

  /**
   * DeleteRecords (`Partition.deleteRecordsOnLeader`): the new low watermark; parked fetches
   * re-check when it moved.
   */
  deleteRecords(tp: TopicPartition, offset: bigint): { errorCode: number; lowWatermark: bigint } {
    const partition = this.getPartition(tp)
    if (!partition) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1n }
    const { errorCode, lowWatermark, moved } = partition.deleteRecordsOnLeader(offset)
    if (moved) this.tryCompleteDelayedFetch(tp)
    return { errorCode, lowWatermark }
  }

  /** ListOffsets (Kafka's `fetchOffset`): the partition's answer, UNKNOWN_TOPIC_OR_PARTITION without one. */
  fetchOffsetForTimestamp(tp: TopicPartition, timestamp: bigint, isolation: FetchIsolation, currentLeaderEpoch: number | undefined): OffsetForTimestampResult {
    const partition = this.getPartition(tp)
    if (!partition) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, offset: -1n, timestamp: -1n, leaderEpoch: -1 }
    return partition.fetchOffsetForTimestamp(timestamp, isolation, currentLeaderEpoch)
  }

  /** OffsetForLeaderEpoch (Kafka's `lastOffsetForLeaderEpoch`). */
  lastOffsetForLeaderEpoch(tp: TopicPartition, currentLeaderEpoch: number | undefined, leaderEpoch: number): EpochEndOffsetResult {
    const partition = this.getPartition(tp)
    if (!partition) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, leaderEpoch: -1, endOffset: -1n }
    return partition.lastOffsetForLeaderEpoch(currentLeaderEpoch, leaderEpoch)
  }

  /**
   * Kafka's `readFromLocalLog`: every partition read at once, under the limits above. A delayed
   * fetch's re-read (`readFromPurgatory`) does not count as a follower's fetch again.
   */
  readFromLocalLog(params: FetchParams, partitions: readonly FetchPartitionRequest[], readFromPurgatory = false): FetchPartitionResult[] {
    const isolation = fetchIsolation(params)
    const nowMs = Date.now()
    let limitBytes = Math.min(params.maxBytes, this.fetchMaxBytes)
    let minOneMessage = !params.hardMaxBytesLimit
    const results: FetchPartitionResult[] = []
    for (const p of partitions) {
      const result = this.read(p, params, isolation, Math.max(0, Math.min(p.partitionMaxBytes, limitBytes)), minOneMessage, !readFromPurgatory, nowMs)
      const size = result.info?.records.size ?? 0
      if (size > 0) minOneMessage = false
      limitBytes = Math.max(0, limitBytes - size)
      results.push(result)
    }
    return results
  }

  private read(
    p: FetchPartitionRequest,
    params: FetchParams,
    isolation: FetchIsolation,
    maxBytes: number,
    minOneMessage: boolean,
    updateFetchState: boolean,
    nowMs: number,
  ): FetchPartitionResult {
    const partition = this.getPartition(p)
    if (!partition) {
      return { topic: p.topic, partition: p.partition, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, info: null }
    }
    const log = partition.log
    if (params.replicaId < 0 && params.clientMetadata !== undefined && partition.checkLeaderEpoch(p.currentLeaderEpoch) === ErrorCode.NONE) {
      try {
        const preferred = preferredReadReplicaOf(this.replicaSelector, p, params.clientMetadata, p.fetchOffset, this.leaderReplicaState(p, log))
        if (preferred !== -1) {
          const base = { topic: p.topic, partition: p.partition, highWatermark: log.highWatermark(), lastStableOffset: log.lastStableOffset(), logStartOffset: log.logStartOffset() }
          return { ...base, errorCode: ErrorCode.NONE, info: null, preferredReadReplica: preferred }
        }
      } catch {
        // A closed log: the partition's read answers it.
      }
    }
    const { result, highWatermarkMoved } = partition.fetchRecords(params, p, isolation, maxBytes, minOneMessage, updateFetchState, nowMs)
    if (highWatermarkMoved) this.tryCompleteDelayedFetch(p)
    return result
  }
}
