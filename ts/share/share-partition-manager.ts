/**
 * Kafka's `SharePartitionManager`: the share partitions this broker keeps (one per share group
 * and topic-partition it leads, made on a group's first ShareFetch of the partition), the share
 * sessions (./share-session-cache.ts), and what ShareFetch and ShareAcknowledge do with them.
 *
 * - A share partition is made on a group's first ShareFetch of the partition (Kafka's
 *   `maybeInitialize`, `maybeInitialize` here, awaited before the fetch): with a persister, its
 *   state is read from the share coordinator (ReadShareGroupState with the partition's leader
 *   epoch); a share partition the coordinator does not know yet (INVALID_REQUEST: uninitialized)
 *   is initialized first (InitializeShareGroupState, state epoch 0) at share.auto.offset.reset:
 *   `earliest` the log start offset, `latest` (the default) the high watermark (Kafka's
 *   `by_duration:` is not served: it starts as `latest`), then read. A read that fails leaves
 *   the partition unmade: the fetch answers its error for it, and the next fetch tries again.
 *   Without a persister (tests of this module) the state is in memory only. A share partition
 *   is made in its partition's leader epoch: led again in another (the partition moved away and
 *   back), it is made afresh from the share coordinator's state, which the leader in between
 *   wrote.
 * - A fetch reads each partition from `nextFetchOffset()` (the first available record, else the
 *   end), at most READ_MAX_BYTES (and at least one batch), up to the high watermark, or the last
 *   stable offset for a read_committed group (share.isolation.level; records of aborted
 *   transactions are archived, never delivered); the share partition acquires from what was read
 *   and the answer holds the batches of the acquired records.
 * - Acknowledgements go to the share partition (all or nothing per partition), and are answered
 *   once the share coordinator holds them (a failed write answers its error); a release, an
 *   expired lock or a closed session wakes the share fetches parked on the partition.
 *
 * - When a share group's last member leaves (Kafka's `ShareGroupListener.onGroupEmpty`), the
 *   group's share partitions are dropped: the next fetch reads their state afresh, which
 *   AlterShareGroupOffsets, DeleteShareGroupOffsets or DeleteGroups may have changed meanwhile.
 *
 * The group configs (share.record.lock.duration.ms, share.delivery.count.limit,
 * share.partition.max.record.locks, share.auto.offset.reset, share.isolation.level) are given by
 * the handlers with each request (`setGroupConfig`), so a change applies from the next request.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import { IsolationLevel } from '../replica/fetch-params.js'
import type { ReplicaManager } from '../replica/replica-manager.js'
import { topicPartitionOperationKey } from '../purgatory/purgatory.js'
import { SystemTimer } from '../purgatory/timing-wheel.js'
import { DelayedShareFetch } from './delayed-share-fetch.js'
import { acquiredBytes, readBatches } from './share-fetch-utils.js'
import { SharePartition, type AcknowledgeResult, type AcknowledgementBatch, type AcquiredRecords, type PersistedState, type SharePartitionConfig } from './share-partition.js'
import { ShareSessionCache, type SharePartitionRef, type ShareSession } from './share-session-cache.js'
import type { Persister } from './persister.js'

/** The most a share fetch reads of one partition at a time (at least one batch): the in-flight limit keeps acquisitions small anyway. */
export const READ_MAX_BYTES = 1024 * 1024

/** A share group's configs as its share partitions use them. */
export interface ShareGroupConfig extends SharePartitionConfig {
  autoOffsetReset: string
  isolationLevel: 'read_committed' | 'read_uncommitted'
}

/** One partition's share fetch: its error, or the records acquired and their bytes. */
export interface ShareFetchPartitionResult {
  ref: SharePartitionRef
  errorCode: number
  records: Buffer | null
  acquiredRecords: AcquiredRecords[]
}

export interface SharePartitionManagerOptions {
  replicaManager: ReplicaManager
  /** group.share.max.share.sessions */
  maxShareSessions: number
  /** The broker's defaults (group.share.*), for groups no request named yet. */
  defaultGroupConfig: ShareGroupConfig
  /** Where share partitions keep their state (the share coordinator); none: in memory only. */
  persister?: Persister
}

