/**
 * Records inside a record batch (magic 2), and walking a buffer of consecutive batches.
 *
 * The records section (`batch[61, end)`, decompressed as a whole when attributes bits 0-2 name a
 * codec) holds exactly recordsCount records, back to back:
 *
 *   length varint (bytes after it)   attributes int8   timestampDelta varlong   offsetDelta varint
 *   keyLength varint (-1 = null) key   valueLength varint (-1 = null) value
 *   headerCount varint, then per header: keyLength varint + UTF-8 key, valueLength varint (-1 = null) + value
 *
 * Varints are zig-zag (varint.ts). A record's offset is baseOffset + offsetDelta; its timestamp is
 * baseTimestamp + timestampDelta, or maxTimestamp for every record of a LogAppendTime batch.
 *
 * Errors: damage the CRC or sizes reveal and compressed data that does not decompress are
 * CORRUPT_RECORD; records that do not decode, counts that do not match and bytes left over are
 * INVALID_RECORD; codec ids 5-7 are UNSUPPORTED_COMPRESSION; a magic other than 2 is
 * UNSUPPORTED_MAGIC. Nothing else is thrown for any input.
 */
import type { LogRecord, RecordBatch, RecordHeader } from './record-types.js'
import { RecordError } from './record-error.js'
import {
  type BatchHeader,
  CONTROL_FLAG_MASK,
  LENGTH_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAGIC_V2,
  RECORD_BATCH_OVERHEAD,
  RECORDS_OFFSET,
  TIMESTAMP_TYPE_MASK,
  TRANSACTIONAL_FLAG_MASK,
  parseBatchHeader,
  sizeInBytes,
  validateBatch,
} from './batch-header.js'
import { DEFAULT_MAX_DECOMPRESSED_BYTES, compressionTypeOf, decompress, decompressSteps, gunzipAsync } from './compression.js'
import { OutputLimitError, runSteps, runStepsSliced, type Progress, type Steps } from './output-limit.js'
import { Cursor, MAX_VARLONG_BYTES, readVarint, readVarlong, readVarlongNumber, skipVarint } from './varint.js'
import { isTimestampViolation, recordErrorsMessage, timestampViolation, type RecordViolation, type TimestampChecks } from './record-violations.js'

/** Kafka's HEADER_SIZE_UP_TO_MAGIC: this many bytes or fewer at the end of a buffer are a partial batch. */
const HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1
/** Below this magnitude, timestamps and offsets add exactly as numbers. */
const SAFE_BOUND = 2 ** 52
const SAFE_BOUND_N = 2n ** 52n

export interface DecodeOptions {
  /** Bound on the decompressed records section (DEFAULT_MAX_DECOMPRESSED_BYTES). */
  maxDecompressedBytes?: number
}

function invalid(why: string): RecordError {
  return new RecordError('INVALID_RECORD', why)
}

/** The records section of the batch at `buf[at]`: decompressed when needed, with its bounds. */
function recordsSection(buf: Buffer, at: number, h: BatchHeader, options: DecodeOptions | undefined): Cursor {
  const start = at + RECORDS_OFFSET
  const end = at + sizeInBytes(h)
  const type = compressionTypeOf(h.attributes)
  if (type === 'none') return new Cursor(buf, start, end)
  const data = decompress(type, buf.subarray(start, end), options?.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES)
  return new Cursor(data, 0, data.length)
}

/**
 * Reads a length varint and checks that that many bytes follow; any negative length is null
 * (-1 on return), as Kafka's DefaultRecord reads it and as the Rust twin does.
 */
function readLength(c: Cursor, what: string): number {
  const len = readVarint(c)
  if (len < 0) return -1
  if (len > c.end - c.pos) throw invalid(`${what} length ${len} runs past the record`)
  return len
}

function recordsLeft(count: number, i: number): never {
  throw invalid(`batch announces ${count} records but its data ends after ${i}`)
}

