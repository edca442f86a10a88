/**
 * Kafka's `Partition`: one topic-partition as this broker holds it, and every per-partition rule
 * of the read and write paths in one place:
 *
 * - its local log, its leader epoch and partition epoch, its replica assignment and ISR, and
 *   what the leader knows of each follower (`Replica`, ts/replica/replica.ts);
 * - the high watermark: the smallest log end offset among the in-sync replicas, the leader's own
 *   included (`maybeIncrementLeaderHW`); with no followers it is the leader's log end;
 * - ISR changes, as the leader makes them (Kafka's `maybeExpandIsr` / `maybeShrinkIsr`), through
 *   the `AlterPartitionManager` (ts/replica/partition-registration.ts; the states and rules:
 *   ts/replica/isr-state.ts);
 * - acks=all: `checkEnoughReplicasReachOffset` (the `DelayedProduce`'s question) and
 *   min.insync.replicas before an acks=all append (NOT_ENOUGH_REPLICAS);
 * - the idempotence window of idempotent producers (ts/replica/producer-state.ts), joined to
 *   the log's producer state (its snapshots) on the first append that needs it, and expired
 *   with it (`removeExpiredProducers`);
 * - the read-side checks of `fetchRecords`, as Kafka's: a currentLeaderEpoch other than ours errs
 *   (FENCED_LEADER_EPOCH older, UNKNOWN_LEADER_EPOCH newer), a lastFetchedEpoch our epoch cache
 *   does not end at or after the fetch offset answers a divergingEpoch and no records; a
 *   follower's fetch updates what the leader knows of it. (The preferred read replica is the
 *   replica manager's choice, as in Kafka, from `leaderReplicaState`.)
 * - the leader's appends (`appendRecordsToLeader`: idempotent producers' duplicates answered with
 *   the original offsets), DeleteRecords (`deleteRecordsOnLeader`), ListOffsets
 *   (`fetchOffsetForTimestamp`) and OffsetForLeaderEpoch (`lastOffsetForLeaderEpoch`).
 *
 * A partition belongs to one `Log`: a partition deleted and created again is a new `Partition`
 * (fresh producer state, fresh follower states). Errors are data: every result carries its Kafka
 * error code; nothing here throws for a client's input.
 *
 * With an AlterPartitionManager or any follower the partition owns its high watermark: its log must have
 * the 'managed' policy (ts/storage/log.ts), and every leader append moves it as the ISR allows
 * (a single replica: to the log end).
 */
import { COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, RECORDS_OFFSET, sizeInBytes, type BatchHeader } from '../protocol/batch-header.js'
import { batchesOf } from '../protocol/records.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { StorageError, kafkaErrorCodeOf, type BatchRecordError } from '../storage/errors.js'
import type { Log } from '../storage/log.js'
import type { AppendOrigin, FetchIsolation, LogAppendInfo } from '../storage/types.js'
import type { Logger } from '../logger.js'
import type { FetchParams, FetchPartitionRequest, FetchPartitionResult, TopicPartition } from './fetch-params.js'
import { checkCurrentLeaderEpoch, divergingEpochOf, NO_EPOCH } from './leader-epoch.js'
import { afterAlterPartitionError, maximalIsr, type AlterPartitionListener, type DelayedOperations, type IsrState, type PendingIsrState } from './isr-state.js'
import { AlterPartitionError, type AlterPartitionManager, type AlterPartitionRequest, type PartitionRegistration } from './partition-registration.js'
import { markerEpochAt, ProducerStateManager, type ProducerBatch } from './producer-state.js'
import { Replica } from './replica.js'
import type { LeaderReplicaState } from './replica-selector.js'

/** replica.lag.time.max.ms: Kafka's default 30 s. */
export const DEFAULT_REPLICA_LAG_TIME_MAX_MS = 30_000

/** min.insync.replicas: Kafka's default 1. */
export const DEFAULT_MIN_INSYNC_REPLICAS = 1

/** How long a refused ISR change with a retriable error waits before it is submitted again. */
export const DEFAULT_ALTER_PARTITION_RETRY_BACKOFF_MS = 100

/** acks=-1 (all): the ISR must hold the records before the answer. */
export const ACKS_ALL = -1

/** ListOffsets' special timestamps. */
export const LATEST_TIMESTAMP = -1n
export const EARLIEST_TIMESTAMP = -2n

export interface PartitionAppendResult {
  errorCode: number
  errorMessage: string | null
  info: LogAppendInfo | null
  logStartOffset: bigint
  /**
   * The records of the batch the log refused one by one (KIP-467, Kafka's
   * `LogAppendInfo.recordErrors`); `errorMessage` is then Kafka's text for them.
   */
  recordErrors?: readonly BatchRecordError[]
}

export interface OffsetForTimestampResult {
  errorCode: number
  /** -1 when none was found or on error. */
  offset: bigint
  timestamp: bigint
  leaderEpoch: number
}

export interface EpochEndOffsetResult {
  errorCode: number
  /** Kafka's UNDEFINED_EPOCH (-1) and UNDEFINED_EPOCH_OFFSET (-1) when the cache cannot answer. */
  leaderEpoch: number
  endOffset: bigint
}

export interface PartitionState {
  /** This broker's node.id. */
  localBrokerId: number
  leaderEpoch: number
  /** The replicas, this broker (the leader) among them; default: this broker alone. */
  assignment?: readonly number[]
  /** The in-sync replicas; default: every replica of the assignment. */
  isr?: readonly number[]
  replicaLagTimeMaxMs?: number
  /**
   * producer.id.expiration.ms: producers of the log's state idle this long are left out of the
   * idempotence window when it is loaded (Kafka filters its snapshot's so); default: none. A
   * function is read at each load (the key is dynamic).
   */
  producerIdExpirationMs?: number | (() => number)
  /** How the leader changes the ISR (cluster mode); absent: the ISR never changes. */
  alterPartitionManager?: AlterPartitionManager
  /** The topic's min.insync.replicas now (read on every acks=all produce); default 1. */
  minInSyncReplicas?: () => number
  /** Woken after an ISR change that the AlterPartitionManager answered later. */
  delayedOperations?: DelayedOperations
  alterPartitionListener?: AlterPartitionListener
  alterPartitionRetryBackoffMs?: number
  /**
   * Kafka's `isReplicaIsrEligible`: whether a replica may join the ISR or hold the high
   * watermark back without being in it (its broker is alive and not shutting down, as the
   * metadata says). Default: every replica.
   */
  isReplicaIsrEligible?: (brokerId: number) => boolean
  logger?: Logger
  /**
   * How a follower's truncation reaches the log (Kafka's `LogManager.truncateTo`, which pauses
   * the log cleaner around it); default: the log truncates itself.
   */
  truncateLog?: {
    truncateTo(log: Log, offset: bigint): Promise<void>
    truncateFullyAndStartAt(log: Log, offset: bigint): Promise<void>
  }
}

