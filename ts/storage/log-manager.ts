/**
 * `LogManager`: the logs of one data directory, as Kafka's LogManager keeps them.
 *
 * Layout of the data directory:
 *
 *   <dataDir>/<topic>-<partition>/          one log each (docs/storage.md)
 *   <dataDir>/<topic>-<partition>.<id>-delete/   a deleted log, being removed (Kafka's name;
 *                                           <id> is 32 hex digits); removed at startup if left
 *   <dataDir>/<topic>-<partition>.<id>-stray/    a directory the owner did not accept at startup
 *                                           (`accept`: no such topic, or another topic id), or
 *                                           found in the way of a new log; kept, never served
 *   <dataDir>/recovery-point-offset-checkpoint   offsets below which each log was flushed
 *   <dataDir>/log-start-offset-checkpoint        each log's start offset
 *   <dataDir>/replication-offset-checkpoint      each log's high watermark, with the 'managed'
 *                                           policy only (replicated logs, whose high watermark
 *                                           the leader sets); Kafka's name and format
 *   <dataDir>/cleaner-offset-checkpoint          each compacted log's first dirty offset (the
 *                                           log cleaner's, ts/storage/log-cleaner-manager.ts)
 *   <dataDir>/.kafka_cleanshutdown               present only after a clean close
 *
 * Opening reads the checkpoints and the clean-shutdown marker, opens every partition directory
 * (recovering those that need it, off the JS thread), then removes the marker. A checkpoint that
 * cannot be read or parsed (truncated, garbage, an unknown version) is not fatal, as in Kafka's
 * LogManager.loadLogs: a warning, then every recovery point is 0 (logs not shut down cleanly
 * are recovered in full) or every log starts at its first segment's base offset; the next
 * checkpoint rewrites the file. Closing closes every log, writes the checkpoints, and writes
 * the marker last. A managed log opens at its checkpointed high watermark (bounded by its log
 * end), as Kafka's ReplicaManager restores it, so a restarted leader does not hide what
 * consumers could read before; without a checkpoint it opens at its log start.
 *
 * Deleting a log closes it and renames its directory to `-delete` at once (the data directory is
 * fsynced, so a crash cannot bring it back under its old name), then removes it in the
 * background (`idle` waits for that). Creating a topic's logs (`createLogs`) is all or nothing.
 *
 * With `cleaner` the log cleaner (ts/storage/log-cleaner.ts) compacts the logs whose
 * cleanup.policy includes compact; it starts with the schedulers and stops first on close.
 * Whatever changes a log under the cleaner pauses its cleaning first, as Kafka's LogManager
 * does: deletion aborts a round under way and drops the log's checkpoint entry, truncation
 * (`truncateTo`, `truncateFullyAndStartAt`) pauses it and brings the checkpoint back within the
 * log, and retention skips a log being cleaned until its next check.
 */
import { randomBytes } from 'node:crypto'
import { access, mkdir, open as openFile, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readOffsetCheckpoint, topicPartitionKey, writeOffsetCheckpoint, type TopicPartitionKey } from './checkpoint-file.js'
import { StorageError } from './errors.js'
import { Log, type HighWatermarkPolicy } from './log.js'
import { defaultEngine } from '../native/binding.js'
import { backendNamed, type BackendName } from './backends.js'
import { readPartitionMetadata, uuidToString, writePartitionMetadata } from './partition-metadata.js'
import { DEFAULT_LOG_CONFIG, engineLogConfig, type LogConfig, type StorageBackend } from './types.js'
import { createLogger, type Logger } from '../logger.js'
import { LogCleaner, type CleanerConfig } from './log-cleaner.js'
import { LogCleanerManager } from './log-cleaner-manager.js'

export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown'
export const RECOVERY_POINT_CHECKPOINT_FILE = 'recovery-point-offset-checkpoint'
export const LOG_START_OFFSET_CHECKPOINT_FILE = 'log-start-offset-checkpoint'
export const REPLICATION_OFFSET_CHECKPOINT_FILE = 'replication-offset-checkpoint'

/** Kafka's topic name rule: 1 to 249 of [a-zA-Z0-9._-], not "." or "..". */
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/
const PARTITION_DIR = /^([a-zA-Z0-9._-]+)-(\d+)$/
/** Kafka's suffixes (UnifiedLog.DeleteDirSuffix, StrayDirSuffix) after `.<32 hex digits>`. */
export const DELETE_DIR_SUFFIX = '-delete'
export const STRAY_DIR_SUFFIX = '-stray'
const DELETE_DIR = /^[a-zA-Z0-9._-]+-\d+\.[0-9a-f]{32}-delete$/