/** Decodes the records of a (validated) batch from `c`, consuming every byte. */
function decodeRecords(c: Cursor, h: BatchHeader): LogRecord[] {
  const data = c.buf
  const end = c.end
  const count = h.recordsCount
  const records: LogRecord[] = []
  const logAppendTime = (h.attributes & TIMESTAMP_TYPE_MASK) !== 0
  const baseTs = Number(h.baseTimestamp)
  const baseTsExact = baseTs > -SAFE_BOUND && baseTs < SAFE_BOUND
  const baseOff = Number(h.baseOffset)
  const baseOffExact = baseOff > -SAFE_BOUND && baseOff < SAFE_BOUND
  for (let i = 0; i < count; i++) {
    if (c.pos >= end) recordsLeft(count, i)
    const size = readVarint(c)
    if (size < 1 || size > end - c.pos) throw invalid(`invalid record size ${size} (${end - c.pos} bytes left)`)
    const bodyEnd = c.pos + size
    c.end = bodyEnd
    c.pos++ // attributes: unused in magic 2

    let timestamp: bigint
    const tsAt = c.pos
    const delta = readVarlongNumber(c)
    if (logAppendTime) {
      timestamp = h.maxTimestamp
    } else if (baseTsExact && delta > -SAFE_BOUND && delta < SAFE_BOUND) {
      timestamp = BigInt(baseTs + delta)
    } else {
      const after = c.pos
      c.pos = tsAt
      timestamp = BigInt.asIntN(64, h.baseTimestamp + readVarlong(c))
      c.pos = after
    }
    const offsetDelta = readVarint(c)
    const offset = baseOffExact ? BigInt(baseOff + offsetDelta) : BigInt.asIntN(64, h.baseOffset + BigInt(offsetDelta))

    const keyLen = readLength(c, 'key')
    let key: Buffer | null = null
    if (keyLen >= 0) {
      key = data.subarray(c.pos, c.pos + keyLen)
      c.pos += keyLen
    }
    const valueLen = readLength(c, 'value')
    let value: Buffer | null = null
    if (valueLen >= 0) {
      value = data.subarray(c.pos, c.pos + valueLen)
      c.pos += valueLen
    }
    const headerCount = readVarint(c)
    if (headerCount < 0 || headerCount > (bodyEnd - c.pos) >>> 1) throw invalid(`invalid header count ${headerCount}`)
    const headers: RecordHeader[] = []
    for (let j = 0; j < headerCount; j++) {
      const hkLen = readLength(c, 'header key')
      if (hkLen < 0) throw invalid('null header key')
      const hKey = data.toString('utf8', c.pos, c.pos + hkLen)
      c.pos += hkLen
      const hvLen = readLength(c, 'header value')
      let hValue: Buffer | null = null
      if (hvLen >= 0) {
        hValue = data.subarray(c.pos, c.pos + hvLen)
        c.pos += hvLen
      }
      headers.push({ key: hKey, value: hValue })
    }
    if (c.pos !== bodyEnd) throw invalid(`record ${i} declares ${size} bytes but uses ${size - (bodyEnd - c.pos)}`)
    c.end = end
    records.push({ offset, timestamp, key, value, headers })
  }
  if (c.pos !== end) throw invalid(`${end - c.pos} bytes left after the batch's ${count} records`)
  return records
}

/**
 * Decodes the whole batch at `buf[at]`: header checks and CRC (validateBatch), decompression,
 * then exactly recordsCount records that use up every byte. Keys, values and header values are
 * views into `buf` (or into the decompressed data), not copies.
 */