const UNDEFINED_EPOCH = -1

/** What a compressed batch may inflate to and still be checked on the event loop (well under a millisecond). */
export const SYNC_INFLATE_BYTES = 1024 * 1024

/**
 * The most each codec's format can inflate one byte of compressed records to, by attributes
 * codec id: deflate 1032 (a 258-byte match in under 2 bits), snappy 22 (a 3-byte copy of 64
 * bytes), lz4 256 (each 0xFF length byte adds 255). zstd has no useful bound (an RLE block is
 * 4 bytes for 128 KiB): it is always checked off the loop.
 */
const MAX_INFLATE_RATIO = [1, 1032, 22, 256, Infinity, Infinity, Infinity, Infinity]

/** Whether checking the batch may inflate more than SYNC_INFLATE_BYTES. */
function inflatesLong(h: BatchHeader): boolean {
  const codec = h.attributes & COMPRESSION_CODEC_MASK
  return codec !== 0 && (sizeInBytes(h) - RECORDS_OFFSET) * MAX_INFLATE_RATIO[codec]! > SYNC_INFLATE_BYTES
}
const UNDEFINED_EPOCH_OFFSET = -1n

export class Partition implements TopicPartition {
  readonly topic: string
  readonly partition: number
  readonly log: Log
  readonly localBrokerId: number
  /**
   * Moves with every change of the partition's state (assignment, ISR, leader): counted here for
   * a standalone broker's partitions, the registration's in a cluster (`makeLeader` /
   * `makeFollower` take it from the metadata).
   */
  partitionEpoch = 0
  /**
   * The leader's broker id (Kafka's `leaderReplicaIdOpt`): this broker unless `makeFollower`
   * made it a follower; NO_LEADER (-1) when the metadata names none.
   */
  leaderId: number
  /**
   * Whether the cluster's metadata drives this partition (`makeFollower`, or `makeLeader` with
   * the registration's partition epoch): then only the replicas of its assignment may fetch as
   * replicas. A standalone broker's partition serves a replica id's fetch to its log end, which
   * is its high watermark too, as it always did.
   */
  private registered = false
  assignment: readonly number[]
  readonly replicaLagTimeMaxMs: number
  /** The followers, by broker id (Kafka's `remoteReplicasMap`). */
  private readonly remoteReplicas = new Map<number, Replica>()
  private producerStateManager: ProducerStateManager | null = null
  private readonly producerIdExpirationMs: (() => number) | null
  private readonly alterPartitionManager: AlterPartitionManager | null
  private readonly minInSyncReplicas: () => number
  private readonly delayedOperations: DelayedOperations | null
  private readonly alterPartitionListener: AlterPartitionListener | null
  private readonly alterPartitionRetryBackoffMs: number
  private readonly logger: Logger | null
  private readonly truncateLog: PartitionState['truncateLog'] | null
  private readonly isReplicaIsrEligible: (brokerId: number) => boolean
  private isrState: IsrState = { kind: 'committed', isr: new Set() }
  private currentLeaderEpoch = NO_EPOCH
  /**
   * Kafka's `leaderEpochStartOffsetOpt`: the log end when this broker became leader at
   * `leaderEpoch`; a follower joins the ISR only once it has everything before it.
   */
  leaderEpochStartOffset = 0n

  constructor(tp: TopicPartition, log: Log, state: PartitionState) {
    this.topic = tp.topic
    this.partition = tp.partition
    this.log = log
    this.localBrokerId = state.localBrokerId
    this.leaderEpoch = state.leaderEpoch
    this.replicaLagTimeMaxMs = state.replicaLagTimeMaxMs ?? DEFAULT_REPLICA_LAG_TIME_MAX_MS
    const expiration = state.producerIdExpirationMs
    this.producerIdExpirationMs = expiration === undefined ? null : typeof expiration === 'number' ? () => expiration : expiration
    this.alterPartitionManager = state.alterPartitionManager ?? null
    this.minInSyncReplicas = state.minInSyncReplicas ?? (() => DEFAULT_MIN_INSYNC_REPLICAS)
    this.delayedOperations = state.delayedOperations ?? null
    this.alterPartitionListener = state.alterPartitionListener ?? null
    this.alterPartitionRetryBackoffMs = state.alterPartitionRetryBackoffMs ?? DEFAULT_ALTER_PARTITION_RETRY_BACKOFF_MS
    this.logger = state.logger ?? null
    this.truncateLog = state.truncateLog ?? null
    this.isReplicaIsrEligible = state.isReplicaIsrEligible ?? (() => true)
    this.assignment = state.assignment ?? [state.localBrokerId]
    if (!this.assignment.includes(this.localBrokerId)) throw new Error(`partition ${tp.topic}-${tp.partition}: the leader ${this.localBrokerId} is not among its replicas ${this.assignment}`)
    for (const id of this.assignment) if (id !== this.localBrokerId) this.remoteReplicas.set(id, new Replica(id))
    this.isr = new Set(state.isr ?? this.assignment)
    this.leaderId = this.localBrokerId
  }

  /** Whether this broker leads the partition (else it follows `leaderId`, or nobody). */
  get isLeader(): boolean {
    return this.leaderId === this.localBrokerId
  }

