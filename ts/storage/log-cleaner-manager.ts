/**
 * `LogCleanerManager`: which compacted log of a data directory the log cleaner cleans next, and
 * where each log's dirty section starts (Kafka's LogCleanerManager).
 *
 *   <dataDir>/cleaner-offset-checkpoint   each compacted log's first dirty offset: where the
 *                                         last round ended (Kafka's offset checkpoint format,
 *                                         ts/storage/checkpoint-file.ts); written after every
 *                                         round, an entry dropped when its log is deleted
 *
 * A log's sections: [log start, first dirty) was cleaned; [first dirty, first uncleanable) is
 * dirty and cleanable; from the first uncleanable offset on nothing is cleaned yet. The first
 * uncleanable offset is the least of the active segment's base offset (the active segment is
 * never cleaned), the last stable offset (open transactions and what the high watermark has not
 * passed), and, with min.compaction.lag.ms, the base of the first dirty segment holding a record
 * younger than it. The dirty ratio is the cleanable bytes over the bytes of both sections; the
 * filthiest log past its min.cleanable.dirty.ratio, or any whose oldest dirty record is older
 * than max.compaction.lag.ms (KIP-354), is cleaned next. When none is, a log whose latest delete
 * horizon has passed is: the round that cleaned it last reported the latest horizon of its
 * batches still holding tombstones or transaction markers (KIP-534 puts the horizon in the
 * batch), and cleaning it again removes them, so a compacted log that is no longer written to
 * still loses its tombstones once delete.retention.ms has passed. (KIP-534's first pull request
 * had this trigger, Kafka's `latestDeleteHorizon`; the one merged into Kafka 3.1 kept only the
 * horizon in the batch, so Kafka removes such tombstones only with the next round that new dirty
 * data brings.) The horizons are kept in memory: after a restart a log's next round, whatever
 * brings it, reports them again.
 *
 * Each log is in at most one state: in progress (a round runs), aborted (a round runs whose
 * result will not count), or paused (n times, by truncation, deletion, retention of a log no
 * longer compacted): a paused log is not cleaned until every pause is resumed. A log whose round
 * failed is uncleanable until the broker restarts (logged and counted, never retried in a loop).
 */
import { join } from 'node:path'
import { readOffsetCheckpoint, topicPartitionKey, writeOffsetCheckpoint, type TopicPartitionKey } from './checkpoint-file.js'
import type { Log } from './log.js'
import { readSegmentTimestamps } from './segment-timestamps.js'
import { isCompacted, type SegmentInfo } from './types.js'
import type { Logger } from '../logger.js'

export const CLEANER_OFFSET_CHECKPOINT_FILE = 'cleaner-offset-checkpoint'

/** Kafka's LogCleaningState. */
export type LogCleaningState = { kind: 'in-progress' } | { kind: 'aborted' } | { kind: 'paused'; count: number }

/** Kafka's `LogToClean`: a compacted log, its sections and their sizes. */
export interface LogToClean {
  key: TopicPartitionKey
  log: Log
  firstDirtyOffset: bigint
  firstUncleanableOffset: bigint
  /** Bytes of the segments before the first dirty offset. */
  cleanBytes: number
  /** Bytes of the segments of the dirty section. */
  cleanableBytes: number
  totalBytes: number
  cleanableRatio: number
  /** How long the oldest dirty record is past max.compaction.lag.ms (0: not). */
  maxCompactionDelayMs: number
  /** Chosen only because its latest delete horizon passed: the round removes expired tombstones and markers. */
  deleteHorizonPassed: boolean
}

/** What a round reported of the tombstones and markers it kept (LogCleanResult.latestDeleteHorizonMs). */
interface PendingDeletes {
  latestDeleteHorizonMs: bigint
  /** When that round started (ms): a horizon set by a round is never before it. */
  roundMs: number
}

/** Kafka's `PreCleanStats`, from the last choice: for the metrics. */
export interface PreCleanStats {
  /** The largest dirty ratio among the compacted logs looked at (0 to 1). */
  maxDirtyRatio: number
  /** The largest max.compaction.lag.ms delay among them. */
  maxCompactionDelayMs: number
  /** Logs cleanable only because of max.compaction.lag.ms. */
  delayedPartitions: number
  /** Compacted logs looked at. */
  cleanablePartitions: number
}