export interface LogManagerOptions {
  dataDir: string
  /** 'native' (the Rust engine, default) or 'js' (the pure-TypeScript twin). */
  backend?: BackendName | StorageBackend
  /** Defaults for every log; Kafka's defaults where not given. */
  defaultConfig?: Partial<LogConfig>
  /** Per-topic overrides, asked for when a log is opened or created. */
  topicConfig?: (topic: string) => Partial<LogConfig> | undefined
  /** 'log-end' (default): the high watermark follows the log end, as for one replica. */
  highWatermark?: HighWatermarkPolicy
  /** log.retention.check.interval.ms; 0 or less turns the retention scheduler off. Default 300000. */
  retentionCheckIntervalMs?: number
  /** log.flush.offset.checkpoint.interval.ms; default 60000. */
  checkpointIntervalMs?: number
  /** replica.high.watermark.checkpoint.interval.ms (the 'managed' policy only); default 5000. */
  highWatermarkCheckpointIntervalMs?: number
  logger?: Logger
  /**
   * Whether a partition directory found at startup is served, given the topic id of its
   * partition.metadata (null without one). One not accepted (a topic the owner does not hold,
   * or a directory of another topic of the same name) is renamed `-stray` and not opened.
   * Default: every directory is accepted.
   */
  accept?: (topic: string, partition: number, topicId: Buffer | null) => boolean
  /**
   * The bound on sealed segments whose `.log` the backend keeps open at once (process-wide for
   * that backend; default 1000): opening logs holds descriptors for the active segments only,
   * and reads open sealed segments under this bound (docs/storage.md "Open files").
   */
  maxOpenSegments?: number
  /** The log cleaner's settings (log.cleaner.*); absent or disabled: no log is compacted. */
  cleaner?: CleanerConfig
  /** Whether the cleaner may compact a topic's logs (default: all compacted logs). */
  cleanable?: (topic: string) => boolean
}

/** The default of `maxOpenSegments` (both engines'; docs/storage.md "Open files"). */
export { DEFAULT_MAX_OPEN_SEGMENTS } from './js/open-segments.js'

export class LogManager {
  readonly dataDir: string
  readonly backend: StorageBackend
  /** Whether the last stop of this data directory was clean (no recovery was needed). */
  readonly hadCleanShutdown: boolean
  private readonly options: LogManagerOptions
  private readonly logs = new Map<TopicPartitionKey, Log>()
  private readonly creating = new Map<TopicPartitionKey, Promise<Log>>()
  private readonly logger: Logger
  private readonly timers: NodeJS.Timeout[] = []
  private readonly segmentsDeletedListeners: Array<(log: Log) => void> = []
  /** Removals of `-delete` directories under way. */
  private readonly removals = new Set<Promise<void>>()
  private closed = false
  /** The log cleaner; null when it is off. */
  cleaner: LogCleaner | null = null

  private constructor(options: LogManagerOptions, backend: StorageBackend, hadCleanShutdown: boolean, logger: Logger) {
    this.options = options
    this.dataDir = options.dataDir
    this.backend = backend
    this.hadCleanShutdown = hadCleanShutdown
    this.logger = logger
  }

  static async open(options: LogManagerOptions): Promise<LogManager> {
    const logger = options.logger ?? createLogger()
    const backend = typeof options.backend === 'object' ? options.backend : backendNamed(options.backend ?? defaultEngine())
    if (options.maxOpenSegments !== undefined) backend.setMaxOpenSegments(options.maxOpenSegments)
    await mkdir(options.dataDir, { recursive: true })
    const marker = join(options.dataDir, CLEAN_SHUTDOWN_FILE)
    const hadCleanShutdown = await exists(marker)
    const manager = new LogManager(options, backend, hadCleanShutdown, logger)
    try {
      await manager.loadLogs()
    } catch (err) {
      // Close what did open (its indexes trimmed, nothing else written): the directory is left
      // as it was found, the clean-shutdown marker and checkpoints included.
      manager.closed = true
      for (const log of manager.logs.values()) await log.close().catch(() => undefined)
      throw err
    }
    await rm(marker, { force: true })
    if (options.cleaner?.enableCleaner) {
      const cleanerManager = await LogCleanerManager.open({ dataDir: options.dataDir, logs: () => manager.allLogs(), cleanable: options.cleanable, logger })
      manager.cleaner = new LogCleaner(options.cleaner, cleanerManager, logger)
    }
    manager.startSchedulers()
    manager.cleaner?.startup()
    return manager
  }

