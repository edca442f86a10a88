/**
 * `ReplicaManager`: appends to and reads from the local logs of the partitions this broker
 * leads (every partition, on a single broker). `appendRecords` is Produce's path;
 * `readFromLocalLog` is Fetch's, with Kafka's limits:
 *
 * - partitions are read in request order; `limitBytes` starts at the request's maxBytes (capped
 *   by the broker's fetch.max.bytes) and shrinks by what each partition returned;
 * - each partition reads min(partitionMaxBytes, limitBytes);
 * - `minOneMessage` holds until the first partition that returned bytes, so that one batch
 *   larger than the limits still goes out (KIP-74);
 * - the upper bound of a read depends on who reads: a follower reads to the log end, a consumer
 *   to the high watermark (READ_UNCOMMITTED) or the last stable offset (READ_COMMITTED).
 *
 * Idempotent producers: `appendRecords` checks batches that carry a producer id against the
 * partition's `ProducerStateManager` (producer-state.ts) before appending; a retry of one of the
 * last 5 batches is answered with the original offsets and not appended. The state of a
 * partition is loaded from its log's tail on the first append of such a batch.
 *
 * Long polls: `delayedFetchPurgatory` holds the fetches waiting for minBytes (DelayedFetch,
 * ts/purgatory/delayed-fetch.ts). Whatever can let one complete wakes the partition's key
 * (`tryCompleteDelayedFetch`): an append (which also advances the high watermark of a
 * single-replica log), DeleteRecords and retention (the log start offset moved), and the
 * deletion of a log (DeleteTopics: its fetches answer UNKNOWN_TOPIC_OR_PARTITION).
 *
 * Leader epochs and replicas (ts/replica/leader-epoch.ts, replica-selector.ts), per partition
 * before its read, as Kafka's `Partition.fetchRecords`: a currentLeaderEpoch other than ours
 * errs (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH); a lastFetchedEpoch our epoch cache does not
 * end at or after the fetch offset answers a divergingEpoch and no records; a consumer that the
 * `ReplicaSelector` sends to a follower gets preferredReadReplica and no records.
 *
 * Errors are data: each partition result carries its Kafka error code.
 */
import { batchesOf } from '../protocol/records.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { kafkaErrorCodeOf } from '../storage/errors.js'
import type { Log } from '../storage/log.js'
import type { LogManager } from '../storage/log-manager.js'
import type { FetchDataInfo, FetchIsolation, LogAppendInfo } from '../storage/types.js'
import { newDelayedFetchMetrics, type DelayedFetch, type DelayedFetchMetrics } from '../purgatory/delayed-fetch.js'
import { DelayedOperationPurgatory, topicPartitionOperationKey } from '../purgatory/purgatory.js'
import { checkCurrentLeaderEpoch, divergingEpochOf, NO_EPOCH, PARTITION_LEADER_EPOCH, type DivergingEpoch } from './leader-epoch.js'
import { ProducerStateManager } from './producer-state.js'
import { LeaderSelector, preferredReadReplicaOf, type ClientMetadata, type LeaderReplicaState, type ReplicaSelector } from './replica-selector.js'

/** This broker's id: the leader of every partition. */
export const LOCAL_BROKER_ID = 0

/** fetch.max.bytes: the broker's cap on one fetch response. */
export const DEFAULT_FETCH_MAX_BYTES = 55 * 1024 * 1024

export const IsolationLevel = { READ_UNCOMMITTED: 0, READ_COMMITTED: 1 } as const

export interface TopicPartition {
  topic: string
  partition: number
}

export interface PartitionAppendResult {
  errorCode: number
  errorMessage: string | null
  info: LogAppendInfo | null
  logStartOffset: bigint
}

export interface FetchPartitionRequest extends TopicPartition {
  fetchOffset: bigint
  partitionMaxBytes: number
  /** Fetch v9+; -1 (or absent) = no check. */
  currentLeaderEpoch?: number
  /** Fetch v12+; -1 (or absent) = not sent. */
  lastFetchedEpoch?: number
}

export interface FetchPartitionResult extends TopicPartition {
  errorCode: number
  highWatermark: bigint
  lastStableOffset: bigint
  logStartOffset: bigint
  /** The read, or null when the partition erred, diverged or was sent to another replica. */
  info: FetchDataInfo | null
  /** The fetcher's log diverged from ours: truncate to this, then fetch on. */
  divergingEpoch?: DivergingEpoch
  /** The follower a consumer should read from instead (KIP-392); -1 or absent = this broker. */
  preferredReadReplica?: number
}

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