  /**
   * Kafka's `makeFollower`: this broker follows `registration.leader` at its leader epoch (the
   * metadata's partition epoch, replicas and ISR recorded as they are). What the leader knew of
   * its followers is dropped (a follower keeps no remote replica states), and so is the producer
   * state: the log changes under it by the leader's appends and truncations, and it is loaded
   * again from the log when this broker leads next. Returns whether the leader epoch moved on
   * (or this broker led until now): then the fetcher must start over from the log end.
   */
  makeFollower(registration: PartitionRegistration): boolean {
    if (!registration.replicas.includes(this.localBrokerId))
      throw new Error(`partition ${this.topic}-${this.partition}: broker ${this.localBrokerId} is not among its replicas ${registration.replicas}`)
    const restart = this.isLeader || registration.leaderEpoch > this.leaderEpoch || registration.leader !== this.leaderId
    this.registered = true
    this.leaderId = registration.leader
    this.leaderEpoch = registration.leaderEpoch
    this.partitionEpoch = registration.partitionEpoch
    this.assignment = [...registration.replicas]
    this.isr = new Set(registration.isr)
    this.remoteReplicas.clear()
    this.producerStateManager = null
    return restart
  }

  /**
   * A follower's append of what its leader's fetch returned (Kafka's
   * `appendRecordsToFollowerOrFutureReplica`): offsets and epochs as the leader wrote them,
   * every batch checked (CRC, sizes, offsets continuing the log end); the log's epoch cache takes
   * the batches' epochs.
   */
  appendRecordsToFollower(records: Buffer): LogAppendInfo {
    if (this.isLeader) throw new Error(`partition ${this.topic}-${this.partition}: its leader does not append as a follower`)
    return this.log.appendAsFollower(records)
  }

  /**
   * A follower's high watermark and log start offset from its leader's fetch response: the
   * high watermark is min(log end, leader's) (it may go back: the leader's is what counts), and
   * the log start offset rises to the leader's (never past the high watermark; retention then
   * removes the segments below it). Whether the high watermark moved.
   */
  updateFollowerOffsets(leaderHighWatermark: bigint, leaderLogStartOffset: bigint): boolean {
    const log = this.log
    const before = log.highWatermark()
    const hw = log.updateHighWatermark(leaderHighWatermark < log.logEndOffset() ? leaderHighWatermark : log.logEndOffset())
    const start = leaderLogStartOffset < hw ? leaderLogStartOffset : hw
    if (start > log.logStartOffset()) log.deleteRecordsBefore(start)
    return hw !== before
  }

  /** A follower's truncation (Kafka's `Partition.truncateTo`): everything from `offset` on goes. */
  async truncateTo(offset: bigint): Promise<void> {
    if (this.truncateLog) await this.truncateLog.truncateTo(this.log, offset)
    else await this.log.truncateTo(offset)
  }

  /** A follower's log emptied and started at `offset` (the leader's log start offset). */
  async truncateFullyAndStartAt(offset: bigint): Promise<void> {
    if (this.truncateLog) await this.truncateLog.truncateFullyAndStartAt(this.log, offset)
    else await this.log.truncateFullyAndStartAt(offset)
  }

  /** Settles once the leader appends queued so far have (before the log changes hands). */
  appendsSettled(): Promise<void> {
    return this.appending ?? Promise.resolve()
  }

  /** The leader epoch; a new one records the log end as `leaderEpochStartOffset`. */
  get leaderEpoch(): number {
    return this.currentLeaderEpoch
  }

  set leaderEpoch(epoch: number) {
    if (epoch !== this.currentLeaderEpoch) this.leaderEpochStartOffset = this.log.logEndOffset()
    this.currentLeaderEpoch = epoch
  }

  /** The ISR the metadata recorded last (Kafka's `partitionState.isr`). Setting it commits it: a change in flight is forgotten. */
  get isr(): ReadonlySet<number> {
    return this.isrState.isr
  }

  set isr(isr: ReadonlySet<number>) {
    this.isrState = { kind: 'committed', isr: new Set(isr) }
  }

  /** The ISR state: committed, or a change in flight. */
  get isrChange(): IsrState {
    return this.isrState
  }

  /** Kafka's `maximalIsr`: what the high watermark and acks=all count while a change is in flight. */
  maximalIsr(): ReadonlySet<number> {
    return maximalIsr(this.isrState)
  }

  /** Kafka's `effectiveMinIsr`: min.insync.replicas, at most the number of replicas. */
  effectiveMinIsr(): number {
    return Math.min(this.minInSyncReplicas(), this.remoteReplicas.size + 1)
  }

  /** Kafka's `isUnderMinIsr`: the committed ISR is smaller than the effective min.insync.replicas. */
  isUnderMinIsr(): boolean {
    return this.isr.size < this.effectiveMinIsr()
  }

  /**
   * Kafka's `makeLeader`: this broker leads the partition at a new leader epoch, with this
   * assignment and ISR (each defaulting to the current one). Followers new to the assignment
   * start unknown; those that stay are reset (what they fetched under the old leader is stale);
   * those that left are forgotten. The partition epoch moves on.
   */
  makeLeader(state: { leaderEpoch: number; partitionEpoch?: number; assignment?: readonly number[]; isr?: readonly number[] }, nowMs = Date.now()): void {
    const assignment = state.assignment ?? this.assignment
    if (!assignment.includes(this.localBrokerId)) throw new Error(`partition ${this.topic}-${this.partition}: the leader ${this.localBrokerId} is not among its replicas ${assignment}`)
    const isr = new Set(state.isr ?? this.isr)
    const leaderEnd = this.log.logEndOffset()
    for (const id of [...this.remoteReplicas.keys()]) if (!assignment.includes(id)) this.remoteReplicas.delete(id)
    for (const id of assignment) {
      if (id === this.localBrokerId) continue
      let replica = this.remoteReplicas.get(id)
      if (!replica) this.remoteReplicas.set(id, (replica = new Replica(id)))
      replica.reset(nowMs, leaderEnd, isr.has(id))
    }
    this.assignment = [...assignment]
    this.isr = isr
    this.leaderEpoch = state.leaderEpoch
    // The metadata's partition epoch when it drives the partition; counted here otherwise.
    this.partitionEpoch = state.partitionEpoch ?? this.partitionEpoch + 1
    if (state.partitionEpoch !== undefined) this.registered = true
    this.leaderId = this.localBrokerId
  }

  highWatermark(): bigint {
    return this.log.highWatermark()
  }