export class SharePartitionManager {
  readonly sessions: ShareSessionCache
  /** Expires the acquisition locks. */
  private readonly timer = new SystemTimer()
  private readonly partitions = new Map<string, SharePartition>()
  private readonly groupConfigs = new Map<string, ShareGroupConfig>()
  /** Share partitions being made (their state read), by key. */
  private readonly initializing = new Map<string, Promise<void>>()
  /** Why a share partition could not be made, answered once to the fetch that awaited it. */
  private readonly initErrors = new Map<string, number>()
  private readonly replicaManager: ReplicaManager

  constructor(private readonly options: SharePartitionManagerOptions) {
    this.replicaManager = options.replicaManager
    this.sessions = new ShareSessionCache(options.maxShareSessions, (session) => this.releaseMember(session))
  }

  setGroupConfig(groupId: string, config: ShareGroupConfig): void {
    this.groupConfigs.set(groupId, config)
  }

  groupConfig(groupId: string): ShareGroupConfig {
    return this.groupConfigs.get(groupId) ?? this.options.defaultGroupConfig
  }

  /** The share partition of a group, or null when none was made yet. */
  sharePartition(groupId: string, ref: Pick<SharePartitionRef, 'topicId' | 'partition'>): SharePartition | null {
    return this.partitions.get(partitionKey(groupId, ref)) ?? null
  }

  /**
   * Acquires records for a member from each partition (at most `maxRecords` over all), or answers
   * each partition's error: UNKNOWN_TOPIC_OR_PARTITION where this broker has no such partition,
   * NOT_LEADER_OR_FOLLOWER where it does not lead it.
   */
  fetch(groupId: string, memberId: string, refs: readonly SharePartitionRef[], maxRecords: number, maxBytes: number): ShareFetchPartitionResult[] {
    let left = maxRecords
    const config = this.groupConfig(groupId)
    return refs.map((ref): ShareFetchPartitionResult => {
      const found = this.leaderSharePartition(groupId, ref)
      if (typeof found === 'number') return { ref, errorCode: found, records: null, acquiredRecords: [] }
      if (found === null) {
        const errorCode = this.initErrors.get(partitionKey(groupId, ref)) ?? ErrorCode.NONE
        this.initErrors.delete(partitionKey(groupId, ref))
        return { ref, errorCode, records: null, acquiredRecords: [] }
      }
      const { sp, log } = found
      sp.maybeUpdateStartOffset(log.logStartOffset())
      if (left <= 0 || !sp.canAcquireRecords(readEnd(log, config))) return { ref, errorCode: ErrorCode.NONE, records: null, acquiredRecords: [] }
      const params = { replicaId: -1, maxBytes: Math.min(maxBytes, READ_MAX_BYTES), isolationLevel: isolationOf(config), hardMaxBytesLimit: false }
      const [read] = this.replicaManager.readFromLocalLog(params, [{ topic: ref.topic, partition: ref.partition, fetchOffset: sp.nextFetchOffset(), partitionMaxBytes: params.maxBytes }])
      if (read === undefined || read.errorCode !== ErrorCode.NONE) return { ref, errorCode: read?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, records: null, acquiredRecords: [] }
      const bytes = read.info?.records.toSend(false)
      const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.alloc(0)
      const batches = readBatches(buffer, read.info?.abortedTransactions)
      const acquired = sp.acquire(memberId, left, batches)
      for (const a of acquired) left -= Number(a.lastOffset - a.firstOffset + 1n)
      return { ref, errorCode: ErrorCode.NONE, records: acquiredBytes(buffer, batches, acquired), acquiredRecords: acquired }
    })
  }

  /** Whether a fetch of these partitions could acquire something now (a parked fetch's check). */
  canAcquire(groupId: string, refs: readonly SharePartitionRef[]): boolean {
    const config = this.groupConfig(groupId)
    return refs.some((ref) => {
      const found = this.leaderSharePartition(groupId, ref)
      // An error (the partition moved, or went) is an answer too.
      if (typeof found === 'number') return true
      if (found === null) return false
      found.sp.maybeUpdateStartOffset(found.log.logStartOffset())
      return found.sp.canAcquireRecords(readEnd(found.log, config))
    })
  }

