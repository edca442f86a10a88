/**
 * Kafka's `SharePartition` (KIP-932): the state of one share group on one topic-partition, kept
 * on the partition's leader. The share group's members read the partition together; each record
 * is acquired by one member at a time, under a lock, and acknowledged one by one.
 *
 * State. `startOffset` is the share-partition start offset (SPSO): every record below it is
 * done (acknowledged or archived). `endOffset` is one past the last record ever acquired (Kafka
 * keeps the last offset, inclusive; here it is the exclusive end). The records in between are in
 * flight, one entry per offset (`records[offset - startOffset]`), each with its state, delivery
 * count, owner and lock:
 *
 *     AVAILABLE    may be acquired (released, or its lock expired)
 *     ACQUIRED     held by one member until it acknowledges or its lock expires
 *     ACKNOWLEDGED accepted: done
 *     ARCHIVED     rejected, past the delivery count limit, or no record a member may have
 *                  (a control record, a record of an aborted transaction read_committed, an
 *                  offset compaction removed): done
 *
 *     AVAILABLE -acquire-> ACQUIRED (delivery count + 1)
 *     ACQUIRED -accept-> ACKNOWLEDGED     -reject, gap-> ARCHIVED
 *     ACQUIRED -release, lock expiry, member gone-> AVAILABLE, or ARCHIVED once the delivery
 *                                                   count reached the delivery count limit
 *     ACQUIRED -renew-> ACQUIRED (a new lock)
 *
 * Whenever the records at the start are done, the start offset moves past them and they leave
 * the in-flight list. New records are acquired past `endOffset` only while fewer than
 * `maxInFlightRecords` offsets are in flight (group.share.partition.max.record.locks).
 *
 * Locks. One acquisition lock per `acquire` call covers the records it acquired; it expires after
 * the group's record lock duration (a task in the broker's timing wheel) and returns its records
 * that are still acquired under it to AVAILABLE (or ARCHIVED). A renewal moves records to a new
 * lock.
 *
 * Acknowledgements are all or nothing: every offset of every batch is checked first (acquired,
 * by this member; within the in-flight records; a known type), and an error changes nothing:
 * INVALID_REQUEST for an unknown type or offsets past the in-flight records, INVALID_RECORD_STATE
 * for a record not acquired (never, or no longer: its lock expired) or acquired by another member.
 * Offsets below the start offset are done already and skipped, as Kafka skips them.
 *
 * Durability (Kafka's `Persister`, ./persister.ts). A share partition made with `persister`
 * starts from the state the share coordinator keeps (`restore`: the start offset and the state
 * batches; records in flight that no batch covers were acquired and never acknowledged, and are
 * available again with the delivery count they had before) and writes what changed (Kafka's
 * `writeShareGroupState`): after acknowledgements (the caller awaits `writeState` before it
 * answers), and after releases and expired locks (written at once, answered to no one). A write
 * holds the start offset, the count of records done in flight (deliveryCompleteCount) and, as
 * state batches, the records changed since the last write with their state and delivery count;
 * a record acquired again meanwhile is written AVAILABLE with the count it had before (an
 * acquisition is never written, as in Kafka). Writes go one after another, each taking every
 * change made until it starts. A write that fails is logged by the caller; the state in memory
 * stays (Kafka rolls its acknowledgements back) and its changes are written with the next one.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import { TimerTask, type Timer } from '../purgatory/timing-wheel.js'

/** Kafka's `RecordState` ids. */
export const RecordState = { AVAILABLE: 0, ACQUIRED: 1, ACKNOWLEDGED: 2, ARCHIVED: 4 } as const
export type RecordStateId = (typeof RecordState)[keyof typeof RecordState]

/** Kafka's `AcknowledgeType` ids (the wire's acknowledgeTypes). */
export const AcknowledgeType = { GAP: 0, ACCEPT: 1, RELEASE: 2, REJECT: 3, RENEW: 4 } as const

/** The group configs a share partition follows, read when it acts (they may change). */
export interface SharePartitionConfig {
  /** share.record.lock.duration.ms */
  recordLockDurationMs: number
  /** share.delivery.count.limit */
  deliveryCountLimit: number
  /** share.partition.max.record.locks */
  maxInFlightRecords: number
}

/** A batch of the log as a share fetch read it: which offsets it covers and what they are. */
export interface ReadBatch {
  baseOffset: bigint
  lastOffset: bigint
  /** 'data': records a member may get; 'skip': a control batch or an aborted transaction's records (archived at once). */
  kind: 'data' | 'skip'
}

