/**
 * The time index of one segment, Kafka's `TimeIndex`.
 *
 * File `<base>.timeindex`: entries of TIME_INDEX_ENTRY_SIZE bytes, big-endian,
 *
 *   0(8) timestamp i64        (the largest batch maxTimestamp seen up to that offset)
 *   8(4) relativeOffset u32   (lastOffset - base of the batch that carried it)
 *
 * Timestamps strictly increase, offsets never decrease. Preallocated, trimmed and closed as
 * `IndexFile` describes. One slot is kept free for the entry written when the segment becomes
 * inactive (Kafka's `isFull`: entries >= maxEntries - 1).
 */
import { IndexFile, grown } from './index-file.js'

export const TIME_INDEX_ENTRY_SIZE = 12
const INITIAL_CAPACITY = 32
const NO_TIMESTAMP = -1n

export class TimeIndex extends IndexFile {
  private ts: BigInt64Array
  private rel: Uint32Array

  private constructor(file: string, maxIndexBytes: number, capacity: number, entries: number) {
    super('time index', file, TIME_INDEX_ENTRY_SIZE, maxIndexBytes, entries)
    this.ts = new BigInt64Array(capacity)
    this.rel = new Uint32Array(capacity)
  }

  /** A new, empty, writable index: the file is created (or emptied) and preallocated. */
  static create(file: string, maxIndexBytes: number): TimeIndex {
    return new TimeIndex(file, maxIndexBytes, INITIAL_CAPACITY, 0).createFile()
  }

  /** An empty index built in memory only (recovery); `writeTrimmed` then stores it. */
  static detached(file: string, maxIndexBytes: number): TimeIndex {
    return new TimeIndex(file, maxIndexBytes, INITIAL_CAPACITY, 0).inMemoryOnly()
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
    const idx = new TimeIndex(file, maxIndexBytes, Math.max(INITIAL_CAPACITY, n), n)
    for (let i = 0; i < n; i++) {
      idx.ts[i] = bytes.readBigInt64BE(i * TIME_INDEX_ENTRY_SIZE)
      idx.rel[i] = bytes.readUInt32BE(i * TIME_INDEX_ENTRY_SIZE + 8)
    }
    return idx
  }

  /** Kafka's sanity check, and a little more: null when sound, else why not. */
  static sanityCheck(bytes: Buffer): string | null {
    if (bytes.length % TIME_INDEX_ENTRY_SIZE !== 0) {
      return `length ${bytes.length} is not a multiple of ${TIME_INDEX_ENTRY_SIZE}`
    }
    const idx = TimeIndex.fromBytes('', bytes.length, bytes)
    for (let i = 1; i < idx.n; i++) {
      if (idx.ts[i]! <= idx.ts[i - 1]!) return `timestamps not increasing at entry ${i}`
      if (idx.rel[i]! < idx.rel[i - 1]!) return `relative offsets decreasing at entry ${i}`
    }
    return null
  }

  /** One slot stays free for the entry added when the segment becomes inactive. */
  isFull(): boolean {
    return this.n >= this.maxEntries - 1
  }

  /** The last entry's timestamp, or -1 when empty. */
  lastTimestamp(): bigint {
    return this.n === 0 ? NO_TIMESTAMP : this.ts[this.n - 1]!
  }

  /** The last entry's relative offset, or 0 (the base) when empty. */
  lastRelativeOffset(): number {
    return this.n === 0 ? 0 : this.rel[this.n - 1]!
  }

  timestampAt(slot: number): bigint {
    return this.ts[slot]!
  }

  relativeOffsetAt(slot: number): number {
    return this.rel[slot]!
  }

  /**
   * Slot of the entry with the largest timestamp <= target, or -1 (Kafka returns (-1, base)).
   * `floorSlot`'s search over bigints, kept apart so the offset index's hot search stays
   * monomorphic (Uint32Array, number).
   */
  slotFor(target: bigint): number {
    const ts = this.ts
    let hi = this.n - 1
    if (hi < 0 || ts[0]! > target) return -1
    let lo = 0
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (ts[mid]! <= target) lo = mid
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
    if (this.n > 0 && relOffset < this.rel[this.n - 1]!) return
    if (this.n >= this.maxEntries) return
    this.ensureRoom()
    this.ts[this.n] = timestamp
    this.rel[this.n] = relOffset
    this.commitEntry()
  }

  /** Removes the entries for offsets >= targetRel (Kafka's `truncateTo`, searching by offset). */
  truncateTo(targetRel: number): void {
    this.truncateToOffset(this.rel, targetRel)
  }

  protected capacity(): number {
    return this.ts.length
  }

  protected resize(capacity: number): void {
    this.ts = grown(this.ts, this.n, capacity)
    this.rel = grown(this.rel, this.n, capacity)
  }

  protected encode(out: Buffer, slot: number, at: number): void {
    out.writeBigInt64BE(this.ts[slot]!, at)
    out.writeUInt32BE(this.rel[slot]!, at + 8)
  }
}