  /**
   * The leader's side of a registration from the cluster's metadata (Kafka's `makeLeader` fed
   * by the metadata: ReplicaManager.applyPartitionChanges calls it when this broker is the
   * registration's leader). A registration older than the partition epoch is skipped (the
   * AlterPartition answer may have brought a newer one already): false. A new leader epoch is
   * `makeLeader` (follower states reset, `leaderEpochStartOffset` at the log end); the same leader
   * epoch changes the assignment and ISR only, keeping what the leader knows of the followers
   * that stay. Either way the ISR is committed (a change in flight is forgotten: the metadata
   * answered it), the partition epoch is the registration's, and the high watermark may move
   * (the ISR may be down to the leader): then, or on a new leader epoch, the partition's delayed
   * operations are checked.
   */
  applyLeaderRegistration(registration: PartitionRegistration, nowMs = Date.now()): boolean {
    if (registration.leader !== this.localBrokerId) {
      throw new Error(`partition ${this.topic}-${this.partition}: the registration's leader is ${registration.leader}, not this broker ${this.localBrokerId}`)
    }
    if (registration.partitionEpoch < this.partitionEpoch || registration.leaderEpoch < this.leaderEpoch) {
      this.logger?.debug('skipped a stale partition registration', { topic: this.topic, partition: this.partition, partitionEpoch: this.partitionEpoch, registration })
      return false
    }
    // Leading anew: a new leader epoch, or this broker followed until now.
    const newLeaderEpoch = registration.leaderEpoch > this.leaderEpoch || !this.isLeader
    if (newLeaderEpoch) {
      this.makeLeader({ leaderEpoch: registration.leaderEpoch, partitionEpoch: registration.partitionEpoch, assignment: registration.replicas, isr: registration.isr }, nowMs)
      this.logger?.info('leader at a new epoch', {
        topic: this.topic,
        partition: this.partition,
        leaderEpoch: this.leaderEpoch,
        startOffset: this.leaderEpochStartOffset,
        isr: registration.isr,
      })
    } else {
      const replicas = registration.replicas
      if (!replicas.includes(this.localBrokerId)) throw new Error(`partition ${this.topic}-${this.partition}: the leader ${this.localBrokerId} is not among its replicas ${replicas}`)
      for (const id of [...this.remoteReplicas.keys()]) if (!replicas.includes(id)) this.remoteReplicas.delete(id)
      // A replica new to the assignment starts unknown; one the registration puts in the ISR
      // counts as caught up now (as `makeLeader` resets ISR members), or the first ISR check
      // would drop it before its first fetch.
      const leaderEnd = this.log.logEndOffset()
      for (const id of replicas) {
        if (id === this.localBrokerId || this.remoteReplicas.has(id)) continue
        const replica = new Replica(id)
        replica.reset(nowMs, leaderEnd, registration.isr.includes(id))
        this.remoteReplicas.set(id, replica)
      }
      this.assignment = [...replicas]
      this.isr = new Set(registration.isr)
    }
    this.partitionEpoch = registration.partitionEpoch
    this.registered = true
    // The high watermark may move (the ISR may be down to the leader); produces waiting under
    // an older leader epoch answer NOT_LEADER_OR_FOLLOWER.
    if (this.maybeIncrementLeaderHW(nowMs) || newLeaderEpoch) this.delayedOperations?.checkAndCompleteAll()
    return true
  }

  /** The follower state of a replica of the assignment; undefined for this broker or a stranger. */
  followerReplica(brokerId: number): Replica | undefined {
    return this.remoteReplicas.get(brokerId)
  }

  /** ErrorCode.NONE, or why a request's currentLeaderEpoch does not match ours. */
  checkLeaderEpoch(currentLeaderEpoch: number | undefined): number {
    return checkCurrentLeaderEpoch(currentLeaderEpoch ?? NO_EPOCH, this.leaderEpoch)
  }

  /** The partition's replicas as its leader sees them (for the replica selector). */
  leaderReplicaState(nowMs = Date.now(), rackOf: (brokerId: number) => string | null = () => null): LeaderReplicaState {
    const log = this.log
    const leader = { brokerId: this.localBrokerId, rack: rackOf(this.localBrokerId), logStartOffset: log.logStartOffset(), logEndOffset: log.logEndOffset(), timeSinceLastCaughtUpMs: 0 }
    const followers = [...this.remoteReplicas.values()].map((r) => ({
      brokerId: r.brokerId,
      rack: rackOf(r.brokerId),
      logStartOffset: r.logStartOffset,
      logEndOffset: r.logEndOffset,
      timeSinceLastCaughtUpMs: Math.max(0, nowMs - r.lastCaughtUpTimeMs),
    }))
    return { leader, followers, isr: this.isr }
  }

  /**
   * Kafka's `Partition.fetchRecords`: the epoch and divergence checks, then the read of at most
   * `maxBytes` (at least one batch when `minOneMessage`) up to `isolation`'s bound. A follower's
   * fetch (replicaId of the assignment) also records what it has, unless `updateFetchState` is
   * false (a delayed fetch's re-read), and returns whether the high watermark moved.
   */
  fetchRecords(
    params: FetchParams,
    request: FetchPartitionRequest,
    isolation: FetchIsolation,
    maxBytes: number,
    minOneMessage: boolean,
    updateFetchState: boolean,
    nowMs: number,
  ): { result: FetchPartitionResult; highWatermarkMoved: boolean } {
    const log = this.log
    const base = {
      topic: this.topic,
      partition: this.partition,
      highWatermark: log.highWatermark(),
      lastStableOffset: log.lastStableOffset(),
      logStartOffset: log.logStartOffset(),
    }
    try {
      const epochError = this.checkLeaderEpoch(request.currentLeaderEpoch)
      if (epochError !== ErrorCode.NONE) return { result: { ...base, errorCode: epochError, info: null }, highWatermarkMoved: false }
      const roleError = this.fetchRoleError(params, request)
      if (roleError !== ErrorCode.NONE) return { result: { ...base, errorCode: roleError, info: null }, highWatermarkMoved: false }
      const lastFetchedEpoch = request.lastFetchedEpoch ?? NO_EPOCH
      if (lastFetchedEpoch !== NO_EPOCH) {
        if (request.fetchOffset < log.logStartOffset()) return { result: { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, info: null }, highWatermarkMoved: false }
        const check = divergingEpochOf(log, request.fetchOffset, lastFetchedEpoch, this.leaderEpoch)
        if (check.kind === 'error') return { result: { ...base, errorCode: check.errorCode, info: null }, highWatermarkMoved: false }
        if (check.kind === 'diverging') return { result: { ...base, errorCode: ErrorCode.NONE, info: null, divergingEpoch: check.divergingEpoch }, highWatermarkMoved: false }
      }
      const info = log.read(request.fetchOffset, { maxBytes, isolation, minOneMessage })
      const highWatermarkMoved = updateFetchState && params.replicaId >= 0 && this.updateFollowerFetchState(params.replicaId, request.fetchOffset, request.logStartOffset ?? -1n, nowMs)
      return { result: { ...base, errorCode: ErrorCode.NONE, info }, highWatermarkMoved }
    } catch (err) {
      return { result: { ...base, errorCode: kafkaErrorCodeOf(err), info: null }, highWatermarkMoved: false }
    }
  }

