/**
 * The Rust storage engine (crates/storage) through the napi binding, as a `StorageBackend`.
 * The binding only converts; this file nests the flat results as types.ts has them and turns
 * the binding's `CODE: message` errors into `StorageError`s, the class the twin throws too.
 */
import * as binding from '../native/index.js'
import { FileRecords, ReadIo, ReadIsolation } from '../native/index.js'
import { StorageError, isStorageErrorCode } from './errors.js'
import type {
  CompressionType,
  FetchDataInfo,
  FetchIsolation,
  FileSlice,
  LogAppendInfo,
  OpenLogOptions,
  RawLog,
  RecordBatch,
  RecoveryReport,
  SegmentInfo,
  StorageBackend,
  TimestampAndOffset,
} from './types.js'

const CODED = /^([A-Z_]+): ([\s\S]*)$/

/** Rethrows a binding error as a StorageError with its code. */
function rethrow(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err)
  const match = CODED.exec(message)
  if (match && isStorageErrorCode(match[1])) throw new StorageError(match[1], match[2], { cause: err })
  throw err
}

function call<T>(fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    rethrow(err)
  }
}

export { FileRecords }

/** A slice's FileRecords by opening its file: for backends that keep no such handle (the twin). */
export function openFileRecords(slice: FileSlice): FileRecords {
  return call(() => FileRecords.open(slice.file, slice.position, slice.size))
}

async function callAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    rethrow(err)
  }
}

function readIsolation(isolation: FetchIsolation): ReadIsolation {
  switch (isolation) {
    case 'LOG_END':
      return ReadIsolation.LogEnd
    case 'HIGH_WATERMARK':
      return ReadIsolation.HighWatermark
    case 'TXN_COMMITTED':
      return ReadIsolation.TxnCommitted
    default:
      throw new StorageError('INVALID_ARGUMENT', `isolation must be LOG_END, HIGH_WATERMARK or TXN_COMMITTED, not ${JSON.stringify(isolation)}`)
  }
}

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
/** Segment paths remembered per log (a segment's path never changes: directory + base offset). */
const MAX_SEGMENT_FILES = 1024

class NativeRawLog implements RawLog {
  readonly dir: string
  private readonly log: binding.NativeLog
  /** `readInto`'s offset in and result out (`ReadIo` slots); reads are synchronous. */
  private readonly readIo = new BigInt64Array(ReadIo.Length)
  private readonly segmentFiles = new Map<bigint, string>()
  private lastSegment = -1n
  private lastSegmentFile = ''

  constructor(log: binding.NativeLog) {
    this.log = log
    this.dir = log.dir
  }

  logStartOffset(): bigint {
    return this.log.logStartOffset()
  }

  logEndOffset(): bigint {
    return this.log.logEndOffset()
  }

  highWatermark(): bigint {
    return this.log.highWatermark()
  }

  lastStableOffset(): bigint {
    return this.log.lastStableOffset()
  }

  recoveryPoint(): bigint {
    return this.log.recoveryPoint()
  }

  updateHighWatermark(hw: bigint): bigint {
    return call(() => this.log.updateHighWatermark(hw))
  }

  appendAsLeader(batches: Buffer, leaderEpoch: number, nowMs: number): LogAppendInfo {
    return call(() => this.log.appendAsLeader(batches, leaderEpoch, nowMs))
  }

  appendAsFollower(batches: Buffer): LogAppendInfo {
    return call(() => this.log.appendAsFollower(batches))
  }