/** The wire's AcquiredRecords: consecutive offsets with one delivery count. */
export interface AcquiredRecords {
  firstOffset: bigint
  lastOffset: bigint
  deliveryCount: number
}

/** The wire's AcknowledgementBatch. */
export interface AcknowledgementBatch {
  firstOffset: bigint
  lastOffset: bigint
  /** One type for the whole batch, or one per offset. */
  acknowledgeTypes: readonly number[]
}

export interface AcknowledgeResult {
  errorCode: number
  errorMessage: string | null
}

interface InFlightRecord {
  state: RecordStateId
  deliveryCount: number
  /** The member holding it while ACQUIRED, else null. */
  memberId: string | null
  lock: AcquisitionLock | null
}

/** One acquisition's lock: expires after the lock duration, releasing what it still holds. */
class AcquisitionLock extends TimerTask {
  /** Records still acquired under this lock. */
  held = 0

  constructor(
    delayMs: number,
    readonly memberId: string,
    readonly firstOffset: bigint,
    readonly lastOffset: bigint,
    private readonly onExpiry: (lock: AcquisitionLock) => void,
  ) {
    super(delayMs)
  }

  run(): void {
    this.onExpiry(this)
  }
}

/** A range of offsets with one state and delivery count, as the share coordinator keeps them. */
export interface StateBatch {
  firstOffset: bigint
  lastOffset: bigint
  deliveryState: number
  deliveryCount: number
}

/** What one write of the share partition's state holds (WriteShareGroupState's partition data). */
export interface ShareStateWrite {
  stateEpoch: number
  leaderEpoch: number
  startOffset: bigint
  deliveryCompleteCount: number
  stateBatches: StateBatch[]
}

/** The share partition's state as read back from the share coordinator. */
export interface PersistedState {
  stateEpoch: number
  startOffset: bigint
  stateBatches: readonly StateBatch[]
}

export interface SharePartitionOptions {
  /** The timer acquisition locks expire in (the broker's timing wheel). */
  timer: Timer
  /** Writes the state (the share coordinator through the persister); resolves to its error code. None: in memory only. */
  persister?: (write: ShareStateWrite) => Promise<number>
  /** The partition's leader epoch and the state's epoch, written with each state. */
  leaderEpoch?: number
  /** The state this share partition starts from (read from the share coordinator). */
  restore?: PersistedState
  /** The group configs, read at each acquisition and release. */
  config: () => SharePartitionConfig
  /** Records became available again (released, a lock expired): parked share fetches may go on. */
  onRecordsAvailable?: () => void
}

export class SharePartition {
  /** The share-partition start offset: every record below it is done. */
  private start: bigint
  /** The in-flight records, [startOffset, endOffset). */
  private records: InFlightRecord[] = []
  private readonly locks = new Set<AcquisitionLock>()
  /** Offsets whose state changed since the last write. */
  private changed = new Set<bigint>()
  /** The writes, one after another. */
  private writing: Promise<number> = Promise.resolve(ErrorCode.NONE)
  private readonly stateEpoch: number

  constructor(
    readonly groupId: string,
    readonly topic: string,
    readonly partition: number,
    startOffset: bigint,
    private readonly options: SharePartitionOptions,
  ) {
    this.start = startOffset
    this.stateEpoch = options.restore?.stateEpoch ?? 0
    if (options.restore !== undefined) this.restoreBatches(options.restore)
  }

  /**
   * Writes the changes made since the last write (none: nothing is written); resolves to the
   * share coordinator's error code once written, after the writes before it.
   */
  writeState(): Promise<number> {
    const persister = this.options.persister
    if (persister === undefined) return Promise.resolve(ErrorCode.NONE)
    this.writing = this.writing.then(() => {
      if (this.changed.size === 0) return ErrorCode.NONE
      const write = this.stateToWrite()
      const taken = this.changed
      this.changed = new Set()
      return persister(write)
        .catch(() => ErrorCode.UNKNOWN_SERVER_ERROR)
        .then((errorCode) => {
          // Not written: written with the next write.
          if (errorCode !== ErrorCode.NONE) for (const offset of taken) this.changed.add(offset)
          return errorCode
        })
    })
    return this.writing
  }

