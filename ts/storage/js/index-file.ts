/**
 * The file management both segment indexes share (Kafka's `AbstractIndex`): `OffsetIndex` and
 * `TimeIndex` extend `IndexFile` and keep only their entry arrays, append, lookup, sanity check
 * and truncation rule.
 *
 * A file of fixed-size big-endian entries, sorted. While its segment is active the file is open
 * and preallocated to `segment.index.bytes` rounded down to whole entries (the slots after the
 * entries are zeros); the entry count lives in memory. On roll and close the file is cut to
 * exactly its entries and closed. An index rebuilt by recovery lives in memory only until
 * `writeTrimmed` stores it.
 *
 * The entries themselves are held by the subclass in typed arrays (lookups never touch the
 * file); each appended entry is also written at its slot with one positional write. Dropped
 * entries are zeroed by cutting the file and growing it back, never by writing zeros: truncating
 * an index (a rolled-back append, a recovery) needs no free space.
 */
import * as fs from 'node:fs'
import { FILE_MODE, closeQuietly, io, ioAsync, ioError, writeFully } from './files.js'

export abstract class IndexFile {
  readonly file: string
  /** segment.index.bytes / entry size: appends beyond this roll the segment. */
  readonly maxEntries: number
  /** The number of valid entries. */
  protected n: number
  private readonly entrySize: number
  /** 'offset index' or 'time index', for error messages. */
  private readonly what: string
  private fd: number | null = null
  /** False while an index is rebuilt in memory (recovery): appends do not touch the file. */
  private persist = true
  private readonly scratch: Buffer

  protected constructor(what: string, file: string, entrySize: number, maxIndexBytes: number, entries: number) {
    this.what = what
    this.file = file
    this.entrySize = entrySize
    this.maxEntries = Math.floor(maxIndexBytes / entrySize)
    this.n = entries
    this.scratch = Buffer.alloc(entrySize)
  }

  get entries(): number {
    return this.n
  }

  /** Whether the file is open for appends (the segment is the active one). */
  get isOpen(): boolean {
    return this.fd !== null
  }

  /** How many entries the in-memory arrays hold. */
  protected abstract capacity(): number

  /** Replaces the in-memory arrays by ones of `capacity` entries holding the current ones. */
  protected abstract resize(capacity: number): void

  /** Writes entry `slot` as file bytes at `out[at..]`. */
  protected abstract encode(out: Buffer, slot: number, at: number): void

  /** For `create`: the file is created (or emptied) and preallocated. */
  protected createFile(): this {
    this.fd = io(`create ${this.what}`, this.file, () => fs.openSync(this.file, 'w+', FILE_MODE))
    this.preallocate()
    return this
  }

  /** For `detached`: an index rebuilt in memory only (recovery); `writeTrimmed` then stores it. */
  protected inMemoryOnly(): this {
    this.persist = false
    return this
  }

  /** Room in the arrays for one more entry (the caller checked maxEntries). */
  protected ensureRoom(): void {
    if (this.n < this.capacity()) return
    this.resize(Math.min(this.capacity() * 2, Math.max(this.maxEntries, this.n + 1)))
  }

  /**
   * Counts the entry the subclass just put at slot `entries`, writing it to its file slot. A
   * failed write (a full disk) may have stored part of the entry: the slot is zeroed again by
   * cutting the file and growing it back, so no half entry is read back after a restart.
   */
  protected commitEntry(): void {
    if (this.persist) {
      const b = this.scratch
      const at = this.n * this.entrySize
      this.encode(b, this.n, 0)
      const fd = this.writableFd()
      try {
        writeFully(fd, b, 0, b.length, at)
      } catch (err) {
        try {
          fs.ftruncateSync(fd, at)
          fs.ftruncateSync(fd, this.maxEntries * this.entrySize)
        } catch {
          // the write error is the one to report; the next open's sanity check finds a half entry
        }
        throw ioError(`write ${this.what}`, this.file, err)
      }
    }
    this.n++
  }