  /** Parks a share fetch until `canAcquire` or maxWaitMs; returns how to drop it (the connection closed). */
  park(groupId: string, refs: readonly SharePartitionRef[], maxWaitMs: number, complete: () => void): () => void {
    const op = new DelayedShareFetch(maxWaitMs, () => this.canAcquire(groupId, refs), complete)
    const keys = [...new Set(refs.map((r) => topicPartitionOperationKey(r.topic, r.partition)))]
    const purgatory = this.replicaManager.delayedShareFetchPurgatory
    if (purgatory.tryCompleteElseWatch(op, keys)) return () => {}
    return () => void purgatory.remove(op, keys)
  }

  /**
   * A member's acknowledgements of one partition, answered once written;
   * UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER where this broker has no share partition
   * of it, INVALID_RECORD_STATE where the share partition is not made yet (nothing was acquired
   * from it here).
   */
  async acknowledge(groupId: string, memberId: string, ref: SharePartitionRef, batches: readonly AcknowledgementBatch[]): Promise<AcknowledgeResult> {
    let found = this.leaderSharePartition(groupId, ref)
    if (found === null) {
      await this.maybeInitialize(groupId, [ref])
      found = this.leaderSharePartition(groupId, ref)
    }
    if (typeof found === 'number') return { errorCode: found, errorMessage: null }
    if (found === null) return { errorCode: this.initErrors.get(partitionKey(groupId, ref)) ?? ErrorCode.INVALID_RECORD_STATE, errorMessage: null }
    const sp = found.sp
    const result = sp.acknowledge(memberId, batches)
    if (result.errorCode !== ErrorCode.NONE) return result
    const written = await sp.writeState()
    return written === ErrorCode.NONE ? result : { errorCode: written, errorMessage: 'The share partition state could not be written.' }
  }

  /**
   * Makes the share partitions of `refs` this broker leads and has not made yet (Kafka's
   * `SharePartition.maybeInitialize`): their state read from the share coordinator, or
   * initialized there at share.auto.offset.reset first. Resolves once each is made or failed.
   */
  async maybeInitialize(groupId: string, refs: readonly SharePartitionRef[]): Promise<void> {
    const persister = this.options.persister
    if (persister === undefined) return
    const waits: Array<Promise<void>> = []
    for (const ref of refs) {
      const key = partitionKey(groupId, ref)
      const partition = this.replicaManager.getPartition({ topic: ref.topic, partition: ref.partition })
      if (partition === undefined || !partition.isLeader) continue
      if (this.partitions.get(key)?.leaderEpoch === partition.leaderEpoch) continue
      let pending = this.initializing.get(key)
      if (pending === undefined) {
        pending = this.initialize(persister, groupId, ref, partition.leaderEpoch, partition.log).finally(() => this.initializing.delete(key))
        this.initializing.set(key, pending)
      }
      waits.push(pending)
    }
    await Promise.all(waits)
  }

  private async initialize(persister: Persister, groupId: string, ref: SharePartitionRef, leaderEpoch: number, log: ShareLog): Promise<void> {
    const key = partitionKey(groupId, ref)
    const stateKey = { groupId, topicId: Buffer.from(ref.topicId, 'hex'), partition: ref.partition }
    let read = await persister.readState(stateKey, leaderEpoch)
    if (read.errorCode === ErrorCode.INVALID_REQUEST) {
      const config = this.groupConfig(groupId)
      const start = config.autoOffsetReset === 'earliest' ? log.logStartOffset() : readEnd(log, config)
      const init = await persister.initializeState(stateKey, 0, start)
      read = init.errorCode === ErrorCode.NONE ? await persister.readState(stateKey, leaderEpoch) : { ...init, data: null }
    }
    if (read.errorCode !== ErrorCode.NONE || read.data === null) {
      this.initErrors.set(key, read.errorCode === ErrorCode.NONE ? ErrorCode.UNKNOWN_SERVER_ERROR : read.errorCode)
      return
    }
    // Made meanwhile, or no longer led here: nothing to make.
    const partition = this.replicaManager.getPartition({ topic: ref.topic, partition: ref.partition })
    if (this.partitions.get(key)?.leaderEpoch === leaderEpoch || partition === undefined || !partition.isLeader || partition.leaderEpoch !== leaderEpoch) return
    this.partitions.get(key)?.close()
    const state = read.data
    let start = state.startOffset
    if (start < 0n) {
      const config = this.groupConfig(groupId)
      start = config.autoOffsetReset === 'earliest' ? log.logStartOffset() : readEnd(log, config)
    }
    this.partitions.set(key, this.newSharePartition(groupId, ref, start, leaderEpoch, { stateEpoch: state.stateEpoch, startOffset: start, stateBatches: state.stateBatches }))
  }