  private stateToWrite(): ShareStateWrite {
    const batches: StateBatch[] = []
    const offsets = [...this.changed].filter((o) => o >= this.start && o < this.endOffset).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    for (const offset of offsets) {
      const r = this.at(offset)!
      // An acquisition is never written: a record acquired again is written as before it.
      const deliveryState = r.state === RecordState.ACQUIRED ? RecordState.AVAILABLE : r.state
      const deliveryCount = r.state === RecordState.ACQUIRED ? r.deliveryCount - 1 : r.deliveryCount
      const last = batches[batches.length - 1]
      if (last !== undefined && last.lastOffset + 1n === offset && last.deliveryState === deliveryState && last.deliveryCount === deliveryCount) last.lastOffset = offset
      else batches.push({ firstOffset: offset, lastOffset: offset, deliveryState, deliveryCount })
    }
    let done = 0
    for (const r of this.records) if (r.state === RecordState.ACKNOWLEDGED || r.state === RecordState.ARCHIVED) done++
    return { stateEpoch: this.stateEpoch, leaderEpoch: this.options.leaderEpoch ?? 0, startOffset: this.start, deliveryCompleteCount: done, stateBatches: batches }
  }

  /** The in-flight records as the state batches left them: records no batch covers are available, never delivered since the last write. */
  private restoreBatches(state: PersistedState): void {
    for (const b of [...state.stateBatches].sort((x, y) => (x.firstOffset < y.firstOffset ? -1 : x.firstOffset > y.firstOffset ? 1 : 0))) {
      if (b.lastOffset < this.start) continue
      while (this.endOffset < b.firstOffset) this.records.push({ state: RecordState.AVAILABLE, deliveryCount: 0, memberId: null, lock: null })
      for (let offset = b.firstOffset < this.endOffset ? this.endOffset : b.firstOffset; offset <= b.lastOffset; offset++) {
        const done = b.deliveryState === RecordState.ACKNOWLEDGED || b.deliveryState === RecordState.ARCHIVED
        this.records.push({ state: done ? (b.deliveryState as RecordStateId) : RecordState.AVAILABLE, deliveryCount: b.deliveryCount, memberId: null, lock: null })
      }
    }
    this.advanceStart()
  }

  /** The leader epoch of the partition this share partition was made in. */
  get leaderEpoch(): number {
    return this.options.leaderEpoch ?? 0
  }

  get startOffset(): bigint {
    return this.start
  }

  /** One past the last offset in flight (or ever acquired). */
  get endOffset(): bigint {
    return this.start + BigInt(this.records.length)
  }

  /** Offsets in flight (acquired or not). */
  inFlightCount(): number {
    return this.records.length
  }

  /** A record's state, or null when it is not in flight (below the start offset: done; at or past the end: never acquired). */
  recordState(offset: bigint): { state: RecordStateId; deliveryCount: number; memberId: string | null } | null {
    const r = this.at(offset)
    return r === undefined ? null : { state: r.state, deliveryCount: r.deliveryCount, memberId: r.memberId }
  }

  /** Where a share fetch reads from (Kafka's `nextFetchOffset`): the first available record in flight, else the end. */
  nextFetchOffset(): bigint {
    const i = this.records.findIndex((r) => r.state === RecordState.AVAILABLE)
    return i < 0 ? this.endOffset : this.start + BigInt(i)
  }

  /**
   * Whether a fetch could acquire something (Kafka's `canAcquireRecords`): an available record
   * in flight, or records below `readEnd` (the high watermark or last stable offset) past the
   * end while the in-flight limit allows.
   */
  canAcquireRecords(readEnd: bigint): boolean {
    if (this.records.some((r) => r.state === RecordState.AVAILABLE)) return true
    return this.endOffset < readEnd && this.records.length < this.options.config().maxInFlightRecords
  }

  /**
   * Moves the start offset up to the log start offset (retention, DeleteRecords): records below
   * it are gone and archived with their locks; a start offset past the end starts afresh there.
   */
  maybeUpdateStartOffset(logStartOffset: bigint): void {
    if (logStartOffset <= this.start) return
    const drop = logStartOffset - this.start
    const n = drop >= BigInt(this.records.length) ? this.records.length : Number(drop)
    for (const r of this.records.slice(0, n)) this.unlock(r)
    this.records.splice(0, n)
    this.start = logStartOffset
  }

