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
 * ts/replica/delayed-fetch.ts). Whatever can let one complete wakes the partition's key
 * (`tryCompleteDelayedRequests`, which wakes parked acks=all produces too): an append (which also advances the high watermark of a
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
 * parks a `DelayedProduce` (ts/replica/delayed-produce.ts) in `delayedProducePurgatory`
 * until the ISR holds them or the request's timeout passes. Every high watermark move and ISR
 * change wakes both purgatories for the partition (`tryCompleteDelayedRequests`).
 *
 * ISR changes (cluster mode, with an `AlterPartitionManager`): each partition's leader proposes
 * expansions on its followers' fetches (ts/replica/partition.ts); the replica manager runs
 * Kafka's `isr-expiration` task every replica.lag.time.max.ms / 2, asking each partition to
 * shrink its ISR (`maybeShrinkIsr`). Without one (a standalone broker) no ISR ever changes.
 *
 * Errors are data: each partition result carries its Kafka error code.
 *
 * Replication (`ReplicaManagerOptions.replication`; a standalone broker has none): the partitions
 * are the ones the cluster's metadata gave this broker, through `applyPartitionChanges` (Kafka's
 * `applyDelta` -> `makeLeaders` / `makeFollowers` / `stopReplicas`), one batch of changes at a
 * time in call order; a local log no registration named yet has no partition (NOT_LEADER_OR_FOLLOWER).
 * For each change whose registration names this broker among its replicas:
 *
 * - a registration older than the partition's (a smaller leader epoch, or the same one with a
 *   smaller partition epoch) is ignored;
 * - leader: the partition's fetcher (if it followed) is removed first, with any truncation of
 *   it under way finished; then `Partition.makeLeader` with the registration's replicas, ISR,
 *   leader epoch and partition epoch;
 * - follower: `Partition.makeFollower` (leader id, epochs, replicas, ISR; no remote replica
 *   states); when the leader or its epoch changed (or it led until now), its fetcher is removed,
 *   the leader appends still queued settle, and the `ReplicaFetcherManager` adds it at the log
 *   end offset and the new epoch (truncation, if any, comes from the leader's divergingEpoch),
 *   with the batch's other followers in one call once the batch's changes are applied;
 *   with NO_LEADER, or a leader whose end point is unknown, it waits unfetched for the next change;
 * - a partition without a local log gets one through the LogManager (with the change's topic id
 *   and the LogManager's topic config), the batch's new logs made side by side before any change
 *   is applied; a local log of another topic id is left alone (an error);
 * - a null registration, or one that no longer names this broker: fetching stops, the partition
 *   is dropped, and `replication.onPartitionStopped` decides about the log (deleting it is the
 *   metadata layer's call, as Kafka's `stopReplicas(deletePartition)`).
 *
 * After each batch, `replication.onLeadershipChange(leaders, followers)` (Kafka's callback of
 * the same name) tells who cares (the group coordinator) which partitions this broker was
 * elected to lead, in which leader epoch, and which it resigned: followed under a new leader or
 * epoch, or stopped holding.
 *
 * Non-leaders refuse: Produce, DeleteRecords, OffsetForLeaderEpoch, ListOffsets (but for the
 * debugging replica id -2) and followers' fetches answer NOT_LEADER_OR_FOLLOWER; a consumer's
 * Fetch v11+ (which carries client metadata: KIP-392) is served by a follower up to its high
 * watermark, an older one is refused. Replicated logs need the LogManager's 'managed' high
 * watermark policy: the leader moves it with its ISR, a follower with its leader's answers.
 */
import type { ClientSecurity } from '../client/client-security.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { Logger } from '../logger.js'
import type { Log } from '../storage/log.js'
import type { LogManager } from '../storage/log-manager.js'
import type { AppendOrigin, FetchIsolation } from '../storage/types.js'
import { DelayedFetch, newDelayedFetchMetrics, type DelayedFetchMetrics } from './delayed-fetch.js'
import { DelayedProduce, newDelayedProduceMetrics, producePartitionStatus, settleProduceStatuses, type DelayedProduceMetrics, type ProducePartitionStatus } from './delayed-produce.js'
import { DelayedOperationPurgatory, topicPartitionOperationKey } from '../purgatory/purgatory.js'
import type { DelayedOperation } from '../purgatory/delayed-operation.js'
import { fetchIsolation, IsolationLevel, type DelayedFetchParams, type FetchParams, type FetchPartitionRequest, type FetchPartitionResult, type TopicPartition } from './fetch-params.js'
import { PARTITION_LEADER_EPOCH } from './leader-epoch.js'
import { ACKS_ALL, DEFAULT_MIN_INSYNC_REPLICAS, DEFAULT_REPLICA_LAG_TIME_MAX_MS, Partition, type EpochEndOffsetResult, type OffsetForTimestampResult, type PartitionAppendResult } from './partition.js'
import type { AlterPartitionListener } from './isr-state.js'
import { NO_LEADER, type AlterPartitionManager, type BrokerEndPoint, type PartitionChange, type PartitionRegistration } from './partition-registration.js'
import { ReplicaFetcherManager } from './replica-fetcher-manager.js'
import type { ReplicaFetcherConfig } from './replica-fetcher-thread.js'
import type { ProducerStateManager } from './producer-state.js'
import { preferredReadReplicaOf, type LeaderReplicaState, type ReplicaSelector } from './replica-selector.js'

export { fetchIsolation, IsolationLevel }
export type { DelayedFetchParams, FetchParams, FetchPartitionRequest, FetchPartitionResult, PartitionAppendResult, TopicPartition }

/** How many new local logs `applyPartitionChanges` makes at a time (their fsyncs run side by side). */
const LOG_CREATION_CONCURRENCY = 32

type FetcherAddition = Parameters<ReplicaFetcherManager['addFetcherForPartitions']>[0][number]

/** An append's result with the partition appended to (null: none) and its leader epoch then. */
export interface AppendRecordsResult extends PartitionAppendResult {
  partition: Partition | null
  leaderEpoch: number
}

const FENCED_MESSAGE = 'this broker is fenced (its cluster registration lapsed) and takes no leader writes until it registers again'

/** fetch.max.bytes: the broker's cap on one fetch response. */
export const DEFAULT_FETCH_MAX_BYTES = 55 * 1024 * 1024

/** producer.id.expiration.ms: Kafka's default, one day. */
export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000

/** producer.id.expiration.check.interval.ms: Kafka's default, ten minutes. */
export const DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 600_000

export interface ReplicaManagerOptions {
  /** This broker's node.id (a standalone broker leads every partition it holds). */
  brokerId: number
  fetchMaxBytes?: number
  /** Kafka's `replica.selector.class`; absent or null: none, consumers read from the leader and nothing is asked. */
  replicaSelector?: ReplicaSelector | null
  /** A broker's rack (broker.rack), for the replica selector; default: none known. */
  rackOf?: (brokerId: number) => string | null
  /**
   * How partition leaders change their ISR (cluster mode: the etcd metadata). Absent: a
   * standalone broker, whose ISRs never change. With one, partitions own their high watermarks:
   * their logs must have the 'managed' policy.
   */
  alterPartitionManager?: AlterPartitionManager
  /** replica.lag.time.max.ms (default 30 s); the ISR check runs every half of it. */
  replicaLagTimeMaxMs?: number
  /**
   * producer.id.expiration.ms: how long an idle producer is remembered (default 1 day); a
   * function is read at each use (the key is dynamic, cluster-wide, as in Kafka).
   */
  producerIdExpirationMs?: number | (() => number)
  /** producer.id.expiration.check.interval.ms: how often idle producers are looked for (default 10 min). */
  producerIdExpirationCheckIntervalMs?: number
  /** A topic's min.insync.replicas now (topic config, else the broker's default); default 1. */
  minInSyncReplicas?: (topic: string) => number
  /** How long a retriable AlterPartition failure waits before the change is submitted again. */
  alterPartitionRetryBackoffMs?: number
  logger?: Logger
  /** Present when the partitions are replicated (cluster mode): see the module comment. */
  replication?: ReplicationOptions
}

/** What the replica manager needs of the cluster to replicate (the metadata layer gives it). */
export interface ReplicationOptions extends ReplicaFetcherConfig {
  /** Where a broker can be reached (Kafka's metadata image of the brokers); undefined when unknown. */
  brokerEndPoint(brokerId: number): BrokerEndPoint | undefined
  /**
   * Whether a broker is alive (registered, not shutting down): a follower on a broker that is
   * not may neither join the ISR nor hold a leader's high watermark back (Kafka's
   * `isReplicaIsrEligible`). Default: every broker.
   */
  isBrokerAlive?(brokerId: number): boolean
  /**
   * Whether the cluster's metadata has this partition (Kafka's `metadataCache.contains`): a
   * request for a partition this broker holds no replica of is answered NOT_LEADER_OR_FOLLOWER
   * when the partition exists elsewhere (the client refreshes its metadata and finds the
   * leader), UNKNOWN_TOPIC_OR_PARTITION only when it exists nowhere. Default: known when this
   * broker has a log of it.
   */
  partitionExists?(tp: TopicPartition): boolean
  /**
   * A partition the cluster's metadata makes this broker the leader of, whose change this broker
   * has not applied yet (its log still being made): resolves once the changes received so far
   * are applied; undefined when the metadata does not make it the leader here. A Produce waits
   * for it rather than answering NOT_LEADER_OR_FOLLOWER for a partition this broker's own
   * Metadata answer already lists as led here (Kafka applies a partition's metadata and its
   * leadership in one step, so its clients see no such gap). Default: never pending.
   */
  pendingLeadership?(tp: TopicPartition): Promise<void> | undefined
  /**
   * A partition this broker stopped holding (its registration deleted, or moved off this
   * broker): its fetcher is gone and it is no longer served; `log` is its local log, if any.
   */
  onPartitionStopped?(change: PartitionChange, log: Log | undefined): void | Promise<void>
  /**
   * Whether this broker may write as a leader now (cluster mode: its registration's lease is
   * certainly alive). When not, Produce and DeleteRecords answer NOT_LEADER_OR_FOLLOWER: a broker
   * resuming after a pause longer than its lease may have lost its leadership without knowing it
   * yet, and must not take writes as a stale leader. Default: always.
   */
  leaderWritesAllowed?(): boolean
  /**
   * Kafka's `onLeadershipChange` (the callback of `becomeLeaderOrFollower`; KRaft's metadata
   * publisher makes the same calls): after each batch of `applyPartitionChanges`, the partitions
   * this broker became the leader of (or was elected again, in a new leader epoch), and those it
   * no longer leads or follows under another leader or epoch: now a follower, or no longer a
   * replica (then `leaderEpoch` is the last it knew). The group coordinator's onElection and
   * onResignation hang off it. Called once per batch in which either list is not empty, after
   * the batch is applied (the changes that failed left out), in the change queue: it must not
   * wait for anything. What it throws is logged.
   */
  onLeadershipChange?(leaders: readonly LeadershipChange[], followers: readonly LeadershipChange[]): void
  /** num.replica.fetchers (1). */
  numReplicaFetchers?: number
  /** The inter-broker listener's security for the fetchers' connections (default PLAINTEXT). */
  security?: ClientSecurity | (() => ClientSecurity)
  /** This broker's epoch (KIP-903) for the fetchers' ReplicaState; -1 when unknown. */
  brokerEpoch?: bigint
  logger: Logger
}

/** A partition whose leadership changed on this broker, and its leader epoch now. */
export interface LeadershipChange extends TopicPartition {
  leaderEpoch: number
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
  /**
   * ShareFetches waiting for records to acquire (Kafka's `delayedShareFetchPurgatory`; the
   * operations are ts/share/delayed-share-fetch.ts, parked by the share partition manager), woken
   * with the fetches by `tryCompleteDelayedRequests` and by the share partitions themselves.
   */
  readonly delayedShareFetchPurgatory = new DelayedOperationPurgatory<DelayedOperation>('ShareFetch')
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
  /** producer.id.expiration.ms, read at each use. */
  private readonly producerIdExpiration: () => number
  /** Kafka's `PeriodicProducerExpirationCheck` task. */
  private readonly producerExpirationTimer: NodeJS.Timeout

  /**
   * Kafka's `replica.selector.class` (its `replicaSelectorOpt`): where consumers should read
   * from; null (the default, as Kafka's) skips the question on every consumer fetch.
   */
  readonly replicaSelector: ReplicaSelector | null
  private readonly rackOf: (brokerId: number) => string | null

  /** The follower fetchers; null for a standalone broker. */
  readonly replicaFetcherManager: ReplicaFetcherManager | null
  private readonly replication: ReplicationOptions | null
  /** `applyPartitionChanges` batches, one at a time in call order. */
  private changeQueue: Promise<unknown> = Promise.resolve()

  constructor(logManager: LogManager, options: ReplicaManagerOptions) {
    this.logManager = logManager
    this.brokerId = options.brokerId
    this.fetchMaxBytes = options.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES
    this.replicaSelector = options.replicaSelector ?? null
    this.rackOf = options.rackOf ?? (() => null)
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
    const expiration = options.producerIdExpirationMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_MS
    this.producerIdExpiration = typeof expiration === 'number' ? () => expiration : expiration
    this.producerExpirationTimer = setInterval(
      () => this.removeExpiredProducers(BigInt(Date.now())),
      Math.max(1, options.producerIdExpirationCheckIntervalMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS),
    )
    this.producerExpirationTimer.unref()
    this.replication = options.replication ?? null
    this.replicaFetcherManager = this.replication
      ? new ReplicaFetcherManager({
          ...this.replication,
          brokerId: this.brokerId,
          partitions: { followerPartition: (tp) => this.followerPartition(tp), followerOffsetsMoved: (tp) => this.tryCompleteDelayedRequests(tp) },
        })
      : null
    // Retention moved a log start offset, or the log was deleted: parked fetches re-check.
    logManager.onSegmentsDeleted((log) => {
      if (log.isClosed) {
        this.partitions.delete(topicPartitionOperationKey(log.topic, log.partition))
        void this.replicaFetcherManager?.removeFetcherForPartitions([log])
      }
      this.tryCompleteDelayedRequests(log)
    })
  }

  /** Whether the partitions are replicated (driven by `applyPartitionChanges`). */
  get isReplicated(): boolean {
    return this.replication !== null
  }

  /** The partition when this broker follows it (for its fetcher). */
  followerPartition(tp: TopicPartition): Partition | undefined {
    const partition = this.getPartition(tp)
    return partition && !partition.isLeader ? partition : undefined
  }

  /**
   * Kafka's `applyDelta`: makes this broker the leader or a follower of each partition whose
   * registration names it, or stops it holding the others (see the module comment). Resolves
   * when every change is applied (fetchers added, truncations under way finished); a change that
   * failed (its log could not be made, say) does not stop the others: the promise then rejects
   * with an AggregateError of the failures, after the rest are applied.
   */
  applyPartitionChanges(changes: readonly PartitionChange[]): Promise<void> {
    const run = this.changeQueue.then(() => this.applyNow(changes))
    this.changeQueue = run.catch(() => undefined)
    return run
  }

  private async applyNow(changes: readonly PartitionChange[]): Promise<void> {
    const replication = this.replication
    const fetchers = this.replicaFetcherManager
    if (!replication || !fetchers) throw new Error('applyPartitionChanges needs a replica manager with replication options')
    const failures: Error[] = []
    const attempt = async (c: PartitionChange, fn: () => Promise<void>) => {
      try {
        await fn()
      } catch (err) {
        replication.logger.error('cannot apply a partition change', { partition: `${c.topic}-${c.partition}`, error: String(err) })
        failures.push(new Error(`${c.topic}-${c.partition}: ${(err as Error).message}`, { cause: err }))
      }
    }
    const leaders: LeadershipChange[] = []
    const followers: LeadershipChange[] = []
    const note = (list: LeadershipChange[], c: PartitionChange) => (leaderEpoch: number | null) => {
      if (leaderEpoch !== null) list.push({ topic: c.topic, partition: c.partition, leaderEpoch })
    }
    await this.createMissingLogs(changes)
    // Fetching stops for every partition the batch takes from its fetcher, in one call: each
    // removal waits for its fetcher's response under way, once per batch rather than once per
    // partition (a broker taking over a thousand leaders would wait a thousand times).
    const leaving = changes.filter((c) => this.leavesItsFetcher(c))
    if (leaving.length > 0) await fetchers.removeFetcherForPartitions(leaving)
    // Followers start fetching together at the end of the batch (one call per batch, not per partition).
    const toFetch = new Map<string, FetcherAddition>()
    for (const c of changes) {
      const reg = c.registration
      toFetch.delete(topicPartitionOperationKey(c.topic, c.partition))
      if (reg === null || !reg.replicas.includes(this.brokerId)) await attempt(c, () => this.stopReplica(c).then(note(followers, c)))
      else if (reg.leader === this.brokerId) await attempt(c, () => this.makeLeader(c, reg).then(note(leaders, c)))
      else await attempt(c, () => this.makeFollower(c, reg, replication, toFetch).then(note(followers, c)))
    }
    if (toFetch.size > 0) {
      const additions = [...toFetch.values()]
      try {
        await fetchers.addFetcherForPartitions(additions)
      } catch (err) {
        replication.logger.error('cannot start fetching partitions', { partitions: additions.length, error: String(err) })
        failures.push(new Error(`adding ${additions.length} partitions to the fetchers: ${(err as Error).message}`, { cause: err }))
      }
    }
    await fetchers.shutdownIdleFetcherThreads()
    if ((leaders.length > 0 || followers.length > 0) && replication.onLeadershipChange) {
      try {
        replication.onLeadershipChange(leaders, followers)
      } catch (err) {
        replication.logger.error('a leadership change listener failed', { error: String(err) })
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} of ${changes.length} partition changes failed`)
  }

  /**
   * Makes the local logs that the batch's changes need and that do not exist yet, up to
   * LOG_CREATION_CONCURRENCY at a time: a topic of thousands of partitions waits for its
   * directories and files (an fsync each) side by side, not one after another. A creation that
   * fails here is tried again, and reported, by the change itself.
   */
  private async createMissingLogs(changes: readonly PartitionChange[]): Promise<void> {
    const missing = changes.filter((c) => c.registration !== null && c.registration.replicas.includes(this.brokerId) && !this.logManager.getLog(c.topic, c.partition))
    let next = 0
    const worker = async () => {
      while (next < missing.length) {
        const c = missing[next++]!
        await this.logManager.getOrCreateLog(c.topic, c.partition, { topicId: c.topicId }).catch(() => undefined)
      }
    }
    await Promise.all(Array.from({ length: Math.min(LOG_CREATION_CONCURRENCY, missing.length) }, worker))
  }

  /** The partition a change is about: the one held, or a new one over the local log (made when missing). */
  private async partitionFor(c: PartitionChange, reg: PartitionRegistration): Promise<{ partition: Partition; fresh: boolean }> {
    const key = topicPartitionOperationKey(c.topic, c.partition)
    let log = this.logManager.getLog(c.topic, c.partition)
    const held = this.partitions.get(key)
    if (held && log && held.log === log) return { partition: held, fresh: false }
    log ??= await this.logManager.getOrCreateLog(c.topic, c.partition, { topicId: c.topicId })
    if (log.topicId !== null && !log.topicId.equals(c.topicId)) {
      throw new Error(`the local log ${log.dir} belongs to topic id ${log.topicId.toString('hex')}, not ${c.topicId.toString('hex')}`)
    }
    // At no leader epoch yet: the registration's, applied next, is a new one (followers reset as ISR members or not).
    return { partition: this.newPartition(c, log, { leaderEpoch: -1, assignment: reg.replicas, isr: reg.isr }), fresh: true }
  }

  /** Whether applying the change takes the partition out of its fetcher (as stopReplica, makeLeader and a new leadership in makeFollower do). */
  private leavesItsFetcher(c: PartitionChange): boolean {
    const reg = c.registration
    if (reg === null || !reg.replicas.includes(this.brokerId)) return true
    const held = this.partitions.get(topicPartitionOperationKey(c.topic, c.partition))
    if (!held || ReplicaManager.isStale(held, reg)) return false
    return reg.leader === this.brokerId || held.isLeader || reg.leaderEpoch > held.leaderEpoch || reg.leader !== held.leaderId
  }

  /** Whether a registration is older than what the partition has (Kafka skips those). */
  private static isStale(partition: Partition, reg: PartitionRegistration): boolean {
    return reg.leaderEpoch < partition.leaderEpoch || (reg.leaderEpoch === partition.leaderEpoch && reg.partitionEpoch < partition.partitionEpoch)
  }

  /** Makes this broker the partition's leader; its leader epoch when it became the leader or was elected again (null: no change of leadership). */
  private async makeLeader(c: PartitionChange, reg: PartitionRegistration): Promise<number | null> {
    const { partition, fresh } = await this.partitionFor(c, reg)
    if (!fresh && ReplicaManager.isStale(partition, reg)) return null
    // Already applied (the leader's own ISR change coming back from the metadata): what it knows
    // of its followers stays.
    if (!fresh && partition.isLeader && reg.leaderEpoch === partition.leaderEpoch && reg.partitionEpoch === partition.partitionEpoch) return null
    const elected = fresh || !partition.isLeader || reg.leaderEpoch > partition.leaderEpoch
    await this.replicaFetcherManager!.removeFetcherForPartitions([c])
    partition.applyLeaderRegistration(reg)
    this.partitions.set(topicPartitionOperationKey(c.topic, c.partition), partition)
    this.tryCompleteDelayedRequests(c)
    return elected ? partition.leaderEpoch : null
  }

  /** Makes this broker a follower; the new leader epoch when its leader or leader epoch changed (or it led until now), else null. */
  private async makeFollower(c: PartitionChange, reg: PartitionRegistration, replication: ReplicationOptions, toFetch: Map<string, FetcherAddition>): Promise<number | null> {
    const fetchers = this.replicaFetcherManager!
    const { partition, fresh } = await this.partitionFor(c, reg)
    if (!fresh && ReplicaManager.isStale(partition, reg)) return null
    const newLeadership = fresh || partition.isLeader || reg.leaderEpoch > partition.leaderEpoch || reg.leader !== partition.leaderId
    const restart = newLeadership || fetchers.fetchState(c) === undefined
    if (restart) await fetchers.removeFetcherForPartitions([c])
    partition.makeFollower(reg)
    this.partitions.set(topicPartitionOperationKey(c.topic, c.partition), partition)
    // Fetches and produces parked on it as the leader answer now (NOT_LEADER_OR_FOLLOWER, or a follower's read).
    this.tryCompleteDelayedRequests(c)
    const changed = newLeadership ? reg.leaderEpoch : null
    if (!restart) return changed
    // A leader append still under way finishes before the fetcher may truncate under it.
    await partition.appendsSettled()
    if (reg.leader === NO_LEADER) return changed
    const leader = replication.brokerEndPoint(reg.leader)
    if (!leader) {
      replication.logger.warn('the leader of a followed partition has no known end point: not fetching', { partition: `${c.topic}-${c.partition}`, leader: reg.leader })
      return changed
    }
    toFetch.set(topicPartitionOperationKey(c.topic, c.partition), {
      tp: { topic: c.topic, partition: c.partition },
      state: { topicId: c.topicId, leader, currentLeaderEpoch: reg.leaderEpoch, initOffset: partition.log.logEndOffset() },
    })
    return changed
  }

  /** Stops holding the partition; the leader epoch it had when it was held, else null. */
  private async stopReplica(c: PartitionChange): Promise<number | null> {
    const key = topicPartitionOperationKey(c.topic, c.partition)
    await this.replicaFetcherManager!.removeFetcherForPartitions([c])
    const held = this.partitions.get(key)
    this.partitions.delete(key)
    if (held) await held.appendsSettled()
    this.tryCompleteDelayedRequests(c)
    await this.replication!.onPartitionStopped?.(c, this.logManager.getLog(c.topic, c.partition))
    return held ? held.leaderEpoch : null
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
    // Replicated: only the partitions the metadata made (`applyPartitionChanges`), over their own log.
    if (this.replication) return partition?.log === log ? partition : undefined
    if (partition?.log !== log) {
      partition = this.newPartition(tp, log, { leaderEpoch: PARTITION_LEADER_EPOCH })
      this.partitions.set(key, partition)
    }
    return partition
  }

  /** A partition over a local log, with the leader side's settings (ISR changes, min.insync.replicas, delayed operations). */
  private newPartition(tp: TopicPartition, log: Log, state: { leaderEpoch: number; assignment?: readonly number[]; isr?: readonly number[] }): Partition {
    const topic = tp.topic
    const key = { topic: tp.topic, partition: tp.partition }
    return new Partition(key, log, {
      localBrokerId: this.brokerId,
      ...state,
      replicaLagTimeMaxMs: this.replicaLagTimeMaxMs,
      producerIdExpirationMs: this.producerIdExpiration,
      alterPartitionManager: this.alterPartitionManager ?? undefined,
      minInSyncReplicas: () => this.minInSyncReplicas(topic),
      delayedOperations: { checkAndCompleteAll: () => void this.tryCompleteDelayedRequests(key) },
      alterPartitionListener: this.alterPartitionListener,
      alterPartitionRetryBackoffMs: this.alterPartitionRetryBackoffMs,
      isReplicaIsrEligible: this.replication?.isBrokerAlive,
      logger: this.logger,
      truncateLog: this.logManager,
    })
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
    const statuses = partitions.map((fetchInfo, i) => ({ fetchInfo, fetchOffsetMetadata: reads[i]!.info!.fetchOffsetMetadata }))
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
   * Kafka's `Partition.tryCompleteDelayedRequests`: wakes the fetches and the acks=all produces
   * parked on a partition, after an append, its high watermark or log start offset moved, its
   * ISR or leadership changed, or its log went away. How many completed.
   */
  tryCompleteDelayedRequests(tp: TopicPartition): number {
    const key = topicPartitionOperationKey(tp.topic, tp.partition)
    return this.delayedFetchPurgatory.checkAndComplete(key) + this.delayedProducePurgatory.checkAndComplete(key) + this.delayedShareFetchPurgatory.checkAndComplete(key)
  }

  /**
   * Stops the follower fetchers (their truncations and appends under way finish first: call it
   * before the logs close), the purgatories' timers and the ISR check; parked operations are
   * dropped.
   */
  async shutdown(): Promise<void> {
    if (this.isrExpirationTimer !== null) clearInterval(this.isrExpirationTimer)
    clearInterval(this.producerExpirationTimer)
    this.delayedFetchPurgatory.shutdown()
    this.delayedProducePurgatory.shutdown()
    this.delayedShareFetchPurgatory.shutdown()
    await this.replicaFetcherManager?.shutdown()
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
    return partition.leaderReplicaState(Date.now(), this.rackOf)
  }

  /**
   * Appends producer batches as the leader (`Partition.appendRecordsToLeader`, which queues the
   * partition's appends and checks compressed batches off the event loop: then the result is a
   * promise). With `requiredAcks` -1 the partition refuses the append when its ISR is under
   * min.insync.replicas (NOT_ENOUGH_REPLICAS). A successful append wakes the fetches and
   * produces parked on the partition as soon as it is done (a single replica's high watermark
   * moved with it). The result tells the partition appended to and its leader epoch then, for
   * `maybeAddDelayedProduce`. `origin` (Kafka's AppendOrigin): CLIENT for Produce; COORDINATOR
   * for the coordinators' writes, the only ones that may append transaction markers and
   * producer batches without sequences (./producer-state.ts); `transactionVersion` is a marker's
   * (WriteTxnMarkers v2), which decides its producer epoch check.
   */
  appendRecords(tp: TopicPartition, records: Buffer | null, requiredAcks = 1, origin: AppendOrigin = 'CLIENT', transactionVersion = 0): AppendRecordsResult | Promise<AppendRecordsResult> {
    // Only a partition not held here can be a leadership still being applied (no array or second lookup per append).
    const pending = this.getPartition(tp) ? undefined : this.replication?.pendingLeadership?.(tp)
    if (pending) return pending.then(() => this.appendToLeader(tp, records, requiredAcks, origin, transactionVersion))
    return this.appendToLeader(tp, records, requiredAcks, origin, transactionVersion)
  }

  /**
   * Resolves once the leaderships of `tps` the cluster's metadata gives this broker, but that it
   * has not applied yet (no partition here, its log still being made), are applied; undefined when
   * none of them is pending (see ReplicationOptions.pendingLeadership). Produce and ListOffsets wait
   * for it rather than answering NOT_LEADER_OR_FOLLOWER for a partition this broker's own Metadata
   * answer lists as led here.
   */
  leadershipApplied(tps: Iterable<TopicPartition>): Promise<void> | undefined {
    const pendingLeadership = this.replication?.pendingLeadership
    if (!pendingLeadership) return undefined
    for (const tp of tps) {
      if (this.getPartition(tp)) continue
      const pending = pendingLeadership(tp)
      if (pending) return pending
    }
    return undefined
  }

  private appendToLeader(tp: TopicPartition, records: Buffer | null, requiredAcks: number, origin: AppendOrigin, transactionVersion: number): AppendRecordsResult | Promise<AppendRecordsResult> {
    const partition = this.getPartition(tp)
    if (!partition) return { errorCode: this.missingPartitionError(tp), errorMessage: null, info: null, logStartOffset: -1n, partition: null, leaderEpoch: -1 }
    if (!this.leaderWritesAllowed()) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: FENCED_MESSAGE, info: null, logStartOffset: -1n, partition: null, leaderEpoch: -1 }
    const result = partition.appendRecordsToLeader(records, requiredAcks, origin, transactionVersion)
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
    // Kafka's tryCompleteElseWatch would complete it on its first try: an ISR of the leader
    // alone holds the records with the append. Answered without a DelayedProduce or the purgatory.
    if (settleProduceStatuses(statuses, this)) {
      answer(statuses)
      return () => {}
    }
    const produce = new DelayedProduce(timeoutMs, statuses, this, answer, this.delayedProduceMetrics)
    const keys = produce.watchKeys()
    if (this.delayedProducePurgatory.tryCompleteElseWatch(produce, keys)) return () => {}
    this.delayedProducesParked++
    return () => void this.delayedProducePurgatory.remove(produce, keys)
  }

  /** See ReplicationOptions.leaderWritesAllowed. */
  private leaderWritesAllowed(): boolean {
    return this.replication?.leaderWritesAllowed?.() ?? true
  }

  /**
   * The error for a partition this broker does not serve (Kafka's `getPartitionOrError` for
   * HostedPartition.None): when replicated, NOT_LEADER_OR_FOLLOWER (retriable: clients refresh
   * their metadata) if the cluster's metadata has the partition on other brokers, or its log is
   * here but no registration made it a replica yet (a restart before the metadata arrived);
   * else UNKNOWN_TOPIC_OR_PARTITION.
   */
  private missingPartitionError(tp: TopicPartition): number {
    if (!this.replication) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    const known = this.replication.partitionExists?.(tp) || this.logManager.getLog(tp.topic, tp.partition) !== undefined
    return known ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
  }

  /**
   * Kafka's `LogManager` task `PeriodicProducerExpirationCheck`: every log forgets the producers
   * idle for producer.id.expiration.ms (no open transaction, last timestamp that old), and so
   * does the idempotence window of its partition; how many the logs forgot. A log closed
   * meanwhile (deleted, moved) is skipped.
   */
  removeExpiredProducers(nowMs: bigint): number {
    const expirationMs = BigInt(this.producerIdExpiration())
    let removed = 0
    for (const log of this.logManager.allLogs()) {
      try {
        const partition = this.getPartition(log)
        removed += partition && partition.log === log ? partition.removeExpiredProducers(nowMs, expirationMs) : log.removeExpiredProducers(nowMs, expirationMs)
      } catch (err) {
        this.logger?.debug('producer expiration skipped a log', { dir: log.dir, error: (err as Error).message })
      }
    }
    return removed
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
    if (!partition) return { errorCode: this.missingPartitionError(tp), lowWatermark: -1n }
    if (!this.leaderWritesAllowed()) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1n }
    const { errorCode, lowWatermark, moved } = partition.deleteRecordsOnLeader(offset)
    if (moved) this.tryCompleteDelayedRequests(tp)
    return { errorCode, lowWatermark }
  }

  /** ListOffsets (Kafka's `fetchOffset`): the partition's answer, UNKNOWN_TOPIC_OR_PARTITION without one. */
  fetchOffsetForTimestamp(tp: TopicPartition, timestamp: bigint, isolation: FetchIsolation, currentLeaderEpoch: number | undefined, fetchOnlyFromLeader = true): OffsetForTimestampResult {
    const partition = this.getPartition(tp)
    if (!partition) return { errorCode: this.missingPartitionError(tp), offset: -1n, timestamp: -1n, leaderEpoch: -1 }
    return partition.fetchOffsetForTimestamp(timestamp, isolation, currentLeaderEpoch, fetchOnlyFromLeader)
  }

  /** OffsetForLeaderEpoch (Kafka's `lastOffsetForLeaderEpoch`). */
  lastOffsetForLeaderEpoch(tp: TopicPartition, currentLeaderEpoch: number | undefined, leaderEpoch: number): EpochEndOffsetResult {
    const partition = this.getPartition(tp)
    if (!partition) return { errorCode: this.missingPartitionError(tp), leaderEpoch: -1, endOffset: -1n }
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

  private read(p: FetchPartitionRequest, params: FetchParams, isolation: FetchIsolation, maxBytes: number, minOneMessage: boolean, updateFetchState: boolean, nowMs: number): FetchPartitionResult {
    const partition = this.getPartition(p)
    if (!partition) {
      return { topic: p.topic, partition: p.partition, errorCode: this.missingPartitionError(p), highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, info: null }
    }
    const log = partition.log
    // Only the leader sends consumers elsewhere (a follower serving one reads its own log).
    const selector = this.replicaSelector
    if (selector !== null && params.replicaId < 0 && params.clientMetadata !== undefined && partition.isLeader && partition.checkLeaderEpoch(p.currentLeaderEpoch) === ErrorCode.NONE) {
      try {
        const preferred = preferredReadReplicaOf(selector, p, params.clientMetadata, p.fetchOffset, this.leaderReplicaState(p, log))
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
