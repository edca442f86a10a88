/**
 * One segment of a partition log, Kafka's `LogSegment`: `<base>.log` (record batches back to
 * back) with its offset index and time index.
 *
 * Descriptors (ferrolog issue #11, as the native engine's segment/log_file.rs): only the active
 * segment keeps its files open (`.log` read-write, both indexes for appends). A sealed segment's
 * indexes live in memory with no descriptor, and its `.log` is opened by the first read that
 * wants it, under the process-wide bound of open-segments.ts, which may close it again (its next
 * read opens it again). The loader opens every segment sealed and closed; the last one becomes
 * active. Reads are positional. Fetch responses' `FileRecords` are slices of one shared handle
 * per segment (`sharedRecords`, a dup of the segment's descriptor, made on the first one): they
 * share its file as the native engine's share its `Arc<File>`, so a connection with hundreds of
 * responses queued holds one descriptor, and the file stays readable through them after the
 * segment is closed (by the bound too) or deleted, until the last is released.
 * Relative offsets (offset - base) and positions fit u32 and are plain numbers here; absolute
 * offsets are bigint only at the edges.
 *
 * Header scans look only at the 61-byte batch headers, read through one module-wide buffer
 * (scans are synchronous, so they never interleave): a SCAN_CHUNK read covers the headers of
 * many small batches at once; after a large batch only the next header is read.
 */
import * as fs from 'node:fs'
import { dirname } from 'node:path'
import { LAST_OFFSET_DELTA_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_V2, MAX_TIMESTAMP_OFFSET, RECORD_BATCH_OVERHEAD } from '../../protocol/batch-header.js'
import { StorageError } from '../errors.js'
import { FILE_MODE, closeQuietly, io, ioError, logFile, offsetIndexFile, readFully, timeIndexFile, txnIndexFile, writeFully } from './files.js'
import type { FileRecords } from '../file-records.js'
import { OffsetIndex } from './offset-index.js'
import { forget, touch, type EvictableSegment } from './open-segments.js'
import { TimeIndex } from './time-index.js'
import { TransactionIndex } from './transaction-index.js'

const SCAN_CHUNK = 16 * 1024
/** Kafka's suffix for files of a segment being deleted; removed again by the loader if left over. */
export const DELETED_FILE_SUFFIX = '.deleted'
const scanBuf = Buffer.allocUnsafe(SCAN_CHUNK)
const TWO_POW_32 = 4294967296
/**
 * The largest relative offset a segment may hold: Kafka's `canConvertToRelativeOffset` keeps
 * offset - baseOffset within [0, Integer.MAX_VALUE] (an index entry's int32), as the Rust engine
 * does.
 */
export const MAX_RELATIVE_OFFSET = 0x7fffffff

export interface SegmentSettings {
  indexIntervalBytes: number
  segmentIndexBytes: number
}

/** Kafka's `LogOffsetPosition`: the batch found by `translateOffset`. */
export interface BatchPosition {
  /** Where the batch starts in the segment. */
  position: number
  /** Its size on disk. */
  size: number
  /** Its baseOffset - segment base. */
  baseRel: number
  /** Its lastOffset - segment base. */
  lastRel: number
}

/** Visits one batch header during a scan; `buf[at..at+61)` is the header. Return false to stop. */
export type HeaderVisitor = (buf: Buffer, at: number, position: number, size: number) => boolean

/**
 * Steps through the batch headers of a `.log` from a position, reading them through `scanBuf`.
 * Small batches: one read covers many headers. After a batch bigger than the chunk, only the
 * next header is read rather than a chunk of records.
 */
class HeaderCursor {
  readonly buf = scanBuf
  /** The current header is `buf[at..at+61)`. */
  at = 0
  /** Where the current batch starts in the file; once `next` returns false, where the scan stopped. */
  position: number
  /** The current batch's size (0 before the first `next`). */
  size = 0
  private chunkStart = 0
  private chunkLen = 0

  constructor(
    private readonly fd: number,
    private readonly file: string,
    position: number,
    private readonly end: number,
  ) {
    this.position = position
  }

