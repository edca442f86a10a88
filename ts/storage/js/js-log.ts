/**
 * One partition log in pure TypeScript: Kafka's `UnifiedLog` + `LocalLog` over `LogSegment`s,
 * following docs/storage.md (the Rust engine in crates/storage writes the same bytes).
 *
 * `JsLog` is the `RawLog` facade. Its state is a `LogState` (log-state.ts, which also lists the
 * modules); appends, reads, retention and truncation, and flushing live in log-append.ts,
 * log-read.ts, log-retention.ts and log-flush.ts as functions over that state, and `JsLog`
 * forwards to them. What stays here: opening, the offsets, leader epochs, roll, close, and the
 * queue that runs the async methods one at a time. A record-format error (ts/protocol
 * `RecordError`) leaves it as a `StorageError` with the same code, as the Rust engine's does.
 *
 * Absolute offsets are bigint; everything inside a segment is relative and a number. Sync
 * methods use sync fs calls on open descriptors and never fsync (except the leader epoch
 * checkpoint, rewritten only when an epoch starts, as in Kafka).
 */
import { basename } from 'node:path'
import * as fs from 'node:fs'
import { StorageError, asStorageError, recordErrorsAsStorageErrors } from '../errors.js'
import type {
  AbortedTransaction,
  ProducerStateEntry,
  AppendOrigin,
  EpochEntry,
  FetchDataInfo,
  FetchIsolation,
  FileSlice,
  LogAppendInfo,
  LogCleanRequest,
  LogCleanResult,
  LogConfig,
  OpenLogOptions,
  RawLog,
  RecordBatch,
  RecoveryReport,
  SegmentInfo,
  TimestampAndOffset,
} from '../types.js'
import type { FileRecords } from '../file-records.js'
import { fsyncPath, ioAsync, producerSnapshotFile } from './files.js'
import { IncomingBatches } from './incoming-batches.js'
import { LogAppender } from './log-append.js'
import { cleanLog } from './log-clean.js'
import * as flushes from './log-flush.js'
import { loadLog } from './log-loader.js'
import * as reads from './log-read.js'
import * as retention from './log-retention.js'
import { LogState } from './log-state.js'
import { collectAbortedTransactions, takeSnapshot } from './log-producer-state.js'
import type { LogSegment } from './log-segment.js'

export { EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP } from './log-read.js'

export class JsLog implements RawLog {
  readonly dir: string
  private readonly state: LogState
  private readonly appender: LogAppender
  private readonly report: RecoveryReport
  private closing: Promise<void> | null = null
  private queue: Promise<unknown> = Promise.resolve()
  private backgroundFlush: Promise<void> | null = null

  private constructor(options: OpenLogOptions, loaded: Awaited<ReturnType<typeof loadLog>>) {
    this.dir = options.dir
    this.state = new LogState(options.dir, options.config, loaded)
    this.appender = new LogAppender(this.state)
    this.report = loaded.report
    this.state.onRoll = (rolled) => this.flushRolled(rolled)
  }

  /** Opens (and if needed recovers) the log in `options.dir`, creating the directory if missing. */
  static async open(options: OpenLogOptions): Promise<JsLog> {
    checkConfig(options.config)
    if (options.recoveryPoint < 0n || options.logStartOffset < 0n) {
      throw new StorageError('INVALID_ARGUMENT', `recovery point ${options.recoveryPoint} and log start offset ${options.logStartOffset} must not be negative`)
    }
    const loaded = await loadLog(options).catch((err: unknown) => {
      throw asStorageError(err)
    })
    return new JsLog(options, loaded)
  }

  // ---- offsets ----

  logStartOffset(): bigint {
    return this.state.logStartOffset
  }

  logEndOffset(): bigint {
    return this.state.logEndOffset
  }

  highWatermark(): bigint {
    return this.state.highWatermark
  }

  lastStableOffset(): bigint {
    return this.state.lastStableOffset()
  }

  recoveryPoint(): bigint {
    return this.state.recoveryPoint
  }

  updateHighWatermark(hw: bigint): bigint {
    this.state.checkOpen()
    return this.state.setHighWatermark(hw)
  }

  // ---- appends (log-append.ts) ----

  updateConfig(config: LogConfig): void {
    this.state.checkOpen()
    checkConfig(config)
    this.state.updateConfig(config)
  }