  /**
   * Who may fetch from this replica (Kafka's `FetchParams.fetchOnlyLeader` and
   * `followerReplicaOrThrow`): on a follower, only consumers that may be sent to a follower
   * (Fetch v11+, which carries the client's metadata: KIP-392), read to its high watermark; a
   * follower's fetch, or an older consumer's, is NOT_LEADER_OR_FOLLOWER. On the leader of a
   * registered partition, a replica id that is not a follower of the assignment is UNKNOWN_LEADER_EPOCH when the fetch
   * names an epoch (a reassignment this leader has not seen yet: the fetcher retries), else
   * NOT_LEADER_OR_FOLLOWER.
   */
  private fetchRoleError(params: FetchParams, request: FetchPartitionRequest): number {
    if (!this.isLeader) return params.replicaId >= 0 || params.clientMetadata === undefined ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NONE
    if (this.registered && params.replicaId >= 0 && !this.remoteReplicas.has(params.replicaId)) {
      return (request.currentLeaderEpoch ?? NO_EPOCH) !== NO_EPOCH ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.NOT_LEADER_OR_FOLLOWER
    }
    return ErrorCode.NONE
  }

  /**
   * Kafka's `updateFollowerFetchState`: a follower of the assignment fetched at `fetchOffset`
   * (its log end); then the high watermark may move. Returns whether it did. A fetcher that is
   * not a replica of this partition changes nothing.
   */
  updateFollowerFetchState(replicaId: number, fetchOffset: bigint, followerStartOffset: bigint, nowMs: number): boolean {
    const replica = this.remoteReplicas.get(replicaId)
    if (!replica) return false
    replica.updateFetchState(fetchOffset, followerStartOffset, nowMs, this.log.logEndOffset())
    this.maybeExpandIsr(replica)
    return this.maybeIncrementLeaderHW(nowMs)
  }

  /**
   * Kafka's `maybeExpandIsr`: a follower outside the ISR that has the high watermark and the
   * leader epoch's start offset (`isFollowerInSync`) is proposed into it, when no change is in
   * flight. Its new state counts in the high watermark from now on (the maximal ISR).
   */
  private maybeExpandIsr(replica: Replica): void {
    const state = this.isrState
    if (this.alterPartitionManager === null || state.kind !== 'committed' || state.isr.has(replica.brokerId)) return
    if (!this.isFollowerInSync(replica) || !this.isReplicaIsrEligible(replica.brokerId)) return
    const isr = this.assignment.filter((id) => state.isr.has(id) || id === replica.brokerId)
    for (const id of state.isr) if (!isr.includes(id)) isr.push(id)
    this.logger?.info('expanding the ISR', { topic: this.topic, partition: this.partition, isr: [...state.isr], adding: replica.brokerId, followerEndOffset: replica.logEndOffset })
    this.submitAlterPartition({ kind: 'pendingExpand', isr: state.isr, newInSyncReplicaId: replica.brokerId, sent: this.alterPartitionRequest(isr) })
  }

  /** Kafka's `isFollowerInSync`: its log end is at or past the high watermark and the leader epoch's start offset. */
  private isFollowerInSync(replica: Replica): boolean {
    const end = replica.logEndOffset
    return end >= this.log.highWatermark() && end >= this.leaderEpochStartOffset
  }

  /**
   * Kafka's `maybeShrinkIsr` (the replica manager's periodic check, every
   * replica.lag.time.max.ms / 2): the followers of the ISR that are not caught up
   * (`Replica.isCaughtUp`: not at the leader's log end, and not caught up within
   * replica.lag.time.max.ms) are proposed out of it, when no change is in flight. Until the
   * answer the high watermark still counts them. Returns whether a change was submitted.
   */
  maybeShrinkIsr(nowMs = Date.now()): boolean {
    const state = this.isrState
    // Only the leader knows its followers' progress: a follower holds no replica states.
    if (this.alterPartitionManager === null || !this.isLeader || state.kind !== 'committed' || this.log.isClosed) return false
    const outOfSync = this.outOfSyncReplicas(nowMs)
    if (outOfSync.size === 0) return false
    const isr = [...state.isr].filter((id) => !outOfSync.has(id))
    this.logger?.info('shrinking the ISR', {
      topic: this.topic,
      partition: this.partition,
      isr: [...state.isr],
      removing: [...outOfSync],
      leaderEndOffset: this.log.logEndOffset(),
      highWatermark: this.log.highWatermark(),
      lagTimeMaxMs: this.replicaLagTimeMaxMs,
    })
    this.submitAlterPartition({ kind: 'pendingShrink', isr: state.isr, outOfSyncReplicaIds: outOfSync, sent: this.alterPartitionRequest(isr) })
    return true
  }

  /** Kafka's `getOutOfSyncReplicas`: the followers of the committed ISR not caught up within replica.lag.time.max.ms. */
  outOfSyncReplicas(nowMs = Date.now()): ReadonlySet<number> {
    const leaderEnd = this.log.logEndOffset()
    const out = new Set<number>()
    for (const id of this.isr) {
      if (id === this.localBrokerId) continue
      const replica = this.remoteReplicas.get(id)
      if (replica === undefined || !replica.isCaughtUp(leaderEnd, nowMs, this.replicaLagTimeMaxMs)) out.add(id)
    }
    return out
  }