  /**
   * Moves to the next whole batch header; false at the end of the data, at a partial batch, or
   * at a damaged header (a batchLength too small for a header, a magic other than 2), which
   * `damage` then describes. As the Rust engine's walk (file_batches.rs), the length is checked
   * before whether the batch runs past the end, the magic after.
   */
  next(): boolean {
    const prev = this.size
    const pos = this.position + prev
    this.position = pos
    this.size = 0
    if (pos + LOG_OVERHEAD > this.end) return false
    const want = Math.min(RECORD_BATCH_OVERHEAD, this.end - pos)
    let at = pos - this.chunkStart
    if (at < 0 || at + want > this.chunkLen) {
      const chunk = Math.min(prev > SCAN_CHUNK ? RECORD_BATCH_OVERHEAD : SCAN_CHUNK, this.end - pos)
      const { fd, buf } = this
      this.chunkLen = io('read segment', this.file, () => readFully(fd, buf, 0, chunk, pos))
      this.chunkStart = pos
      at = 0
      if (this.chunkLen < want) return false
    }
    const length = this.buf.readInt32BE(at + LENGTH_OFFSET)
    const size = LOG_OVERHEAD + length
    if (size < RECORD_BATCH_OVERHEAD) {
      this.damage = new StorageError('CORRUPT_RECORD', `corrupt record batch: ${this.file} at position ${pos}: invalid batchLength ${length}`)
      return false
    }
    if (pos + size > this.end) return false
    const magic = this.buf.readInt8(at + MAGIC_OFFSET)
    if (magic !== MAGIC_V2) {
      this.damage = new StorageError('UNSUPPORTED_MAGIC', `unsupported record batch magic ${magic} (only 2)`)
      return false
    }
    this.at = at
    this.size = size
    return true
  }

  /** What stopped the walk at a damaged header, or null. */
  damage: StorageError | null = null
}

/** A segment's state before an append (`LogSegment.mark`). */
export interface SegmentMark {
  size: number
  offsetEntries: number
  timeEntries: number
  bytesSinceLastIndexEntry: number
  maxTimestampSoFar: bigint
  offsetOfMaxTimestampSoFar: number
  createdMs: number
  /** The segment was the active one (its indexes open for appends). */
  indexesOpen: boolean
  txnEntries: number
}

export class LogSegment implements EvictableSegment {
  readonly baseOffset: bigint
  /** The base offset's high and low 32 bits, to turn header offsets into relative ones without bigint. */
  readonly baseHi: number
  readonly baseLo: number
  readonly file: string
  readonly settings: SegmentSettings
  /** The `.log` descriptor: the active segment's, or a sealed one's while the bound keeps it. */
  private fd: number | null
  /** The active segment: its descriptor stays open and is not under the bound. */
  private pinned: boolean
  /** Closed for good (the log closed, the segment deleted): reads fail. */
  private closed = false
  /** Asynchronous readers holding the descriptor (`borrowFd`): the bound leaves it open. */
  private borrows = 0
  size: number
  offsetIndex: OffsetIndex
  timeIndex: TimeIndex
  /** The aborted transactions whose marker is in this segment (`<base>.txnindex`, made by the first). */
  txnIndex: TransactionIndex
  bytesSinceLastIndexEntry = 0
  /** The largest batch maxTimestamp appended, -1 if none. */
  maxTimestampSoFar = -1n
  /** Relative lastOffset of the batch that raised maxTimestampSoFar, -1 if none. */
  offsetOfMaxTimestampSoFar = -1
  /** Time of the first append into the (then empty) segment, for segment.ms. */
  createdMs: number
  /** Data appended since the last flush. */
  dirty = false
  /**
   * The handle every FileRecords of this segment is a slice of (log-read.ts `fileRecords`), or
   * null before the first; dropped when the segment closes, the slices keep the file open.
   */
  sharedRecords: FileRecords | null = null

  constructor(
    baseOffset: bigint,
    file: string,
    /** The open `.log` of a new active segment, or null for a sealed one opened by its first read. */
    fd: number | null,
    size: number,
    offsetIndex: OffsetIndex,
    timeIndex: TimeIndex,
    settings: SegmentSettings,
    createdMs: number,
  ) {
    this.baseOffset = baseOffset
    this.baseHi = Number(BigInt.asIntN(32, baseOffset >> 32n))
    this.baseLo = Number(BigInt.asUintN(32, baseOffset))
    this.file = file
    this.fd = fd
    this.pinned = fd !== null
    this.size = size
    this.offsetIndex = offsetIndex
    this.timeIndex = timeIndex
    this.txnIndex = new TransactionIndex(txnIndexFile(dirname(file), baseOffset))
    this.settings = settings
    this.createdMs = createdMs
    if (timeIndex.entries > 0) {
      this.maxTimestampSoFar = timeIndex.lastTimestamp()
      this.offsetOfMaxTimestampSoFar = timeIndex.lastRelativeOffset()
    }
  }

