/**
 * Committed offsets (the offset half of Kafka's older `GroupMetadataManager`) of the groups of
 * one partition of `__consumer_offsets` (the store's `partition`, Kafka's `partitionFor` of the
 * group id: ./group-coordinator-service.ts): an in-memory map, written through to that
 * partition's log as its leader, and
 * loaded from that log when this broker becomes the partition's leader (the group coordinator's
 * `onElection`), so commits survive a restart and a change of leader. The records (commits and
 * tombstones) are ./offsets-topic.ts; the map, with its pending keys, is ./offsets-cache.ts.
 *
 * Writes (Kafka's `appendForGroup`): every batch goes through the replica manager as a leader
 * append with acks=all (`appendRecords(tp, batch, -1)`, then `maybeAddDelayedProduce` with
 * offsets.commit.timeout.ms), and the map shows it only once the ISR holds it: a write that
 * failed (not the leader, ISR under min.insync.replicas, timed out) is answered with the
 * append's error and is not in the map. A partition without followers (a standalone broker)
 * answers at once, as before. Acknowledgements come in log order (the high watermark only
 * rises, and the produce purgatory wakes its waiters in order); each applied offset remembers
 * its record's log offset, and an older record never replaces a newer one. A write still
 * waiting for its acks keeps its group's offsets "pending": the group is not forgotten, and
 * DeleteGroups / OffsetDelete write tombstones for its keys too.
 *
 * Loading (`load`, on election): the log is replayed from its start offset to its end (records
 * past the high watermark included: on the leader they are on their way to the ISR), a chunk
 * at a time with the event loop free between chunks. `unload` (on resignation) drops the map;
 * writes then under way are answered NOT_LEADER_OR_FOLLOWER and change nothing.
 *
 * Compaction: the log is an ordinary compacted topic (OFFSETS_LOG_CONFIG: cleanup.policy=compact,
 * offsets.topic.segment.bytes), cleaned by the broker's log cleaner on every replica as any
 * other (ts/storage/log-cleaner.ts), which keeps the latest record of each key. So the load
 * meets gaps in the offsets (skipped: each batch is read from its own offsets), tombstones
 * still within their delete.retention.ms (they remove their key, as when written) and, past it,
 * no trace of the deleted key; of transactional commits the cleaner removes the aborted ones
 * and keeps a transaction's marker while any of its records remain, so a kept commit is always
 * followed by the marker that decides it.
 *
 * Transactions (TxnOffsetCommit, KIP-98): a transactional commit is written as a transactional
 * batch of its producer (id and epoch, no sequence, origin COORDINATOR) and, once the ISR holds
 * it, waits in ./pending-txn-offsets.ts for its transaction's marker: the COMMIT marker on this
 * partition applies it (`completeTransaction`), the ABORT marker drops it. The load does the same
 * with the transactional batches and control batches it replays (the cleaner never cleans past
 * the last stable offset, so an undecided transaction's records stay until its marker).
 */
import type { Logger } from '../logger.js'
import { buildBatch } from '../protocol/batch-builder.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { PARTITION_LEADER_EPOCH } from '../replica/leader-epoch.js'
import { ACKS_ALL } from '../replica/partition.js'
import type { AppendRecordsResult, ReplicaManager } from '../replica/replica-manager.js'
import { kafkaErrorCodeOf } from '../storage/errors.js'
import type { LogConfig, ProducerRecord } from '../storage/types.js'
import { decodeEndTransactionMarker } from '../protocol/control-record.js'
import { loadCoordinatorLog } from '../coordinator/coordinator-loader.js'
import type { LogRecord, RecordBatch } from '../protocol/record-types.js'
import type { BuildBatchOptions } from '../protocol/batch-builder.js'
import { OffsetsCache } from './offsets-cache.js'
import { PendingTransactionalOffsets } from './pending-txn-offsets.js'
import {
  commitRecords,
  decodeOffsetKey,
  decodeOffsetValue,
  encodeOffsetKey,
  OFFSETS_LOG_CONFIG,
  OFFSETS_PARTITION,
  OFFSETS_TOPIC,
  type CommittedOffset,
  type OffsetCommitEntry,
} from './offsets-topic.js'

/** offsets.commit.timeout.ms: how long a write waits for the ISR (Kafka's default). */
export const DEFAULT_OFFSET_COMMIT_TIMEOUT_MS = 5000

/** What the store needs of the replica manager: leader appends with their acks, the local log. */
export type OffsetsReplicaManager = Pick<ReplicaManager, 'appendRecords' | 'maybeAddDelayedProduce' | 'getLog' | 'logManager'>