  /** The log of a topic-partition, or undefined. */
  getLog(topic: string, partition: number): Log | undefined {
    return this.logs.get(topicPartitionKey(topic, partition))
  }

  allLogs(): Log[] {
    return [...this.logs.values()]
  }

  /** The log of a topic-partition, created (with its directory) when it does not exist. */
  async getOrCreateLog(topic: string, partition: number, options: { config?: Partial<LogConfig>; topicId?: Buffer } = {}): Promise<Log> {
    this.ensureOpen()
    if (!LEGAL_TOPIC.test(topic) || topic === '.' || topic === '..') {
      throw new StorageError('INVALID_ARGUMENT', `illegal topic name "${topic}"`)
    }
    if (!Number.isInteger(partition) || partition < 0) {
      throw new StorageError('INVALID_ARGUMENT', `illegal partition ${partition}`)
    }
    const key = topicPartitionKey(topic, partition)
    const existing = this.logs.get(key)
    if (existing) return existing
    const pending = this.creating.get(key)
    if (pending) return pending
    const creation = this.createLog(topic, partition, key, options).finally(() => this.creating.delete(key))
    this.creating.set(key, creation)
    return creation
  }

  /**
   * Applies a topic's settings as `topicConfig` now gives them to each of its open logs (after
   * AlterConfigs); a bad value throws INVALID_ARGUMENT before any log changes.
   */
  reconfigureTopic(topic: string): void {
    this.ensureOpen()
    const config = this.configFor(topic)
    for (const log of this.logs.values()) if (log.topic === topic) log.updateConfig(config)
  }

  /**
   * Applies the settings `topicConfig` and the (changed) default config now give to every open
   * log (a dynamic change of the broker's log defaults); a bad value throws INVALID_ARGUMENT.
   */
  reconfigureAll(): void {
    this.ensureOpen()
    for (const log of this.logs.values()) log.updateConfig(this.configFor(log.topic))
  }

  /**
   * Creates the logs of `partitions` of a topic (CreateTopics, CreatePartitions), all or
   * nothing: their directories and partition.metadata are made and the logs opened, then
   * `commit` runs (the broker records the topic), and only then are the logs served. If a
   * creation or `commit` fails, the logs made are closed and their directories removed, and the
   * error is thrown. A directory of the same name already on disk (not a log served here) is set
   * aside as `-stray` first: a new log never starts with another log's records.
   */
  async createLogs(topic: string, partitions: number[], options: { config?: Partial<LogConfig>; topicId: Buffer }, commit: () => Promise<void> = async () => {}): Promise<Log[]> {
    this.ensureOpen()
    if (!LEGAL_TOPIC.test(topic) || topic === '.' || topic === '..') {
      throw new StorageError('INVALID_ARGUMENT', `illegal topic name "${topic}"`)
    }
    for (const p of partitions) {
      const key = topicPartitionKey(topic, p)
      if (!Number.isInteger(p) || p < 0) throw new StorageError('INVALID_ARGUMENT', `illegal partition ${p}`)
      if (this.logs.has(key) || this.creating.has(key)) throw new StorageError('INVALID_ARGUMENT', `log ${key} exists`)
    }
    const made: Array<{ key: TopicPartitionKey; dir: string; log: Log | null }> = []
    try {
      for (const partition of partitions) {
        const key = topicPartitionKey(topic, partition)
        const dir = join(this.dataDir, key)
        if (await exists(dir)) await this.setAside(dir, STRAY_DIR_SUFFIX, 'a directory was in the way of a new log')
        const entry: { key: TopicPartitionKey; dir: string; log: Log | null } = { key, dir, log: null }
        made.push(entry)
        entry.log = await this.openNewLog(topic, partition, dir, options)
      }
      await commit()
    } catch (err) {
      for (const { dir, log } of made.reverse()) {
        await log?.close().catch(() => undefined)
        await rm(dir, { recursive: true, force: true }).catch((e) => this.logger.error('cannot remove a log directory made for a failed creation', { dir, error: String(e) }))
      }
      throw err
    }
    for (const { key, dir, log } of made) {
      this.logs.set(key, log!)
      this.logger.info('created log', { log: key, dir })
    }
    return made.map((m) => m.log!)
  }