/** The upper bound of a read, in one place (Kafka's `FetchParams.isolation`). */
export function fetchIsolation(params: Pick<FetchParams, 'replicaId' | 'isolationLevel'>): FetchIsolation {
  if (params.replicaId >= 0) return 'LOG_END'
  return params.isolationLevel === IsolationLevel.READ_COMMITTED ? 'TXN_COMMITTED' : 'HIGH_WATERMARK'
}

export class ReplicaManager {
  readonly logManager: LogManager
  readonly fetchMaxBytes: number
  /** Per partition log; a deleted and re-created partition has a new Log, hence a fresh state. */
  private readonly producerStates = new WeakMap<Log, ProducerStateManager>()
  /** Fetches waiting for minBytes (Kafka's `delayedFetchPurgatory`); its counts are the metrics. */
  readonly delayedFetchPurgatory = new DelayedOperationPurgatory<DelayedFetch>('Fetch')
  /** Expired delayed fetches, by follower and consumer (Kafka's `DelayedFetchMetrics`). */
  readonly delayedFetchMetrics: DelayedFetchMetrics = newDelayedFetchMetrics()
  /** Fetches parked in the purgatory since start (completed, expired or dropped since, or not). */
  delayedFetchesParked = 0

  /** Kafka's `replica.selector.class`: where consumers should read from (default the leader). */
  readonly replicaSelector: ReplicaSelector