  /**
   * Acquires for `memberId` up to `maxRecords` records of the batches a read returned (from
   * `nextFetchOffset()` on): available records in flight, then new records past the end while
   * fewer than maxInFlightRecords are in flight. Offsets with no record (between batches) and
   * 'skip' batches are archived as they join. Answers the acquired records as ranges of one
   * delivery count.
   */
  acquire(memberId: string, maxRecords: number, batches: readonly ReadBatch[]): AcquiredRecords[] {
    const config = this.options.config()
    const acquired: bigint[] = []
    // Where the read began: in-flight offsets it passed with no record (a restored state's
    // offsets compaction removed) are done, as are the available ones of a skipped batch.
    let cursor = this.nextFetchOffset()
    const archive = (r: InFlightRecord, offset: bigint) => {
      r.state = RecordState.ARCHIVED
      this.changed.add(offset)
    }
    const take = (r: InFlightRecord, offset: bigint) => {
      r.state = RecordState.ACQUIRED
      r.deliveryCount++
      r.memberId = memberId
      acquired.push(offset)
    }
    outer: for (const batch of batches) {
      for (let offset = cursor < this.start ? this.start : cursor; offset < batch.baseOffset && offset < this.endOffset; offset++) {
        const r = this.at(offset)!
        if (r.state === RecordState.AVAILABLE) archive(r, offset)
      }
      if (batch.lastOffset + 1n > cursor) cursor = batch.lastOffset + 1n
      for (let offset = batch.baseOffset < this.start ? this.start : batch.baseOffset; offset <= batch.lastOffset; offset++) {
        if (acquired.length >= maxRecords) break outer
        if (offset < this.endOffset) {
          const r = this.at(offset)!
          if (r.state === RecordState.AVAILABLE) {
            if (batch.kind === 'data') take(r, offset)
            else archive(r, offset)
          }
          continue
        }
        if (this.records.length >= config.maxInFlightRecords) break outer
        // Offsets between the end and this batch hold no record (compaction): done at once.
        while (this.endOffset < offset) this.records.push({ state: RecordState.ARCHIVED, deliveryCount: 0, memberId: null, lock: null })
        const r: InFlightRecord = { state: RecordState.ARCHIVED, deliveryCount: 0, memberId: null, lock: null }
        this.records.push(r)
        if (batch.kind === 'data') take(r, offset)
      }
    }
    if (acquired.length > 0) {
      const lock = new AcquisitionLock(config.recordLockDurationMs, memberId, acquired[0]!, acquired[acquired.length - 1]!, this.expire)
      for (const offset of acquired) this.at(offset)!.lock = lock
      lock.held = acquired.length
      this.locks.add(lock)
      this.options.timer.add(lock)
    }
    this.advanceStart()
    return ranges(acquired, (o) => this.at(o)?.deliveryCount ?? 0)
  }

  /**
   * Applies a member's acknowledgements, all or nothing (see the module doc for the errors).
   * Released records become available again (or archived at the delivery count limit);
   * renewed ones get a new lock of the group's lock duration.
   */
  acknowledge(memberId: string, batches: readonly AcknowledgementBatch[]): AcknowledgeResult {
    const changes: Array<{ offset: bigint; type: number }> = []
    for (const batch of batches) {
      const count = batch.lastOffset - batch.firstOffset + 1n
      if (count < 1n) return invalidRequest('The last offset of an acknowledgement batch is before its first offset.')
      const types = batch.acknowledgeTypes
      if (types.length !== 1 && BigInt(types.length) !== count) return invalidRequest('Acknowledge types must be one for the batch or one per offset.')
      if (types.some((t) => t < AcknowledgeType.GAP || t > AcknowledgeType.RENEW)) return invalidRequest(`Invalid acknowledge type: ${JSON.stringify(types)}`)
      if (batch.lastOffset < this.start) continue
      if (batch.firstOffset >= this.endOffset) return invalidRequest('Batch record not found. The first offset in request is past acquired records.')
      if (batch.lastOffset >= this.endOffset) return invalidRequest('Batch record not found. The last offset in request is past acquired records.')
      for (let offset = batch.firstOffset < this.start ? this.start : batch.firstOffset; offset <= batch.lastOffset; offset++) {
        const r = this.at(offset)!
        if (r.state !== RecordState.ACQUIRED) return invalidRecordState('The record cannot be acknowledged: it is not in the acquired state.')
        if (r.memberId !== memberId) return invalidRecordState('Member is not the owner of the record.')
        changes.push({ offset, type: types.length === 1 ? types[0]! : types[Number(offset - batch.firstOffset)]! })
      }
    }
    const config = this.options.config()
    let released = false
    const renewed: bigint[] = []
    for (const { offset, type } of changes) {
      const r = this.at(offset)!
      if (r.state !== RecordState.ACQUIRED) continue // named twice: the first acknowledgement counts
      if (type === AcknowledgeType.RENEW) {
        if (!renewed.includes(offset)) renewed.push(offset)
        continue
      }
      this.unlock(r)
      this.changed.add(offset)
      if (type === AcknowledgeType.ACCEPT) r.state = RecordState.ACKNOWLEDGED
      else if (type === AcknowledgeType.RELEASE) {
        r.state = r.deliveryCount >= config.deliveryCountLimit ? RecordState.ARCHIVED : RecordState.AVAILABLE
        released ||= r.state === RecordState.AVAILABLE
      } else r.state = RecordState.ARCHIVED // REJECT, GAP
    }
    // Renewed records move to a new lock of the full duration, still held by the member.
    const kept = renewed.filter((offset) => this.at(offset)?.state === RecordState.ACQUIRED).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    if (kept.length > 0) {
      const lock = new AcquisitionLock(config.recordLockDurationMs, memberId, kept[0]!, kept[kept.length - 1]!, this.expire)
      for (const offset of kept) {
        const r = this.at(offset)!
        this.unlock(r)
        r.memberId = memberId
        r.lock = lock
      }
      lock.held = kept.length
      this.locks.add(lock)
      this.options.timer.add(lock)
    }
    this.advanceStart()
    if (released) this.options.onRecordsAvailable?.()
    return { errorCode: ErrorCode.NONE, errorMessage: null }
  }