  /**
   * Deletes a log (DeleteTopics): closes it, renames its directory to
   * `<topic>-<partition>.<id>-delete` (fsyncing the data directory) and removes that in the
   * background. Once this resolves the name is free: a log created under it starts empty.
   */
  async deleteLog(topic: string, partition: number): Promise<void> {
    const key = topicPartitionKey(topic, partition)
    const log = this.logs.get(key)
    if (!log) return
    this.logs.delete(key)
    this.lastFlushMs.delete(key)
    await this.cleaner?.manager.abortCleaning(key)
    await log.close().catch((err) => this.logger.warn('closing a deleted log failed', { log: key, error: String(err) }))
    const renamed = await this.setAside(join(this.dataDir, key), DELETE_DIR_SUFFIX, null)
    if (renamed) this.removeInBackground(renamed)
    for (const listener of this.segmentsDeletedListeners) listener(log)
  }

  /** Resolves once the removals of deleted logs' directories under way are done. */
  async idle(): Promise<void> {
    while (this.removals.size > 0) await Promise.all([...this.removals])
  }

  /** Writes the recovery-point and log-start-offset checkpoints. */
  async checkpoint(): Promise<void> {
    const recoveryPoints = new Map<TopicPartitionKey, bigint>()
    const startOffsets = new Map<TopicPartitionKey, bigint>()
    for (const [key, log] of this.logs) {
      if (log.isClosed) continue
      recoveryPoints.set(key, log.recoveryPoint())
      startOffsets.set(key, log.logStartOffset())
    }
    await writeOffsetCheckpoint(join(this.dataDir, RECOVERY_POINT_CHECKPOINT_FILE), recoveryPoints)
    await writeOffsetCheckpoint(join(this.dataDir, LOG_START_OFFSET_CHECKPOINT_FILE), startOffsets)
  }

  /** Whether the logs' high watermarks are set by their owner (and checkpointed). */
  private get managedHighWatermarks(): boolean {
    return this.options.highWatermark === 'managed'
  }

  /** Writes the high-watermark checkpoint (replication-offset-checkpoint) of managed logs. */
  async checkpointHighWatermarks(): Promise<void> {
    if (!this.managedHighWatermarks) return
    const highWatermarks = new Map<TopicPartitionKey, bigint>()
    for (const [key, log] of this.logs) if (!log.isClosed) highWatermarks.set(key, log.highWatermark())
    await writeOffsetCheckpoint(join(this.dataDir, REPLICATION_OFFSET_CHECKPOINT_FILE), highWatermarks)
  }

  /**
   * Calls `listener` after retention deleted segments of a log (its log start offset moved), or
   * after the whole log was deleted (DeleteTopics); the replica manager wakes the fetches parked
   * on it.
   */
  onSegmentsDeleted(listener: (log: Log) => void): void {
    this.segmentsDeletedListeners.push(listener)
  }

  /**
   * Runs retention on every log once; the number of segments deleted. A log the cleaner is
   * cleaning is passed over until the next check; the others are paused for the cleaner
   * meanwhile (Kafka's `pauseCleaningForNonCompactedPartitions`, for every log here).
   */
  async cleanupLogs(nowMs = Date.now()): Promise<number> {
    let deleted = 0
    for (const [key, log] of this.logs) {
      if (log.isClosed) continue
      const cleanerManager = this.cleaner?.manager
      if (cleanerManager?.isCleaningInProgress(key)) continue
      await cleanerManager?.abortAndPauseCleaning(key)
      let n: number
      try {
        if (log.isClosed) continue
        n = await log.deleteOldSegments(nowMs)
      } finally {
        cleanerManager?.resumeCleaning([key])
      }
      deleted += n
      if (n > 0) for (const listener of this.segmentsDeletedListeners) listener(log)
    }
    return deleted
  }

  /**
   * Kafka's `LogManager.truncateTo` for one log: its cleaning is paused (a round under way
   * aborted and awaited), the log truncated to `offset`, the cleaner's checkpoint brought back
   * to the active segment's base, and cleaning resumed.
   */
  async truncateTo(log: Log, offset: bigint): Promise<void> {
    await this.withCleaningPaused(log, () => log.truncateTo(offset))
  }

