/**
 * One partition log in pure TypeScript: Kafka's `UnifiedLog` + `LocalLog` over `LogSegment`s,
 * following docs/storage.md (the Rust engine in crates/storage writes the same bytes).
 *
 * Segments are kept in an array sorted by base offset; the last one is active. Absolute offsets
 * are bigint; everything inside a segment is relative and a number. Sync methods use sync fs
 * calls on open descriptors and never fsync (except the leader epoch checkpoint, rewritten only
 * when an epoch starts, as in Kafka); the async methods run one at a time.
 */
import * as fs from 'node:fs'
import {
  ATTRIBUTES_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_OVERHEAD,
  TIMESTAMP_TYPE_MASK,
  updateCrc,
} from '../../protocol/batch-header.js'
import { batchesOf, decodeBatch } from '../../protocol/records.js'
import { StorageError } from '../errors.js'
import type {
  EpochEntry,
  FetchDataInfo,
  FetchIsolation,
  FileSlice,
  LogAppendInfo,
  LogConfig,
  LogOffsetMetadata,
  OpenLogOptions,
  RawLog,
  RecordBatch,
  RecoveryReport,
  SegmentInfo,
  TimestampAndOffset,
} from '../types.js'
import { fsyncPath, io, ioAsync, readFully } from './files.js'
import { LeaderEpochFileCache } from './leader-epoch-cache.js'
import { IncomingBatches } from './incoming-batches.js'
import { floorIndex, loadLog } from './log-loader.js'
import { LogSegment, MAX_RELATIVE_OFFSET, type SegmentSettings } from './log-segment.js'
import { findOffsetByTimestamp, findOffsetOfMaxTimestamp } from './offset-by-timestamp.js'

/** ListOffsets' special timestamps. */
export const LATEST_TIMESTAMP = -1n
export const EARLIEST_TIMESTAMP = -2n
export const MAX_TIMESTAMP = -3n
export const EARLIEST_LOCAL_TIMESTAMP = -4n
const EMPTY = Buffer.alloc(0)