export interface LogCleanerManagerOptions {
  dataDir: string
  /** The data directory's logs now. */
  logs: () => Log[]
  /** Whether a topic's logs are left to the cleaner (default: every compacted log). */
  cleanable?: (topic: string) => boolean
  logger: Logger
}

/** Where a log's dirty section starts and ends (Kafka's `OffsetsToClean`). */
export interface OffsetsToClean {
  firstDirtyOffset: bigint
  firstUncleanableOffset: bigint
  /** The checkpointed offset was out of the log's range and was reset to its log start. */
  forceUpdateCheckpoint: boolean
}

/**
 * Kafka's `LogCleanerManager.cleanableOffsets`: the dirty section of `log`, given its
 * checkpointed first dirty offset (undefined: never cleaned).
 */
export async function cleanableOffsets(log: Log, checkpointed: bigint | undefined, nowMs: number): Promise<OffsetsToClean> {
  const logStart = log.logStartOffset()
  let firstDirtyOffset = checkpointed ?? logStart
  let forceUpdateCheckpoint = false
  if (firstDirtyOffset < logStart || firstDirtyOffset > log.logEndOffset()) {
    firstDirtyOffset = logStart
    forceUpdateCheckpoint = checkpointed !== undefined
  }
  const segments = log.segments()
  const active = segments[segments.length - 1]
  let firstUncleanableOffset = log.lastStableOffset()
  if (active && active.baseOffset < firstUncleanableOffset) firstUncleanableOffset = active.baseOffset
  const minLag = log.config.minCompactionLagMs
  if (minLag > 0) {
    for (const segment of dirtyNonActiveSegments(segments, firstDirtyOffset)) {
      const { largestTimestamp } = await readSegmentTimestamps(segment.file)
      if (largestTimestamp > BigInt(nowMs - minLag)) {
        if (segment.baseOffset < firstUncleanableOffset) firstUncleanableOffset = segment.baseOffset
        break
      }
    }
  }
  return { firstDirtyOffset, firstUncleanableOffset, forceUpdateCheckpoint }
}

/**
 * Kafka's `maxCompactionDelay`: how far past max.compaction.lag.ms the oldest dirty record is,
 * by the first batch timestamps of the dirty sealed segments (0: not past it).
 */
export async function maxCompactionDelay(log: Log, firstDirtyOffset: bigint, nowMs: number): Promise<number> {
  const maxLag = log.config.maxCompactionLagMs
  if (maxLag >= Number.MAX_SAFE_INTEGER) return 0
  let earliest: bigint | null = null
  for (const segment of dirtyNonActiveSegments(log.segments(), firstDirtyOffset)) {
    const { firstBatchTimestamp } = await readSegmentTimestamps(segment.file)
    if (firstBatchTimestamp > 0n && (earliest === null || firstBatchTimestamp < earliest)) earliest = firstBatchTimestamp
  }
  const cleanUntil = nowMs - Math.max(maxLag, 0)
  return earliest !== null && Number(earliest) < cleanUntil ? cleanUntil - Number(earliest) : 0
}

/** The sealed segments holding offsets at or after `from` (Kafka's `nonActiveLogSegmentsFrom`). */
function dirtyNonActiveSegments(segments: SegmentInfo[], from: bigint): SegmentInfo[] {
  const sealed = segments.slice(0, -1)
  const first = floorIndex(sealed, from)
  return sealed.slice(Math.max(first, 0))
}

/** The index of the last segment whose base offset is at most `offset`; -1 if none. */
function floorIndex(segments: SegmentInfo[], offset: bigint): number {
  let found = -1
  for (let i = 0; i < segments.length && segments[i]!.baseOffset <= offset; i++) found = i
  return found
}

