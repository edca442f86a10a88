/**
 * Kafka's `LeaderEpochFileCache`: for each leader epoch the first offset written in it.
 *
 * File `leader-epoch-checkpoint` (text, Kafka's checkpoint format, version 0):
 *
 *   0\n
 *   <count>\n
 *   <epoch> <startOffset>\n      (count lines, epochs and start offsets increasing)
 *
 * Rewritten whole on every change: written to `leader-epoch-checkpoint.tmp`, fsynced, renamed.
 * Changes are rare (a new leader epoch, truncation, a log start offset moving past an epoch's
 * start), so the sync write is acceptable in the append path, as it is in Kafka. The cache knows
 * what the file holds (`onDisk`): when a rewrite fails (a full disk) the file is behind, and the
 * next append writes it (or fails, and is undone).
 */
import * as fs from 'node:fs'
import { join } from 'node:path'
import type { EpochEntry } from '../types.js'
import { FILE_MODE, LEADER_EPOCH_CHECKPOINT_FILE, io, ioAsync, writeFully } from './files.js'

const CHECKPOINT_VERSION = 0

export class LeaderEpochFileCache {
  readonly file: string
  private epochs: EpochEntry[]
  /** The file's entries as last written or read (none: no file); null when unknown. */
  private onDisk: string | null

  constructor(dir: string, entries: EpochEntry[] = []) {
    this.file = join(dir, LEADER_EPOCH_CHECKPOINT_FILE)
    this.epochs = entries
    this.onDisk = LeaderEpochFileCache.format(entries)
  }

  /** Tells the cache what the file holds (the loader read it; null: it did not parse). */
  setOnDisk(entries: readonly EpochEntry[] | null): void {
    this.onDisk = entries === null ? null : LeaderEpochFileCache.format(entries)
  }

  /** Whether the file may not say what the cache says (a rewrite failed). */
  isBehind(): boolean {
    return this.onDisk !== LeaderEpochFileCache.format(this.epochs)
  }

  /** Puts back `entries` (taken before an append that failed); the file is rewritten later if behind. */
  restore(entries: EpochEntry[]): void {
    this.epochs = entries
  }

  /** Parses checkpoint text; throws an Error saying what is wrong. An empty file is no entries. */
  static parse(text: string): EpochEntry[] {
    if (text.length === 0) return []
    const lines = text.split('\n')
    if (lines[lines.length - 1] === '') lines.pop()
    const version = Number(lines[0])
    if (lines[0] !== String(CHECKPOINT_VERSION) || version !== CHECKPOINT_VERSION) {
      throw new Error(`unrecognised version '${lines[0]}'`)
    }
    if (lines.length < 2 || !/^\d+$/.test(lines[1]!)) throw new Error(`bad entry count '${lines[1] ?? ''}'`)
    const count = Number(lines[1])
    if (lines.length - 2 !== count) throw new Error(`expected ${count} entries, found ${lines.length - 2}`)
    const out: EpochEntry[] = []
    for (let i = 2; i < lines.length; i++) {
      const [, epoch, startOffset] = /^(\d+)\s+(\d+)$/.exec(lines[i]!) ?? []
      if (epoch === undefined || startOffset === undefined) throw new Error(`malformed line ${i + 1}: '${lines[i]}'`)
      const entry = { epoch: Number(epoch), startOffset: BigInt(startOffset) }
      const prev = out[out.length - 1]
      if (entry.epoch > 0x7fffffff || (prev !== undefined && (entry.epoch <= prev.epoch || entry.startOffset < prev.startOffset))) {
        throw new Error(`line ${i + 1} ('${lines[i]}') does not follow the previous entry`)
      }
      out.push(entry)
    }
    return out
  }

  static format(entries: readonly EpochEntry[]): string {
    let s = `${CHECKPOINT_VERSION}\n${entries.length}\n`
    for (const e of entries) s += `${e.epoch} ${e.startOffset}\n`
    return s
  }

  entries(): EpochEntry[] {
    return this.epochs.map((e) => ({ epoch: e.epoch, startOffset: e.startOffset }))
  }

  latestEpoch(): number | null {
    return this.epochs.length === 0 ? null : this.epochs[this.epochs.length - 1]!.epoch
  }

