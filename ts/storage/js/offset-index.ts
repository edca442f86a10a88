/**
 * The offset index of one segment, Kafka's `OffsetIndex`.
 *
 * File `<base>.index`: entries of OFFSET_INDEX_ENTRY_SIZE bytes, big-endian,
 *
 *   0(4) relativeOffset u32   (a batch's lastOffset - base)
 *   4(4) position u32         (where that batch starts in `<base>.log`)
 *
 * sorted by relative offset. While the segment is active the file is preallocated to
 * `segment.index.bytes` rounded down to whole entries (the rest are zeros) and the entry count
 * lives in memory; on roll and close the file is cut to exactly its entries.
 *
 * The entries are held in memory as two Uint32Arrays (binary search never touches the file);
 * each appended entry is also written to the file at its slot with one positional write.
 */
import * as fs from 'node:fs'
import { FILE_MODE, closeQuietly, io, ioAsync, writeFully } from './files.js'

export const OFFSET_INDEX_ENTRY_SIZE = 8
const INITIAL_CAPACITY = 64

export class OffsetIndex {
  readonly file: string
  /** segment.index.bytes / entry size: appends beyond this roll the segment. */
  readonly maxEntries: number
  private fd: number | null = null
  /** False while an index is rebuilt in memory (recovery): appends do not touch the file. */
  private persist = true
  private rel: Uint32Array
  private pos: Uint32Array
  private n: number
  private readonly scratch = Buffer.alloc(OFFSET_INDEX_ENTRY_SIZE)

  private constructor(file: string, maxIndexBytes: number, rel: Uint32Array, pos: Uint32Array, n: number) {
    this.file = file
    this.maxEntries = Math.floor(maxIndexBytes / OFFSET_INDEX_ENTRY_SIZE)
    this.rel = rel
    this.pos = pos
    this.n = n
  }

  /** A new, empty, writable index: the file is created (or emptied) and preallocated. */
  static create(file: string, maxIndexBytes: number): OffsetIndex {
    const idx = new OffsetIndex(file, maxIndexBytes, new Uint32Array(INITIAL_CAPACITY), new Uint32Array(INITIAL_CAPACITY), 0)
    idx.fd = io('create offset index', file, () => fs.openSync(file, 'w+', FILE_MODE))
    idx.preallocate()
    return idx
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
    const cap = Math.max(INITIAL_CAPACITY, n)
    const rel = new Uint32Array(cap)
    const pos = new Uint32Array(cap)
    for (let i = 0; i < n; i++) {
      rel[i] = bytes.readUInt32BE(i * OFFSET_INDEX_ENTRY_SIZE)
      pos[i] = bytes.readUInt32BE(i * OFFSET_INDEX_ENTRY_SIZE + 4)
    }
    return new OffsetIndex(file, maxIndexBytes, rel, pos, n)
  }

  /** Kafka's sanity check, and a little more: null when sound, else why not. */
  static sanityCheck(bytes: Buffer, logSize: number): string | null {
    if (bytes.length % OFFSET_INDEX_ENTRY_SIZE !== 0) {
      return `length ${bytes.length} is not a multiple of ${OFFSET_INDEX_ENTRY_SIZE}`
    }
    const idx = OffsetIndex.fromBytes('', bytes.length, bytes)
    for (let i = 1; i < idx.n; i++) {
      if (idx.rel[i] <= idx.rel[i - 1]) return `relative offsets not increasing at entry ${i}`
      if (idx.pos[i] <= idx.pos[i - 1]) return `positions not increasing at entry ${i}`
    }
    if (idx.n > 0 && idx.pos[idx.n - 1] >= logSize) {
      return `last entry points at position ${idx.pos[idx.n - 1]}, past the log's ${logSize} bytes`
    }
    return null
  }

  get entries(): number {
    return this.n
  }

  isFull(): boolean {
    return this.n >= this.maxEntries
  }

  /** The relative offset of the last entry, or -1. */
  lastRelativeOffset(): number {
    return this.n === 0 ? -1 : this.rel[this.n - 1]
  }

  relativeOffsetAt(slot: number): number {
    return this.rel[slot]
  }

  positionAt(slot: number): number {
    return this.pos[slot]
  }