  private alterPartitionRequest(isr: readonly number[]): AlterPartitionRequest {
    return { leaderEpoch: this.leaderEpoch, partitionEpoch: this.partitionEpoch, isr }
  }

  /**
   * Kafka's `submitAlterPartition`: the proposed state becomes the partition's, and the request
   * goes to the AlterPartitionManager; its answer is applied only if the state is still this one.
   */
  private submitAlterPartition(proposed: PendingIsrState): void {
    const manager = this.alterPartitionManager
    if (manager === null) return
    this.isrState = proposed
    const tp = { topic: this.topic, partition: this.partition, topicId: this.log.topicId ?? Buffer.alloc(16) }
    Promise.resolve()
      .then(() => manager.submit(tp, proposed.sent))
      .then(
        (registration) => this.alterPartitionAnswered(proposed, registration, null),
        (err: unknown) => this.alterPartitionAnswered(proposed, null, err),
      )
      .catch((err: unknown) => {
        // Applying the answer failed (a log closed under it): the metadata's next registration settles the state.
        this.logger?.error('applying an ISR change answer failed', { topic: this.topic, partition: this.partition, error: (err as Error).message })
      })
  }

  private alterPartitionAnswered(proposed: PendingIsrState, registration: PartitionRegistration | null, err: unknown): void {
    const where = { topic: this.topic, partition: this.partition }
    if (this.isrState !== proposed) {
      this.logger?.debug('ignoring the answer to an ISR change: the partition state moved on meanwhile', { ...where, proposed: proposed.sent.isr })
      return
    }
    if (registration !== null) {
      if (registration.leaderEpoch !== this.leaderEpoch || registration.partitionEpoch < this.partitionEpoch) {
        this.logger?.debug('ignoring a stale ISR change answer', { ...where, registration, leaderEpoch: this.leaderEpoch, partitionEpoch: this.partitionEpoch })
        this.alterPartitionListener?.markFailed()
        return
      }
      this.isr = new Set(registration.isr)
      this.partitionEpoch = registration.partitionEpoch
      if (proposed.kind === 'pendingExpand') this.alterPartitionListener?.markIsrExpand()
      else this.alterPartitionListener?.markIsrShrink()
      this.logger?.info('ISR updated', { ...where, isr: registration.isr, partitionEpoch: registration.partitionEpoch, underMinIsr: this.isUnderMinIsr() })
      // The ISR may be down to the leader, or hold fewer than min.insync.replicas: the high
      // watermark and the waiting acks=all produces are checked either way.
      if (!this.log.isClosed) this.maybeIncrementLeaderHW()
      this.delayedOperations?.checkAndCompleteAll()
      return
    }
    this.alterPartitionListener?.markFailed()
    const errorCode = err instanceof AlterPartitionError ? err.errorCode : ErrorCode.UNKNOWN_SERVER_ERROR
    const message = err instanceof Error ? err.message : String(err)
    const next = afterAlterPartitionError(errorCode)
    if (next === 'revert') {
      this.isr = proposed.isr
      this.logger?.info('ISR change refused, back to the committed ISR', { ...where, proposed: proposed.sent.isr, errorCode, message })
    } else if (next === 'await-metadata') {
      this.logger?.info('ISR change refused; waiting for the partition metadata', { ...where, proposed: proposed.sent.isr, errorCode, message })
    } else {
      this.logger?.warn('ISR change failed; retrying', { ...where, proposed: proposed.sent.isr, errorCode, message })
      const timer = setTimeout(() => {
        if (this.isrState === proposed && !this.log.isClosed) this.submitAlterPartition(proposed)
      }, this.alterPartitionRetryBackoffMs)
      timer.unref()
    }
  }

  /**
   * Kafka's `checkEnoughReplicasReachOffset` (acks=all): whether the high watermark reached
   * `requiredOffset` (the last appended offset + 1); then NONE, or
   * NOT_ENOUGH_REPLICAS_AFTER_APPEND when the (maximal) ISR is smaller than min.insync.replicas.
   */
  checkEnoughReplicasReachOffset(requiredOffset: bigint): { hasEnough: boolean; errorCode: number } {
    if (this.log.highWatermark() < requiredOffset) return { hasEnough: false, errorCode: ErrorCode.NONE }
    if (this.effectiveMinIsr() <= this.maximalIsr().size) return { hasEnough: true, errorCode: ErrorCode.NONE }
    return { hasEnough: true, errorCode: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND }
  }

  /**
   * Kafka's `maybeIncrementLeaderHW`: the high watermark becomes the smallest log end offset of
   * the leader and the followers that are in the maximal ISR or caught up; it never goes back. Returns
   * whether it moved. (A log whose high watermark follows its end, the single-replica policy,
   * is already there.)
   */
  maybeIncrementLeaderHW(nowMs = Date.now()): boolean {
    const leaderEnd = this.log.logEndOffset()
    const isr = this.maximalIsr()
    let newHighWatermark = leaderEnd
    for (const replica of this.remoteReplicas.values()) {
      // Kafka's shouldWaitForReplicaToJoinIsr: a caught-up follower outside the ISR holds the
      // high watermark back too, unless its broker is gone (then it cannot join).
      const counts = isr.has(replica.brokerId) || (replica.isCaughtUp(leaderEnd, nowMs, this.replicaLagTimeMaxMs) && this.isReplicaIsrEligible(replica.brokerId))
      if (counts && replica.logEndOffset < newHighWatermark) newHighWatermark = replica.logEndOffset
    }
    const before = this.log.highWatermark()
    if (newHighWatermark <= before) return false
    return this.log.updateHighWatermark(newHighWatermark) > before
  }

  /**
   * After a leader append: with followers, an AlterPartitionManager (cluster mode) or a
   * registration, the partition owns the high watermark and it may move (an ISR of the leader
   * alone lets it follow the log end). Otherwise the log's own policy keeps it: at the log end
   * (a single replica), or where the log's manager sets it.
   */
  private followersMayMoveHighWatermark(): void {
    if (this.remoteReplicas.size > 0 || this.alterPartitionManager !== null || this.registered) this.maybeIncrementLeaderHW()
  }

