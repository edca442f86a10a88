/**
 * The contract between ferrolog's `Log` (ts/storage/log.ts) and its two storage backends: the
 * Rust engine through the napi binding (ts/storage/native-backend.ts) and the pure-TypeScript
 * twin (ts/storage/js/). Both follow docs/storage.md and write byte-identical files.
 *
 * int64 values (offsets, timestamps, producer ids) are `bigint`.
 */

import type { CompressionType, RecordBatch } from '../protocol/record-types.js'
import type { FileRecords, FileSlice } from './file-records.js'

/** The record types belong to the record format (ts/protocol); re-exported for the storage API. */
export type { CompressionType, LogRecord, ProducerRecord, RecordBatch, RecordHeader } from '../protocol/record-types.js'

/**
 * Topic-level log settings (`LogConfig`) and their defaults come from the config table
 * (ts/config/topic-configs.ts), where each key's name, type, validator, default and Rust field
 * are declared once.
 */
export { DEFAULT_LOG_CONFIG, type CleanupPolicy, type LogConfig } from '../config/topic-configs.js'
import type { LogConfig } from '../config/topic-configs.js'

/** Whether the log cleaner compacts this log. */
export function isCompacted(config: Pick<LogConfig, 'cleanupPolicy'>): boolean {
  return config.cleanupPolicy.includes('compact')
}

/** Whether retention by time and size applies to this log. */
export function isDeleted(config: Pick<LogConfig, 'cleanupPolicy'>): boolean {
  return config.cleanupPolicy.includes('delete')
}

/**
 * The settings a storage engine is handed for a log (Kafka's `LogConfig.maxSegmentMs` and
 * `UnifiedLog.deleteOldSegments` gates): retention by time and size only when the policy
 * includes delete (the log start offset still applies), and for a compacted log a segment rolls
 * after min(segment.ms, max.compaction.lag.ms) so that no record waits in the active segment,
 * which is never cleaned, past its max.compaction.lag.ms.
 */
export function engineLogConfig(config: LogConfig): LogConfig {
  const out = { ...config }
  if (!isDeleted(config)) {
    out.retentionMs = -1
    out.retentionBytes = -1
  }
  if (isCompacted(config)) out.segmentMs = Math.min(config.segmentMs, config.maxCompactionLagMs)
  return out
}

/**
 * Kafka's `AppendOrigin` of a leader append: a client's batches (control batches refused), or the
 * transaction coordinator's (its COMMIT / ABORT markers are control batches).
 */
export type AppendOrigin = 'CLIENT' | 'COORDINATOR'

/** Kafka's `FetchIsolation`: the upper bound of a read. */
export type FetchIsolation = 'LOG_END' | 'HIGH_WATERMARK' | 'TXN_COMMITTED'

/** Kafka's `LogOffsetMetadata`. */
export interface LogOffsetMetadata {
  messageOffset: bigint
  segmentBaseOffset: bigint
  relativePositionInSegment: number
}

export type { FileSlice } from './file-records.js'

/** An aborted transaction as a READ_COMMITTED fetch answers it (Kafka's `FetchResponseData.AbortedTransaction`). */
export interface AbortedTransaction {
  producerId: bigint
  firstOffset: bigint
}

/**
 * Kafka's `FetchDataInfo`: what `read` returns. `records.size` is 0 for an empty read. A backend
 * (`RawLog.read`) answers the range as a plain FileSlice; `Log.read` answers a `LogSlice`
 * (ts/storage/log.ts), which also gives the records to send, as Kafka's `FetchDataInfo.records`.
 */
export interface FetchDataInfo<Records extends FileSlice = FileSlice> {
  fetchOffsetMetadata: LogOffsetMetadata
  records: Records
  firstEntryIncomplete: boolean
  /**
   * TXN_COMMITTED reads only: the aborted transactions overlapping the records read (Kafka's
   * `addAbortedTransactions`: up to the offset index entry past the slice, else the next
   * segment's base or the LEO); empty for an empty read.
   */
  abortedTransactions?: AbortedTransaction[]
}

/** Kafka's `LogAppendInfo`, reduced to what the broker uses. */
export interface LogAppendInfo {
  firstOffset: bigint
  lastOffset: bigint
  maxTimestamp: bigint
  offsetOfMaxTimestamp: bigint
  /** The time stamped on LogAppendTime batches, else -1. */
  logAppendTime: bigint
  logStartOffset: bigint
  recordCount: number
  batchCount: number
  validBytes: number
}