  /** Kafka's `LogManager.truncateFullyAndStartAt` for one log, paused for the cleaner as `truncateTo`. */
  async truncateFullyAndStartAt(log: Log, offset: bigint): Promise<void> {
    await this.withCleaningPaused(log, () => log.truncateFullyAndStartAt(offset))
  }

  private async withCleaningPaused(log: Log, change: () => Promise<void>): Promise<void> {
    const cleanerManager = this.cleaner?.manager
    if (!cleanerManager) return change()
    const key = topicPartitionKey(log.topic, log.partition)
    await cleanerManager.abortAndPauseCleaning(key)
    try {
      await change()
      const segments = log.segments()
      const activeBase = segments.length > 0 ? segments[segments.length - 1]!.baseOffset : log.logEndOffset()
      cleanerManager.maybeTruncateCheckpoint(key, activeBase)
    } finally {
      cleanerManager.resumeCleaning([key])
    }
  }

  /** Flushes the logs whose flush.ms has passed since their last flush. */
  async flushDirtyLogs(nowMs = Date.now()): Promise<void> {
    for (const [key, log] of this.logs) {
      const last = this.lastFlushMs.get(key) ?? nowMs
      if (!this.lastFlushMs.has(key)) this.lastFlushMs.set(key, nowMs)
      if (log.isClosed || nowMs - last < log.config.flushMs) continue
      this.lastFlushMs.set(key, nowMs)
      await log.flush()
    }
  }

  private readonly lastFlushMs = new Map<TopicPartitionKey, number>()