  appendAsLeader(batches: Buffer, leaderEpoch: number, nowMs: number, origin: AppendOrigin = 'CLIENT'): LogAppendInfo {
    return this.appended(recordErrorsAsStorageErrors(() => this.appender.appendAsLeader(batches, leaderEpoch, nowMs, origin)))
  }

  /**
   * appendAsLeader without blocking the event loop for long: the leader's checks run first on a
   * copy of the batches, compressed records inflating off the loop or in slices
   * (`IncomingBatches.checkLeaderAsync`), then the checked copy is written at once, offsets from
   * the log end then. Checked again if the config changed meanwhile (max.message.bytes, cleanup.policy). Appends started
   * together are not ordered among themselves: the caller waits for one before the next.
   */
  async appendAsLeaderAsync(batches: Buffer, leaderEpoch: number, nowMs: number, origin: AppendOrigin = 'CLIENT'): Promise<LogAppendInfo> {
    const copy = Buffer.from(batches)
    for (;;) {
      this.state.checkOpen()
      const config = this.state.config
      const inc = await new IncomingBatches().checkLeaderAsync(copy, config, { nowMs, topicPartition: basename(this.state.dir) }, origin).catch((err: unknown) => {
        throw asStorageError(err)
      })
      if (this.state.config === config) return this.appended(recordErrorsAsStorageErrors(() => this.appender.appendCheckedAsLeader(copy, inc, leaderEpoch, nowMs)))
    }
  }

  appendAsFollower(batches: Buffer): LogAppendInfo {
    return this.appended(recordErrorsAsStorageErrors(() => this.appender.appendAsFollower(batches)))
  }

  /** After a non-empty append, flush.messages may call for a flush: it runs in the background. */
  private appended(info: LogAppendInfo): LogAppendInfo {
    if (info.batchCount > 0 && this.backgroundFlush === null && flushes.flushDue(this.state)) {
      this.backgroundFlush = this.flush()
        .catch(() => {
          // the segments stay dirty: the next flush() retries and reports the error
        })
        .finally(() => {
          this.backgroundFlush = null
        })
    }
    return info
  }

  /**
   * After a roll: the segments below the new one are flushed in the background, in the queue
   * (log-flush.ts `flushUpTo`). A roll that the failed append which made it undid (the segment
   * is gone when the flush's turn comes: appends run before it) flushes nothing, or the recovery
   * point would pass what is appended after. A failed fsync leaves the segments dirty and the
   * recovery point where it was: the next flush() or close retries and reports the error.
   */
  private flushRolled(rolled: LogSegment): void {
    const state = this.state
    this.exclusive(() => (state.closed || !state.segments.includes(rolled) ? Promise.resolve() : flushes.flushUpTo(state, rolled.baseOffset))).catch(() => {
      // retried by the next flush (see above)
    })
  }

  // ---- segments ----

  roll(): void {
    this.state.checkOpen()
    if (this.state.active().size === 0) return
    this.state.rollAt(this.state.logEndOffset, Date.now())
  }

  segments(): SegmentInfo[] {
    return this.state.segments.map((s) => ({ baseOffset: s.baseOffset, file: s.file, size: s.size }))
  }

  // ---- reads (log-read.ts) ----

  read(offset: bigint, maxBytes: number, isolation: FetchIsolation, minOneMessage: boolean): FetchDataInfo {
    return reads.read(this.state, offset, maxBytes, isolation, minOneMessage)
  }

  readSlice(slice: FileSlice): Buffer {
    return reads.readSlice(this.state, slice)
  }

  fileRecords(slice: FileSlice): FileRecords {
    return reads.fileRecords(this.state, slice)
  }

  readBatches(offset: bigint, maxBytes: number, isolation: FetchIsolation): RecordBatch[] {
    return recordErrorsAsStorageErrors(() => reads.readBatches(this.state, offset, maxBytes, isolation))
  }

  fetchOffsetByTimestamp(timestamp: bigint): TimestampAndOffset | null {
    return recordErrorsAsStorageErrors(() => reads.fetchOffsetByTimestamp(this.state, timestamp))
  }

  // ---- transactions (log-producer-state.ts) ----

  firstUnstableOffset(): bigint | null {
    this.state.checkOpen()
    const first = this.state.producerState.firstUnstableOffset()
    return first === null ? null : first < this.state.logStartOffset ? this.state.logStartOffset : first
  }

  collectAbortedTransactions(startOffset: bigint, upperBoundOffset: bigint): AbortedTransaction[] {
    this.state.checkOpen()
    return collectAbortedTransactions(this.state.segments, startOffset, upperBoundOffset)
  }