export class JsLog implements RawLog {
  readonly dir: string
  private readonly config: LogConfig
  private readonly settings: SegmentSettings
  private readonly flushMessages: bigint
  private segs: LogSegment[]
  /** Segments by `.log` path, for `readSlice`. */
  private readonly byFile = new Map<string, LogSegment>()
  private startOffset: bigint
  private endOffset: bigint
  private hw: bigint
  private recovery: bigint
  private readonly epochs: LeaderEpochFileCache
  private readonly report: RecoveryReport
  private closed = false
  private closing: Promise<void> | null = null
  /** Counts truncations, so a flush that overlapped one does not move the recovery point. */
  private truncations = 0
  /** A segment was created since the last flush: the directory needs an fsync too. */
  private newSegments = false
  private queue: Promise<unknown> = Promise.resolve()
  private backgroundFlush: Promise<void> | null = null
  /** The last read bound translated to a position (the HW, typically); positions only change on truncation. */
  private boundCache: { offset: bigint; seg: LogSegment; position: number } | null = null
  private readonly incoming = new IncomingBatches()
  private headerScratch = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD * 16)

  private constructor(options: OpenLogOptions, loaded: Awaited<ReturnType<typeof loadLog>>) {
    this.dir = options.dir
    this.config = { ...options.config }
    this.flushMessages = BigInt(Math.max(1, Math.floor(options.config.flushMessages)))
    this.settings = { indexIntervalBytes: options.config.indexIntervalBytes, segmentIndexBytes: options.config.segmentIndexBytes }
    this.segs = loaded.segments
    for (const s of this.segs) this.byFile.set(s.file, s)
    this.startOffset = loaded.logStartOffset
    this.endOffset = loaded.logEndOffset
    this.hw = loaded.logEndOffset
    this.recovery = loaded.recoveryPoint
    this.epochs = loaded.epochCache
    this.report = loaded.report
  }

  /** Opens (and if needed recovers) the log in `options.dir`, creating the directory if missing. */
  static async open(options: OpenLogOptions): Promise<JsLog> {
    checkConfig(options.config)
    if (options.recoveryPoint < 0n || options.logStartOffset < 0n) {
      throw new StorageError(
        'INVALID_ARGUMENT',
        `recovery point ${options.recoveryPoint} and log start offset ${options.logStartOffset} must not be negative`,
      )
    }
    return new JsLog(options, await loadLog(options))
  }

  // ---- offsets ----

  logStartOffset(): bigint {
    return this.startOffset
  }

  logEndOffset(): bigint {
    return this.endOffset
  }

  highWatermark(): bigint {
    return this.hw
  }

  /** Equals the high watermark until transactions exist: the one place for the isolation rule. */
  lastStableOffset(): bigint {
    return this.hw
  }

  recoveryPoint(): bigint {
    return this.recovery
  }

  updateHighWatermark(hw: bigint): bigint {
    this.checkOpen()
    this.hw = hw < this.startOffset ? this.startOffset : hw > this.endOffset ? this.endOffset : hw
    return this.hw
  }

  // ---- appends ----

  appendAsLeader(batches: Buffer, leaderEpoch: number, nowMs: number): LogAppendInfo {
    this.checkOpen()
    if (!Number.isInteger(leaderEpoch) || leaderEpoch < -1 || leaderEpoch > 0x7fffffff) {
      throw new StorageError('INVALID_ARGUMENT', `invalid leader epoch ${leaderEpoch}`)
    }
    const inc = this.incoming.checkLeader(batches, this.config.maxMessageBytes)
    if (inc.count === 0) return this.emptyAppendInfo()
    // Everything validated: assign offsets, stamp the epoch (both outside the CRC), and with
    // LogAppendTime set the timestamp type and maxTimestamp and recompute the CRC. The headers
    // are put back afterwards: the caller's buffer is left as it was (as in the Rust engine).
    const saved = this.saveHeaders(batches, inc)
    try {
      const logAppendTime = this.config.messageTimestampType === 'LogAppendTime'
      const now = BigInt(nowMs)
      let next = this.endOffset
      for (let i = 0; i < inc.count; i++) {
        const at = inc.starts[i]
        batches.writeBigInt64BE(next, at)
        batches.writeInt32BE(leaderEpoch, at + PARTITION_LEADER_EPOCH_OFFSET)
        if (logAppendTime) {
          batches.writeInt16BE(batches.readInt16BE(at + ATTRIBUTES_OFFSET) | TIMESTAMP_TYPE_MASK, at + ATTRIBUTES_OFFSET)
          batches.writeBigInt64BE(now, at + MAX_TIMESTAMP_OFFSET)
          updateCrc(batches, at)
        }
        next += BigInt(inc.lastDeltas[i]) + 1n
      }
      return this.appendValidated(batches, inc, nowMs, logAppendTime ? now : -1n)
    } finally {
      this.restoreHeaders(batches, inc, saved)
    }
  }

  /** Copies the header of each incoming batch aside. */
  private saveHeaders(buf: Buffer, inc: IncomingBatches): Buffer {
    const need = inc.count * RECORD_BATCH_OVERHEAD
    if (this.headerScratch.length < need) this.headerScratch = Buffer.allocUnsafe(Math.max(need, 2 * this.headerScratch.length))
    for (let i = 0; i < inc.count; i++) buf.copy(this.headerScratch, i * RECORD_BATCH_OVERHEAD, inc.starts[i], inc.starts[i] + RECORD_BATCH_OVERHEAD)
    return this.headerScratch
  }

  private restoreHeaders(buf: Buffer, inc: IncomingBatches, saved: Buffer): void {
    for (let i = 0; i < inc.count; i++) saved.copy(buf, inc.starts[i], i * RECORD_BATCH_OVERHEAD, (i + 1) * RECORD_BATCH_OVERHEAD)
  }

  appendAsFollower(batches: Buffer): LogAppendInfo {
    this.checkOpen()
    const inc = this.incoming.checkFollower(batches, this.endOffset)
    if (inc.count === 0) return this.emptyAppendInfo()
    return this.appendValidated(batches, inc, Date.now(), -1n)
  }

  /** Writes checked batches (rolling per batch as needed) and records new leader epochs. */
  private appendValidated(buf: Buffer, inc: IncomingBatches, nowMs: number, logAppendTime: bigint): LogAppendInfo {
    const firstOffset = this.endOffset
    let maxTimestamp = -1n
    let offsetOfMaxTimestamp = -1n
    let recordCount = 0
    let validBytes = 0
    let epochsChanged = false
    for (let i = 0; i < inc.count; i++) {
      const at = inc.starts[i]
      const size = inc.sizes[i]
      const baseOffset = this.endOffset
      const lastOffset = baseOffset + BigInt(inc.lastDeltas[i])
      let seg = this.active()
      const lastRel = Number(lastOffset - seg.baseOffset)
      if (
        seg.size > 0 &&
        (seg.size + size > this.config.segmentBytes ||
          nowMs - seg.createdMs > this.config.segmentMs ||
          seg.isFull() ||
          lastRel > MAX_RELATIVE_OFFSET)
      ) {
        seg = this.rollAt(baseOffset, nowMs)
      }
      const ts = buf.readBigInt64BE(at + MAX_TIMESTAMP_OFFSET)
      seg.append(buf, at, size, Number(lastOffset - seg.baseOffset), ts, nowMs)
      this.endOffset = lastOffset + 1n
      if (ts > maxTimestamp) {
        maxTimestamp = ts
        offsetOfMaxTimestamp = lastOffset
      }
      const epoch = buf.readInt32BE(at + PARTITION_LEADER_EPOCH_OFFSET)
      if (epoch >= 0) {
        const latest = this.epochs.latestEpoch()
        if ((latest === null || epoch > latest) && this.epochs.assignIfNewer(epoch, baseOffset)) epochsChanged = true
      }
      recordCount += inc.records[i]
      validBytes += size
    }
    if (epochsChanged) this.epochs.write()
    this.maybeFlushInBackground()
    return {
      firstOffset,
      lastOffset: this.endOffset - 1n,
      maxTimestamp,
      offsetOfMaxTimestamp,
      logAppendTime,
      logStartOffset: this.startOffset,
      recordCount,
      batchCount: inc.count,
      validBytes,
    }
  }

  private emptyAppendInfo(): LogAppendInfo {
    return {
      firstOffset: -1n,
      lastOffset: -1n,
      maxTimestamp: -1n,
      offsetOfMaxTimestamp: -1n,
      logAppendTime: -1n,
      logStartOffset: this.startOffset,
      recordCount: 0,
      batchCount: 0,
      validBytes: 0,
    }
  }

  /** flush.messages: once LEO - recovery point reaches it, fsync off the JS thread. */
  private maybeFlushInBackground(): void {
    if (this.backgroundFlush !== null) return
    if (this.endOffset - this.recovery < this.flushMessages) return
    this.backgroundFlush = this.flush()
      .catch(() => {
        // the segments stay dirty: the next flush() retries and reports the error
      })
      .finally(() => {
        this.backgroundFlush = null
      })
  }

  // ---- segments ----

  private active(): LogSegment {
    return this.segs[this.segs.length - 1]
  }

  /** Kafka's `roll`: the active segment becomes inactive, a new one starts at `baseOffset`. */
  private rollAt(baseOffset: bigint, nowMs: number): LogSegment {
    this.active().onBecomeInactive()
    const seg = LogSegment.create(this.dir, baseOffset, this.settings, nowMs)
    this.newSegments = true
    this.segs.push(seg)
    this.byFile.set(seg.file, seg)
    return seg
  }

  roll(): void {
    this.checkOpen()
    if (this.active().size === 0) return
    this.rollAt(this.endOffset, Date.now())
  }

  segments(): SegmentInfo[] {
    return this.segs.map((s) => ({ baseOffset: s.baseOffset, file: s.file, size: s.size }))
  }

  // ---- reads ----

  read(offset: bigint, maxBytes: number, isolation: FetchIsolation, minOneMessage: boolean): FetchDataInfo {
    this.checkOpen()
    if (!Number.isInteger(maxBytes) || maxBytes < 0) throw new StorageError('INVALID_ARGUMENT', `invalid maxBytes ${maxBytes}`)
    if (offset < this.startOffset || offset > this.endOffset) {
      throw new StorageError(
        'OFFSET_OUT_OF_RANGE',
        `offset ${offset} is out of range [${this.startOffset}, ${this.endOffset}] of ${this.dir}`,
      )
    }
    const bound = this.boundFor(isolation)
    if (offset >= bound) {
      const meta = offset === bound ? this.boundPosition(bound) : this.positionOf(offset)
      return emptyRead(offset, meta.seg, meta.position)
    }
    const limit = this.boundPosition(bound)
    for (let i = floorIndex(this.segs, offset); i < this.segs.length; i++) {
      const seg = this.segs[i]
      const found = seg.translateOffset(seg.relativeOffset(offset))
      if (found === null) continue
      if (seg.baseOffset > limit.seg.baseOffset) return emptyRead(offset, seg, found.position)
      const maxPosition = seg === limit.seg ? limit.position : seg.size
      const adjustedMaxSize = minOneMessage ? Math.max(maxBytes, found.size) : maxBytes
      if (adjustedMaxSize === 0) return emptyRead(offset, seg, found.position)
      const size = Math.max(0, Math.min(maxPosition - found.position, adjustedMaxSize))
      return {
        fetchOffsetMetadata: { messageOffset: offset, segmentBaseOffset: seg.baseOffset, relativePositionInSegment: found.position },
        records: { file: seg.file, position: found.position, size },
        firstEntryIncomplete: adjustedMaxSize < found.size,
      }
    }
    const last = this.active()
    return emptyRead(offset, last, last.size)
  }

  private boundFor(isolation: FetchIsolation): bigint {
    switch (isolation) {
      case 'LOG_END':
        return this.endOffset
      case 'HIGH_WATERMARK':
        return this.hw
      case 'TXN_COMMITTED':
        return this.lastStableOffset()
      default:
        throw new StorageError('INVALID_ARGUMENT', `unknown isolation ${String(isolation)}`)
    }
  }

  /** Segment and position of the batch holding `offset`, else the end of its floor segment. */
  private positionOf(offset: bigint): { seg: LogSegment; position: number } {
    const seg = this.segs[floorIndex(this.segs, offset)]
    const found = offset < this.endOffset ? seg.translateOffset(seg.relativeOffset(offset)) : null
    return { seg, position: found === null ? seg.size : found.position }
  }

  /** `positionOf` for a read's upper bound, cached (the HW is asked for by every consumer read). */
  private boundPosition(bound: bigint): { seg: LogSegment; position: number } {
    if (bound === this.endOffset) {
      const seg = this.active()
      return { seg, position: seg.size }
    }
    const cached = this.boundCache
    if (cached !== null && cached.offset === bound) return cached
    const p = this.positionOf(bound)
    this.boundCache = { offset: bound, seg: p.seg, position: p.position }
    return this.boundCache
  }

  readSlice(slice: FileSlice): Buffer {
    this.checkOpen()
    if (slice.size === 0) return EMPTY
    const seg = this.byFile.get(slice.file)
    if (seg !== undefined && seg.isOpen) return seg.readBytes(slice.position, slice.size)
    // A segment deleted since the read: its file may still be there.
    return io('read', slice.file, () => {
      const fd = fs.openSync(slice.file, 'r')
      try {
        const out = Buffer.allocUnsafe(slice.size)
        const n = readFully(fd, out, 0, slice.size, slice.position)
        return n === slice.size ? out : out.subarray(0, n)
      } finally {
        fs.closeSync(fd)
      }
    })
  }

  readBatches(offset: bigint, maxBytes: number, isolation: FetchIsolation): RecordBatch[] {
    const out: RecordBatch[] = []
    const bound = this.boundFor(isolation)
    let next = offset
    let budget = maxBytes
    while (next < bound) {
      const info = this.read(next, Math.max(budget, 0), isolation, out.length === 0)
      if (info.records.size === 0) break
      const bytes = this.readSlice(info.records)
      let added = 0
      for (const { position, size } of batchesOf(bytes)) {
        if (out.length > 0 && size > budget) return out
        const batch = decodeBatch(bytes, position)
        out.push(batch)
        budget -= size
        added++
        next = batch.lastOffset + 1n
      }
      if (added === 0 || budget <= 0) break
    }
    return out
  }

  // ---- offsets by timestamp ----

  fetchOffsetByTimestamp(timestamp: bigint): TimestampAndOffset | null {
    this.checkOpen()
    if (timestamp === EARLIEST_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) {
      return { timestamp: -1n, offset: this.startOffset, leaderEpoch: this.epochs.epochForOffset(this.startOffset) ?? -1 }
    }
    if (timestamp === LATEST_TIMESTAMP) {
      return { timestamp: -1n, offset: this.endOffset, leaderEpoch: this.epochs.latestEpoch() ?? -1 }
    }
    if (timestamp === MAX_TIMESTAMP) return findOffsetOfMaxTimestamp(this.segs)
    if (timestamp < 0n) return null
    return findOffsetByTimestamp(this.segs, timestamp, this.startOffset)
  }

  // ---- leader epochs ----

  latestEpoch(): number | null {
    return this.epochs.latestEpoch()
  }

  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } | null {
    return this.epochs.endOffsetFor(epoch, this.endOffset)
  }

  epochEntries(): EpochEntry[] {
    return this.epochs.entries()
  }

  // ---- start offset, truncation, retention ----

  maybeIncrementLogStartOffset(offset: bigint): void {
    this.checkOpen()
    if (offset > this.hw) {
      throw new StorageError(
        'OFFSET_OUT_OF_RANGE',
        `cannot raise the log start offset to ${offset}: above the high watermark ${this.hw}`,
      )
    }
    if (offset > this.startOffset) this.updateLogStartOffset(offset)
  }

  private updateLogStartOffset(offset: bigint): void {
    this.startOffset = offset
    if (this.hw < offset) this.hw = offset
    if (this.recovery < offset) this.recovery = offset
    if (this.epochs.truncateFromStart(offset)) this.epochs.write()
  }

  async truncateTo(offset: bigint): Promise<void> {
    this.checkOpen()
    return this.exclusive(async () => {
      if (offset < 0n) throw new StorageError('INVALID_ARGUMENT', `cannot truncate to a negative offset ${offset}`)
      if (offset >= this.endOffset) return
      if (offset < this.segs[0].baseOffset) {
        await this.doTruncateFullyAndStartAt(offset)
        return
      }
      const seg = this.segs[floorIndex(this.segs, offset)]
      // Kafka truncates to the batch holding the offset: the LEO becomes that batch's base.
      const found = seg.translateOffset(seg.relativeOffset(offset))
      const end = found === null ? offset : seg.baseOffset + BigInt(found.baseRel)
      this.truncations++
      const doomed = this.segs.filter((s) => s.baseOffset > offset)
      this.segs = this.segs.filter((s) => s.baseOffset <= offset)
      const files = this.detach(doomed)
      seg.truncateTo(seg.relativeOffset(offset), Date.now())
      this.endOffset = end
      if (this.recovery > end) this.recovery = end
      if (this.startOffset > end) this.startOffset = end
      if (this.hw > end) this.hw = end
      this.boundCache = null
      if (this.epochs.truncateFromEnd(end)) this.epochs.write()
      await removeFiles(files)
    })
  }

  async truncateFullyAndStartAt(offset: bigint): Promise<void> {
    this.checkOpen()
    return this.exclusive(async () => {
      if (offset < 0n) throw new StorageError('INVALID_ARGUMENT', `cannot start at a negative offset ${offset}`)
      await this.doTruncateFullyAndStartAt(offset)
    })
  }

  private async doTruncateFullyAndStartAt(offset: bigint): Promise<void> {
    this.truncations++
    const files = this.detach(this.segs)
    const seg = LogSegment.create(this.dir, offset, this.settings, Date.now())
    this.newSegments = true
    this.segs = [seg]
    this.byFile.set(seg.file, seg)
    this.startOffset = offset
    this.endOffset = offset
    this.hw = offset
    this.recovery = offset
    this.boundCache = null
    if (this.epochs.entries().length > 0) {
      this.epochs.clear()
      this.epochs.write()
    }
    await removeFiles(files)
  }

  async deleteOldSegments(nowMs: number): Promise<number> {
    this.checkOpen()
    return this.exclusive(async () => {
      const { retentionMs, retentionBytes } = this.config
      let deleted = await this.deleteWhile((_seg, next) => next.baseOffset <= this.startOffset)
      if (retentionBytes >= 0) {
        let diff = this.segs.reduce((n, s) => n + s.size, 0) - retentionBytes
        if (diff >= 0) {
          deleted += await this.deleteWhile((seg) => {
            if (diff - seg.size < 0) return false
            diff -= seg.size
            return true
          })
        }
      }
      if (retentionMs >= 0) {
        deleted += await this.deleteWhile((seg) => nowMs - seg.largestTimestamp() > retentionMs)
      }
      return deleted
    })
  }

  /**
   * Kafka's `deleteOldSegments(predicate)`: the oldest segments while the predicate holds, never
   * the active one, and only those wholly below the high watermark.
   */
  private async deleteWhile(predicate: (seg: LogSegment, next: LogSegment) => boolean): Promise<number> {
    let n = 0
    while (n < this.segs.length - 1) {
      const next = this.segs[n + 1]
      if (this.hw < next.baseOffset || !predicate(this.segs[n], next)) break
      n++
    }
    if (n === 0) return 0
    const doomed = this.segs.slice(0, n)
    this.segs = this.segs.slice(n)
    const files = this.detach(doomed)
    this.boundCache = null
    const newStart = this.segs[0].baseOffset
    if (newStart > this.startOffset) this.updateLogStartOffset(newStart)
    await removeFiles(files)
    return n
  }

  /** Takes segments out of service (descriptors closed, files renamed); returns the files to remove. */
  private detach(doomed: LogSegment[]): string[] {
    const files: string[] = []
    for (const s of doomed) {
      this.byFile.delete(s.file)
      files.push(...s.detachForDelete())
    }
    return files
  }

  // ---- flush, close ----

  async flush(): Promise<void> {
    this.checkOpen()
    return this.exclusive(() => this.doFlush())
  }

  /**
   * fsyncs every segment with unflushed data (and the directory when segments were created
   * since the last flush), then moves the recovery point to the LEO it had when the flush
   * began, unless the log was truncated meanwhile.
   */
  private async doFlush(): Promise<void> {
    const target = this.endOffset
    const truncations = this.truncations
    const dirty = this.segs.filter((s) => s.dirty)
    const newSegments = this.newSegments
    for (const s of dirty) s.dirty = false
    this.newSegments = false
    try {
      for (const s of dirty) {
        for (const f of s.files()) await fsyncIfPresent(f)
      }
      if (newSegments) await fsyncIfPresent(this.dir)
    } catch (err) {
      for (const s of dirty) s.dirty = true
      this.newSegments ||= newSegments
      throw err
    }
    if (truncations === this.truncations && target > this.recovery) this.recovery = target < this.endOffset ? target : this.endOffset
  }

  /** Trims the active segment's indexes (with their last time index entry), flushes, closes. */
  close(): Promise<void> {
    if (this.closing !== null) return this.closing
    // Refuse new calls at once; what was queued before still runs.
    this.closed = true
    this.closing = this.exclusive(async () => {
      let first: unknown = null
      try {
        const active = this.active()
        active.onBecomeInactive()
        active.dirty = true
        await this.doFlush()
      } catch (err) {
        first = err
      }
      for (const s of this.segs) {
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

  // ---- helpers ----

  private checkOpen(): void {
    if (this.closed) throw new StorageError('LOG_CLOSED', `log ${this.dir} is closed`)
  }

  /** Runs async operations one at a time, in call order. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn)
    this.queue = run.catch(() => undefined)
    return run
  }
}

function emptyRead(offset: bigint, seg: LogSegment, position: number): FetchDataInfo {
  const fetchOffsetMetadata: LogOffsetMetadata = {
    messageOffset: offset,
    segmentBaseOffset: seg.baseOffset,
    relativePositionInSegment: position,
  }
  return { fetchOffsetMetadata, records: { file: seg.file, position, size: 0 }, firstEntryIncomplete: false }
}

/** fsync by path; a file deleted meanwhile has nothing left to make durable. */
async function fsyncIfPresent(path: string): Promise<void> {
  await ioAsync('fsync', path, () =>
    fsyncPath(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err
    }),
  )
}

async function removeFiles(files: string[]): Promise<void> {
  for (const f of files) await ioAsync('delete', f, () => fs.promises.rm(f, { force: true }))
}

function checkConfig(config: LogConfig): void {
  const positive: Array<keyof LogConfig> = ['segmentBytes', 'segmentIndexBytes', 'maxMessageBytes']
  for (const k of positive) {
    const v = config[k]
    if (typeof v !== 'number' || !(v > 0)) throw new StorageError('INVALID_ARGUMENT', `${k} must be positive, got ${String(v)}`)
  }
  if (config.indexIntervalBytes < 0) throw new StorageError('INVALID_ARGUMENT', `indexIntervalBytes must be >= 0`)
}
