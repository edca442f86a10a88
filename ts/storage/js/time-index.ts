/**
 * The time index of one segment, Kafka's `TimeIndex`.
 *
 * File `<base>.timeindex`: entries of TIME_INDEX_ENTRY_SIZE bytes, big-endian,
 *
 *   0(8) timestamp i64        (the largest batch maxTimestamp seen up to that offset)
 *   8(4) relativeOffset u32   (lastOffset - base of the batch that carried it)
 *
 * Timestamps strictly increase, offsets never decrease. Preallocated and trimmed like the
 * offset index. One slot is kept free for the entry written when the segment becomes inactive
 * (Kafka's `isFull`: entries >= maxEntries - 1).
 */
import * as fs from 'node:fs'
import { FILE_MODE, closeQuietly, io, ioAsync, writeFully } from './files.js'

export const TIME_INDEX_ENTRY_SIZE = 12
const INITIAL_CAPACITY = 32
const NO_TIMESTAMP = -1n

export class TimeIndex {
  readonly file: string
  readonly maxEntries: number
  private fd: number | null = null
  /** False while an index is rebuilt in memory (recovery): appends do not touch the file. */
  private persist = true
  private ts: BigInt64Array
  private rel: Uint32Array
  private n: number
  private readonly scratch = Buffer.alloc(TIME_INDEX_ENTRY_SIZE)

  private constructor(file: string, maxIndexBytes: number, ts: BigInt64Array, rel: Uint32Array, n: number) {
    this.file = file
    this.maxEntries = Math.floor(maxIndexBytes / TIME_INDEX_ENTRY_SIZE)
    this.ts = ts
    this.rel = rel
    this.n = n
  }

  static create(file: string, maxIndexBytes: number): TimeIndex {
    const idx = new TimeIndex(file, maxIndexBytes, new BigInt64Array(INITIAL_CAPACITY), new Uint32Array(INITIAL_CAPACITY), 0)
    idx.fd = io('create time index', file, () => fs.openSync(file, 'w+', FILE_MODE))
    idx.preallocate()
    return idx
  }

  /**
   * An index read from an existing file's bytes. Trailing all-zero slots are not entries: an
   * entry with timestamp 0 and relative offset 0 after the first ends the list.
   */
  static fromBytes(file: string, maxIndexBytes: number, bytes: Buffer): TimeIndex {
    const slots = Math.floor(bytes.length / TIME_INDEX_ENTRY_SIZE)
    let n = Math.min(slots, 1)
    while (n < slots) {
      const at = n * TIME_INDEX_ENTRY_SIZE
      if (bytes.readBigInt64BE(at) === 0n && bytes.readUInt32BE(at + 8) === 0) break
      n++
    }
    const cap = Math.max(INITIAL_CAPACITY, n)
    const ts = new BigInt64Array(cap)
    const rel = new Uint32Array(cap)
    for (let i = 0; i < n; i++) {
      ts[i] = bytes.readBigInt64BE(i * TIME_INDEX_ENTRY_SIZE)
      rel[i] = bytes.readUInt32BE(i * TIME_INDEX_ENTRY_SIZE + 8)
    }
    return new TimeIndex(file, maxIndexBytes, ts, rel, n)
  }

  /** Kafka's sanity check, and a little more: null when sound, else why not. */
  static sanityCheck(bytes: Buffer): string | null {
    if (bytes.length % TIME_INDEX_ENTRY_SIZE !== 0) {
      return `length ${bytes.length} is not a multiple of ${TIME_INDEX_ENTRY_SIZE}`
    }
    const idx = TimeIndex.fromBytes('', bytes.length, bytes)
    for (let i = 1; i < idx.n; i++) {
      if (idx.ts[i] <= idx.ts[i - 1]) return `timestamps not increasing at entry ${i}`
      if (idx.rel[i] < idx.rel[i - 1]) return `relative offsets decreasing at entry ${i}`
    }
    return null
  }

  get entries(): number {
    return this.n
  }

  /** One slot stays free for the entry added when the segment becomes inactive. */
  isFull(): boolean {
    return this.n >= this.maxEntries - 1
  }

  /** The last entry's timestamp, or -1 when empty. */
  lastTimestamp(): bigint {
    return this.n === 0 ? NO_TIMESTAMP : this.ts[this.n - 1]
  }

  /** The last entry's relative offset, or 0 (the base) when empty. */
  lastRelativeOffset(): number {
    return this.n === 0 ? 0 : this.rel[this.n - 1]
  }

  timestampAt(slot: number): bigint {
    return this.ts[slot]
  }

  relativeOffsetAt(slot: number): number {
    return this.rel[slot]
  }

