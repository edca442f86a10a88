/**
 * `Log`: one topic-partition's log for library users and for the broker. It forwards to a
 * `RawLog` of either backend (native Rust or the TypeScript twin) and adds what both share:
 * building batches from records, flattening decoded batches to records, and keeping the high
 * watermark at the log end for a single-replica log.
 */
import { availableParallelism } from 'node:os'
import { buildBatch } from '../protocol/batch-builder.js'
import type { Compressor } from '../protocol/compression.js'
import { StorageError, recordErrorsAsStorageErrors } from './errors.js'
import { engineLogConfig } from './types.js'
import { openFileRecords, type FileRecords } from './file-records.js'
import type {
  AbortedTransaction,
  AppendOrigin,
  CompressionType,
  EpochEntry,
  FetchDataInfo,
  FetchIsolation,
  FileSlice,
  LogAppendInfo,
  LogConfig,
  LogRecord,
  ProducerRecord,
  ProducerStateEntry,
  RawLog,
  RecordBatch,
  RecoveryReport,
  SegmentInfo,
  TimestampAndOffset,
  LogCleanRequest,
  LogCleanResult,
} from './types.js'

export interface AppendOptions {
  compression?: CompressionType
  /** The leader epoch stamped on the batches; default 0. */
  leaderEpoch?: number
  /** Default CLIENT; COORDINATOR may append transaction markers (control batches). */
  origin?: AppendOrigin
}

export interface ReadOptions {
  /** Default 1 MiB. */
  maxBytes?: number
  /** Default HIGH_WATERMARK (what a consumer may see). */
  isolation?: FetchIsolation
  /** Return at least one whole batch even when it is larger than maxBytes (KIP-74); default true. */
  minOneMessage?: boolean
}

/** How the high watermark moves: with the log end (one replica), or set by a replica manager. */
export type HighWatermarkPolicy = 'log-end' | 'managed'

export const DEFAULT_READ_MAX_BYTES = 1024 * 1024

/**
 * How many `appendAsync` checks run at once in this process, across logs: one core fewer than
 * the machine has (at least one), so that the event loop keeps a core while batches inflate,
 * libuv's other work (fsync, file I/O) keeps worker threads, and at most this many batches are
 * inflated in memory (up to 100 MiB each). The others wait their turn, in call order.
 */
export const MAX_CONCURRENT_APPEND_CHECKS = Math.max(1, availableParallelism() - 1)

let appendChecksRunning = 0
const appendChecksWaiting: Array<() => void> = []

async function withAppendCheckSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (appendChecksRunning >= MAX_CONCURRENT_APPEND_CHECKS) await new Promise<void>((resolve) => appendChecksWaiting.push(resolve))
  else appendChecksRunning++
  try {
    return await fn()
  } finally {
    const next = appendChecksWaiting.shift()
    if (next) next()
    else appendChecksRunning--
  }
}

export class Log {
  readonly topic: string
  readonly partition: number
  private currentConfig: Readonly<LogConfig>
  readonly topicId: Buffer | null
  private readonly raw: RawLog
  private readonly hwPolicy: HighWatermarkPolicy
  private readonly compressor: Compressor
  private closed = false
  /** The cleaning round in flight, settled (close and delete wait for it). */
  private cleaning: Promise<void> = Promise.resolve()

  constructor(
    raw: RawLog,
    init: {
      topic: string
      partition: number
      config: LogConfig
      topicId: Buffer | null
      highWatermark: HighWatermarkPolicy
      /** The backend's codecs, used when `append` builds a compressed batch. */
      compressor: Compressor
    },
  ) {
    this.raw = raw
    this.topic = init.topic
    this.partition = init.partition
    this.currentConfig = Object.freeze({ ...init.config })
    this.topicId = init.topicId
    this.hwPolicy = init.highWatermark
    this.compressor = init.compressor
  }

  /** The log's settings now (they change with `updateConfig`). */
  get config(): Readonly<LogConfig> {
    return this.currentConfig
  }

  /**
   * New settings from now on (Kafka's `UnifiedLog.updateConfig`, what AlterConfigs of a topic
   * does to its logs): segment.bytes and segment.ms from the next roll decision, retention from
   * the next check, max.message.bytes and message.timestamp.type from the next append. Existing
   * segments keep the index settings they were opened with. Throws INVALID_ARGUMENT for a bad
   * value and leaves the old settings in place.
   */
  updateConfig(config: LogConfig): void {
    this.raw.updateConfig(engineLogConfig(config))
    this.currentConfig = Object.freeze({ ...config })
  }

  get dir(): string {
    return this.raw.dir
  }

  logStartOffset(): bigint {
    return this.raw.logStartOffset()
  }

  logEndOffset(): bigint {
    return this.raw.logEndOffset()
  }