/** Sizes of the clean and cleanable sections (Kafka's `LogToClean` with `logSegments(from, to)`). */
export function sectionSizes(segments: SegmentInfo[], firstDirtyOffset: bigint, firstUncleanableOffset: bigint): { cleanBytes: number; cleanableBytes: number } {
  let cleanBytes = 0
  let cleanableBytes = 0
  const dirtyFrom = Math.max(floorIndex(segments, firstDirtyOffset), 0)
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!
    if (s.baseOffset < firstDirtyOffset) cleanBytes += s.size
    if (firstUncleanableOffset > firstDirtyOffset && i >= dirtyFrom && s.baseOffset < firstUncleanableOffset) cleanableBytes += s.size
  }
  return { cleanBytes, cleanableBytes }
}

export class LogCleanerManager {
  readonly dataDir: string
  private readonly options: LogCleanerManagerOptions
  private readonly logger: Logger
  private readonly checkpoints: Map<TopicPartitionKey, bigint>
  private readonly states = new Map<TopicPartitionKey, LogCleaningState>()
  /** Waiters for an aborted round to end, by log. */
  private readonly abortWaiters = new Map<TopicPartitionKey, Array<() => void>>()
  /** Aborts the in-flight round of a log, if the engine can stop it early. */
  private readonly abortControllers = new Map<TopicPartitionKey, AbortController>()
  private readonly uncleanable = new Set<TopicPartitionKey>()
  /** Logs whose last round kept tombstones or markers, with their latest delete horizon. */
  private readonly pendingDeletes = new Map<TopicPartitionKey, PendingDeletes>()
  private checkpointWrite: Promise<void> = Promise.resolve()
  /** Stats of the last `grabFilthiestCompactedLog`. */
  lastPreCleanStats: PreCleanStats = { maxDirtyRatio: 0, maxCompactionDelayMs: 0, delayedPartitions: 0, cleanablePartitions: 0 }

  private constructor(options: LogCleanerManagerOptions, checkpoints: Map<TopicPartitionKey, bigint>) {
    this.options = options
    this.dataDir = options.dataDir
    this.logger = options.logger
    this.checkpoints = checkpoints
  }

  /** Reads the cleaner-offset-checkpoint (an unreadable one is a warning: every log is dirty from its start). */
  static async open(options: LogCleanerManagerOptions): Promise<LogCleanerManager> {
    const file = join(options.dataDir, CLEANER_OFFSET_CHECKPOINT_FILE)
    let checkpoints = new Map<TopicPartitionKey, bigint>()
    try {
      checkpoints = await readOffsetCheckpoint(file)
    } catch (err) {
      options.logger.warn(`cannot read ${CLEANER_OFFSET_CHECKPOINT_FILE}: every compacted log is dirty from its start`, { file, error: (err as Error).message })
    }
    return new LogCleanerManager(options, checkpoints)
  }

  /** The checkpointed first dirty offsets (Kafka's `allCleanerCheckpoints`). */
  allCleanerCheckpoints(): Map<TopicPartitionKey, bigint> {
    return new Map(this.checkpoints)
  }

  cleaningState(key: TopicPartitionKey): LogCleaningState | undefined {
    return this.states.get(key)
  }

  isCleaningInProgress(key: TopicPartitionKey): boolean {
    const state = this.states.get(key)
    return state !== undefined && state.kind !== 'paused'
  }

  /** The latest delete horizon the last round of `key` reported, if it kept tombstones or markers. */
  latestDeleteHorizon(key: TopicPartitionKey): bigint | undefined {
    return this.pendingDeletes.get(key)?.latestDeleteHorizonMs
  }

  /** How many logs are uncleanable after a failed round. */
  get uncleanablePartitionsCount(): number {
    return this.uncleanable.size
  }

  isUncleanable(key: TopicPartitionKey): boolean {
    return this.uncleanable.has(key)
  }

  markPartitionUncleanable(key: TopicPartitionKey): void {
    this.uncleanable.add(key)
  }