  /** Releases every record `memberId` holds (its share session closed, or its connection): available again, or archived at the limit. */
  releaseAcquiredRecords(memberId: string): void {
    const limit = this.options.config().deliveryCountLimit
    let released = false
    for (let i = 0; i < this.records.length; i++) {
      const r = this.records[i]!
      if (r.state !== RecordState.ACQUIRED || r.memberId !== memberId) continue
      this.unlock(r)
      this.changed.add(this.start + BigInt(i))
      r.state = r.deliveryCount >= limit ? RecordState.ARCHIVED : RecordState.AVAILABLE
      released ||= r.state === RecordState.AVAILABLE
    }
    this.advanceStart()
    void this.writeState()
    if (released) this.options.onRecordsAvailable?.()
  }

  /** Cancels every lock (the share partition is dropped: the partition moved or was deleted). */
  close(): void {
    for (const lock of this.locks) lock.cancel()
    this.locks.clear()
  }

  private readonly expire = (lock: AcquisitionLock): void => {
    this.locks.delete(lock)
    const limit = this.options.config().deliveryCountLimit
    let released = false
    const from = lock.firstOffset < this.start ? this.start : lock.firstOffset
    for (let offset = from; offset <= lock.lastOffset && offset < this.endOffset; offset++) {
      const r = this.at(offset)!
      if (r.lock !== lock) continue
      r.lock = null
      r.memberId = null
      this.changed.add(offset)
      r.state = r.deliveryCount >= limit ? RecordState.ARCHIVED : RecordState.AVAILABLE
      released ||= r.state === RecordState.AVAILABLE
    }
    this.advanceStart()
    void this.writeState()
    if (released) this.options.onRecordsAvailable?.()
  }

  /** Takes a record off its lock (the lock is cancelled once it holds nothing) and its owner. */
  private unlock(r: InFlightRecord): void {
    const lock = r.lock
    r.lock = null
    r.memberId = null
    if (lock === null) return
    if (--lock.held === 0) {
      lock.cancel()
      this.locks.delete(lock)
    }
  }

  /** Moves the start offset past the records at the start that are done. */
  private advanceStart(): void {
    let n = 0
    while (n < this.records.length && (this.records[n]!.state === RecordState.ACKNOWLEDGED || this.records[n]!.state === RecordState.ARCHIVED)) n++
    if (n === 0) return
    this.records.splice(0, n)
    this.start += BigInt(n)
  }

  private at(offset: bigint): InFlightRecord | undefined {
    if (offset < this.start) return undefined
    return this.records[Number(offset - this.start)]
  }
}

function invalidRequest(errorMessage: string): AcknowledgeResult {
  return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage }
}

function invalidRecordState(errorMessage: string): AcknowledgeResult {
  return { errorCode: ErrorCode.INVALID_RECORD_STATE, errorMessage }
}

/** Consecutive offsets (ascending) with one delivery count, as ranges. */
function ranges(offsets: readonly bigint[], deliveryCount: (offset: bigint) => number): AcquiredRecords[] {
  const out: AcquiredRecords[] = []
  for (const offset of offsets) {
    const dc = deliveryCount(offset)
    const last = out[out.length - 1]
    if (last !== undefined && last.lastOffset + 1n === offset && last.deliveryCount === dc) last.lastOffset = offset
    else out.push({ firstOffset: offset, lastOffset: offset, deliveryCount: dc })
  }
  return out
}