/** Kafka's `TimestampAndOffset` for ListOffsets. */
export interface TimestampAndOffset {
  timestamp: bigint
  offset: bigint
  leaderEpoch: number
}

export interface EpochEntry {
  epoch: number
  startOffset: bigint
}

export interface SegmentInfo {
  baseOffset: bigint
  /** The `.log` file's path. */
  file: string
  size: number
}

/** How a log is opened by the LogManager. */
export interface OpenLogOptions {
  dir: string
  config: LogConfig
  /** Offsets below this were flushed before the last stop. */
  recoveryPoint: bigint
  logStartOffset: bigint
  /** A clean-shutdown marker was found: skip recovery (indexes are still sanity-checked). */
  hadCleanShutdown: boolean
}

/** What recovery did, for the log line and for tests. */
export interface RecoveryReport {
  /** Segments walked. */
  segmentsRecovered: number
  /** Bytes cut off the end of the log (a partial or corrupt tail). */
  bytesTruncated: number
  /** Later segments deleted after damage. */
  segmentsDeleted: number
  /** Indexes found missing or corrupt and rebuilt. */
  indexesRebuilt: number
  /** Human-readable lines, one per action. */
  messages: string[]
}

/**
 * One cleaning round of log compaction (`RawLog.clean`; Kafka's `Cleaner.clean`): the offset map
 * over [firstDirtyOffset, firstUncleanableOffset), then the segments from the first one up to the
 * map's end cleaned in groups and swapped in (docs/storage.md, "Log compaction"). With nothing
 * dirty the map is empty and ends at firstDirtyOffset: the clean section is cleaned again, which
 * drops only the tombstones and markers past their delete horizon.
 */
export interface LogCleanRequest {
  firstDirtyOffset: bigint
  /** Capped at the active segment's base offset: the active segment is never cleaned. */
  firstUncleanableOffset: bigint
  currentTimeMs: bigint
  /** delete.retention.ms: how long a tombstone or removable marker stays once its batch is cleaned. */
  deleteRetentionMs: bigint
  /** The offset map's memory in bytes (log.cleaner.dedupe.buffer.size for this round). */
  dedupeBufferSize: number
  /** The largest batch to decompress; the log's max.message.bytes when unset. */
  maxMessageBytes?: number
}

export interface LogCleanResult {
  /** The next first dirty offset (what cleaner-offset-checkpoint records). */
  endOffset: bigint
  bytesRead: number
  bytesWritten: number
  recordsRead: number
  recordsRetained: number
  mapSize: number
  mapMemory: number
  /** Keys in the map / its slots. */
  bufferUtilization: number
  segmentsBefore: number
  segmentsAfter: number
  /** The cleaned segments changed while the round ran (truncation, retention, close): nothing was swapped in. */
  aborted: boolean
  /**
   * The latest delete horizon (ms) of the cleaned batches still holding a tombstone or a
   * removable transaction marker, null if none: a round after it removes them all, even with
   * nothing dirty (the log cleaner runs one then).
   */
  latestDeleteHorizonMs: bigint | null
}

/**
 * One partition's log, as both backends implement it. Sync methods do no fsync; methods that may
 * fsync or walk whole files are async and run off the JS thread.
 */
/**
 * Kafka's `ProducerStateEntry` as the log keeps it (one entry of a `.snapshot` file,
 * ts/storage/js/producer-snapshot.ts): the producer's epoch, its last data batch (lastSequence,
 * lastOffset and offsetDelta = lastOffset - baseOffset; -1 / -1 / 0 when its epoch changed
 * after it), the max timestamp of its last batch (a marker's too), the epoch of the coordinator
 * of its last marker and the first offset of its open transaction (-1: none).
 */
export interface ProducerStateEntry {
  producerId: bigint
  producerEpoch: number
  lastSequence: number
  lastOffset: bigint
  offsetDelta: number
  timestamp: bigint
  coordinatorEpoch: number
  currentTxnFirstOffset: bigint
}

export interface RawLog {
  readonly dir: string
  logStartOffset(): bigint
  logEndOffset(): bigint
  highWatermark(): bigint
  lastStableOffset(): bigint
  recoveryPoint(): bigint
  /** Clamped to [logStartOffset, LEO]; returns the new high watermark. */
  updateHighWatermark(hw: bigint): bigint

  /**
   * Kafka's `updateConfig`: the settings apply from the next use on; existing segments keep the
   * index settings they were opened with, new segments take the new ones.
   */
  updateConfig(config: LogConfig): void