  /**
   * Kafka's `truncateTo`: removes the entries for offsets >= targetRel, given the entries'
   * relative offsets (never decreasing in either index).
   */
  protected truncateToOffset(rel: Uint32Array, targetRel: number): void {
    const slot = floorSlot(rel, this.n, targetRel)
    this.truncateToEntries(slot < 0 ? 0 : rel[slot] === targetRel ? slot : slot + 1)
  }

  /** Keeps the first `keep` entries. The file keeps its preallocated length, zeros after them. */
  truncateToEntries(keep: number): void {
    if (keep >= this.n) return
    this.n = keep
    if (this.fd !== null) {
      const fd = this.fd
      io(`truncate ${this.what}`, this.file, () => {
        fs.ftruncateSync(fd, keep * this.entrySize)
        fs.ftruncateSync(fd, this.maxEntries * this.entrySize)
      })
    }
  }

  /** Opens the file for appends and sets its length to the preallocated size. */
  openForAppend(): void {
    if (this.fd !== null) return
    this.fd = io(`open ${this.what}`, this.file, () => fs.openSync(this.file, fs.existsSync(this.file) ? 'r+' : 'w+', FILE_MODE))
    // The file holds the entries first; cut it there and grow it back, so the rest is zeros.
    const fd = this.fd
    io(`resize ${this.what}`, this.file, () => fs.ftruncateSync(fd, this.n * this.entrySize))
    this.preallocate()
  }

  /**
   * After `writeTrimmedAsync` failed (a full disk): the file is cut to nothing, which needs no
   * space, and the index forgets its entries. Still a valid index, only an empty one: lookups
   * walk the segment from its start.
   */
  async writeEmptyAsync(): Promise<void> {
    this.n = 0
    await ioAsync(`write ${this.what}`, this.file, () => fs.promises.writeFile(this.file, Buffer.alloc(0), { mode: FILE_MODE }))
    this.persist = true
  }

  /** Writes the whole index to its file, cut to its entries (after a rebuild). */
  writeTrimmed(): void {
    this.persist = true
    const bytes = this.toBuffer()
    io(`write ${this.what}`, this.file, () => {
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
    await ioAsync(`write ${this.what}`, this.file, () => fs.promises.writeFile(this.file, bytes, { mode: FILE_MODE }))
    this.persist = true
  }

  /** Cuts the file to exactly its entries and closes it (roll, close). */
  trimAndClose(): void {
    if (this.fd === null) return
    const fd = this.fd
    this.fd = null
    try {
      io(`trim ${this.what}`, this.file, () => fs.ftruncateSync(fd, this.n * this.entrySize))
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
    const out = Buffer.allocUnsafe(this.n * this.entrySize)
    for (let i = 0; i < this.n; i++) this.encode(out, i, i * this.entrySize)
    return out
  }

  private preallocate(): void {
    const fd = this.writableFd()
    io(`preallocate ${this.what}`, this.file, () => fs.ftruncateSync(fd, this.maxEntries * this.entrySize))
  }

  private writableFd(): number {
    if (this.fd === null) this.openForAppend()
    return this.fd as number
  }
}

/** A copy of `entries[0, n)` in a new array of `capacity` entries (for `resize`). */
export function grown<A extends Uint32Array | BigInt64Array>(entries: A, n: number, capacity: number): A {
  const out = new (entries.constructor as new (length: number) => A)(capacity)
  out.set(entries.subarray(0, n) as never)
  return out
}

/**
 * The slot of the last of the first `n` entries of `sorted` that is <= target, or -1 (the
 * largest lower bound of an index search).
 */
export function floorSlot(sorted: Uint32Array, n: number, target: number): number {
  let hi = n - 1
  if (hi < 0 || sorted[0]! > target) return -1
  let lo = 0
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (sorted[mid]! <= target) lo = mid
    else hi = mid - 1
  }
  return lo
}