  /** The idempotence window of this partition, joined to its log's producer state on first use. */
  producerState(): ProducerStateManager {
    if (this.producerStateManager === null) {
      const state = ProducerStateManager.loadFromLog(this.log)
      if (this.producerIdExpirationMs !== null) state.removeExpiredProducers(BigInt(Date.now()), BigInt(this.producerIdExpirationMs()))
      this.producerStateManager = state
    }
    return this.producerStateManager
  }

  /**
   * Kafka's `UnifiedLog.removeExpiredProducers` (producer.id.expiration.ms): the idle producers
   * leave the log's producer state and this partition's window; how many the log forgot.
   */
  removeExpiredProducers(nowMs: bigint, expirationMs: bigint): number {
    this.producerStateManager?.removeExpiredProducers(nowMs, expirationMs)
    return this.log.removeExpiredProducers(nowMs, expirationMs)
  }

  /**
   * Kafka's `appendRecordsToLeader`: producer batches appended with offsets from the log end,
   * stamped with the partition's leader epoch;
   * batches of idempotent producers are checked against the producer state first, and a retry of
   * one of a producer's last 5 batches is answered with the original offsets, not appended.
   * With `requiredAcks` -1 (acks=all) and a committed ISR smaller than min.insync.replicas (at
   * most the number of replicas) nothing is appended: NOT_ENOUGH_REPLICAS.
   *
   * Appends to the partition run one at a time in call order (Kafka holds the partition's lock
   * across the producer-state check, the validation and the append): one that arrives while
   * another is under way waits for it. Compressed batches are checked off the event loop
   * (`Log.appendAsync`: their records may inflate to 100 MiB) unless their codec's format bounds
   * them to SYNC_INFLATE_BYTES (small gzip, snappy and lz4 batches); those and uncompressed ones,
   * whose checks walk at most max.message.bytes, are appended at once when nothing is queued
   * before them: then the result is returned, not a promise. `origin` COORDINATOR (the
   * transaction coordinator's markers) may append control batches, which skip the sequence checks;
   * a marker's `transactionVersion` (WriteTxnMarkers v2) decides its epoch check (./producer-state.ts).
   */
  appendRecordsToLeader(records: Buffer | null, requiredAcks = 1, origin: AppendOrigin = 'CLIENT', transactionVersion = 0): PartitionAppendResult | Promise<PartitionAppendResult> {
    const run = (): PartitionAppendResult | Promise<PartitionAppendResult> => this.appendNow(records, requiredAcks, origin, transactionVersion)
    const result = this.appending === null ? run() : this.appending.then(run)
    if (!(result instanceof Promise)) return result
    const done = result.then(
      () => {},
      () => {},
    )
    this.appending = done
    void done.then(() => {
      if (this.appending === done) this.appending = null
    })
    return result
  }

  /** The append queue's tail: settles when the last append started so far has (null: idle). */
  private appending: Promise<void> | null = null