  producerStateEntries(): ProducerStateEntry[] {
    this.state.checkOpen()
    return this.state.producerState.entries().map((e) => ({ ...e }))
  }

  removeExpiredProducers(nowMs: bigint, expirationMs: bigint): number {
    this.state.checkOpen()
    return this.state.producerState.removeExpiredProducers(nowMs, expirationMs)
  }

  // ---- leader epochs ----

  latestEpoch(): number | null {
    return this.state.epochs.latestEpoch()
  }

  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } | null {
    return this.state.epochs.endOffsetFor(epoch, this.state.logEndOffset)
  }

  epochEntries(): EpochEntry[] {
    return this.state.epochs.entries()
  }

  // ---- start offset, truncation, retention (log-retention.ts) ----

  maybeIncrementLogStartOffset(offset: bigint): void {
    retention.maybeIncrementLogStartOffset(this.state, offset)
  }

  async truncateTo(offset: bigint): Promise<void> {
    this.state.checkOpen()
    return this.exclusive(() => retention.truncateTo(this.state, offset))
  }

  async truncateFullyAndStartAt(offset: bigint): Promise<void> {
    this.state.checkOpen()
    return this.exclusive(() => retention.truncateFullyAndStartAt(this.state, offset))
  }

  async deleteOldSegments(nowMs: number): Promise<number> {
    this.state.checkOpen()
    return this.exclusive(() => retention.deleteOldSegments(this.state, nowMs))
  }

  /** One cleaning round (log-clean.ts): groups cleaned between turns of the event loop, the swap in the exclusive queue. */
  async clean(request: LogCleanRequest): Promise<LogCleanResult> {
    return cleanLog(this.state, request, (step) => this.exclusive(step)).catch((err: unknown) => {
      throw asStorageError(err)
    })
  }

  // ---- flush (log-flush.ts), close ----

  async flush(): Promise<void> {
    this.state.checkOpen()
    return this.exclusive(() => flushes.flush(this.state))
  }

  /** Trims the active segment's indexes (with their last time index entry), flushes, closes. */
  close(): Promise<void> {
    if (this.closing !== null) return this.closing
    // Refuse new calls at once; what was queued before still runs.
    this.state.closed = true
    if (this.state.cleaningCancel !== null) Atomics.store(this.state.cleaningCancel, 0, 1)
    this.closing = this.exclusive(async () => {
      const offline = this.state.offline
      if (offline !== null) {
        // Nothing is written to an offline log: it was not closed cleanly, and says so.
        for (const s of this.state.segments) s.closeForDelete()
        throw new StorageError('LOG_OFFLINE', `log offline until reopened: ${offline}`)
      }
      let first: unknown = null
      try {
        const active = this.state.active()
        active.onBecomeInactive()
        active.dirty = true
        // Kafka's close: a producer snapshot at the LEO, so the next open reads no batch.
        takeSnapshot(this.state, this.state.logEndOffset)
        await flushes.flush(this.state)
        if (this.state.lastSnapOffset === this.state.logEndOffset && this.state.snapshots.includes(this.state.logEndOffset)) {
          const file = producerSnapshotFile(this.dir, this.state.logEndOffset)
          await ioAsync('fsync', file, () => fsyncPath(file))
        }
      } catch (err) {
        first = err
      }
      for (const s of this.state.segments) {
        try {
          s.close()
        } catch (err) {
          first ??= err
        }
      }
      if (first !== null) throw first
    })
    return this.closing
  }

  async delete(): Promise<void> {
    await this.close().catch(() => {
      // the directory goes anyway
    })
    await ioAsync('delete log directory', this.dir, () => fs.promises.rm(this.dir, { recursive: true, force: true }))
  }

  recoveryReport(): RecoveryReport {
    return { ...this.report, messages: [...this.report.messages] }
  }

  /** Runs async operations one at a time, in call order. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn)
    this.queue = run.catch(() => undefined)
    return run
  }
}

function checkConfig(config: LogConfig): void {
  const positive: Array<keyof LogConfig> = ['segmentBytes', 'segmentIndexBytes', 'maxMessageBytes']
  for (const k of positive) {
    const v = config[k]
    if (typeof v !== 'number' || !(v > 0)) throw new StorageError('INVALID_ARGUMENT', `${k} must be positive, got ${String(v)}`)
  }
  if (config.indexIntervalBytes < 0) throw new StorageError('INVALID_ARGUMENT', `indexIntervalBytes must be >= 0`)
}
