/**
 * The state of one open partition log, shared by the modules that make up `JsLog` (the same
 * split as the Rust twin's crates/storage/src/log/):
 *
 *   js-log.ts         `JsLog`: the `RawLog` facade; offsets, epochs, roll, close, the async queue
 *   log-state.ts      this state and the segment bookkeeping every part needs (Rust: mod.rs)
 *   log-loader.ts     opening and recovery (loader.rs)
 *   log-append.ts     appends as leader and follower (append.rs)
 *   log-read.ts       reads and offsets by timestamp (read.rs)
 *   log-retention.ts  retention, the log start offset, truncation (retention.rs)
 *   log-flush.ts      fsync and the recovery point (flush.rs)
 *   log-producer-state.ts  producer state, snapshots, aborted transactions (txn.rs)
 *
 * The parts are functions over a `LogState` (the appender also owns its reusable buffers, so it
 * is a small class); `JsLog` owns one state and forwards to them. The invariants:
 *
 *   logStartOffset <= lastStableOffset <= highWatermark <= logEndOffset;  recoveryPoint <= logEndOffset
 *
 * `segments` is sorted by base offset and never empty while open; the last one is active.
 */
import * as fs from 'node:fs'
import { StorageError } from '../errors.js'
import type { EpochEntry, LogConfig } from '../types.js'
import { io } from './files.js'
import type { LeaderEpochFileCache } from './leader-epoch-cache.js'
import type { LoadedLog } from './log-loader.js'
import { LogSegment, type SegmentMark, type SegmentSettings } from './log-segment.js'
import { deleteSnapshot, takeSnapshot, type ProducerStateContext } from './log-producer-state.js'
import { producerSnapshotFile } from './files.js'
import type { ProducerStateManager } from './producer-state-manager.js'

/** A read bound translated to a segment position (cached: positions only change on truncation). */
export interface BoundPosition {
  offset: bigint
  seg: LogSegment
  position: number
}

/** A log's state before an append (`LogState.markAppend`). */
export interface AppendMark {
  logEndOffset: bigint
  /** How many segments there were: the last of them was active. */
  segments: number
  active: SegmentMark
  epochs: EpochEntry[]
  lastSnapOffset: bigint
}

export class LogState implements ProducerStateContext {
  readonly dir: string
  config: LogConfig
  /** What new segments are created with (existing ones keep theirs, as in Kafka). */
  settings: SegmentSettings
  /** flush.messages as a bigint, at least 1. */
  flushMessages: bigint
  readonly epochs: LeaderEpochFileCache
  segments: LogSegment[]
  /** Segments by `.log` path, for `readSlice`. */
  readonly byFile = new Map<string, LogSegment>()
  logStartOffset: bigint
  logEndOffset: bigint
  highWatermark: bigint
  recoveryPoint: bigint
  closed = false
  /** The flag that stops the cleaning round in flight before its next group (close sets it). */
  cleaningCancel: Int32Array | null = null
  /** Why the log is offline: a failed append could not be undone. Every call then fails with LOG_OFFLINE. */
  offline: string | null = null
  /** Counts truncations, so a flush that overlapped one does not move the recovery point. */
  truncations = 0
  /** A segment was created since the last flush: the directory needs an fsync too. */
  newSegments = false
  /** The last read bound below the LEO translated to a position (the HW, typically). */
  boundCache: BoundPosition | null = null
  /** Called after each roll with the new segment's base offset (`JsLog` flushes below it). */
  onRoll: ((rolled: LogSegment) => void) | null = null
  /** Producers, open transactions (log-producer-state.ts). */
  readonly producerState: ProducerStateManager
  /** Offsets of the `.snapshot` files, ascending. */
  snapshots: bigint[]
  lastSnapOffset: bigint

  constructor(dir: string, config: LogConfig, loaded: LoadedLog) {
    this.dir = dir
    this.config = { ...config }
    this.flushMessages = flushMessagesOf(config)
    this.settings = settingsOf(config)
    this.segments = loaded.segments
    for (const s of this.segments) this.byFile.set(s.file, s)
    this.logStartOffset = loaded.logStartOffset
    this.logEndOffset = loaded.logEndOffset
    this.highWatermark = loaded.logEndOffset
    this.recoveryPoint = loaded.recoveryPoint
    this.epochs = loaded.epochCache
    this.producerState = loaded.producerState
    this.snapshots = loaded.snapshots
    this.lastSnapOffset = loaded.lastSnapOffset
  }

  /** Kafka's `updateConfig`: new settings from the next use on (validated by the caller). */
  updateConfig(config: LogConfig): void {
    this.config = { ...config }
    this.flushMessages = flushMessagesOf(config)
    this.settings = settingsOf(config)
  }