  /**
   * Kafka's `grabFilthiestCompactedLog`: the compacted log to clean now, marked in progress, or
   * null. Logs in a cleaning state, uncleanable ones and ones the owner keeps from the cleaner
   * are passed over.
   */
  async grabFilthiestCompactedLog(nowMs = Date.now()): Promise<LogToClean | null> {
    const stats: PreCleanStats = { maxDirtyRatio: 0, maxCompactionDelayMs: 0, delayedPartitions: 0, cleanablePartitions: 0 }
    const candidates: LogToClean[] = []
    const compacted: LogToClean[] = []
    for (const log of this.options.logs()) {
      const key = topicPartitionKey(log.topic, log.partition)
      if (!this.isCandidate(log, key)) continue
      const offsets = await cleanableOffsets(log, this.checkpoints.get(key), nowMs)
      if (!this.isCandidate(log, key)) continue
      if (offsets.forceUpdateCheckpoint) {
        this.logger.warn('the cleaner checkpoint was out of the log range: resetting the first dirty offset to the log start', { log: key, firstDirtyOffset: offsets.firstDirtyOffset })
        this.updateCheckpoint(key, offsets.firstDirtyOffset)
      }
      const delay = await maxCompactionDelay(log, offsets.firstDirtyOffset, nowMs)
      const { cleanBytes, cleanableBytes } = sectionSizes(log.segments(), offsets.firstDirtyOffset, offsets.firstUncleanableOffset)
      const totalBytes = cleanBytes + cleanableBytes
      const ltc: LogToClean = {
        key,
        log,
        ...offsets,
        cleanBytes,
        cleanableBytes,
        totalBytes,
        cleanableRatio: totalBytes === 0 ? 0 : cleanableBytes / totalBytes,
        maxCompactionDelayMs: delay,
        deleteHorizonPassed: false,
      }
      compacted.push(ltc)
      stats.cleanablePartitions++
      stats.maxDirtyRatio = Math.max(stats.maxDirtyRatio, ltc.cleanableRatio)
      stats.maxCompactionDelayMs = Math.max(stats.maxCompactionDelayMs, delay)
      if (delay > 0) stats.delayedPartitions++
      if ((delay > 0 && cleanableBytes > 0) || (cleanableBytes > 0 && ltc.cleanableRatio > log.config.minCleanableDirtyRatio)) candidates.push(ltc)
    }
    this.lastPreCleanStats = stats
    // The awaits above let others pause or close a log meanwhile: look again before taking it.
    let filthiest = candidates.filter((c) => this.isCandidate(c.log, c.key)).reduce<LogToClean | null>((best, c) => (best === null || c.cleanableRatio > best.cleanableRatio ? c : best), null)
    if (filthiest === null) {
      // None needs cleaning for its dirt: the one whose delete horizon passed first, if any.
      const now = BigInt(nowMs)
      let earliest: bigint | null = null
      for (const c of compacted) {
        const pending = this.pendingDeletes.get(c.key)
        if (pending === undefined || pending.latestDeleteHorizonMs > now || !this.isCandidate(c.log, c.key)) continue
        // A horizon before the round that reported it is not one it wrote: never clean for it again and again.
        if (pending.latestDeleteHorizonMs < BigInt(pending.roundMs)) continue
        if (earliest === null || pending.latestDeleteHorizonMs < earliest) {
          earliest = pending.latestDeleteHorizonMs
          filthiest = { ...c, deleteHorizonPassed: true }
        }
      }
    }
    if (filthiest) {
      this.states.set(filthiest.key, { kind: 'in-progress' })
      this.abortControllers.set(filthiest.key, new AbortController())
    }
    return filthiest
  }

  /** The signal that says the round of `key` under way was aborted. */
  abortSignal(key: TopicPartitionKey): AbortSignal | undefined {
    return this.abortControllers.get(key)?.signal
  }

  /**
   * Kafka's `doneCleaning`: the round of `key` ended; `endOffset` (null: it failed) is the next
   * first dirty offset, checkpointed unless the round was aborted meanwhile (then the log is
   * paused once, for whoever aborted it).
   */
  doneCleaning(key: TopicPartitionKey, endOffset: bigint | null, deletes?: { latestDeleteHorizonMs: bigint | null; roundMs: number }): void {
    const state = this.states.get(key)
    this.abortControllers.delete(key)
    if (state?.kind === 'in-progress') {
      this.states.delete(key)
      if (endOffset !== null) this.updateCheckpoint(key, endOffset)
      if (endOffset !== null && deletes !== undefined) {
        if (deletes.latestDeleteHorizonMs === null) this.pendingDeletes.delete(key)
        else this.pendingDeletes.set(key, { latestDeleteHorizonMs: deletes.latestDeleteHorizonMs, roundMs: deletes.roundMs })
      }
    } else if (state?.kind === 'aborted') {
      this.states.set(key, { kind: 'paused', count: 1 })
      const waiters = this.abortWaiters.get(key) ?? []
      this.abortWaiters.delete(key)
      for (const wake of waiters) wake()
    } else {
      this.logger.warn('a cleaning round ended for a log not in progress', { log: key, state: state?.kind ?? 'none' })
    }
  }