  constructor(logManager: LogManager, options: { fetchMaxBytes?: number; replicaSelector?: ReplicaSelector } = {}) {
    this.logManager = logManager
    this.fetchMaxBytes = options.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES
    this.replicaSelector = options.replicaSelector ?? new LeaderSelector()
    // Retention moved a log start offset, or the log was deleted: parked fetches re-check.
    logManager.onSegmentsDeleted((log) => this.tryCompleteDelayedFetch(log))
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

  getLog(tp: TopicPartition): Log | undefined {
    return this.logManager.getLog(tp.topic, tp.partition)
  }

  /** The epoch at which this broker leads the partition (one broker: always the same). */
  leaderEpoch(_tp: TopicPartition): number {
    return PARTITION_LEADER_EPOCH
  }

  /** The partition's replicas as its leader sees them: this broker alone, for now. */
  leaderReplicaState(_tp: TopicPartition, log: Log): LeaderReplicaState {
    const leader = { brokerId: LOCAL_BROKER_ID, rack: null, logStartOffset: log.logStartOffset(), logEndOffset: log.logEndOffset(), timeSinceLastCaughtUpMs: 0 }
    return { leader, followers: [], isr: new Set([LOCAL_BROKER_ID]) }
  }

  /**
   * Appends producer batches as the leader; the high watermark follows (one replica). A
   * successful append wakes the fetches parked on the partition.
   */
  appendRecords(tp: TopicPartition, records: Buffer | null): PartitionAppendResult {
    const result = this.appendToLog(tp, records)
    if (result.errorCode === ErrorCode.NONE && result.info !== null && result.info.batchCount > 0) this.tryCompleteDelayedFetch(tp)
    return result
  }

  private appendToLog(tp: TopicPartition, records: Buffer | null): PartitionAppendResult {
    const log = this.getLog(tp)
    if (!log) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, info: null, logStartOffset: -1n }
    if (records === null || records.length === 0) {
      return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'no records', info: null, logStartOffset: log.logStartOffset() }
    }
    try {
      const headers = Array.from(batchesOf(records), (batch) => batch.header)
      const idempotent = headers.filter((h) => h.producerId >= 0n)
      if (idempotent.length === 0) {
        const info = log.append(records)
        return { errorCode: ErrorCode.NONE, errorMessage: null, info, logStartOffset: info.logStartOffset }
      }
      const state = this.producerState(log)
      state.truncateHead(log.logStartOffset())
      const check = state.check(idempotent)
      if (check.kind === 'error') return { errorCode: check.errorCode, errorMessage: check.message, info: null, logStartOffset: log.logStartOffset() }
      if (check.kind === 'duplicate') {
        const d = check.batch
        const logStartOffset = log.logStartOffset()
        const info: LogAppendInfo = {
          firstOffset: d.firstOffset,
          lastOffset: d.lastOffset,
          maxTimestamp: -1n,
          offsetOfMaxTimestamp: -1n,
          logAppendTime: d.logAppendTime,
          logStartOffset,
          recordCount: 0,
          batchCount: 0,
          validBytes: 0,
        }
        return { errorCode: ErrorCode.NONE, errorMessage: null, info, logStartOffset }
      }
      const info = log.append(records)
      // Offsets were assigned from firstOffset on, lastOffsetDelta + 1 per batch.
      let offset = info.firstOffset
      for (const h of headers) {
        state.update(h, offset, info.logAppendTime)
        offset += BigInt(h.lastOffsetDelta) + 1n
      }
      return { errorCode: ErrorCode.NONE, errorMessage: null, info, logStartOffset: info.logStartOffset }
    } catch (err) {
      return { errorCode: kafkaErrorCodeOf(err), errorMessage: (err as Error).message, info: null, logStartOffset: log.logStartOffset() }
    }
  }

  /** The producer state of a partition, loaded from its log on first use. */
  producerState(log: Log): ProducerStateManager {
    let state = this.producerStates.get(log)
    if (!state) {
      state = ProducerStateManager.loadFromLog(log)
      this.producerStates.set(log, state)
    }
    return state
  }

  /**
   * DeleteRecords: raises the log start offset (at most to the high watermark; -1 means the high
   * watermark) and drops the producers whose batches are all below it. The new low watermark.
   */
  deleteRecords(tp: TopicPartition, offset: bigint): { errorCode: number; lowWatermark: bigint } {
    const log = this.getLog(tp)
    if (!log) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1n }
    try {
      const target = offset === -1n ? log.highWatermark() : offset
      if (target < 0n) return { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: -1n }
      const before = log.logStartOffset()
      log.deleteRecordsBefore(target)
      this.producerStates.get(log)?.truncateHead(log.logStartOffset())
      if (log.logStartOffset() !== before) this.tryCompleteDelayedFetch(tp)
      return { errorCode: ErrorCode.NONE, lowWatermark: log.logStartOffset() }
    } catch (err) {
      return { errorCode: kafkaErrorCodeOf(err), lowWatermark: -1n }
    }
  }

  /** Kafka's `readFromLocalLog`: every partition read at once, under the limits above. */
  readFromLocalLog(params: FetchParams, partitions: readonly FetchPartitionRequest[]): FetchPartitionResult[] {
    const isolation = fetchIsolation(params)
    let limitBytes = Math.min(params.maxBytes, this.fetchMaxBytes)
    let minOneMessage = !params.hardMaxBytesLimit
    const results: FetchPartitionResult[] = []
    for (const p of partitions) {
      const result = this.read(p, params, isolation, Math.max(0, Math.min(p.partitionMaxBytes, limitBytes)), minOneMessage)
      const size = result.info?.records.size ?? 0
      if (size > 0) minOneMessage = false
      limitBytes = Math.max(0, limitBytes - size)
      results.push(result)
    }
    return results
  }

  private read(p: FetchPartitionRequest, params: FetchParams, isolation: FetchIsolation, maxBytes: number, minOneMessage: boolean): FetchPartitionResult {
    const log = this.getLog(p)
    if (!log) {
      return { topic: p.topic, partition: p.partition, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, info: null }
    }
    const base = {
      topic: p.topic,
      partition: p.partition,
      highWatermark: log.highWatermark(),
      lastStableOffset: log.lastStableOffset(),
      logStartOffset: log.logStartOffset(),
    }
    try {
      const leaderEpoch = this.leaderEpoch(p)
      const epochError = checkCurrentLeaderEpoch(p.currentLeaderEpoch ?? NO_EPOCH, leaderEpoch)
      if (epochError !== ErrorCode.NONE) return { ...base, errorCode: epochError, info: null }
      if (params.replicaId < 0 && params.clientMetadata !== undefined) {
        const preferred = preferredReadReplicaOf(this.replicaSelector, p, params.clientMetadata, p.fetchOffset, this.leaderReplicaState(p, log))
        if (preferred !== -1) return { ...base, errorCode: ErrorCode.NONE, info: null, preferredReadReplica: preferred }
      }
      const lastFetchedEpoch = p.lastFetchedEpoch ?? NO_EPOCH
      if (lastFetchedEpoch !== NO_EPOCH) {
        if (p.fetchOffset < log.logStartOffset()) return { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, info: null }
        const check = divergingEpochOf(log, p.fetchOffset, lastFetchedEpoch, leaderEpoch)
        if (check.kind === 'error') return { ...base, errorCode: check.errorCode, info: null }
        if (check.kind === 'diverging') return { ...base, errorCode: ErrorCode.NONE, info: null, divergingEpoch: check.divergingEpoch }
      }
      const info = log.read(p.fetchOffset, { maxBytes, isolation, minOneMessage })
      return { ...base, errorCode: ErrorCode.NONE, info }
    } catch (err) {
      return { ...base, errorCode: kafkaErrorCodeOf(err), info: null }
    }
  }
}