  checkOpen(): void {
    if (this.closed) throw new StorageError('LOG_CLOSED', `log ${this.dir} is closed`)
    if (this.offline !== null) throw new StorageError('LOG_OFFLINE', `log offline until reopened: ${this.offline}`)
  }

  /**
   * Kafka's `lastStableOffset`: the first unstable offset (the oldest open transaction's first
   * offset, or a completed one's whose marker the high watermark has not passed; at least the
   * log start offset) when it is below the high watermark, else the high watermark.
   */
  lastStableOffset(): bigint {
    let first = this.producerState.firstUnstableOffset()
    if (first === null) return this.highWatermark
    if (first < this.logStartOffset) first = this.logStartOffset
    return first < this.highWatermark ? first : this.highWatermark
  }

  /** Sets the high watermark (clamped to [logStartOffset, LEO]); completed transactions below it become stable. */
  setHighWatermark(hw: bigint): bigint {
    this.highWatermark = hw < this.logStartOffset ? this.logStartOffset : hw > this.logEndOffset ? this.logEndOffset : hw
    this.producerState.onHighWatermarkUpdated(this.highWatermark)
    return this.highWatermark
  }

  active(): LogSegment {
    return this.segments[this.segments.length - 1]! // a log always has its active segment
  }

  /** A new empty segment at `baseOffset`, known by its file; the caller puts it in `segments`. */
  newSegment(baseOffset: bigint, nowMs: number): LogSegment {
    const seg = LogSegment.create(this.dir, baseOffset, this.settings, nowMs)
    this.newSegments = true
    this.byFile.set(seg.file, seg)
    return seg
  }

  /**
   * Kafka's `roll`: the active segment becomes inactive, a new one starts at `baseOffset`; the
   * segments below it are complete, and `onRoll` is told so they get flushed. If that fails (a
   * full disk) the active segment stays active as it was.
   */
  rollAt(baseOffset: bigint, nowMs: number): LogSegment {
    const active = this.active()
    const mark = active.mark()
    let seg: LogSegment
    try {
      active.onBecomeInactive()
      seg = this.newSegment(baseOffset, nowMs)
    } catch (err) {
      try {
        active.rollback(mark)
      } catch {
        // the roll's error is the one to report; an append's rollback (or going offline) follows
      }
      throw err
    }
    this.segments.push(seg)
    takeSnapshot(this, baseOffset)
    this.onRoll?.(seg)
    return seg
  }

  /** The log before an append, to undo it with `rollbackAppend`. */
  markAppend(): AppendMark {
    this.producerState.mark()
    return {
      logEndOffset: this.logEndOffset,
      segments: this.segments.length,
      active: this.active().mark(),
      epochs: this.epochs.entries(),
      lastSnapOffset: this.lastSnapOffset,
    }
  }

  /**
   * Undoes a failed append (log-append.ts), freeing space first: the segments it rolled are
   * deleted with their snapshots, then the segment active before it is cut back; the epochs and
   * the producer state are put back.
   */
  rollbackAppend(mark: AppendMark): void {
    this.boundCache = null
    this.logEndOffset = mark.logEndOffset
    this.producerState.rollback()
    for (const seg of this.segments.splice(mark.segments)) {
      this.byFile.delete(seg.file)
      seg.closeForDelete()
      for (const f of seg.files()) io('delete segment file', f, () => fs.rmSync(f, { force: true }))
      deleteSnapshot(this, seg.baseOffset)
    }
    this.lastSnapOffset = mark.lastSnapOffset
    this.active().rollback(mark.active)
    this.epochs.restore(mark.epochs)
  }

  /** Takes segments (already out of `segments`) out of service: descriptors closed, files renamed. Returns the files to remove. */
  detach(doomed: LogSegment[]): string[] {
    const files: string[] = []
    for (const s of doomed) {
      this.byFile.delete(s.file)
      files.push(...s.detachForDelete())
      const i = this.snapshots.indexOf(s.baseOffset)
      if (i >= 0) {
        // The snapshot at the segment's base goes with it (Kafka's removeAndMarkSnapshotForDeletion).
        this.snapshots.splice(i, 1)
        const file = producerSnapshotFile(this.dir, s.baseOffset)
        files.push(file)
      }
    }
    return files
  }
}

function flushMessagesOf(config: LogConfig): bigint {
  return BigInt(Math.max(1, Math.floor(config.flushMessages)))
}

function settingsOf(config: LogConfig): SegmentSettings {
  return { indexIntervalBytes: config.indexIntervalBytes, segmentIndexBytes: config.segmentIndexBytes }
}