  read(offset: bigint, maxBytes: number, isolation: FetchIsolation, minOneMessage: boolean): FetchDataInfo {
    if (offset < INT64_MIN || offset > INT64_MAX) {
      throw new StorageError('INVALID_ARGUMENT', `offset ${offset} does not fit int64`)
    }
    const io = this.readIo
    io[ReadIo.Offset] = offset
    try {
      this.log.readInto(io, maxBytes, readIsolation(isolation), minOneMessage)
    } catch (err) {
      rethrow(err)
    }
    return {
      fetchOffsetMetadata: {
        messageOffset: io[ReadIo.MessageOffset],
        segmentBaseOffset: io[ReadIo.SegmentBaseOffset],
        relativePositionInSegment: Number(io[ReadIo.RelativePositionInSegment]),
      },
      records: { file: this.segmentFile(io[ReadIo.Segment]), position: Number(io[ReadIo.Position]), size: Number(io[ReadIo.Size]) },
      firstEntryIncomplete: io[ReadIo.FirstEntryIncomplete] !== 0n,
    }
  }

  /** The `.log` path of the segment at `base`: asked of the binding once, then remembered. */
  private segmentFile(base: bigint): string {
    if (base === this.lastSegment) return this.lastSegmentFile
    let file = this.segmentFiles.get(base)
    if (file === undefined) {
      if (this.segmentFiles.size >= MAX_SEGMENT_FILES) this.segmentFiles.clear()
      file = this.log.segmentFile(base)
      this.segmentFiles.set(base, file)
    }
    this.lastSegment = base
    this.lastSegmentFile = file
    return file
  }

  readSlice(slice: FileSlice): Buffer {
    return call(() => this.log.readSlice(slice.file, slice.position, slice.size))
  }

  fileRecords(slice: FileSlice): FileRecords {
    return call(() => this.log.fileRecords(slice.file, slice.position, slice.size))
  }

  readBatches(offset: bigint, maxBytes: number, isolation: FetchIsolation): RecordBatch[] {
    const batches = call(() => this.log.readBatches(offset, maxBytes, isolation))
    for (const b of batches) {
      ;(b as RecordBatch).compression = b.compression as CompressionType
      ;(b as RecordBatch).timestampType = b.timestampType as RecordBatch['timestampType']
    }
    return batches as RecordBatch[]
  }

  fetchOffsetByTimestamp(timestamp: bigint): TimestampAndOffset | null {
    return call(() => this.log.fetchOffsetByTimestamp(timestamp)) ?? null
  }

  latestEpoch(): number | null {
    return this.log.latestEpoch()
  }

  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } | null {
    return this.log.endOffsetForEpoch(epoch)
  }

  epochEntries() {
    return this.log.epochEntries()
  }

  maybeIncrementLogStartOffset(offset: bigint): void {
    call(() => this.log.maybeIncrementLogStartOffset(offset))
  }

  truncateTo(offset: bigint): Promise<void> {
    return callAsync(() => this.log.truncateTo(offset))
  }

  truncateFullyAndStartAt(offset: bigint): Promise<void> {
    return callAsync(() => this.log.truncateFullyAndStartAt(offset))
  }

  deleteOldSegments(nowMs: number): Promise<number> {
    return callAsync(() => this.log.deleteOldSegments(nowMs))
  }

  roll(): void {
    call(() => this.log.roll())
  }

  flush(): Promise<void> {
    return callAsync(() => this.log.flush())
  }

  segments(): SegmentInfo[] {
    return this.log.segments()
  }

  close(): Promise<void> {
    return callAsync(() => this.log.close())
  }

  delete(): Promise<void> {
    return callAsync(() => this.log.delete())
  }

  recoveryReport(): RecoveryReport {
    return this.log.recoveryReport()
  }
}

export const nativeBackend: StorageBackend = {
  name: 'native',
  async openLog(options: OpenLogOptions): Promise<RawLog> {
    const log = await callAsync(() => binding.openLog(options))
    return new NativeRawLog(log)
  },
  compress(type: CompressionType, data: Buffer): Buffer {
    return type === 'none' ? data : call(() => binding.compress(type, data))
  },
}

/** Validates a buffer of whole record batches natively; the number of batches. */
export function validateBatches(batches: Buffer): number {
  return call(() => binding.validateBatches(batches))
}