  highWatermark(): bigint {
    return this.raw.highWatermark()
  }

  lastStableOffset(): bigint {
    return this.raw.lastStableOffset()
  }

  recoveryPoint(): bigint {
    return this.raw.recoveryPoint()
  }

  /** The first offset of the oldest unstable transaction (at least the log start offset), or null. */
  firstUnstableOffset(): bigint | null {
    return this.raw.firstUnstableOffset()
  }

  /** Kafka's `collectAbortedTransactions`: aborted transactions overlapping [startOffset, upperBoundOffset). */
  collectAbortedTransactions(startOffset: bigint, upperBoundOffset: bigint): AbortedTransaction[] {
    return this.raw.collectAbortedTransactions(startOffset, upperBoundOffset)
  }

  /** The producer state at the log end, in producer id order (`RawLog.producerStateEntries`). */
  producerStateEntries(): ProducerStateEntry[] {
    return this.raw.producerStateEntries()
  }

  /** Kafka's `removeExpiredProducers` (producer.id.expiration.ms); how many were forgotten. */
  removeExpiredProducers(nowMs: bigint, expirationMs: bigint): number {
    return this.raw.removeExpiredProducers(nowMs, expirationMs)
  }

  updateHighWatermark(hw: bigint): bigint {
    return this.raw.updateHighWatermark(hw)
  }

  /**
   * Appends as the leader: records are built into one batch (`compression`, default none); a
   * Buffer must hold whole v2 batches and is validated. Offsets are assigned from the log end.
   */
  append(records: ProducerRecord[] | Buffer, options: AppendOptions = {}): LogAppendInfo {
    this.ensureOpen()
    const nowMs = Date.now()
    let batches: Buffer
    if (Buffer.isBuffer(records)) {
      batches = records
    } else {
      if (records.length === 0) throw new StorageError('INVALID_ARGUMENT', 'append needs at least one record')
      batches = recordErrorsAsStorageErrors(() => buildBatch(records, { compression: options.compression ?? 'none', nowMs, compressor: this.compressor }))
    }
    const info = this.raw.appendAsLeader(batches, options.leaderEpoch ?? 0, nowMs, options.origin ?? 'CLIENT')
    if (this.hwPolicy === 'log-end') this.raw.updateHighWatermark(this.raw.logEndOffset())
    return info
  }

  /**
   * `append` of whole v2 batches without blocking the event loop while they are checked (a
   * compressed batch may inflate to 100 MiB): native on a worker thread, the twin in slices.
   * Offsets are assigned from the log end when the checks are done, so appends meant to keep
   * their order wait for each other (the broker's Partition queues them). At most
   * MAX_CONCURRENT_APPEND_CHECKS run at once in the process.
   */
  async appendAsync(batches: Buffer, options: Omit<AppendOptions, 'compression'> = {}): Promise<LogAppendInfo> {
    this.ensureOpen()
    const info = await withAppendCheckSlot(() => {
      this.ensureOpen()
      return this.raw.appendAsLeaderAsync(batches, options.leaderEpoch ?? 0, Date.now(), options.origin ?? 'CLIENT')
    })
    if (this.hwPolicy === 'log-end' && !this.closed) this.raw.updateHighWatermark(this.raw.logEndOffset())
    return info
  }

  /** Appends batches fetched from a leader, keeping their offsets. */
  appendAsFollower(batches: Buffer): LogAppendInfo {
    this.ensureOpen()
    return this.raw.appendAsFollower(batches)
  }

  /**
   * Kafka's `UnifiedLog.read`: a lazy slice of the segment file, plus its offset metadata. The
   * slice (`LogSlice`) gives the records to send; nothing is opened or read until it is asked.
   */
  read(offset: bigint, options: ReadOptions = {}): FetchDataInfo<LogSlice> {
    this.ensureOpen()
    const info = this.raw.read(offset, options.maxBytes ?? DEFAULT_READ_MAX_BYTES, options.isolation ?? 'HIGH_WATERMARK', options.minOneMessage ?? true)
    const records = new LogSlice(this, info.records)
    ;(info as FetchDataInfo<FileSlice | LogSlice>).records = records
    return info as FetchDataInfo<LogSlice>
  }

  /** The bytes of a slice returned by `read`. */
  readSlice(slice: FileSlice): Buffer {
    this.ensureOpen()
    return this.raw.readSlice(slice)
  }

  /**
   * A slice returned by `read` as Kafka's FileRecords: the segment's open file and the range,
   * for a zero-copy transfer (ts/network/transfer.ts). It keeps the file open (a segment deleted
   * meanwhile still sends its bytes) until closed or collected.
   */
  fileRecords(slice: FileSlice): FileRecords {
    this.ensureOpen()
    return this.raw.fileRecords ? this.raw.fileRecords(slice) : openFileRecords(slice)
  }