  /** Kafka's `onGroupEmpty`: drops the group's share partitions (made afresh from the share coordinator's state at the next fetch). */
  onGroupEmpty(groupId: string): void {
    const prefix = `${groupId}\u0000`
    for (const [key, sp] of this.partitions) {
      if (!key.startsWith(prefix)) continue
      sp.close()
      this.partitions.delete(key)
      this.initErrors.delete(key)
    }
  }

  /** Closes a member's share session (epoch -1) and releases what it holds; false when it had none. */
  releaseSession(groupId: string, memberId: string): boolean {
    const session = this.sessions.remove(groupId, memberId)
    if (session === undefined) return false
    this.releaseMember(session)
    return true
  }

  shutdown(): void {
    for (const sp of this.partitions.values()) sp.close()
    this.partitions.clear()
    this.timer.shutdown()
  }

  private releaseMember(session: ShareSession): void {
    for (const ref of session.partitions.values()) this.partitions.get(partitionKey(session.groupId, ref))?.releaseAcquiredRecords(session.memberId)
  }

  /**
   * The group's share partition of a partition this broker leads; else the error code. Without
   * a persister it is made on first use; with one, null until `maybeInitialize` made it.
   */
  private leaderSharePartition(groupId: string, ref: SharePartitionRef): { sp: SharePartition; log: ShareLog } | number | null {
    const partition = this.replicaManager.getPartition({ topic: ref.topic, partition: ref.partition })
    if (partition === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if (!partition.isLeader) return ErrorCode.NOT_LEADER_OR_FOLLOWER
    const log = partition.log
    const key = partitionKey(groupId, ref)
    let sp = this.partitions.get(key)
    if (sp !== undefined && this.options.persister !== undefined && sp.leaderEpoch !== partition.leaderEpoch) {
      // Led again in another epoch: the state is read afresh from the share coordinator (the
      // partition's leader in between may have changed it).
      sp.close()
      this.partitions.delete(key)
      sp = undefined
    }
    if (sp === undefined) {
      if (this.options.persister !== undefined) return null
      const config = this.groupConfig(groupId)
      const start = config.autoOffsetReset === 'earliest' ? log.logStartOffset() : readEnd(log, config)
      sp = this.newSharePartition(groupId, ref, start, partition.leaderEpoch, undefined)
      this.partitions.set(key, sp)
    }
    return { sp, log }
  }

  private newSharePartition(groupId: string, ref: SharePartitionRef, start: bigint, leaderEpoch: number, restore: PersistedState | undefined): SharePartition {
    const wake = () => this.replicaManager.delayedShareFetchPurgatory.checkAndComplete(topicPartitionOperationKey(ref.topic, ref.partition))
    const persister = this.options.persister
    const stateKey = { groupId, topicId: Buffer.from(ref.topicId, 'hex'), partition: ref.partition }
    return new SharePartition(groupId, ref.topic, ref.partition, start, {
      timer: this.timer,
      config: () => this.groupConfig(groupId),
      onRecordsAvailable: wake,
      leaderEpoch,
      restore,
      persister: persister && (async (write) => (await persister.writeState(stateKey, write)).errorCode),
    })
  }
}

type ShareLog = NonNullable<ReturnType<ReplicaManager['getLog']>>

function partitionKey(groupId: string, ref: Pick<SharePartitionRef, 'topicId' | 'partition'>): string {
  return `${groupId}\u0000${ref.topicId}:${ref.partition}`
}

function isolationOf(config: ShareGroupConfig): number {
  return config.isolationLevel === 'read_committed' ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED
}

/** Where a group's reads end: the last stable offset read_committed, else the high watermark. */
function readEnd(log: { highWatermark(): bigint; lastStableOffset(): bigint }, config: ShareGroupConfig): bigint {
  return config.isolationLevel === 'read_committed' ? log.lastStableOffset() : log.highWatermark()
}
