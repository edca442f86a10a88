/**
 * The offset index of one segment, Kafka's `OffsetIndex`.
 *
 * File `<base>.index`: entries of OFFSET_INDEX_ENTRY_SIZE bytes, big-endian,
 *
 *   0(4) relativeOffset u32   (a batch's lastOffset - base)
 *   4(4) position u32         (where that batch starts in `<base>.log`)
 *
 * sorted by relative offset. Preallocated, trimmed and closed as `IndexFile` describes.
 *
 * The entries are held in memory as two Uint32Arrays (binary search never touches the file).
 */
import { IndexFile, floorSlot, grown } from './index-file.js'

export const OFFSET_INDEX_ENTRY_SIZE = 8
const INITIAL_CAPACITY = 64

export class OffsetIndex extends IndexFile {
  private rel: Uint32Array
  private pos: Uint32Array

  private constructor(file: string, maxIndexBytes: number, capacity: number, entries: number) {
    super('offset index', file, OFFSET_INDEX_ENTRY_SIZE, maxIndexBytes, entries)
    this.rel = new Uint32Array(capacity)
    this.pos = new Uint32Array(capacity)
  }

  /** A new, empty, writable index: the file is created (or emptied) and preallocated. */
  static create(file: string, maxIndexBytes: number): OffsetIndex {
    return new OffsetIndex(file, maxIndexBytes, INITIAL_CAPACITY, 0).createFile()
  }

  /** An empty index built in memory only (recovery); `writeTrimmed` then stores it. */
  static detached(file: string, maxIndexBytes: number): OffsetIndex {
    return new OffsetIndex(file, maxIndexBytes, INITIAL_CAPACITY, 0).inMemoryOnly()
  }

  /**
   * An index read from the bytes of an existing file, not yet writable (`openForAppend` makes
   * it so). Entries = length / 8; trailing all-zero slots are not entries (a preallocated file
   * that was never trimmed): an entry with relative offset 0 after the first ends the list.
   */
  static fromBytes(file: string, maxIndexBytes: number, bytes: Buffer): OffsetIndex {
    const slots = Math.floor(bytes.length / OFFSET_INDEX_ENTRY_SIZE)
    let n = Math.min(slots, 1)
    while (n < slots && bytes.readUInt32BE(n * OFFSET_INDEX_ENTRY_SIZE) !== 0) n++
    const idx = new OffsetIndex(file, maxIndexBytes, Math.max(INITIAL_CAPACITY, n), n)
    for (let i = 0; i < n; i++) {
      idx.rel[i] = bytes.readUInt32BE(i * OFFSET_INDEX_ENTRY_SIZE)
      idx.pos[i] = bytes.readUInt32BE(i * OFFSET_INDEX_ENTRY_SIZE + 4)
    }
    return idx
  }

  /** Kafka's sanity check, and a little more: null when sound, else why not. */
  static sanityCheck(bytes: Buffer, logSize: number): string | null {
    if (bytes.length % OFFSET_INDEX_ENTRY_SIZE !== 0) {
      return `length ${bytes.length} is not a multiple of ${OFFSET_INDEX_ENTRY_SIZE}`
    }
    const idx = OffsetIndex.fromBytes('', bytes.length, bytes)
    for (let i = 1; i < idx.n; i++) {
      if (idx.rel[i]! <= idx.rel[i - 1]!) return `relative offsets not increasing at entry ${i}`
      if (idx.pos[i]! <= idx.pos[i - 1]!) return `positions not increasing at entry ${i}`
    }
    if (idx.n > 0 && idx.pos[idx.n - 1]! >= logSize) {
      return `last entry points at position ${idx.pos[idx.n - 1]}, past the log's ${logSize} bytes`
    }
    return null
  }

  isFull(): boolean {
    return this.n >= this.maxEntries
  }

  /** The relative offset of the last entry, or -1. */
  lastRelativeOffset(): number {
    return this.n === 0 ? -1 : this.rel[this.n - 1]!
  }

  relativeOffsetAt(slot: number): number {
    return this.rel[slot]!
  }

  positionAt(slot: number): number {
    return this.pos[slot]!
  }

  /** Slot of the entry with the largest relative offset <= target, or -1. */
  slotFor(targetRel: number): number {
    return floorSlot(this.rel, this.n, targetRel)
  }

  /** Kafka's `lookup`: the position of the largest entry <= target, else 0 (the segment start). */
  lookupPosition(targetRel: number): number {
    const slot = floorSlot(this.rel, this.n, targetRel)
    return slot < 0 ? 0 : this.pos[slot]!
  }

  /**
   * Kafka's `fetchUpperBoundOffset`: the relative offset of the first entry whose position is
   * at least `position`, or -1.
   */
  upperBoundRelativeOffset(position: number): number {
    let lo = 0
    let hi = this.n - 1
    let found = -1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      if (this.pos[mid]! >= position) {
        found = mid
        hi = mid - 1
      } else lo = mid + 1
    }
    return found < 0 ? -1 : this.rel[found]!
  }

  /** Adds an entry (caller checked isFull and that rel grows) and writes it to its slot. */
  append(relOffset: number, position: number): void {
    if (this.n >= this.maxEntries) return
    this.ensureRoom()
    this.rel[this.n] = relOffset
    this.pos[this.n] = position
    this.commitEntry()
  }

  /**
   * Removes the entries for offsets >= targetRel (Kafka's `truncateTo`). The file keeps its
   * preallocated length with zeros after the remaining entries.
   */
  truncateTo(targetRel: number): void {
    this.truncateToOffset(this.rel, targetRel)
  }

  protected capacity(): number {
    return this.rel.length
  }

  protected resize(capacity: number): void {
    this.rel = grown(this.rel, this.n, capacity)
    this.pos = grown(this.pos, this.n, capacity)
  }

  protected encode(out: Buffer, slot: number, at: number): void {
    out.writeUInt32BE(this.rel[slot]!, at)
    out.writeUInt32BE(this.pos[slot]!, at + 4)
  }
}
