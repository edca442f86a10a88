/**
 * `LogCleaner`: the background compaction of a data directory's compacted logs (Kafka's
 * LogCleaner and its CleanerThreads). Each cleaner thread is a loop on the event loop: it asks
 * the LogCleanerManager for the filthiest log (ts/storage/log-cleaner-manager.ts), runs one round
 * of `Log.clean` on it (the engine builds the offset map and rewrites and swaps the segments off
 * the JS thread), checkpoints where the round ended and hands the manager the latest delete
 * horizon of the tombstones and markers the round kept (its trigger for the round that removes
 * them when nothing else brings one), logs a summary, and waits
 * log.cleaner.backoff.ms when no log needs cleaning. A round that fails marks its log
 * uncleanable (logged, counted in the metrics) and the loop goes on. `shutdown` stops the loops
 * and waits for the rounds under way.
 *
 * Each thread gets log.cleaner.dedupe.buffer.size / log.cleaner.threads bytes for its offset map.
 */
import { topicPartitionKey } from './checkpoint-file.js'
import type { Log } from './log.js'
import type { LogCleanerManager, LogToClean } from './log-cleaner-manager.js'
import type { LogCleanResult } from './types.js'
import type { Logger } from '../logger.js'

/** Kafka's CleanerConfig, from the broker's log.cleaner.* settings (ts/config/broker-configs.ts). */
export { DEFAULT_CLEANER_CONFIG, type CleanerConfig } from '../config/broker-configs.js'
import type { CleanerConfig } from '../config/broker-configs.js'

/** The largest offset map of one thread: 2 GiB - 1. */
const MAX_DEDUPE_BUFFER_PER_THREAD = 2 ** 31 - 1

/** Totals over the cleaner's life, for the metrics (Kafka's LogCleaner metrics). */
export interface LogCleanerStats {
  /** Rounds that ended, cleaned or not. */
  runs: number
  /** Rounds that failed (their logs are uncleanable). */
  failures: number
  bytesRead: number
  bytesWritten: number
  recordsRead: number
  recordsRetained: number
  /** Keys in the offset map / its slots in the last round, percent (max-buffer-utilization-percent). */
  maxBufferUtilizationPercent: number
  /** When the last round ended (ms since the epoch), or when the cleaner started. */
  lastRunEndMs: number
}

export class LogCleaner {
  readonly config: CleanerConfig
  readonly manager: LogCleanerManager
  private readonly logger: Logger
  private readonly loops: Promise<void>[] = []
  /** The ids of the threads running (a thread past log.cleaner.threads ends after its round). */
  private readonly running = new Set<number>()
  private stopped = false
  /** Wakes the loops sleeping out their backoff (shutdown). */
  private readonly sleepers = new Set<() => void>()
  readonly stats: LogCleanerStats

  constructor(config: CleanerConfig, manager: LogCleanerManager, logger: Logger) {
    this.config = config
    this.manager = manager
    this.logger = logger
    this.stats = { runs: 0, failures: 0, bytesRead: 0, bytesWritten: 0, recordsRead: 0, recordsRetained: 0, maxBufferUtilizationPercent: 0, lastRunEndMs: Date.now() }
  }

  /** Starts log.cleaner.threads loops (none when the cleaner is off). */
  startup(): void {
    if (!this.config.enableCleaner || this.loops.length > 0 || this.stopped) return
    this.startThreads()
    this.logger.info('log cleaner started', { dataDir: this.manager.dataDir, threads: this.config.numThreads, dedupeBufferSize: this.config.dedupeBufferSize, backOffMs: this.config.backOffMs })
  }

  /**
   * log.cleaner.threads changed while running (Kafka's LogCleaner.reconfigure, KIP-226): threads
   * up to the new count start; those past it end once their round (if any) ends.
   */
  reconfigure(): void {
    if (!this.config.enableCleaner || this.stopped || this.loops.length === 0) return
    this.startThreads()
    for (const wake of this.sleepers) wake()
    this.logger.info('log cleaner reconfigured', { threads: this.config.numThreads })
  }

  /** How many cleaner threads run now. */
  get threads(): number {
    return this.running.size
  }

  private startThreads(): void {
    for (let id = 0; id < this.config.numThreads; id++) if (!this.running.has(id)) this.loops.push(this.run(id))
  }

  /** Stops the loops; resolves when the rounds under way ended. */
  async shutdown(): Promise<void> {
    this.stopped = true
    for (const wake of this.sleepers) wake()
    await Promise.all(this.loops)
    await this.manager.flushCheckpoints()
  }