  /**
   * A new empty active segment: `.log` created (emptied if present), indexes preallocated. If it
   * cannot be made (a full disk), the files it created are removed again.
   */
  static create(dir: string, baseOffset: bigint, settings: SegmentSettings, nowMs: number): LogSegment {
    const file = logFile(dir, baseOffset)
    const fd = io('create segment', file, () => fs.openSync(file, 'w+', FILE_MODE))
    let oi: OffsetIndex | null = null
    try {
      oi = OffsetIndex.create(offsetIndexFile(dir, baseOffset), settings.segmentIndexBytes)
      const ti = TimeIndex.create(timeIndexFile(dir, baseOffset), settings.segmentIndexBytes)
      return new LogSegment(baseOffset, file, fd, 0, oi, ti, settings, nowMs)
    } catch (err) {
      closeQuietly(fd)
      oi?.closeQuietly()
      for (const f of [file, offsetIndexFile(dir, baseOffset), timeIndexFile(dir, baseOffset)]) fs.rmSync(f, { force: true })
      throw err
    }
  }

  /** Whether the segment is still part of an open log (its `.log` may be closed by the bound). */
  get isOpen(): boolean {
    return !this.closed
  }

  /** Whether its `.log` descriptor is open now. */
  get logFdOpen(): boolean {
    return this.fd !== null
  }

  get borrowed(): boolean {
    return this.borrows > 0
  }

  /**
   * The `.log` descriptor (throws once closed), opened now if the bound closed it or no read
   * opened it yet; valid until the caller's synchronous work ends (`borrowFd` across awaits).
   */
  logFd(): number {
    if (this.closed) throw ioError('read segment', this.file, new Error('segment is closed'))
    if (this.fd === null) this.fd = io('open segment', this.file, () => fs.openSync(this.file, 'r+'))
    if (!this.pinned) touch(this)
    return this.fd
  }

  /** `logFd` for an asynchronous reader: the bound does not close it until `releaseFd`. */
  borrowFd(): number {
    const fd = this.logFd()
    this.borrows++
    return fd
  }

  releaseFd(): void {
    this.borrows--
    if (this.borrows === 0 && !this.pinned && this.fd !== null) touch(this)
  }

  /** For the bound: closes the descriptor and the shared handle (their slices keep theirs). */
  closeLogFd(): void {
    this.dropSharedRecords()
    closeQuietly(this.fd)
    this.fd = null
  }

  /** offset - base as a number (exact for any offset within 2^53 of the base). */
  relativeOffset(offset: bigint): number {
    return Number(offset - this.baseOffset)
  }

  /** The relative baseOffset of the batch header at `buf[at]`, without bigint. */
  relativeBaseAt(buf: Buffer, at: number): number {
    return (buf.readInt32BE(at) - this.baseHi) * TWO_POW_32 + (buf.readUInt32BE(at + 4) - this.baseLo)
  }