  /** Slot of the entry with the largest relative offset <= target, or -1. */
  slotFor(targetRel: number): number {
    const rel = this.rel
    let hi = this.n - 1
    if (hi < 0 || rel[0] > targetRel) return -1
    let lo = 0
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (rel[mid] <= targetRel) lo = mid
      else hi = mid - 1
    }
    return lo
  }

  /** Kafka's `lookup`: the position of the largest entry <= target, else 0 (the segment start). */
  lookupPosition(targetRel: number): number {
    const slot = this.slotFor(targetRel)
    return slot < 0 ? 0 : this.pos[slot]
  }

  /** Adds an entry (caller checked isFull and that rel grows) and writes it to its slot. */
  append(relOffset: number, position: number): void {
    if (this.n >= this.maxEntries) return
    if (this.n === this.rel.length) this.grow()
    if (this.persist) {
      const b = this.scratch
      b.writeUInt32BE(relOffset, 0)
      b.writeUInt32BE(position, 4)
      const fd = this.writableFd()
      io('write offset index', this.file, () => writeFully(fd, b, 0, OFFSET_INDEX_ENTRY_SIZE, this.n * OFFSET_INDEX_ENTRY_SIZE))
    }
    this.rel[this.n] = relOffset
    this.pos[this.n] = position
    this.n++
  }

  /**
   * Removes the entries for offsets >= targetRel (Kafka's `truncateTo`). The file keeps its
   * preallocated length with zeros after the remaining entries.
   */
  truncateTo(targetRel: number): void {
    const slot = this.slotFor(targetRel)
    const keep = slot < 0 ? 0 : this.rel[slot] === targetRel ? slot : slot + 1
    this.truncateToEntries(keep)
  }

  truncateToEntries(keep: number): void {
    if (keep >= this.n) return
    this.n = keep
    if (this.fd !== null) {
      const fd = this.fd
      io('truncate offset index', this.file, () => {
        fs.ftruncateSync(fd, keep * OFFSET_INDEX_ENTRY_SIZE)
        fs.ftruncateSync(fd, this.maxEntries * OFFSET_INDEX_ENTRY_SIZE)
      })
    }
  }

  /** Opens the file for appends and sets its length to the preallocated size. */
  openForAppend(): void {
    if (this.fd !== null) return
    this.fd = io('open offset index', this.file, () => fs.openSync(this.file, fs.existsSync(this.file) ? 'r+' : 'w+', FILE_MODE))
    // The file holds the entries first; cut it there and grow it back, so the rest is zeros.
    const fd = this.fd
    io('resize offset index', this.file, () => fs.ftruncateSync(fd, this.n * OFFSET_INDEX_ENTRY_SIZE))
    this.preallocate()
  }

  /** Writes the whole index to its file, cut to its entries (after a rebuild). */
  writeTrimmed(): void {
    this.persist = true
    const bytes = this.toBuffer()
    io('write offset index', this.file, () => {
      const fd = fs.openSync(this.file, 'w', FILE_MODE)
      try {
        writeFully(fd, bytes, 0, bytes.length, 0)
      } finally {
        fs.closeSync(fd)
      }
    })
  }

  /** Cuts the file to exactly its entries and closes it (roll, close). */
  /** `writeTrimmed` for async callers (open and recovery). */
  async writeTrimmedAsync(): Promise<void> {
    const bytes = this.toBuffer()
    await ioAsync('write offset index', this.file, () => fs.promises.writeFile(this.file, bytes, { mode: FILE_MODE }))
    this.persist = true
  }

  trimAndClose(): void {
    if (this.fd === null) return
    const fd = this.fd
    this.fd = null
    try {
      io('trim offset index', this.file, () => fs.ftruncateSync(fd, this.n * OFFSET_INDEX_ENTRY_SIZE))
    } finally {
      closeQuietly(fd)
    }
  }

  /** Closes without trimming (the log is being deleted). */
  closeQuietly(): void {
    closeQuietly(this.fd)
    this.fd = null
  }

  /** The entries as file bytes. */
  toBuffer(): Buffer {
    const out = Buffer.allocUnsafe(this.n * OFFSET_INDEX_ENTRY_SIZE)
    for (let i = 0; i < this.n; i++) {
      out.writeUInt32BE(this.rel[i], i * OFFSET_INDEX_ENTRY_SIZE)
      out.writeUInt32BE(this.pos[i], i * OFFSET_INDEX_ENTRY_SIZE + 4)
    }
    return out
  }

  /** An empty index built in memory only (recovery); `writeTrimmed` then stores it. */
  static detached(file: string, maxIndexBytes: number): OffsetIndex {
    const idx = new OffsetIndex(file, maxIndexBytes, new Uint32Array(INITIAL_CAPACITY), new Uint32Array(INITIAL_CAPACITY), 0)
    idx.persist = false
    return idx
  }

  private preallocate(): void {
    const fd = this.writableFd()
    io('preallocate offset index', this.file, () => fs.ftruncateSync(fd, this.maxEntries * OFFSET_INDEX_ENTRY_SIZE))
  }

  private writableFd(): number {
    if (this.fd === null) this.openForAppend()
    return this.fd as number
  }

  private grow(): void {
    const cap = Math.min(Math.max(this.rel.length * 2, INITIAL_CAPACITY), Math.max(this.maxEntries, this.n + 1))
    const rel = new Uint32Array(cap)
    const pos = new Uint32Array(cap)
    rel.set(this.rel.subarray(0, this.n))
    pos.set(this.pos.subarray(0, this.n))
    this.rel = rel
    this.pos = pos
  }
}