export interface OffsetStoreOptions {
  /** offsets.commit.timeout.ms; default DEFAULT_OFFSET_COMMIT_TIMEOUT_MS. */
  commitTimeoutMs?: number
  /** The partition of `__consumer_offsets` this store writes and loads; default 0. */
  partition?: number
}

export interface OpenOffsetStoreOptions extends OffsetStoreOptions {
  /** The config of the offsets log if `open` creates it; default OFFSETS_LOG_CONFIG. */
  logConfig?: Partial<LogConfig>
}

/** A write's outcome: the append's (or its acks') Kafka error, and where its records went. */
interface WriteResult {
  errorCode: number
  baseOffset: bigint
}

export class OffsetStore {
  private readonly replicas: OffsetsReplicaManager
  private readonly logger: Logger
  private readonly commitTimeoutMs: number
  /** The partition of `__consumer_offsets` written and loaded. */
  readonly topicPartition: { readonly topic: string; readonly partition: number }
  private readonly offsets = new OffsetsCache()
  /** Transactional commits waiting for their transaction's marker. */
  private readonly pendingTxn = new PendingTransactionalOffsets()
  /** Writes under way (appended or waiting to be, acks awaited). */
  private readonly inFlight = new Set<Promise<number>>()
  /** Waits for acks not answered yet: `unload` answers them. */
  private readonly waiting = new Set<(errorCode: number) => void>()
  /** The leader epoch the map was loaded in; null while not loaded. */
  private loadedEpoch: number | null = null
  /** Bumped by every load and unload: work begun under an older one changes nothing. */
  private generation = 0

  constructor(replicas: OffsetsReplicaManager, logger: Logger, options: OffsetStoreOptions = {}) {
    this.replicas = replicas
    this.logger = logger
    this.commitTimeoutMs = options.commitTimeoutMs ?? DEFAULT_OFFSET_COMMIT_TIMEOUT_MS
    this.topicPartition = { topic: OFFSETS_TOPIC, partition: options.partition ?? OFFSETS_PARTITION }
  }

  /**
   * A store over a standalone replica manager (tests, tools): the internal log is opened (or
   * created) and loaded as its leader at PARTITION_LEADER_EPOCH.
   */
  static async open(replicas: OffsetsReplicaManager, logger: Logger, options: OpenOffsetStoreOptions = {}): Promise<OffsetStore> {
    const partition = options.partition ?? OFFSETS_PARTITION
    await replicas.logManager.getOrCreateLog(OFFSETS_TOPIC, partition, { config: options.logConfig ?? OFFSETS_LOG_CONFIG })
    const store = new OffsetStore(replicas, logger, options)
    if (!(await store.load(PARTITION_LEADER_EPOCH))) throw new Error(`${OFFSETS_TOPIC}-${partition} could not be loaded`)
    return store
  }

  private get logName(): string {
    return `${OFFSETS_TOPIC}-${this.topicPartition.partition}`
  }

  /** Whether the map is loaded (this broker leads the offsets partition and replayed it). */
  get isLoaded(): boolean {
    return this.loadedEpoch !== null
  }

  /**
   * Replays the local offsets log into a fresh map, as its leader in `leaderEpoch`. Resolves
   * true once loaded, false when an `unload` or another `load` came first (then nothing is
   * loaded by this one); rejects when the log cannot be read (the map stays unloaded).
   */
  async load(leaderEpoch: number): Promise<boolean> {
    const generation = this.drop()
    const log = this.replicas.getLog(this.topicPartition)
    const started = Date.now()
    let records = 0
    let skipped = 0
    if (log === undefined) {
      this.logger.warn('no local offsets log to load', { log: this.logName })
    } else {
      // The event loop is free between reads; a resignation meanwhile ends the load.
      const replay = (batch: RecordBatch, record: LogRecord) => {
        if (batch.isControl) {
          const marker = decodeEndTransactionMarker(record.key, record.value)
          if (marker !== null) this.completeTransaction(batch.producerId, marker.type === 'COMMIT')
          return
        }
        const key = record.key ?? Buffer.alloc(0)
        if (this.groupRecords !== null && key.length >= 2 && this.groupRecords.types.has(key.readInt16BE(0))) {
          try {
            this.groupRecords.replay(key, record.value)
            records++
          } catch (err) {
            this.logger.warn('skipped a group record that cannot be replayed', { offset: String(record.offset), error: (err as Error).message })
            skipped++
          }
          return
        }
        try {
          const { group, topic, partition } = decodeOffsetKey(key)
          if (batch.isTransactional && record.value !== null) this.pendingTxn.add(batch.producerId, { group, entry: { topic, partition, ...decodeOffsetValue(record.value) }, at: record.offset })
          else if (record.value === null) this.offsets.forget(group, topic, partition, record.offset)
          else this.offsets.remember(group, { topic, partition, ...decodeOffsetValue(record.value) }, record.offset)
          records++
        } catch {
          skipped++
        }
      }
      if (!(await loadCoordinatorLog(log, replay, () => generation === this.generation))) return false
    }
    if (generation !== this.generation) return false
    this.loadedEpoch = leaderEpoch
    if (skipped > 0) this.logger.warn('skipped offsets-log records that are not commits', { log: this.logName, skipped })
    this.logger.info('loaded committed offsets', { log: this.logName, records, groups: this.offsets.groupIds().length, leaderEpoch, ms: Date.now() - started })
    return true
  }