  /** Clean shutdown: close every log (flushing it), checkpoint, then write the marker. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const timer of this.timers) clearInterval(timer)
    await this.cleaner?.shutdown()
    await Promise.all([...this.creating.values()].map((p) => p.catch(() => undefined)))
    const logs = [...this.logs.values()]
    // Checkpoint after closing: close flushes, which moves each recovery point to its log end.
    // Every log is closed even when one fails (a full disk, a failed fsync); a log that failed
    // keeps the recovery point it had, and without the clean-shutdown marker the next start
    // recovers what was not flushed.
    const recoveryPoints = new Map<TopicPartitionKey, bigint>()
    const startOffsets = new Map<TopicPartitionKey, bigint>()
    const highWatermarks = new Map<TopicPartitionKey, bigint>()
    let failure: unknown = null
    for (const [key, log] of this.logs) {
      const recoveryPoint = log.recoveryPoint()
      if (!log.isClosed) highWatermarks.set(key, log.highWatermark())
      try {
        await log.close()
        recoveryPoints.set(key, log.logEndOffset())
      } catch (err) {
        failure ??= err
        this.logger.error('cannot close a log cleanly', { log: key, error: (err as Error).message })
        recoveryPoints.set(key, recoveryPoint)
      }
      startOffsets.set(key, log.logStartOffset())
    }
    await writeOffsetCheckpoint(join(this.dataDir, RECOVERY_POINT_CHECKPOINT_FILE), recoveryPoints)
    await writeOffsetCheckpoint(join(this.dataDir, LOG_START_OFFSET_CHECKPOINT_FILE), startOffsets)
    if (this.managedHighWatermarks) await writeOffsetCheckpoint(join(this.dataDir, REPLICATION_OFFSET_CHECKPOINT_FILE), highWatermarks)
    if (failure !== null) throw failure
    await writeFile(join(this.dataDir, CLEAN_SHUTDOWN_FILE), '')
    await this.idle()
    this.logger.info('log manager closed cleanly', { dataDir: this.dataDir, logs: logs.length })
  }

  /**
   * As after a crash, for tests (the in-process cluster's `killBroker`): the timers and the
   * cleaner stop and the logs' files close, but no checkpoint and no clean-shutdown marker is
   * written, so the next open recovers every log from its last checkpointed recovery point. The
   * engine's close still syncs the files and trims the indexes (a process crash keeps what was
   * written anyway: it is in the page cache), so recovery finds the same records a killed process
   * leaves.
   */
  async abandon(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const timer of this.timers) clearInterval(timer)
    await this.cleaner?.shutdown()
    await Promise.all([...this.creating.values()].map((p) => p.catch(() => undefined)))
    for (const log of this.logs.values()) await log.close().catch(() => undefined)
    await this.idle()
    this.logger.info('log manager abandoned (no checkpoints, no clean-shutdown marker)', { dataDir: this.dataDir })
  }

  private configFor(topic: string, overrides?: Partial<LogConfig>): LogConfig {
    return {
      ...DEFAULT_LOG_CONFIG,
      ...this.options.defaultConfig,
      ...this.options.topicConfig?.(topic),
      ...overrides,
    }
  }

  private async loadLogs(): Promise<void> {
    const recoveryPoints = await this.readCheckpointOrWarn(RECOVERY_POINT_CHECKPOINT_FILE, 'resetting every recovery point to 0')
    const startOffsets = await this.readCheckpointOrWarn(LOG_START_OFFSET_CHECKPOINT_FILE, "starting every log at its first segment's base offset")
    const highWatermarks = this.managedHighWatermarks
      ? await this.readCheckpointOrWarn(REPLICATION_OFFSET_CHECKPOINT_FILE, 'every high watermark starts at its log start offset')
      : new Map<TopicPartitionKey, bigint>()
    const entries = await readdir(this.dataDir, { withFileTypes: true })
    // Deletions the last run did not finish (Kafka's LogManager removes these at startup too).
    for (const e of entries) if (e.isDirectory() && DELETE_DIR.test(e.name)) this.removeInBackground(join(this.dataDir, e.name))
    const dirs = entries.filter((e) => e.isDirectory() && PARTITION_DIR.test(e.name))
    if (!this.hadCleanShutdown && dirs.length > 0) {
      this.logger.warn('no clean-shutdown marker: recovering logs from their recovery points', { dataDir: this.dataDir })
    }
    const loads = await Promise.allSettled(
      dirs.map(async (entry) => {
        // `dirs` holds only names PARTITION_DIR matches, and both its groups take part in a match.
        const [, topic = '', partitionText = ''] = PARTITION_DIR.exec(entry.name)!
        const partition = Number(partitionText)
        const key = topicPartitionKey(topic, partition)
        const dir = join(this.dataDir, entry.name)
        const topicId = await readPartitionMetadata(dir)
        if (this.options.accept && !this.options.accept(topic, partition, topicId)) {
          await this.setAside(dir, STRAY_DIR_SUFFIX, `not accepted (topic id ${topicId ? uuidToString(topicId) : 'none'})`)
          return
        }
        const started = Date.now()
        const raw = await this.backend.openLog({
          dir,
          config: engineLogConfig(this.configFor(topic)),
          recoveryPoint: recoveryPoints.get(key) ?? 0n,
          logStartOffset: startOffsets.get(key) ?? 0n,
          hadCleanShutdown: this.hadCleanShutdown,
        })
        const log = new Log(raw, {
          topic,
          partition,
          config: this.configFor(topic),
          topicId,
          highWatermark: this.options.highWatermark ?? 'log-end',
          compressor: this.backend.compress,
        })
        if (this.managedHighWatermarks) log.updateHighWatermark(highWatermarks.get(key) ?? 0n)
        const report = raw.recoveryReport()
        for (const message of report.messages) this.logger.warn(message, { log: key })
        this.logger.info('loaded log', {
          log: key,
          logStartOffset: log.logStartOffset(),
          logEndOffset: log.logEndOffset(),
          segmentsRecovered: report.segmentsRecovered,
          bytesTruncated: report.bytesTruncated,
          ms: Date.now() - started,
        })
        this.logs.set(key, log)
      }),
    )
    const failed = loads.find((l) => l.status === 'rejected')
    if (failed) this.rethrowOpenFailure(failed.reason, dirs.length)
  }

  /**
   * Rethrows a failure to open the `count` logs found; running out of file descriptors (the
   * active segment of every log holds its .log, .index and .timeindex open, so at least 3 per
   * partition; sealed segments hold none at start) is said so.
   */
  private rethrowOpenFailure(err: unknown, count: number): never {
    if (!outOfFileDescriptors(err)) throw err
    throw new StorageError(
      'STORAGE_ERROR',
      `cannot open the ${count} partition directories of ${this.dataDir}: out of file descriptors ` +
        `(${(err as Error).message}); each partition's active segment keeps 3 files open, so this needs at least ${3 * count}: ` +
        'raise the open-file limit (ulimit -n) or keep fewer partitions (max.broker.partitions)',
      { cause: err },
    )
  }

  private async readCheckpointOrWarn(name: string, fallback: string): Promise<Map<TopicPartitionKey, bigint>> {
    const file = join(this.dataDir, name)
    try {
      return await readOffsetCheckpoint(file)
    } catch (err) {
      this.logger.warn(`cannot read ${name}: ${fallback}`, { file, error: (err as Error).message })
      return new Map()
    }
  }

  private async createLog(topic: string, partition: number, key: TopicPartitionKey, options: { config?: Partial<LogConfig>; topicId?: Buffer }): Promise<Log> {
    const dir = join(this.dataDir, key)
    const log = await this.openNewLog(topic, partition, dir, options)
    this.logs.set(key, log)
    this.logger.info('created log', { log: key, dir })
    return log
  }

  /** Makes a log's directory (and partition.metadata) and opens it, without serving it. */
  private async openNewLog(topic: string, partition: number, dir: string, options: { config?: Partial<LogConfig>; topicId?: Buffer }): Promise<Log> {
    await mkdir(dir, { recursive: true })
    if (options.topicId) await writePartitionMetadata(dir, options.topicId)
    const config = this.configFor(topic, options.config)
    const raw = await this.backend.openLog({ dir, config: engineLogConfig(config), recoveryPoint: 0n, logStartOffset: 0n, hadCleanShutdown: true })
    return new Log(raw, {
      topic,
      partition,
      config,
      topicId: options.topicId ?? null,
      highWatermark: this.options.highWatermark ?? 'log-end',
      compressor: this.backend.compress,
    })
  }

  /**
   * Renames `dir` to `<dir>.<32 hex digits><suffix>` and fsyncs the data directory; the new
   * path, or null when `dir` is gone already. `why`, when given, is logged (a stray).
   */
  private async setAside(dir: string, suffix: string, why: string | null): Promise<string | null> {
    const to = `${dir}.${randomBytes(16).toString('hex')}${suffix}`
    try {
      await rename(dir, to)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw new StorageError('STORAGE_ERROR', `cannot rename ${dir} to ${to}: ${(err as Error).message}`, { cause: err })
    }
    await fsyncDir(this.dataDir)
    if (why !== null) this.logger.warn('set a partition directory aside', { dir, to, why })
    return to
  }

  private removeInBackground(dir: string): void {
    const removal = rm(dir, { recursive: true, force: true })
      .catch((err) => this.logger.error('cannot remove a deleted log directory', { dir, error: String(err) }))
      .finally(() => this.removals.delete(removal))
    this.removals.add(removal)
  }

  private startSchedulers(): void {
    const every = (ms: number, task: () => Promise<unknown>, what: string) => {
      if (!(ms > 0) || ms >= 2 ** 31) return
      let running = false
      const timer = setInterval(() => {
        if (running || this.closed) return
        running = true
        task()
          .catch((err) => this.logger.error(`${what} failed`, { error: String(err) }))
          .finally(() => (running = false))
      }, ms)
      timer.unref()
      this.timers.push(timer)
    }
    every(this.options.retentionCheckIntervalMs ?? 300_000, () => this.cleanupLogs(), 'retention')
    every(this.options.checkpointIntervalMs ?? 60_000, () => this.checkpoint(), 'checkpoint')
    if (this.managedHighWatermarks) every(this.options.highWatermarkCheckpointIntervalMs ?? 5000, () => this.checkpointHighWatermarks(), 'high watermark checkpoint')
    // flush.ms is per topic: look once a second for logs whose time has come (most never do).
    every(1000, () => this.flushDirtyLogs(), 'flush')
  }

  private ensureOpen(): void {
    if (this.closed) throw new StorageError('LOG_CLOSED', `log manager of ${this.dataDir} is closed`)
  }
}

/** EMFILE or ENFILE, from Node (err.code, maybe on a cause) or from the Rust engine (os error 24/23). */
function outOfFileDescriptors(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.code === 'EMFILE' || e.code === 'ENFILE') return true
    if (typeof e.message === 'string' && /EMFILE|ENFILE|os error 2[34]\)|Too many open files/.test(e.message)) return true
  }
  return false
}

async function fsyncDir(dir: string): Promise<void> {
  try {
    const handle = await openFile(dir, 'r')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  } catch (err) {
    throw new StorageError('STORAGE_ERROR', `cannot fsync ${dir}: ${(err as Error).message}`, { cause: err })
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path)
    return true
  } catch {
    return false
  }
}