  /**
   * Appends one validated batch `buf[at, at+size)` whose relative last offset is `lastRel` and
   * whose maxTimestamp is `maxTimestamp`, then maintains the indexes as Kafka's `append` does:
   * check the bytes appended before this batch against index.interval.bytes, then add.
   */
  append(buf: Buffer, at: number, size: number, lastRel: number, maxTimestamp: bigint, nowMs: number): void {
    const fd = this.logFd()
    const position = this.size
    try {
      writeFully(fd, buf, at, at + size, position)
    } catch (err) {
      // Leave no partial batch behind.
      try {
        fs.ftruncateSync(fd, position)
      } catch {
        // the write error below is the one to report
      }
      throw ioError('append to segment', this.file, err)
    }
    if (position === 0) this.createdMs = nowMs
    this.size = position + size
    this.dirty = true
    if (maxTimestamp > this.maxTimestampSoFar) {
      this.maxTimestampSoFar = maxTimestamp
      this.offsetOfMaxTimestampSoFar = lastRel
    }
    if (this.bytesSinceLastIndexEntry > this.settings.indexIntervalBytes) {
      this.offsetIndex.append(lastRel, position)
      this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar)
      this.bytesSinceLastIndexEntry = 0
    }
    this.bytesSinceLastIndexEntry += size
  }

  /** What an append may change, to undo it with `rollback`. */
  mark(): SegmentMark {
    return {
      size: this.size,
      offsetEntries: this.offsetIndex.entries,
      timeEntries: this.timeIndex.entries,
      bytesSinceLastIndexEntry: this.bytesSinceLastIndexEntry,
      maxTimestampSoFar: this.maxTimestampSoFar,
      offsetOfMaxTimestampSoFar: this.offsetOfMaxTimestampSoFar,
      createdMs: this.createdMs,
      indexesOpen: this.offsetIndex.isOpen,
      txnEntries: this.txnIndex.count,
    }
  }

  /**
   * Undoes the appends (and a roll's `onBecomeInactive`) since `mark`: the `.log` cut back to
   * its size then, the index entries added since dropped, an active segment's indexes open and
   * preallocated again. Needs no free space.
   */
  rollback(mark: SegmentMark): void {
    const fd = this.logFd()
    io('truncate segment', this.file, () => fs.ftruncateSync(fd, mark.size))
    this.size = mark.size
    // The cut must reach the disk with the next flush like any other change of the file.
    this.dirty = true
    this.offsetIndex.truncateToEntries(mark.offsetEntries)
    this.timeIndex.truncateToEntries(mark.timeEntries)
    this.txnIndex.truncateToEntries(mark.txnEntries)
    if (mark.indexesOpen) this.makeActive()
    this.bytesSinceLastIndexEntry = mark.bytesSinceLastIndexEntry
    this.maxTimestampSoFar = mark.maxTimestampSoFar
    this.offsetOfMaxTimestampSoFar = mark.offsetOfMaxTimestampSoFar
    this.createdMs = mark.createdMs
  }

  /**
   * Kafka's `translateOffset`: the first batch whose lastOffset >= the target, searching from
   * the offset index's floor entry (or `startingPosition` if later). Null if none in this segment.
   */
  translateOffset(targetRel: number, startingPosition = 0): BatchPosition | null {
    const from = Math.max(this.offsetIndex.lookupPosition(targetRel), startingPosition)
    const c = this.headers(from)
    while (c.next()) {
      const baseRel = this.relativeBaseAt(c.buf, c.at)
      const lastRel = baseRel + c.buf.readInt32BE(c.at + LAST_OFFSET_DELTA_OFFSET)
      if (lastRel >= targetRel) return { position: c.position, size: c.size, baseRel, lastRel }
    }
    // A damaged header is an error (CORRUPT_MESSAGE to a fetch), never a silent skip to the
    // next segment past the offsets behind it.
    if (c.damage !== null) throw c.damage
    return null
  }

  /**
   * Calls `visit` for each whole batch header from `position` on, until it returns false or the
   * data ends (a partial batch ends the scan). Returns where the scan stopped. A damaged header
   * throws (CORRUPT_RECORD, UNSUPPORTED_MAGIC), unless `untilDamage`: then it ends the scan too.
   */
  scanHeaders(position: number, visit: HeaderVisitor, untilDamage = false): number {
    const c = this.headers(position)
    while (c.next()) {
      if (!visit(c.buf, c.at, c.position, c.size)) return c.position
    }
    if (c.damage !== null && !untilDamage) throw c.damage
    return c.position
  }

  /** A cursor over the whole batch headers from `position` to the end of the data. */
  private headers(position: number): HeaderCursor {
    return new HeaderCursor(this.logFd(), this.file, position, this.size)
  }

  /** Reads `size` bytes at `position` (fewer at the end of the file). */
  readBytes(position: number, size: number): Buffer {
    const fd = this.logFd()
    const out = Buffer.allocUnsafe(size)
    const n = io('read segment', this.file, () => readFully(fd, out, 0, size, position))
    return n === size ? out : out.subarray(0, n)
  }

  /** The relative offset after the last batch, or 0 when empty (scans from the last index entry). */
  nextRelativeOffset(): number {
    let next = 0
    const from = this.offsetIndex.entries > 0 ? this.offsetIndex.positionAt(this.offsetIndex.entries - 1) : 0
    this.scanHeaders(
      from,
      (buf, at) => {
        next = this.relativeBaseAt(buf, at) + buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET) + 1
        return true
      },
      true,
    )
    return next
  }

  /** Kafka's `largestTimestamp`: the max batch timestamp, else the file's modification time. */
  largestTimestamp(): number {
    if (this.maxTimestampSoFar >= 0n) return Number(this.maxTimestampSoFar)
    return io('stat segment', this.file, () => fs.fstatSync(this.logFd()).mtimeMs)
  }

  isFull(): boolean {
    return this.offsetIndex.isFull() || this.timeIndex.isFull()
  }

  /**
   * Kafka's `onBecomeInactiveSegment`: a last time index entry for the segment's max timestamp,
   * then both indexes cut to their entries and closed.
   */
  onBecomeInactive(): void {
    if (this.maxTimestampSoFar >= 0n) {
      this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar, true)
    }
    this.offsetIndex.trimAndClose()
    this.timeIndex.trimAndClose()
    // Sealed: the `.log` descriptor is now under the bound on open sealed segments.
    if (this.pinned) {
      this.pinned = false
      if (this.fd !== null && !this.closed) touch(this)
    }
  }

  /**
   * Makes this segment the active one (the loader's last, or after truncation): `.log` open and
   * pinned, indexes writable, preallocated.
   */
  makeActive(): void {
    this.logFd()
    this.pinned = true
    forget(this)
    this.offsetIndex.openForAppend()
    this.timeIndex.openForAppend()
  }

  /**
   * Kafka's `LogSegment.truncateTo`: drops the batch holding targetRel and everything after it,
   * and the index entries for offsets >= targetRel. Returns the bytes cut from the log.
   */
  truncateTo(targetRel: number, nowMs: number): number {
    const mapping = this.translateOffset(targetRel)
    this.offsetIndex.truncateTo(targetRel)
    this.timeIndex.truncateTo(targetRel)
    this.txnIndex.truncateTo(this.baseOffset + BigInt(targetRel))
    this.makeActive()
    let truncated = 0
    if (mapping !== null) {
      truncated = this.size - mapping.position
      const fd = this.logFd()
      io('truncate segment', this.file, () => fs.ftruncateSync(fd, mapping.position))
      this.size = mapping.position
      this.dirty = true
    }
    if (this.size === 0) this.createdMs = nowMs
    this.bytesSinceLastIndexEntry = 0
    if (this.maxTimestampSoFar >= 0n) this.readLargestTimestamp()
    return truncated
  }

  /** Kafka's `readLargestTimestamp`: the time index's last entry or a larger batch after it. */
  private readLargestTimestamp(): void {
    let best = this.timeIndex.lastTimestamp()
    let bestRel = this.timeIndex.entries > 0 ? this.timeIndex.lastRelativeOffset() : -1
    const from = this.offsetIndex.lookupPosition(this.timeIndex.lastRelativeOffset())
    this.scanHeaders(from, (buf, at) => {
      const ts = buf.readBigInt64BE(at + MAX_TIMESTAMP_OFFSET)
      if (ts > best) {
        best = ts
        bestRel = this.relativeBaseAt(buf, at) + buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET)
      }
      return true
    })
    this.maxTimestampSoFar = best
    this.offsetOfMaxTimestampSoFar = best >= 0n ? bestRel : -1
  }

  /** Closes the active segment's files as Kafka's `close`: last time index entry, trim, close. */
  close(): void {
    try {
      this.onBecomeInactive()
    } finally {
      this.closeForGood()
    }
  }

  private closeForGood(): void {
    this.closed = true
    forget(this)
    this.closeLogFd()
  }

  private dropSharedRecords(): void {
    this.sharedRecords?.close()
    this.sharedRecords = null
  }

  /** Closes every descriptor without touching the files (the segment is being deleted). */
  closeForDelete(): void {
    this.offsetIndex.closeQuietly()
    this.timeIndex.closeQuietly()
    this.closeForGood()
  }

  /**
   * Installs indexes rebuilt by recovery (already written to their files) and the max timestamp
   * found while walking; the segment is then as if just opened.
   */
  replaceIndexes(offsetIndex: OffsetIndex, timeIndex: TimeIndex, maxTimestamp: bigint, offsetOfMaxTimestamp: number): void {
    this.offsetIndex.closeQuietly()
    this.timeIndex.closeQuietly()
    this.offsetIndex = offsetIndex
    this.timeIndex = timeIndex
    this.maxTimestampSoFar = maxTimestamp
    this.offsetOfMaxTimestampSoFar = maxTimestamp >= 0n ? offsetOfMaxTimestamp : -1
    this.bytesSinceLastIndexEntry = 0
  }

  /**
   * First step of deleting the segment (Kafka's `.deleted` rename): closes every descriptor and
   * renames the files to `<name>.deleted`, so a new segment may take the name at once. Returns
   * the renamed paths, for the caller to remove off the JS thread. Missing files are skipped.
   */
  detachForDelete(): string[] {
    this.closeForDelete()
    const out: string[] = []
    for (const f of this.files()) {
      const to = f + DELETED_FILE_SUFFIX
      try {
        fs.renameSync(f, to)
        out.push(to)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw ioError('delete segment file', f, err)
      }
    }
    return out
  }

  /** The files of this segment (the `.txnindex` may not exist). */
  files(): string[] {
    return [this.file, this.offsetIndex.file, this.timeIndex.file, this.txnIndex.file]
  }
}