  /** Decoded batches from the one holding `offset`, control batches included. */
  readBatches(offset: bigint, options: Omit<ReadOptions, 'minOneMessage'> = {}): RecordBatch[] {
    this.ensureOpen()
    return this.raw.readBatches(offset, options.maxBytes ?? DEFAULT_READ_MAX_BYTES, options.isolation ?? 'HIGH_WATERMARK')
  }

  /** Decoded records from `offset` on (records before it in the first batch are skipped). */
  readRecords(offset: bigint, options: Omit<ReadOptions, 'minOneMessage'> = {}): LogRecord[] {
    const out: LogRecord[] = []
    for (const batch of this.readBatches(offset, options)) {
      if (batch.isControl) continue
      for (const record of batch.records) if (record.offset >= offset) out.push(record)
    }
    return out
  }

  /** ListOffsets: -2 earliest, -1 latest, -3 max timestamp, else the first offset at or after it. */
  fetchOffsetByTimestamp(timestamp: bigint): TimestampAndOffset | null {
    this.ensureOpen()
    return this.raw.fetchOffsetByTimestamp(timestamp)
  }

  latestEpoch(): number | null {
    return this.raw.latestEpoch()
  }

  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } | null {
    return this.raw.endOffsetForEpoch(epoch)
  }

  epochEntries(): EpochEntry[] {
    return this.raw.epochEntries()
  }

  /** DeleteRecords: raise the log start offset (at most to the high watermark). */
  deleteRecordsBefore(offset: bigint): void {
    this.ensureOpen()
    if (offset > this.raw.highWatermark()) {
      throw new StorageError('OFFSET_OUT_OF_RANGE', `cannot delete records before ${offset}: above the high watermark ${this.raw.highWatermark()}`)
    }
    this.raw.maybeIncrementLogStartOffset(offset)
  }

  async truncateTo(offset: bigint): Promise<void> {
    this.ensureOpen()
    await this.raw.truncateTo(offset)
  }

  async truncateFullyAndStartAt(offset: bigint): Promise<void> {
    this.ensureOpen()
    await this.raw.truncateFullyAndStartAt(offset)
    if (this.hwPolicy === 'log-end') this.raw.updateHighWatermark(offset)
  }

  /** Retention by time, size and log start offset; the number of segments deleted. */
  async deleteOldSegments(nowMs = Date.now()): Promise<number> {
    this.ensureOpen()
    return this.raw.deleteOldSegments(nowMs)
  }

  /**
   * One cleaning round of log compaction (the log cleaner's call): off the JS thread, appends go
   * on; a round whose segments changed meanwhile reports `aborted`. `close` waits for it.
   */
  async clean(request: LogCleanRequest): Promise<LogCleanResult> {
    this.ensureOpen()
    const round = this.raw.clean(request)
    this.cleaning = round.then(
      () => undefined,
      () => undefined,
    )
    return round
  }

  roll(): void {
    this.ensureOpen()
    this.raw.roll()
  }

  async flush(): Promise<void> {
    this.ensureOpen()
    await this.raw.flush()
  }

  segments(): SegmentInfo[] {
    return this.raw.segments()
  }

  recoveryReport(): RecoveryReport {
    return this.raw.recoveryReport()
  }

  get isClosed(): boolean {
    return this.closed
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    try {
      await this.raw.close()
    } finally {
      // A round in flight abandons its swap once the log is closed and removes its files.
      await this.cleaning
    }
  }

  /** Close and remove the partition directory. */
  async delete(): Promise<void> {
    this.closed = true
    await this.cleaning
    await this.raw.delete()
  }

  private ensureOpen(): void {
    if (this.closed) throw new StorageError('LOG_CLOSED', `log ${this.topic}-${this.partition} is closed`)
  }
}

/**
 * The records of a `Log.read` (Kafka's `FetchDataInfo.records`): a range of a segment's `.log`
 * file and, on request, the records to send from it, so that whoever answers a fetch needs
 * nothing but the read's result.
 */
export class LogSlice implements FileSlice {
  readonly file: string
  readonly position: number
  readonly size: number
  /** A #private field: the slice compares and prints as its range alone. */
  readonly #log: Log

  constructor(log: Log, slice: FileSlice) {
    this.#log = log
    this.file = slice.file
    this.position = slice.position
    this.size = slice.size
  }

  /**
   * The records to send: the range as FileRecords (`asFile`: for a zero-copy transfer, or a copy
   * sent a piece at a time) or its bytes read now; null when the read was empty or the log has
   * been closed since (a partition deleted meanwhile answers no records).
   */
  toSend(asFile: boolean): FileRecords | Buffer | null {
    if (this.size === 0 || this.#log.isClosed) return null
    return asFile ? this.#log.fileRecords(this) : this.#log.readSlice(this)
  }
}