  /** Slot of the entry with the largest timestamp <= target, or -1 (Kafka returns (-1, base)). */
  slotFor(target: bigint): number {
    const ts = this.ts
    let hi = this.n - 1
    if (hi < 0 || ts[0] > target) return -1
    let lo = 0
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (ts[mid] <= target) lo = mid
      else hi = mid - 1
    }
    return lo
  }

  /**
   * Kafka's `maybeAppend`: adds (timestamp, relOffset) if the timestamp is greater than the last
   * one (-1 when empty). Unless skipFullCheck, nothing is added to a full index.
   */
  maybeAppend(timestamp: bigint, relOffset: number, skipFullCheck = false): void {
    if (!skipFullCheck && this.isFull()) return
    if (timestamp <= this.lastTimestamp()) return
    if (this.n > 0 && relOffset < this.rel[this.n - 1]) return
    if (this.n >= this.maxEntries) return
    if (this.n === this.ts.length) this.grow()
    if (this.persist) {
      const b = this.scratch
      b.writeBigInt64BE(timestamp, 0)
      b.writeUInt32BE(relOffset, 8)
      const fd = this.writableFd()
      io('write time index', this.file, () => writeFully(fd, b, 0, TIME_INDEX_ENTRY_SIZE, this.n * TIME_INDEX_ENTRY_SIZE))
    }
    this.ts[this.n] = timestamp
    this.rel[this.n] = relOffset
    this.n++
  }

  /**
   * Removes the entries for offsets >= targetRel (Kafka's `truncateTo`, searching by offset).
   */
  truncateTo(targetRel: number): void {
    const rel = this.rel
    let slot = -1
    let lo = 0
    let hi = this.n - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      if (rel[mid] <= targetRel) {
        slot = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    const keep = slot < 0 ? 0 : rel[slot] === targetRel ? slot : slot + 1
    this.truncateToEntries(keep)
  }

  truncateToEntries(keep: number): void {
    if (keep >= this.n) return
    this.n = keep
    if (this.fd !== null) {
      const fd = this.fd
      io('truncate time index', this.file, () => {
        fs.ftruncateSync(fd, keep * TIME_INDEX_ENTRY_SIZE)
        fs.ftruncateSync(fd, this.maxEntries * TIME_INDEX_ENTRY_SIZE)
      })
    }
  }

  openForAppend(): void {
    if (this.fd !== null) return
    this.fd = io('open time index', this.file, () => fs.openSync(this.file, fs.existsSync(this.file) ? 'r+' : 'w+', FILE_MODE))
    // The file holds the entries first; cut it there and grow it back, so the rest is zeros.
    const fd = this.fd
    io('resize time index', this.file, () => fs.ftruncateSync(fd, this.n * TIME_INDEX_ENTRY_SIZE))
    this.preallocate()
  }

  writeTrimmed(): void {
    this.persist = true
    const bytes = this.toBuffer()
    io('write time index', this.file, () => {
      const fd = fs.openSync(this.file, 'w', FILE_MODE)
      try {
        writeFully(fd, bytes, 0, bytes.length, 0)
      } finally {
        fs.closeSync(fd)
      }
    })
  }

  /** `writeTrimmed` for async callers (open and recovery). */
  async writeTrimmedAsync(): Promise<void> {
    const bytes = this.toBuffer()
    await ioAsync('write time index', this.file, () => fs.promises.writeFile(this.file, bytes, { mode: FILE_MODE }))
    this.persist = true
  }

  trimAndClose(): void {
    if (this.fd === null) return
    const fd = this.fd
    this.fd = null
    try {
      io('trim time index', this.file, () => fs.ftruncateSync(fd, this.n * TIME_INDEX_ENTRY_SIZE))
    } finally {
      closeQuietly(fd)
    }
  }

  closeQuietly(): void {
    closeQuietly(this.fd)
    this.fd = null
  }

  toBuffer(): Buffer {
    const out = Buffer.allocUnsafe(this.n * TIME_INDEX_ENTRY_SIZE)
    for (let i = 0; i < this.n; i++) {
      out.writeBigInt64BE(this.ts[i], i * TIME_INDEX_ENTRY_SIZE)
      out.writeUInt32BE(this.rel[i], i * TIME_INDEX_ENTRY_SIZE + 8)
    }
    return out
  }

  /** An empty index built in memory only (recovery); `writeTrimmed` then stores it. */
  static detached(file: string, maxIndexBytes: number): TimeIndex {
    const idx = new TimeIndex(file, maxIndexBytes, new BigInt64Array(INITIAL_CAPACITY), new Uint32Array(INITIAL_CAPACITY), 0)
    idx.persist = false
    return idx
  }

  private preallocate(): void {
    const fd = this.writableFd()
    io('preallocate time index', this.file, () => fs.ftruncateSync(fd, this.maxEntries * TIME_INDEX_ENTRY_SIZE))
  }

  private writableFd(): number {
    if (this.fd === null) this.openForAppend()
    return this.fd as number
  }

  private grow(): void {
    const cap = Math.min(Math.max(this.ts.length * 2, INITIAL_CAPACITY), Math.max(this.maxEntries, this.n + 1))
    const ts = new BigInt64Array(cap)
    const rel = new Uint32Array(cap)
    ts.set(this.ts.subarray(0, this.n))
    rel.set(this.rel.subarray(0, this.n))
    this.ts = ts
    this.rel = rel
  }
}
