/**
 * The Rust storage engine (crates/storage) through the napi binding, as a `StorageBackend`.
 * The binding only converts; this file nests the flat results as types.ts has them and turns
 * the binding's `CODE: message` errors into `StorageError`s, the class the twin throws too.
 */
import { endianness } from 'node:os'
import { requireNative, type NativeBinding } from '../native/binding.js'
// Types and const enums only (inlined by tsc): nothing here loads the binding until a log opens.
import { ReadIo, ReadIsolation, type FileRecords, type JsLogConfig, type NativeLog } from '../native/index.js'
import { StorageError, call, rethrow } from './errors.js'
import { decodeProducerSnapshot } from './js/producer-snapshot.js'
import type {
  LogCleanRequest,
  LogCleanResult,
  AbortedTransaction,
  ProducerStateEntry,
  AppendOrigin,
  CompressionType,
  FetchDataInfo,
  FetchIsolation,
  FileSlice,
  LogAppendInfo,
  LogConfig,
  OpenLogOptions,
  RawLog,
  RecordBatch,
  RecoveryReport,
  SegmentInfo,
  StorageBackend,
  TimestampAndOffset,
} from './types.js'

/** The binding, or NATIVE_UNAVAILABLE naming this backend. */
let loaded: NativeBinding | null = null
function binding(): NativeBinding {
  return (loaded ??= requireNative('the native storage backend'))
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
/** Which 32-bit word of an int64 slot holds its low half, as an Int32Array/Uint32Array index. */
const LOW_WORD = endianness() === 'LE' ? 0 : 1
const HIGH_WORD = 1 - LOW_WORD

/**
 * This thread's read array, shared by every log (reads are synchronous): `readLogInto`'s
 * arguments in and result out (`ReadIo` slots). The 32-bit views of the same memory set the
 * packed arguments and the log's id, read the results that fit 32 bits, and compare int64
 * slots, without building a bigint.
 */
interface ReadArray {
  io: BigInt64Array
  i32: Int32Array
  u32: Uint32Array
}
let readArray: ReadArray | undefined

function theReadArray(): ReadArray {
  if (readArray === undefined) {
    const io = binding().readIo()
    readArray = { io, i32: new Int32Array(io.buffer, io.byteOffset, 2 * ReadIo.Length), u32: new Uint32Array(io.buffer, io.byteOffset, 2 * ReadIo.Length) }
  }
  return readArray
}

/** A segment as reads name it: its base offset's words, as a bigint, and its `.log`. */
interface SegmentRef {
  high: number
  base: bigint
  file: string
}

class NativeRawLog implements RawLog {
  readonly dir: string
  private readonly log: NativeLog
  /** The log's id for `readLogInto`. */
  private readonly readId: number
  private readonly read_: ReadArray
  /** Segments read from, by the low word of their base offset. */
  private readonly segmentRefs = new Map<number, SegmentRef>()

  constructor(log: NativeLog) {
    this.log = log
    this.dir = log.dir
    this.readId = log.readId
    this.read_ = theReadArray()
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

  updateConfig(config: LogConfig): void {
    call(() => this.log.updateConfig(jsLogConfig(config)))
  }

  appendAsLeader(batches: Buffer, leaderEpoch: number, nowMs: number, origin: AppendOrigin = 'CLIENT'): LogAppendInfo {
    return call(() => this.log.appendAsLeader(batches, leaderEpoch, nowMs, origin))
  }

  appendAsLeaderAsync(batches: Buffer, leaderEpoch: number, nowMs: number, origin: AppendOrigin = 'CLIENT'): Promise<LogAppendInfo> {
    return callAsync(() => this.log.appendAsLeaderAsync(batches, leaderEpoch, nowMs, origin))
  }

  appendAsFollower(batches: Buffer): LogAppendInfo {
    return call(() => this.log.appendAsFollower(batches))
  }

  read(offset: bigint, maxBytes: number, isolation: FetchIsolation, minOneMessage: boolean): FetchDataInfo {
    if (offset < INT64_MIN || offset > INT64_MAX) {
      throw new StorageError('INVALID_ARGUMENT', `offset ${offset} does not fit int64`)
    }
    const { io, i32, u32 } = this.read_
    io[ReadIo.Offset] = offset
    // maxBytes stored as an int32 (ToInt32), the conversion napi applies to an i32 argument.
    i32[2 * ReadIo.Args + LOW_WORD] = maxBytes
    i32[2 * ReadIo.Args + HIGH_WORD] = readIsolation(isolation) | (minOneMessage ? binding().READ_MIN_ONE_MESSAGE : 0)
    i32[2 * ReadIo.Log + LOW_WORD] = this.readId
    i32[2 * ReadIo.Log + HIGH_WORD] = 0
    try {
      binding().readLogInto()
    } catch (err) {
      rethrow(err)
    }
    const segment = this.segmentRef()
    const info: FetchDataInfo = {
      fetchOffsetMetadata: {
        messageOffset: this.sameSlots(ReadIo.MessageOffset, ReadIo.Offset) ? offset : io[ReadIo.MessageOffset]!,
        segmentBaseOffset: this.sameSlots(ReadIo.SegmentBaseOffset, ReadIo.Segment) ? segment.base : io[ReadIo.SegmentBaseOffset]!,
        relativePositionInSegment: u32[2 * ReadIo.RelativePositionInSegment + LOW_WORD]!,
      },
      records: { file: segment.file, position: u32[2 * ReadIo.Position + LOW_WORD]!, size: u32[2 * ReadIo.Size + LOW_WORD]! },
      firstEntryIncomplete: u32[2 * ReadIo.FirstEntryIncomplete + LOW_WORD] !== 0,
    }
    if (isolation === 'TXN_COMMITTED') {
      // A second call only for READ_COMMITTED reads with records (Kafka's addAbortedTransactions).
      const { records } = info
      info.abortedTransactions = records.size === 0 ? [] : call(() => this.log.abortedTransactionsOf(info.fetchOffsetMetadata.messageOffset, segment.base, records.position, records.size))
    }
    return info
  }

  /** Whether two int64 slots of `readIo` hold the same value. */
  private sameSlots(a: ReadIo, b: ReadIo): boolean {
    const u32 = this.read_.u32
    return u32[2 * a] === u32[2 * b] && u32[2 * a + 1] === u32[2 * b + 1]
  }

  /** The segment in `readIo[ReadIo.Segment]`: its `.log` asked of the binding once, then remembered. */
  private segmentRef(): SegmentRef {
    const { io, u32 } = this.read_
    const low = u32[2 * ReadIo.Segment + LOW_WORD]!
    const high = u32[2 * ReadIo.Segment + HIGH_WORD]!
    let ref = this.segmentRefs.get(low)
    if (ref === undefined || ref.high !== high) {
      if (this.segmentRefs.size >= MAX_SEGMENT_FILES) this.segmentRefs.clear()
      const base = io[ReadIo.Segment]!
      ref = { high, base, file: this.log.segmentFile(base) }
      this.segmentRefs.set(low, ref)
    }
    return ref
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

  firstUnstableOffset(): bigint | null {
    return this.log.firstUnstableOffset() ?? null
  }

  collectAbortedTransactions(startOffset: bigint, upperBoundOffset: bigint): AbortedTransaction[] {
    return call(() => this.log.collectAbortedTransactions(startOffset, upperBoundOffset))
  }

  producerStateEntries(): ProducerStateEntry[] {
    return decodeProducerSnapshot(call(() => this.log.producerStateSnapshot()))
  }

  removeExpiredProducers(nowMs: bigint, expirationMs: bigint): number {
    return call(() => this.log.removeExpiredProducers(nowMs, expirationMs))
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

  async clean(request: LogCleanRequest): Promise<LogCleanResult> {
    const { latestDeleteHorizonMs, ...result } = await callAsync(() => this.log.clean(request))
    return { ...result, latestDeleteHorizonMs: latestDeleteHorizonMs ?? null }
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

/** The binding's copy of a log config (its arrays are its own, not the caller's read-only ones). */
function jsLogConfig(config: LogConfig): JsLogConfig {
  return { ...config, cleanupPolicy: [...config.cleanupPolicy] }
}

export const nativeBackend: StorageBackend = {
  name: 'native',
  async openLog(options: OpenLogOptions): Promise<RawLog> {
    const log = await callAsync(() => binding().openLog({ ...options, config: jsLogConfig(options.config) }))
    return new NativeRawLog(log)
  },
  compress(type: CompressionType, data: Buffer): Buffer {
    return type === 'none' ? data : call(() => binding().compress(type, data))
  },
  setMaxOpenSegments(max: number): void {
    if (!Number.isInteger(max) || max < 1 || max > 0xffff_ffff) throw new RangeError(`the bound on open segments must be a positive integer, not ${max}`)
    binding().setMaxOpenSegments(max)
  },
  openSealedSegments(): number {
    return binding().openSealedSegments()
  },
}

/** Validates a buffer of whole record batches natively; the number of batches. */
export function validateBatches(batches: Buffer): number {
  return call(() => binding().validateBatches(batches))
}