  /**
   * Records that `epoch` starts at `startOffset` if it is newer than the latest epoch (the rule
   * of appends and recovery); returns whether the cache changed. Does not write the file.
   */
  assignIfNewer(epoch: number, startOffset: bigint): boolean {
    if (epoch < 0) return false
    const latest = this.latestEpoch()
    if (latest !== null && epoch <= latest) return false
    // Entries never overlap: drop any that would start at or after the new one.
    while (this.epochs.length > 0 && this.epochs[this.epochs.length - 1]!.startOffset >= startOffset) this.epochs.pop()
    this.epochs.push({ epoch, startOffset })
    return true
  }

  /** Kafka's `truncateFromEnd`: drops entries with startOffset >= endOffset; returns whether any. */
  truncateFromEnd(endOffset: bigint): boolean {
    const before = this.epochs.length
    while (this.epochs.length > 0 && this.epochs[this.epochs.length - 1]!.startOffset >= endOffset) this.epochs.pop()
    return this.epochs.length !== before
  }

  /**
   * Kafka's `truncateFromStart`: entries starting at or before `startOffset` are dropped and
   * the last of them comes back starting at `startOffset`. Returns whether any were dropped.
   */
  truncateFromStart(startOffset: bigint): boolean {
    let i = 0
    while (i < this.epochs.length && this.epochs[i]!.startOffset <= startOffset) i++
    if (i === 0) return false
    const kept = this.epochs[i - 1]!
    this.epochs = [{ epoch: kept.epoch, startOffset }, ...this.epochs.slice(i)]
    return true
  }

  clear(): void {
    this.epochs = []
  }

  /** The epoch of the entry that covers `offset` (largest startOffset <= offset), or null. */
  epochForOffset(offset: bigint): number | null {
    let found: number | null = null
    for (const e of this.epochs) {
      if (e.startOffset <= offset) found = e.epoch
      else break
    }
    return found
  }

  /**
   * Kafka's `endOffsetFor(requestedEpoch, logEndOffset)`: the largest epoch <= requestedEpoch and
   * the start offset of the next epoch (the LEO when requestedEpoch is the latest). Null where
   * Kafka answers (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET).
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: bigint): { epoch: number; endOffset: bigint } | null {
    if (requestedEpoch < 0) return null
    const latest = this.latestEpoch()
    if (latest !== null && latest === requestedEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset }
    const higher = this.epochs.findIndex((e) => e.epoch > requestedEpoch)
    if (higher < 0) return null
    if (higher === 0) return { epoch: requestedEpoch, endOffset: this.epochs[0]!.startOffset }
    return { epoch: this.epochs[higher - 1]!.epoch, endOffset: this.epochs[higher]!.startOffset }
  }

  /** `write` for async callers (open). */
  async writeAsync(): Promise<void> {
    const tmp = this.file + '.tmp'
    const formatted = LeaderEpochFileCache.format(this.epochs)
    const text = Buffer.from(formatted, 'latin1')
    await ioAsync('write leader epoch checkpoint', tmp, async () => {
      const fh = await fs.promises.open(tmp, 'w', FILE_MODE)
      try {
        await fh.writeFile(text)
        await fh.sync()
      } finally {
        await fh.close()
      }
      await fs.promises.rename(tmp, this.file)
    })
    this.onDisk = formatted
  }

  /** Writes the checkpoint: `.tmp`, fsync, rename. A failure before the rename leaves the file as it was. */
  write(): void {
    const tmp = this.file + '.tmp'
    const formatted = LeaderEpochFileCache.format(this.epochs)
    const text = Buffer.from(formatted, 'latin1')
    io('write leader epoch checkpoint', tmp, () => {
      try {
        const fd = fs.openSync(tmp, 'w', FILE_MODE)
        try {
          writeFully(fd, text, 0, text.length, 0)
          fs.fsyncSync(fd)
        } finally {
          fs.closeSync(fd)
        }
      } catch (err) {
        fs.rmSync(tmp, { force: true })
        throw err
      }
      fs.renameSync(tmp, this.file)
    })
    this.onDisk = formatted
  }
}