export function decodeBatch(buf: Buffer, at = 0, options?: DecodeOptions): RecordBatch {
  const h = validateBatch(buf, at)
  const c = recordsSection(buf, at, h, options)
  const records = decodeRecords(c, h)
  const attributes = h.attributes
  return {
    baseOffset: h.baseOffset,
    lastOffset: h.baseOffset + BigInt(h.lastOffsetDelta),
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    compression: compressionTypeOf(attributes),
    timestampType: attributes & TIMESTAMP_TYPE_MASK ? 'LogAppendTime' : 'CreateTime',
    isTransactional: (attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
    isControl: (attributes & CONTROL_FLAG_MASK) !== 0,
    baseTimestamp: h.baseTimestamp,
    maxTimestamp: h.maxTimestamp,
    producerId: h.producerId,
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    sizeInBytes: sizeInBytes(h),
    records,
  }
}

/**
 * Checks what a leader checks before appending the batch at `buf[at]` (whose header `header` is,
 * CRC already validated): recordsCount > 0 and equal to lastOffsetDelta + 1, and the records
 * decode with record i's offsetDelta == i, using up every byte. Uncompressed batches are walked
 * in place without allocating.
 */
export function validateRecords(buf: Buffer, at: number, header: BatchHeader, options?: DecodeOptions): void {
  checkRecordCounts(header)
  checkRecords(recordsSection(buf, at, header, options), header.recordsCount)
}

/**
 * The most records one uncompressed Produce request can carry: Kafka's default
 * socket.request.max.bytes (100 MiB). The records of a compressed batch may not inflate past it
 * (or past max.message.bytes when that is larger).
 */
export const MAX_APPEND_DECOMPRESSED_BYTES = 100 * 1024 * 1024

/**
 * What a leader accepts inside a compressed batch, judged while it decompresses so that a bomb
 * is refused after its first block (docs/storage.md "Appends"); the Rust twin's `RecordLimits`.
 * Kafka bounds a compressed batch as it is sent (max.message.bytes), not the records inside it:
 * three 1 MiB records of zeros gzip to a few KiB and are accepted, here too. ferrolog refuses
 * with RECORD_TOO_LARGE records of one batch that inflate past
 * max(max.message.bytes, MAX_APPEND_DECOMPRESSED_BYTES), far above any batch a producer builds;
 * a record announcing more is refused from its length varint, before its bytes are inflated.
 * RECORD_TOO_LARGE and not CORRUPT_MESSAGE: the bytes are intact, and producers retry
 * CORRUPT_MESSAGE with the same batch while on RECORD_TOO_LARGE they split it or fail the record.
 */
export interface RecordLimits {
  maxDecompressed: number
  /**
   * A compacted log's rule (Kafka's LogValidator): every record of a data batch has a key; one
   * without is INVALID_RECORD, as the cleaner could not keep "the latest per key" of it.
   */
  keyRequired: boolean
  /** The log's timestamp rules (Kafka's LogValidator.validateTimestamp); absent: not checked. */
  timestamps?: TimestampChecks
}

export function recordLimitsFor(maxMessageBytes: number, keyRequired = false, timestamps?: TimestampChecks): RecordLimits {
  const limits: RecordLimits = {
    maxDecompressed: Math.max(maxMessageBytes, MAX_APPEND_DECOMPRESSED_BYTES),
    keyRequired,
  }
  if (timestamps) limits.timestamps = timestamps
  return limits
}

/**
 * The per-record rules of Kafka's LogValidator for the records of the batch under `limits`:
 * none for a control batch (the coordinator's markers), as the Rust twin.
 */
function recordChecks(header: BatchHeader, limits: RecordLimits): RecordChecks | undefined {
  if ((header.attributes & CONTROL_FLAG_MASK) !== 0 || (!limits.keyRequired && !limits.timestamps)) return undefined
  const t = limits.timestamps
  const base = Number(header.baseTimestamp)
  const bound = (ms: bigint): number => (ms < 2n ** 53n ? Number(ms) : Infinity)
  return {
    header,
    keyRequired: limits.keyRequired,
    timestamps: t,
    logAppendTime: (header.attributes & TIMESTAMP_TYPE_MASK) !== 0,
    fastBase: Math.abs(base) < SAFE_BOUND ? base : NaN,
    fastNow: t && t.nowMs > -SAFE_BOUND_N && t.nowMs < SAFE_BOUND_N ? Number(t.nowMs) : NaN,
    fastBefore: t ? bound(t.beforeMaxMs) : 0,
    fastAfter: t ? bound(t.afterMaxMs) : 0,
  }
}

/**
 * The per-record rules for one batch. The fast* fields judge, in plain numbers, the timestamps
 * of a CreateTime batch that lie within the window (all of them, for a healthy producer) while
 * every quantity stays below 2^53; the rest go the exact int64 way (record-violations.ts).
 */
interface RecordChecks {
  header: BatchHeader
  keyRequired: boolean
  timestamps: TimestampChecks | undefined
  logAppendTime: boolean
  /** baseTimestamp when below 2^52 in magnitude, else NaN. */
  fastBase: number
  fastNow: number
  fastBefore: number
  fastAfter: number
}

/**
 * Past the limit the codecs are given this much room, so that output growing block by block
 * (no block is larger than lz4's 4 MiB) is refused by the size checks as RECORD_TOO_LARGE; only
 * sizes declared up front reach the codec's own bound (OutputLimitError, mapped the same way).
 */
const LIMIT_SLACK = 4 * 1024 * 1024

function tooLarge(why: string): RecordError {
  return new RecordError('RECORD_TOO_LARGE', why)
}

/**
 * validateRecords for a leader's append: a compressed batch is refused with RECORD_TOO_LARGE as
 * soon as the output decompressed so far breaks `limits`, without inflating the rest.
 */
export function validateRecordsBounded(buf: Buffer, at: number, header: BatchHeader, limits: RecordLimits): void {
  runSteps(validateRecordsBoundedSteps(buf, at, header, limits))
}

/**
 * validateRecordsBounded without blocking the event loop for long (a batch may inflate to
 * 100 MiB): gzip inflates on zlib's worker threads, the other codecs block by block and the
 * records are walked in slices, the loop getting a turn between slices (output-limit.ts
 * `runStepsSliced`). The same checks and errors. `buf` must not change until it settles.
 */
export async function validateRecordsBoundedAsync(buf: Buffer, at: number, header: BatchHeader, limits: RecordLimits): Promise<void> {
  if (compressionTypeOf(header.attributes) !== 'gzip') return runStepsSliced(validateRecordsBoundedSteps(buf, at, header, limits))
  checkRecordCounts(header)
  const beyond = beyondLimit('gzip', limits)
  let data: Buffer
  try {
    data = await gunzipAsync(packedRecords(buf, at, header), limits.maxDecompressed + LIMIT_SLACK, recordSizes(header.recordsCount, limits, beyond))
  } catch (err) {
    if (err instanceof OutputLimitError) throw tooLarge(beyond)
    throw err
  }
  await runStepsSliced(checkRecordsSteps(new Cursor(data, 0, data.length), header.recordsCount, recordChecks(header, limits)))
}

function* validateRecordsBoundedSteps(buf: Buffer, at: number, header: BatchHeader, limits: RecordLimits): Steps<void> {
  checkRecordCounts(header)
  const type = compressionTypeOf(header.attributes)
  if (type === 'none') return yield* checkRecordsSteps(recordsSection(buf, at, header, undefined), header.recordsCount, recordChecks(header, limits))
  const beyond = beyondLimit(type, limits)
  let data: Buffer
  try {
    data = yield* decompressSteps(type, packedRecords(buf, at, header), limits.maxDecompressed + LIMIT_SLACK, recordSizes(header.recordsCount, limits, beyond))
  } catch (err) {
    if (err instanceof OutputLimitError) throw tooLarge(beyond)
    throw err
  }
  yield* checkRecordsSteps(new Cursor(data, 0, data.length), header.recordsCount, recordChecks(header, limits))
}

function beyondLimit(type: string, limits: RecordLimits): string {
  return `${type} records of the batch decompress to more than ${limits.maxDecompressed} bytes`
}

function packedRecords(buf: Buffer, at: number, header: BatchHeader): Buffer {
  return buf.subarray(at + RECORDS_OFFSET, at + sizeInBytes(header))
}

/**
 * Hops from record to record of a growing decompressed output by their length varints (the
 * full checks come once all of it is there), refusing an output, or a record, past `limits`.
 */
function recordSizes(count: number, limits: RecordLimits, beyond: string): Progress {
  let pos = 0
  let seen = 0
  return (out, end) => {
    if (end > limits.maxDecompressed) throw tooLarge(beyond)
    while (seen < count && pos < end) {
      // An incomplete varint waits for more output; a bad one is left to the full checks.
      let raw = 0
      let n = 0
      let complete = false
      while (n < 5 && pos + n < end) {
        const b = out[pos + n]!
        raw += (b & 0x7f) * 2 ** (7 * n++)
        if (b < 0x80) {
          complete = true
          break
        }
      }
      if (!complete) return
      const length = raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2
      if (length < 0) {
        seen = count
        return
      }
      const size = n + length
      if (size > limits.maxDecompressed) {
        throw tooLarge(`record ${seen} of the compressed batch is ${size} bytes, more than the records of a batch may inflate to (${limits.maxDecompressed} bytes)`)
      }
      if (end - pos < size) return
      pos += size
      seen++
    }
  }
}

function checkRecordCounts(header: BatchHeader): void {
  const count = header.recordsCount
  if (count <= 0) throw invalid(`invalid record count ${count} in a batch to append`)
  if (header.lastOffsetDelta !== count - 1) {
    throw invalid(`inconsistent batch: lastOffsetDelta ${header.lastOffsetDelta} with ${count} records`)
  }
}

/** Every record decodes, record i has offsetDelta i, and they fill the cursor exactly. */
function checkRecords(c: Cursor, count: number): void {
  runSteps(checkRecordsSteps(c, count))
}

/** Records checked between pauses of `checkRecordsSteps`. */
const RECORDS_PER_STEP = 4096

/**
 * checkRecords, pausing (yielding) every RECORDS_PER_STEP records; with `checks` (a producer's
 * data batch), every record is also judged by Kafka's LogValidator's per-record rules, all of
 * them, and the batch is refused with a RecordError naming each bad record (its `violations`).
 */
function* checkRecordsSteps(c: Cursor, count: number, checks?: RecordChecks): Steps<void> {
  const end = c.end
  let violations: RecordViolation[] | undefined
  for (let i = 0; i < count; i++) {
    if (i % RECORDS_PER_STEP === RECORDS_PER_STEP - 1) yield
    if (c.pos >= end) recordsLeft(count, i)
    const size = readVarint(c)
    if (size < 1 || size > end - c.pos) throw invalid(`invalid record size ${size} (${end - c.pos} bytes left)`)
    const bodyEnd = c.pos + size
    c.end = bodyEnd
    c.pos++
    const timestampAt = c.pos
    skipVarint(c, MAX_VARLONG_BYTES)
    const offsetDelta = readVarint(c)
    if (offsetDelta !== i) throw invalid(`record ${i} has offsetDelta ${offsetDelta}`)
    const keyLength = readLength(c, 'key')
    if (keyLength > 0) c.pos += keyLength
    let len = readLength(c, 'value')
    if (len > 0) c.pos += len
    if (checks) {
      const v = violationOf(checks, i, c.buf, timestampAt, keyLength, len)
      if (v) (violations ??= []).push(v)
    }
    const headerCount = readVarint(c)
    if (headerCount < 0 || headerCount > (bodyEnd - c.pos) >>> 1) throw invalid(`invalid header count ${headerCount}`)
    for (let j = 0; j < headerCount; j++) {
      len = readLength(c, 'header key')
      if (len < 0) throw invalid('null header key')
      c.pos += len
      len = readLength(c, 'header value')
      if (len > 0) c.pos += len
    }
    if (c.pos !== bodyEnd) throw invalid(`record ${i} declares ${size} bytes but uses ${size - (bodyEnd - c.pos)}`)
    c.end = end
  }
  if (c.pos !== end) throw invalid(`${end - c.pos} bytes left after the batch's ${count} records`)
  if (violations) throw new RecordError(violations.some(isTimestampViolation) ? 'INVALID_TIMESTAMP' : 'INVALID_RECORD', recordErrorsMessage(violations, '(this log)'), { violations })
}

/**
 * Kafka's `LogValidator.validateRecord` for record `i` of a v2 batch: the key first, then the
 * timestamp (the varlong at `buf[timestampAt]`, already checked to decode).
 */
function violationOf(checks: RecordChecks, i: number, buf: Buffer, timestampAt: number, keyLength: number, valueLength: number): RecordViolation | null {
  if (checks.keyRequired && keyLength < 0) return { batchIndex: i, kind: 'NO_KEY' }
  const t = checks.timestamps
  if (!t) return null
  const h = checks.header
  const logAppendTime = checks.logAppendTime
  if (!logAppendTime && t.createTime) {
    const delta = readVarlongNumber(new Cursor(buf, timestampAt, buf.length))
    const ts = checks.fastBase + delta
    if (Math.abs(delta) < SAFE_BOUND && Math.abs(ts) < SAFE_BOUND) {
      const diff = checks.fastNow - ts
      if (ts === -1 || (diff <= checks.fastBefore && -diff <= checks.fastAfter)) return null
    }
  }
  // DefaultRecordBatch: a LogAppendTime batch's records carry its maxTimestamp.
  const timestamp = logAppendTime ? h.maxTimestamp : BigInt.asIntN(64, h.baseTimestamp + readVarlong(new Cursor(buf, timestampAt, buf.length)))
  return timestampViolation(t, i, logAppendTime, timestamp, BigInt.asIntN(64, h.baseOffset + BigInt(i)), Math.max(keyLength, 0), Math.max(valueLength, 0))
}

/** One batch found by `BatchIterator`: where it starts, its size on disk and its header. */
export interface BatchEntry {
  position: number
  size: number
  header: BatchHeader
}

/**
 * Walks the consecutive batches of `buf[start, end)` by their headers (no CRC check, no record
 * decoding), as Kafka's FileLogInputStream does. It stops before a partial trailing batch (17
 * bytes or fewer left, or fewer than the batch's size): `position` is then where the whole batches
 * end and `partial` is true. A batchLength too small for a header is CORRUPT_RECORD and a magic
 * other than 2 UNSUPPORTED_MAGIC.
 */
export class BatchIterator implements IterableIterator<BatchEntry> {
  readonly buf: Buffer
  readonly end: number
  /** Where the next batch starts: after the iteration, the end of the whole batches. */
  position: number

  constructor(buf: Buffer, start = 0, end = buf.length) {
    this.buf = buf
    this.position = start
    this.end = Math.min(end, buf.length)
  }

  private done = false

  /** After the iteration: whether bytes are left after the whole batches (a partial trailing batch). */
  get partial(): boolean {
    return this.done && this.position < this.end
  }

  next(): IteratorResult<BatchEntry> {
    const buf = this.buf
    const position = this.position
    const remaining = this.end - position
    // Kafka's FileLogInputStream.nextBatch order: enough bytes to hold the size and magic, a
    // size that covers a header, the whole batch there (else a partial tail), then the magic.
    if (remaining <= HEADER_SIZE_UP_TO_MAGIC) return this.finish()
    const batchLength = buf.readInt32BE(position + LENGTH_OFFSET)
    if (batchLength < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) {
      throw new RecordError('CORRUPT_RECORD', `invalid batchLength ${batchLength} at position ${position}`)
    }
    const size = LOG_OVERHEAD + batchLength
    if (size > remaining) return this.finish()
    const magic = buf.readInt8(position + MAGIC_OFFSET)
    if (magic !== MAGIC_V2) {
      throw new RecordError('UNSUPPORTED_MAGIC', `unsupported record batch magic ${magic} at position ${position} (only 2)`)
    }
    const header = parseBatchHeader(buf, position)
    this.position = position + size
    return { done: false, value: { position, size, header } }
  }

  private finish(): IteratorResult<BatchEntry> {
    this.done = true
    return { done: true, value: undefined }
  }

  [Symbol.iterator](): BatchIterator {
    return this
  }
}

/** The batches of `buf[start, end)`; see BatchIterator. */
export function batchesOf(buf: Buffer, start = 0, end = buf.length): BatchIterator {
  return new BatchIterator(buf, start, end)
}

/** Decodes every whole batch of `buf[start, end)` (a partial trailing batch is left out). */
export function decodeBatches(buf: Buffer, start = 0, end = buf.length, options?: DecodeOptions): RecordBatch[] {
  const out: RecordBatch[] = []
  for (const { position } of new BatchIterator(buf, start, end)) out.push(decodeBatch(buf, position, options))
  return out
}