  /** `origin` (default CLIENT): only the coordinator may append control batches. */
  appendAsLeader(batches: Buffer, leaderEpoch: number, nowMs: number, origin?: AppendOrigin): LogAppendInfo
  /**
   * appendAsLeader whose checks (compressed batches inflate, up to 100 MiB each) do not block the
   * event loop: native on a libuv worker thread, the twin in slices and on zlib's threads. The
   * batches are copied when it is called. Offsets are assigned when the checks are done;
   * appends to one log started before an earlier one settles may land in either order.
   */
  appendAsLeaderAsync(batches: Buffer, leaderEpoch: number, nowMs: number, origin?: AppendOrigin): Promise<LogAppendInfo>
  appendAsFollower(batches: Buffer): LogAppendInfo

  read(offset: bigint, maxBytes: number, isolation: FetchIsolation, minOneMessage: boolean): FetchDataInfo
  /** The bytes of a slice that `read` returned. */
  readSlice(slice: FileSlice): Buffer
  /**
   * The slice as an open file handle and range, for zero-copy transfers; backends without one
   * leave it out and the file is opened by path (ts/storage/log.ts).
   */
  fileRecords?(slice: FileSlice): FileRecords
  /** Decoded batches from `offset` (the batch holding it first), up to maxBytes (at least one batch). */
  readBatches(offset: bigint, maxBytes: number, isolation: FetchIsolation): RecordBatch[]

  fetchOffsetByTimestamp(timestamp: bigint): TimestampAndOffset | null

  /**
   * Kafka's `firstUnstableOffset`: the first offset of the oldest open transaction (or of a
   * completed one whose marker the high watermark has not passed), at least the log start
   * offset; null when every transaction is stable. `lastStableOffset()` is min(it, HW).
   */
  firstUnstableOffset(): bigint | null
  /**
   * Kafka's `collectAbortedTransactions`: the aborted transactions overlapping
   * [startOffset, upperBoundOffset), from the `.txnindex` of the segment holding startOffset on.
   */
  collectAbortedTransactions(startOffset: bigint, upperBoundOffset: bigint): AbortedTransaction[]
  /**
   * The producer state at the log end, in producer id order (Kafka's `activeProducers`): loaded
   * on open from the newest `.snapshot` and the batches after it, kept by every append.
   */
  producerStateEntries(): ProducerStateEntry[]
  /**
   * Kafka's `removeExpiredProducers` (producer.id.expiration.ms): forgets the producers with no
   * open transaction whose last timestamp is `expirationMs` or more before `nowMs`; how many.
   */
  removeExpiredProducers(nowMs: bigint, expirationMs: bigint): number

  latestEpoch(): number | null
  /** Kafka's `endOffsetFor(epoch)`: the epoch and the end offset of the largest epoch <= it. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } | null
  epochEntries(): EpochEntry[]

  maybeIncrementLogStartOffset(offset: bigint): void
  truncateTo(offset: bigint): Promise<void>
  truncateFullyAndStartAt(offset: bigint): Promise<void>
  /** Retention by time, size and log start offset; returns the number of segments deleted. */
  deleteOldSegments(nowMs: number): Promise<number>
  /** One cleaning round with its segment swap, off the JS thread; appends go on meanwhile. */
  clean(request: LogCleanRequest): Promise<LogCleanResult>
  /** Roll a new segment now (tests, and segment.ms from the broker's timer). */
  roll(): void
  flush(): Promise<void>
  segments(): SegmentInfo[]
  /** Flush, trim the indexes, close the files. */
  close(): Promise<void>
  /** Close and remove the directory. */
  delete(): Promise<void>
  /** What opening did (recovery, index rebuilds). */
  recoveryReport(): RecoveryReport
}

export interface StorageBackend {
  readonly name: 'native' | 'js'
  openLog(options: OpenLogOptions): Promise<RawLog>
  /** Compresses record bytes in Kafka's framing of `type`, for building batches. */
  compress(type: CompressionType, data: Buffer): Buffer
  /**
   * Sets the bound on sealed segments whose `.log` this engine keeps open at once in the
   * process (at least 1; default 1000): past it the least recently read is closed, and opened
   * again by its next read (docs/storage.md "Open files").
   */
  setMaxOpenSegments(max: number): void
  /** How many sealed segments of this engine hold their `.log` open now. */
  openSealedSegments(): number
}