  /**
   * Kafka's `abortAndPauseCleaning`: the log is not cleaned until `resumeCleaning`; a round under
   * way is aborted and this resolves once it ended (its result is not checkpointed). Pauses nest.
   */
  async abortAndPauseCleaning(key: TopicPartitionKey): Promise<void> {
    const state = this.states.get(key)
    if (state === undefined) {
      this.states.set(key, { kind: 'paused', count: 1 })
      return
    }
    if (state.kind === 'paused') {
      state.count++
      return
    }
    const wasAborted = state.kind === 'aborted'
    if (!wasAborted) {
      this.states.set(key, { kind: 'aborted' })
      this.abortControllers.get(key)?.abort()
    }
    await new Promise<void>((resolve) => {
      const waiters = this.abortWaiters.get(key) ?? []
      waiters.push(resolve)
      this.abortWaiters.set(key, waiters)
    })
    // The round's end paused it once, for the caller that aborted it; a second caller adds its own.
    if (wasAborted) {
      const now = this.states.get(key)
      if (now?.kind === 'paused') now.count++
      else this.states.set(key, { kind: 'paused', count: 1 })
    }
  }

  /** Kafka's `resumeCleaning`: one pause of each log undone. */
  resumeCleaning(keys: TopicPartitionKey[]): void {
    for (const key of keys) {
      const state = this.states.get(key)
      if (state?.kind !== 'paused') {
        this.logger.warn('resuming the cleaning of a log that is not paused', { log: key, state: state?.kind ?? 'none' })
        continue
      }
      if (--state.count === 0) this.states.delete(key)
    }
  }

  /**
   * Kafka's `abortCleaning` for a deleted log: a round under way is aborted and awaited, then
   * the log's state, checkpoint entry and uncleanable mark go.
   */
  async abortCleaning(key: TopicPartitionKey): Promise<void> {
    await this.abortAndPauseCleaning(key)
    this.states.delete(key)
    this.uncleanable.delete(key)
    this.pendingDeletes.delete(key)
    if (this.checkpoints.delete(key)) await this.writeCheckpoints()
  }

  /**
   * Kafka's `maybeTruncateCheckpoint`: after a truncation to `offset`, a first dirty offset past
   * it comes back to it.
   */
  maybeTruncateCheckpoint(key: TopicPartitionKey, offset: bigint): void {
    const checkpointed = this.checkpoints.get(key)
    if (checkpointed !== undefined && checkpointed > offset) this.updateCheckpoint(key, offset)
  }

  /** Resolves once the checkpoint writes asked for so far are done. */
  async flushCheckpoints(): Promise<void> {
    await this.checkpointWrite
  }

  private isCandidate(log: Log, key: TopicPartitionKey): boolean {
    if (log.isClosed || !isCompacted(log.config)) return false
    if (this.options.cleanable && !this.options.cleanable(log.topic)) return false
    return !this.states.has(key) && !this.uncleanable.has(key)
  }

  private updateCheckpoint(key: TopicPartitionKey, offset: bigint): void {
    this.checkpoints.set(key, offset)
    void this.writeCheckpoints()
  }

  /** Writes the checkpoint file (one write after another; a failure is logged, the next write retries). */
  private writeCheckpoints(): Promise<void> {
    const write = this.checkpointWrite.then(async () => {
      try {
        await writeOffsetCheckpoint(join(this.dataDir, CLEANER_OFFSET_CHECKPOINT_FILE), this.checkpoints)
      } catch (err) {
        this.logger.error(`cannot write ${CLEANER_OFFSET_CHECKPOINT_FILE}`, { dataDir: this.dataDir, error: (err as Error).message })
      }
    })
    this.checkpointWrite = write
    return write
  }
}
