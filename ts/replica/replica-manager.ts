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
 * acks=all (Kafka's `appendRecords` with requiredAcks -1): `appendRecords(tp, records, -1)`
 * refuses the append with NOT_ENOUGH_REPLICAS when the partition's ISR is smaller than its
 * min.insync.replicas; `maybeAddDelayedProduce` answers at once when every partition's high
 * watermark already covers its records (a partition without followers: today's behaviour), or
 * parks a `DelayedProduce` (ts/purgatory/delayed-produce.ts) in `delayedProducePurgatory`
 * until the ISR holds them or the request's timeout passes. Every high watermark move and ISR
 * change wakes both purgatories for the partition (`tryCompleteDelayedRequests`).
 *
 * ISR changes (cluster mode, with an `AlterPartitionManager`): each partition's leader proposes
 * expansions on its followers' fetches (ts/replica/partition.ts); the replica manager runs
 * Kafka's `isr-expiration` task every replica.lag.time.max.ms / 2, asking each partition to
 * shrink its ISR (`maybeShrinkIsr`). Without one (a standalone broker) no ISR ever changes.
 *
 * Errors are data: each partition result carries its Kafka error code.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import type { Log } from '../storage/log.js'
import type { LogManager } from '../storage/log-manager.js'
import type { FetchIsolation } from '../storage/types.js'
import type { Logger } from '../logger.js'
import { DelayedFetch, newDelayedFetchMetrics, type DelayedFetchMetrics } from '../purgatory/delayed-fetch.js'
import { DelayedProduce, newDelayedProduceMetrics, producePartitionStatus, type DelayedProduceMetrics, type ProducePartitionStatus } from '../purgatory/delayed-produce.js'
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
import {
  ACKS_ALL,
  DEFAULT_MIN_INSYNC_REPLICAS,
  DEFAULT_REPLICA_LAG_TIME_MAX_MS,
  Partition,
  type EpochEndOffsetResult,
  type OffsetForTimestampResult,
  type PartitionAppendResult,
} from './partition.js'
import type { AlterPartitionListener } from './isr-state.js'
import type { AlterPartitionManager } from './partition-registration.js'
import type { ProducerStateManager } from './producer-state.js'
import { LeaderSelector, preferredReadReplicaOf, type LeaderReplicaState, type ReplicaSelector } from './replica-selector.js'

export { fetchIsolation, IsolationLevel }
export type { DelayedFetchParams, FetchParams, FetchPartitionRequest, FetchPartitionResult, PartitionAppendResult, TopicPartition }

/** An append's result with the partition appended to (null: none) and its leader epoch then. */
export interface AppendRecordsResult extends PartitionAppendResult {
  partition: Partition | null
  leaderEpoch: number
}

/** fetch.max.bytes: the broker's cap on one fetch response. */
export const DEFAULT_FETCH_MAX_BYTES = 55 * 1024 * 1024

export interface ReplicaManagerOptions {
  /** This broker's node.id: the leader of every partition it holds, for now. */
  brokerId: number
  fetchMaxBytes?: number
  replicaSelector?: ReplicaSelector
  /**
   * How partition leaders change their ISR (cluster mode: the etcd metadata). Absent: a
   * standalone broker, whose ISRs never change. With one, partitions own their high watermarks:
   * their logs must have the 'managed' policy.
   */
  alterPartitionManager?: AlterPartitionManager
  /** replica.lag.time.max.ms (default 30 s); the ISR check runs every half of it. */
  replicaLagTimeMaxMs?: number
  /** A topic's min.insync.replicas now (topic config, else the broker's default); default 1. */
  minInSyncReplicas?: (topic: string) => number
  /** How long a retriable AlterPartition failure waits before the change is submitted again. */
  alterPartitionRetryBackoffMs?: number
  logger?: Logger
}

/** A produce partition's answer after its acks (or at once for acks 0 and 1). */
export interface ProduceAcksResult extends TopicPartition {
  errorCode: number
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
  /** acks=all produces waiting for the ISR (Kafka's `delayedProducePurgatory`). */
  readonly delayedProducePurgatory = new DelayedOperationPurgatory<DelayedProduce>('Produce')
  readonly delayedProduceMetrics: DelayedProduceMetrics = newDelayedProduceMetrics()
  delayedProducesParked = 0
  /** ISR changes made and refused (Kafka's IsrExpandsPerSec, IsrShrinksPerSec, FailedIsrUpdatesPerSec). */
  readonly isrChangeCounts = { expands: 0, shrinks: 0, failed: 0 }
  private readonly alterPartitionListener: AlterPartitionListener = {
    markIsrExpand: () => void this.isrChangeCounts.expands++,
    markIsrShrink: () => void this.isrChangeCounts.shrinks++,
    markFailed: () => void this.isrChangeCounts.failed++,
  }
  readonly alterPartitionManager: AlterPartitionManager | null
  readonly replicaLagTimeMaxMs: number
  private readonly minInSyncReplicas: (topic: string) => number
  private readonly alterPartitionRetryBackoffMs: number | undefined
  private readonly logger: Logger | undefined
  /** Kafka's `isr-expiration` task (cluster mode only). */
  private readonly isrExpirationTimer: NodeJS.Timeout | null

  /** Kafka's `replica.selector.class`: where consumers should read from (default the leader). */
  readonly replicaSelector: ReplicaSelector

  constructor(logManager: LogManager, options: ReplicaManagerOptions) {
    this.logManager = logManager
    this.brokerId = options.brokerId
    this.fetchMaxBytes = options.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES
    this.replicaSelector = options.replicaSelector ?? new LeaderSelector()
    this.alterPartitionManager = options.alterPartitionManager ?? null
    this.replicaLagTimeMaxMs = options.replicaLagTimeMaxMs ?? DEFAULT_REPLICA_LAG_TIME_MAX_MS
    this.minInSyncReplicas = options.minInSyncReplicas ?? (() => DEFAULT_MIN_INSYNC_REPLICAS)
    this.alterPartitionRetryBackoffMs = options.alterPartitionRetryBackoffMs
    this.logger = options.logger
    if (this.alterPartitionManager !== null) {
      this.isrExpirationTimer = setInterval(() => this.maybeShrinkIsr(), Math.max(1, Math.floor(this.replicaLagTimeMaxMs / 2)))
      this.isrExpirationTimer.unref()
    } else {
      this.isrExpirationTimer = null
    }
    // Retention moved a log start offset, or the log was deleted: parked fetches re-check.
    logManager.onSegmentsDeleted((log) => {
      if (log.isClosed) this.partitions.delete(topicPartitionOperationKey(log.topic, log.partition))
      this.tryCompleteDelayedRequests(log)
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
      const topic = tp.topic
      partition = new Partition(tp, log, {
        localBrokerId: this.brokerId,
        leaderEpoch: PARTITION_LEADER_EPOCH,
        replicaLagTimeMaxMs: this.replicaLagTimeMaxMs,
        alterPartitionManager: this.alterPartitionManager ?? undefined,
        minInSyncReplicas: () => this.minInSyncReplicas(topic),
        delayedOperations: { checkAndCompleteAll: () => void this.tryCompleteDelayedRequests(tp) },
        alterPartitionListener: this.alterPartitionListener,
        alterPartitionRetryBackoffMs: this.alterPartitionRetryBackoffMs,
        logger: this.logger,
      })
      this.partitions.set(key, partition)
    }
    return partition
  }

  /**
   * Kafka's `isr-expiration` task: every partition led here whose ISR holds followers that did
   * not catch up within replica.lag.time.max.ms proposes them out (`Partition.maybeShrinkIsr`).
   * How many changes were submitted.
   */
  maybeShrinkIsr(nowMs = Date.now()): number {
    let submitted = 0
    for (const partition of this.partitions.values()) {
      try {
        if (partition.maybeShrinkIsr(nowMs)) submitted++
      } catch (err) {
        this.logger?.warn('ISR check failed', { topic: partition.topic, partition: partition.partition, error: (err as Error).message })
      }
    }
    return submitted
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

  /**
   * Kafka's `Partition.tryCompleteDelayedRequests`: wakes the fetches and the acks=all produces
   * parked on a partition, after its high watermark moved, its ISR or leadership changed, or its
   * log went away. How many completed.
   */
  tryCompleteDelayedRequests(tp: TopicPartition): number {
    const key = topicPartitionOperationKey(tp.topic, tp.partition)
    return this.delayedFetchPurgatory.checkAndComplete(key) + this.delayedProducePurgatory.checkAndComplete(key)
  }

  /** Stops the purgatories' timers and the ISR check; parked operations are dropped. */
  shutdown(): void {
    if (this.isrExpirationTimer !== null) clearInterval(this.isrExpirationTimer)
    this.delayedFetchPurgatory.shutdown()
    this.delayedProducePurgatory.shutdown()
  }

  /** The produce purgatory's counts and expirations, for metrics. */
  delayedProduceStats(): { parked: number; parkedTotal: number; completed: number; expired: number; dropped: number } & DelayedProduceMetrics {
    const p = this.delayedProducePurgatory
    return {
      parked: p.numDelayed(),
      parkedTotal: this.delayedProducesParked,
      completed: p.completedTotal(),
      expired: p.expiredTotal(),
      dropped: p.droppedTotal(),
      ...this.delayedProduceMetrics,
    }
  }

  /** ISR changes and partitions under min.insync.replicas, for metrics. */
  isrStats(): { expands: number; shrinks: number; failed: number; underMinIsrPartitions: number } {
    let underMinIsrPartitions = 0
    for (const partition of this.partitions.values()) if (!partition.log.isClosed && partition.isUnderMinIsr()) underMinIsrPartitions++
    return { ...this.isrChangeCounts, underMinIsrPartitions }
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
   * promise). With `requiredAcks` -1 the partition refuses the append when its ISR is under
   * min.insync.replicas (NOT_ENOUGH_REPLICAS). A successful append wakes the fetches and
   * produces parked on the partition as soon as it is done (a single replica's high watermark
   * moved with it). The result tells the partition appended to and its leader epoch then, for
   * `maybeAddDelayedProduce`.
   */
  appendRecords(tp: TopicPartition, records: Buffer | null, requiredAcks = 1): AppendRecordsResult | Promise<AppendRecordsResult> {
    const partition = this.getPartition(tp)
    if (!partition) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, info: null, logStartOffset: -1n, partition: null, leaderEpoch: -1 }
    const result = partition.appendRecordsToLeader(records, requiredAcks)
    return result instanceof Promise ? result.then((r) => this.appended(tp, partition, r)) : this.appended(tp, partition, result)
  }

  private appended(tp: TopicPartition, partition: Partition, result: PartitionAppendResult): AppendRecordsResult {
    if (result.errorCode === ErrorCode.NONE && result.info !== null && result.info.batchCount > 0) this.tryCompleteDelayedRequests(tp)
    return { ...result, partition, leaderEpoch: partition.leaderEpoch }
  }

  /**
   * The answer of a Produce after its appends (Kafka's `appendRecords` after the local append):
   * with acks=all (-1) and at least one partition appended, a `DelayedProduce` waits at most
   * `timeoutMs` for every partition's high watermark to reach its last appended offset + 1, and
   * answers then (`responseCallback` runs once; at once, before this returns, when nothing needs
   * to wait: acks 0 or 1, every append failed, or the ISR holds the records already). The
   * answer's error codes per partition, in `appends`' order. Returns a function that drops the
   * waiting produce (its client went away; nothing is answered then).
   */
  maybeAddDelayedProduce(
    requiredAcks: number,
    timeoutMs: number,
    appends: readonly (TopicPartition & { result: AppendRecordsResult })[],
    responseCallback: (results: ProduceAcksResult[]) => void,
  ): () => void {
    const answer = (statuses: readonly ProduceAcksResult[]) => responseCallback(statuses.map((s) => ({ topic: s.topic, partition: s.partition, errorCode: s.errorCode })))
    const appended = appends.filter((a) => a.result.errorCode === ErrorCode.NONE && a.result.partition !== null && a.result.info !== null)
    if (requiredAcks !== ACKS_ALL || appended.length === 0) {
      answer(appends.map((a) => ({ topic: a.topic, partition: a.partition, errorCode: a.result.errorCode })))
      return () => {}
    }
    const statuses: ProducePartitionStatus[] = appends.map((a) => {
      const { result } = a
      const ok = result.errorCode === ErrorCode.NONE && result.partition !== null && result.info !== null
      return producePartitionStatus(a, result.partition!, result.leaderEpoch, ok ? ErrorCode.NONE : result.errorCode, ok ? result.info!.lastOffset : -1n)
    })
    const produce = new DelayedProduce(timeoutMs, statuses, this, answer, this.delayedProduceMetrics)
    const keys = produce.watchKeys()
    if (this.delayedProducePurgatory.tryCompleteElseWatch(produce, keys)) return () => {}
    this.delayedProducesParked++
    return () => void this.delayedProducePurgatory.remove(produce, keys)
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
    if (highWatermarkMoved) this.tryCompleteDelayedRequests(p)
    return result
  }
}