  /**
   * Kafka's `tryCleanFilthiestLog`: one round on the filthiest compacted log, if any needs it;
   * whether a round ran. `threadId` names the cleaner in its log line.
   */
  async cleanFilthiestLog(threadId = 0, nowMs = Date.now()): Promise<boolean> {
    const ltc = await this.manager.grabFilthiestCompactedLog(nowMs)
    if (ltc === null) return false
    let endOffset: bigint | null = null
    let deletes: { latestDeleteHorizonMs: bigint | null; roundMs: number } | undefined
    try {
      const result = await this.clean(ltc, threadId, nowMs)
      if (!result.aborted) {
        endOffset = result.endOffset
        deletes = { latestDeleteHorizonMs: result.latestDeleteHorizonMs, roundMs: nowMs }
      }
    } catch (err) {
      this.stats.failures++
      this.manager.markPartitionUncleanable(ltc.key)
      this.logger.error('log cleaning failed: the log is uncleanable until restart', { cleaner: threadId, log: ltc.key, error: (err as Error).message })
    } finally {
      this.manager.doneCleaning(ltc.key, endOffset, deletes)
      this.stats.runs++
      this.stats.lastRunEndMs = Date.now()
    }
    return true
  }

  private async clean(ltc: LogToClean, threadId: number, nowMs: number): Promise<LogCleanResult> {
    const log = ltc.log
    // Per thread, at most what one map may address (Kafka requires the same of each thread).
    const dedupeBufferSize = Math.min(Math.floor(this.config.dedupeBufferSize / Math.max(this.config.numThreads, 1)), MAX_DEDUPE_BUFFER_PER_THREAD)
    const sizeBefore = sizeOf(log)
    const started = Date.now()
    this.logger.info('cleaning log', {
      cleaner: threadId,
      log: ltc.key,
      firstDirtyOffset: ltc.firstDirtyOffset,
      firstUncleanableOffset: ltc.firstUncleanableOffset,
      dirtyRatio: round(ltc.cleanableRatio, 3),
      maxCompactionDelayMs: ltc.maxCompactionDelayMs,
      deleteHorizonPassed: ltc.deleteHorizonPassed,
    })
    const result = await log.clean({
      firstDirtyOffset: ltc.firstDirtyOffset,
      firstUncleanableOffset: ltc.firstUncleanableOffset,
      currentTimeMs: BigInt(nowMs),
      deleteRetentionMs: BigInt(log.config.deleteRetentionMs),
      dedupeBufferSize,
    })
    const seconds = Math.max((Date.now() - started) / 1000, 0.001)
    if (result.aborted) {
      this.logger.info('log cleaning aborted', { cleaner: threadId, log: ltc.key })
      return result
    }
    this.stats.bytesRead += result.bytesRead
    this.stats.bytesWritten += result.bytesWritten
    this.stats.recordsRead += result.recordsRead
    this.stats.recordsRetained += result.recordsRetained
    this.stats.maxBufferUtilizationPercent = round(100 * result.bufferUtilization, 1)
    const sizeAfter = log.isClosed ? sizeBefore : sizeOf(log)
    const mb = (n: number) => round(n / (1024 * 1024), 2)
    // Kafka's cleaner log summary, one line.
    this.logger.info('log cleaned', {
      cleaner: threadId,
      log: ltc.key,
      dirtySection: `[${ltc.firstDirtyOffset}, ${result.endOffset})`,
      mbRead: mb(result.bytesRead),
      mbWritten: mb(result.bytesWritten),
      seconds: round(seconds, 3),
      mbPerSec: round(mb(result.bytesRead) / seconds, 2),
      bufferUtilizationPercent: this.stats.maxBufferUtilizationPercent,
      keysInMap: result.mapSize,
      segmentsBefore: result.segmentsBefore,
      segmentsAfter: result.segmentsAfter,
      recordsRead: result.recordsRead,
      recordsRetained: result.recordsRetained,
      startSizeBytes: sizeBefore,
      endSizeBytes: sizeAfter,
      sizeReductionPercent: sizeBefore > 0 ? round((100 * (sizeBefore - sizeAfter)) / sizeBefore, 1) : 0,
      latestDeleteHorizonMs: result.latestDeleteHorizonMs,
    })
    return result
  }

  /** One cleaner thread: clean while there is work, else back off; until shutdown. */
  private async run(threadId: number): Promise<void> {
    this.running.add(threadId)
    try {
      await this.loop(threadId)
    } finally {
      this.running.delete(threadId)
    }
  }

  private async loop(threadId: number): Promise<void> {
    while (!this.stopped && threadId < this.config.numThreads) {
      let cleaned = false
      try {
        cleaned = await this.cleanFilthiestLog(threadId)
      } catch (err) {
        this.logger.error('log cleaner thread error', { cleaner: threadId, error: (err as Error).message })
      }
      if (!cleaned && !this.stopped && threadId < this.config.numThreads) await this.backOff()
    }
  }

  private backOff(): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        this.sleepers.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, this.config.backOffMs)
      timer.unref()
      this.sleepers.add(wake)
    })
  }
}

/** The key of a log in the cleaner's maps. */
export function cleanerKey(log: Pick<Log, 'topic' | 'partition'>): string {
  return topicPartitionKey(log.topic, log.partition)
}

function sizeOf(log: Log): number {
  return log.segments().reduce((sum, s) => sum + s.size, 0)
}

function round(n: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(n * f) / f
}