  /** One append, its turn come: sync for uncompressed batches, a promise when they must inflate. */
  private appendNow(records: Buffer | null, requiredAcks: number, origin: AppendOrigin, transactionVersion: number): PartitionAppendResult | Promise<PartitionAppendResult> {
    const log = this.log
    if (!this.isLeader) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: `this broker does not lead ${this.topic}-${this.partition}`, info: null, logStartOffset: -1n }
    if (records === null || records.length === 0) {
      return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'no records', info: null, logStartOffset: log.logStartOffset() }
    }
    try {
      // Kafka's rule: acks=all is refused before the append when the ISR is too small to make it safe.
      if (requiredAcks === ACKS_ALL && this.isUnderMinIsr()) {
        const errorMessage = `The size of the current ISR [${[...this.isr]}] is insufficient to satisfy the min.isr requirement of ${this.effectiveMinIsr()} for partition ${this.topic}-${this.partition}`
        return { errorCode: ErrorCode.NOT_ENOUGH_REPLICAS, errorMessage, info: null, logStartOffset: log.logStartOffset() }
      }
      const entries = Array.from(batchesOf(records))
      const headers = entries.map((batch) => batch.header)
      const controls = headers.filter((h) => (h.attributes & CONTROL_FLAG_MASK) !== 0).length
      if (controls > 0 && origin !== 'COORDINATOR') {
        return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'clients may not append control batches', info: null, logStartOffset: log.logStartOffset() }
      }
      if (controls > 0) return this.appendMarker(records, entries, transactionVersion)
      const inflates = headers.some(inflatesLong)
      // Transaction markers (control batches, the coordinator's) carry no sequence to check.
      const idempotent = headers.filter((h) => h.producerId >= 0n && (h.attributes & CONTROL_FLAG_MASK) === 0)
      if (idempotent.length === 0) {
        if (inflates) return this.appendAsync(records, headers, null, origin)
        const info = log.append(records, { leaderEpoch: this.leaderEpoch, origin })
        this.followersMayMoveHighWatermark()
        return { errorCode: ErrorCode.NONE, errorMessage: null, info, logStartOffset: info.logStartOffset }
      }
      const state = this.producerState()
      const check = state.check(idempotent, origin)
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
      if (inflates) return this.appendAsync(records, headers, state, origin)
      const info = log.append(records, { leaderEpoch: this.leaderEpoch, origin })
      return this.appended(info, headers, state)
    } catch (err) {
      return this.appendFailed(err)
    }
  }

  /**
   * A transaction marker (one control batch, from the transaction coordinator: origin
   * COORDINATOR), checked against its producer's state (epoch, coordinator epoch), then appended
   * by the log's leader append with origin COORDINATOR (the only origin it takes control batches
   * from), in this partition's append queue.
   */
  private appendMarker(records: Buffer, entries: ReadonlyArray<{ position: number; size: number; header: BatchHeader }>, transactionVersion: number): PartitionAppendResult {
    const log = this.log
    if (entries.length !== 1 || entries[0]!.position !== 0 || entries[0]!.size !== records.length || entries[0]!.header.producerId < 0n) {
      return { errorCode: ErrorCode.INVALID_RECORD, errorMessage: 'a transaction marker is one control batch of a producer', info: null, logStartOffset: log.logStartOffset() }
    }
    const h = entries[0]!.header
    const batch: ProducerBatch = { ...h, coordinatorEpoch: markerEpochAt(records, 0), transactionVersion }
    const state = this.producerState()
    const check = state.check([batch], 'COORDINATOR')
    if (check.kind === 'error') return { errorCode: check.errorCode, errorMessage: check.message, info: null, logStartOffset: log.logStartOffset() }
    // The log's leader append gives the marker its offset and epoch, and completes the transaction in the log's own state (LSO, .txnindex).
    const info = log.append(records, { leaderEpoch: this.leaderEpoch, origin: 'COORDINATOR' })
    state.update(batch, info.firstOffset)
    this.followersMayMoveHighWatermark()
    return { errorCode: ErrorCode.NONE, errorMessage: null, info, logStartOffset: info.logStartOffset }
  }

  /**
   * The append of batches that inflate, checked off the loop. The producer state was checked
   * before and nothing else changes it meanwhile: the partition's appends are queued.
   */
  private async appendAsync(records: Buffer, headers: readonly BatchHeader[], state: ProducerStateManager | null, origin: AppendOrigin): Promise<PartitionAppendResult> {
    try {
      const info = await this.log.appendAsync(records, { leaderEpoch: this.leaderEpoch, origin })
      return this.appended(info, headers, state)
    } catch (err) {
      return this.appendFailed(err)
    }
  }

  /** After an append: idempotent producers' state (offsets from firstOffset on, lastOffsetDelta + 1 per batch) and the high watermark. */
  private appended(info: LogAppendInfo, headers: readonly BatchHeader[], state: ProducerStateManager | null): PartitionAppendResult {
    if (state !== null) {
      let offset = info.firstOffset
      for (const h of headers) {
        state.update(h, offset, info.logAppendTime)
        offset += BigInt(h.lastOffsetDelta) + 1n
      }
    }
    this.followersMayMoveHighWatermark()
    return { errorCode: ErrorCode.NONE, errorMessage: null, info, logStartOffset: info.logStartOffset }
  }

  private appendFailed(err: unknown): PartitionAppendResult {
    let logStartOffset = -1n
    try {
      logStartOffset = this.log.logStartOffset()
    } catch {
      // a log closed meanwhile
    }
    const result: PartitionAppendResult = { errorCode: kafkaErrorCodeOf(err), errorMessage: (err as Error).message, info: null, logStartOffset }
    if (err instanceof StorageError && err.recordErrors) result.recordErrors = err.recordErrors
    return result
  }

  /**
   * Kafka's `deleteRecordsOnLeader`: raises the log start offset (at most to the high watermark;
   * -1 means the high watermark). The producers stay, however far below it their batches are
   * (Kafka's `onLogStartOffsetIncremented` keeps them: only producer.id.expiration.ms forgets
   * one), so a retry of a deleted batch is still a duplicate. The new low watermark, and whether
   * it moved.
   */
  deleteRecordsOnLeader(offset: bigint): { errorCode: number; lowWatermark: bigint; moved: boolean } {
    const log = this.log
    if (!this.isLeader) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1n, moved: false }
    try {
      const target = offset === -1n ? log.highWatermark() : offset
      if (target < 0n) return { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: -1n, moved: false }
      const before = log.logStartOffset()
      log.deleteRecordsBefore(target)
      return { errorCode: ErrorCode.NONE, lowWatermark: log.logStartOffset(), moved: log.logStartOffset() !== before }
    } catch (err) {
      return { errorCode: kafkaErrorCodeOf(err), lowWatermark: -1n, moved: false }
    }
  }

  /**
   * Kafka's `fetchOffsetForTimestamp` (ListOffsets): LATEST (-1) is the end `isolation` allows
   * (the log end for a follower, the high watermark, or the last stable offset), EARLIEST (-2)
   * the log start, and any other timestamp the first offset at or after it.
   */
  fetchOffsetForTimestamp(timestamp: bigint, isolation: FetchIsolation, currentLeaderEpoch: number | undefined, fetchOnlyFromLeader = true): OffsetForTimestampResult {
    const log = this.log
    const none = (errorCode: number): OffsetForTimestampResult => ({ errorCode, offset: -1n, timestamp: -1n, leaderEpoch: -1 })
    const epochError = this.checkLeaderEpoch(currentLeaderEpoch)
    if (epochError !== ErrorCode.NONE) return none(epochError)
    // Kafka's `localLogWithEpochOrThrow(..., fetchOnlyFromLeader)`: only the debugging replica id (-2) may ask a follower.
    if (fetchOnlyFromLeader && !this.isLeader) return none(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    try {
      if (timestamp === LATEST_TIMESTAMP) {
        const end = isolation === 'LOG_END' ? log.logEndOffset() : isolation === 'TXN_COMMITTED' ? log.lastStableOffset() : log.highWatermark()
        return { errorCode: ErrorCode.NONE, offset: end, timestamp: -1n, leaderEpoch: log.latestEpoch() ?? -1 }
      }
      if (timestamp === EARLIEST_TIMESTAMP) return { errorCode: ErrorCode.NONE, offset: log.logStartOffset(), timestamp: -1n, leaderEpoch: log.latestEpoch() ?? -1 }
      const found = log.fetchOffsetByTimestamp(timestamp)
      if (!found) return none(ErrorCode.NONE)
      return { errorCode: ErrorCode.NONE, offset: found.offset, timestamp: found.timestamp, leaderEpoch: found.leaderEpoch }
    } catch (err) {
      return none(kafkaErrorCodeOf(err))
    }
  }

  /**
   * Kafka's `lastOffsetForLeaderEpoch` (OffsetForLeaderEpoch): the end offset of `leaderEpoch`
   * from the log's epoch cache (the start of the next epoch, or the log end for the latest);
   * an epoch the cache cannot place answers UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET.
   */
  lastOffsetForLeaderEpoch(currentLeaderEpoch: number | undefined, leaderEpoch: number): EpochEndOffsetResult {
    const epochError = this.checkLeaderEpoch(currentLeaderEpoch)
    if (epochError !== ErrorCode.NONE) return { errorCode: epochError, leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET }
    if (!this.isLeader) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET }
    try {
      const found = this.log.endOffsetForEpoch(leaderEpoch)
      return found
        ? { errorCode: ErrorCode.NONE, leaderEpoch: found.epoch, endOffset: found.endOffset }
        : { errorCode: ErrorCode.NONE, leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET }
    } catch (err) {
      return { errorCode: kafkaErrorCodeOf(err), leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET }
    }
  }
}