  /**
   * Who replays the group coordinator's own records (classic, KIP-848 and share groups, by
   * record type) met in the load; other keys are commits.
   */
  groupRecords: { types: ReadonlySet<number>; replay: (key: Buffer, value: Buffer | null) => void } | null = null

  /**
   * Writes the group coordinator's records (key, value or null for a tombstone) as one batch,
   * after the writes before it; resolves to the append's Kafka error code once the ISR holds it.
   */
  appendGroupRecords(records: ReadonlyArray<{ key: Buffer; value: Buffer | null }>): Promise<number> {
    if (records.length === 0) return Promise.resolve(ErrorCode.NONE)
    const now = BigInt(Date.now())
    return this.write(
      '',
      [],
      records.map((r) => ({ key: r.key, value: r.value, timestamp: now })),
      () => undefined,
    )
  }

  /** Drops the map (resignation): writes under way are answered NOT_LEADER_OR_FOLLOWER and apply nothing. */
  unload(): void {
    this.drop()
  }

  /** Empties the map and voids whatever the previous load began; the new generation. */
  private drop(): number {
    this.loadedEpoch = null
    this.offsets.clear()
    this.pendingTxn.clear()
    for (const answer of [...this.waiting]) answer(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    return ++this.generation
  }

  /**
   * Writes the commits as one batch; once the ISR holds it they are applied (unless `onlyIf`
   * then says otherwise: the group is gone). Resolves to the append's Kafka error code (NONE:
   * acknowledged), for the coordinator to map.
   */
  commit(group: string, entries: readonly OffsetCommitEntry[], options: { onlyIf?: () => boolean } = {}): Promise<number> {
    if (entries.length === 0) return Promise.resolve(ErrorCode.NONE)
    return this.write(group, entries, commitRecords(group, entries), (at) => {
      if (options.onlyIf && !options.onlyIf()) return
      entries.forEach((entry, i) => this.offsets.remember(group, entry, at + BigInt(i)))
    })
  }

  /**
   * TxnOffsetCommit: the commits as one transactional batch of the producer; once the ISR holds
   * it they wait for the transaction's marker (not visible until its COMMIT). Resolves to the
   * append's Kafka error code (INVALID_PRODUCER_EPOCH for a fenced producer's epoch).
   */
  commitTransactional(group: string, producerId: bigint, producerEpoch: number, entries: readonly OffsetCommitEntry[]): Promise<number> {
    if (entries.length === 0) return Promise.resolve(ErrorCode.NONE)
    const options: BuildBatchOptions = { producerId, producerEpoch, baseSequence: -1, isTransactional: true }
    return this.write(group, entries, commitRecords(group, entries), (at) => entries.forEach((entry, i) => this.pendingTxn.add(producerId, { group, entry, at: at + BigInt(i) })), options)
  }

  /**
   * A transaction marker of `producerId` is on the ISR of this partition (Kafka's
   * `onTransactionCompleted`): its pending commits are applied (commit) or dropped.
   */
  completeTransaction(producerId: bigint, commit: boolean): void {
    for (const { group, entry, at } of this.pendingTxn.complete(producerId)) if (commit) this.offsets.remember(group, entry, at)
  }

  /** Whether an undecided transaction holds a commit of this partition (OffsetFetch requireStable). */
  hasPendingTransactionalOffsets(group: string, topic: string, partition: number): boolean {
    return this.pendingTxn.has(group, topic, partition)
  }

  /**
   * Deletes the committed offsets of these partitions that exist or are being written: one
   * tombstone each, all in one batch (all or nothing) with the group coordinator's records
   * `also` after them, forgotten once the ISR holds it. Resolves to the append's Kafka error
   * code and how many offsets were deleted.
   */
  async delete(
    group: string,
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
    also: ReadonlyArray<{ key: Buffer; value: Buffer | null }> = [],
  ): Promise<{ errorCode: number; deleted: number }> {
    const doomed = this.offsets.existing(group, partitions)
    if (doomed.length === 0 && also.length === 0) return { errorCode: ErrorCode.NONE, deleted: 0 }
    const timestamp = BigInt(Date.now())
    const records = [...doomed.map((p) => ({ key: encodeOffsetKey(group, p.topic, p.partition), value: null, timestamp })), ...also.map((r) => ({ ...r, timestamp }))]
    const errorCode = await this.write(group, [], records, (at) => doomed.forEach((p, i) => this.offsets.forget(group, p.topic, p.partition, at + BigInt(i))))
    return { errorCode, deleted: errorCode === ErrorCode.NONE ? doomed.length : 0 }
  }

  /** Deletes every committed offset of a group, those being written too (DeleteGroups), with the records `also`; see `delete`. */
  deleteGroup(group: string, also: ReadonlyArray<{ key: Buffer; value: Buffer | null }> = []): Promise<{ errorCode: number; deleted: number }> {
    return this.delete(group, [...this.all(group), ...this.offsets.pendingPartitions(group)], also)
  }

  /**
   * One batch through the replica manager; `apply` runs with its base offset once it is
   * acknowledged, if the map it was written for is still loaded. `entries` are the commits
   * (pending until then). Appends are issued in call order, at once.
   */
  private write(group: string, entries: readonly OffsetCommitEntry[], records: ProducerRecord[], apply: (baseOffset: bigint) => void, batchOptions?: BuildBatchOptions): Promise<number> {
    if (this.loadedEpoch === null) return Promise.resolve(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    const generation = this.generation
    this.offsets.addPending(group, entries, 1)
    const run = async (): Promise<number> => {
      const { errorCode, baseOffset } = await this.appendAndWait(records, batchOptions)
      if (errorCode === ErrorCode.NONE && generation === this.generation) apply(baseOffset)
      return errorCode
    }
    const written: Promise<number> = run().finally(() => {
      this.inFlight.delete(written)
      this.offsets.addPending(group, entries, -1)
    })
    this.inFlight.add(written)
    return written
  }

  /**
   * Kafka's `appendForGroup`: a leader append with acks=all, answered when the ISR holds it
   * (or it failed, or the timeout passed). The append itself is issued before this returns.
   */
  private async appendAndWait(records: ProducerRecord[], batchOptions?: BuildBatchOptions): Promise<WriteResult> {
    const tp = this.topicPartition
    let batch: Buffer
    try {
      batch = buildBatch(records, batchOptions)
    } catch (err) {
      return { errorCode: kafkaErrorCodeOf(err), baseOffset: -1n }
    }
    let appended: AppendRecordsResult
    try {
      const result = this.replicas.appendRecords(tp, batch, ACKS_ALL, 'COORDINATOR')
      appended = result instanceof Promise ? await result : result
    } catch (err) {
      return { errorCode: kafkaErrorCodeOf(err), baseOffset: -1n }
    }
    if (appended.errorCode !== ErrorCode.NONE || appended.info === null) return { errorCode: appended.errorCode, baseOffset: -1n }
    // Unloaded while a queued append ran (the replica manager may be shutting down): nothing waits.
    if (this.loadedEpoch === null) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, baseOffset: -1n }
    const baseOffset = appended.info.firstOffset
    const errorCode = await new Promise<number>((resolve) => {
      const answer = (code: number) => {
        this.waiting.delete(answer)
        resolve(code)
      }
      this.waiting.add(answer)
      this.replicas.maybeAddDelayedProduce(ACKS_ALL, this.commitTimeoutMs, [{ ...tp, result: appended }], (results) => answer(results[0]!.errorCode))
    })
    return { errorCode, baseOffset }
  }

  /** Resolves once no write is under way (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight])
  }

  get(group: string, topic: string, partition: number): CommittedOffset | undefined {
    return this.offsets.get(group, topic, partition)
  }

  /** Every committed offset of a group. */
  all(group: string): OffsetCommitEntry[] {
    return this.offsets.all(group)
  }

  /** Whether a group has committed offsets, or commits on their way to the ISR or in an undecided transaction (Kafka's `hasOffsets`). */
  hasOffsets(group: string): boolean {
    return this.offsets.hasOffsets(group) || this.pendingTxn.hasGroup(group)
  }

  groupIds(): string[] {
    return this.offsets.groupIds()
  }
}
