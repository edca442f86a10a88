/**
 * Builds one record batch (magic 2) the way Kafka's Java MemoryRecordsBuilder does, byte for
 * byte (for `compression: 'none'`; compressed bytes depend on the encoder):
 *
 *   - record i: offsetDelta i, attributes 0, timestampDelta = timestamp - baseTimestamp, key and
 *     value length -1 when null, header values likewise, header keys UTF-8 (record layout in
 *     records.ts);
 *   - baseTimestamp = the first record's timestamp, maxTimestamp = the largest one (the
 *     LogAppendTime, `nowMs`, for a LogAppendTime batch), lastOffsetDelta = count - 1;
 *   - records compressed as one stream when a codec is set; CRC-32C over bytes 21..end.
 *
 * Defaults are a client's: baseOffset 0, partitionLeaderEpoch -1, producerId -1, producerEpoch -1,
 * baseSequence -1, not transactional, CreateTime; a record without a timestamp gets `nowMs`
 * (default Date.now()). The Rust twin is crates/record/src/builder.rs.
 */
import type { CompressionType, ProducerRecord } from './record-types.js'
import { RecordError } from './record-error.js'
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  CONTROL_FLAG_MASK,
  CRC_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LENGTH_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAGIC_V2,
  MAX_TIMESTAMP_OFFSET,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORDS_COUNT_OFFSET,
  RECORDS_OFFSET,
  TIMESTAMP_TYPE_MASK,
  TRANSACTIONAL_FLAG_MASK,
} from './batch-header.js'
import { compress, compressionId, type Compressor } from './compression.js'
import { crc32c } from './crc32c.js'
import { sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from './varint.js'

export interface BuildBatchOptions {
  compression?: CompressionType
  baseOffset?: bigint
  partitionLeaderEpoch?: number
  producerId?: bigint
  producerEpoch?: number
  baseSequence?: number
  isTransactional?: boolean
  /** A control batch (transaction markers); records are written as given. */
  isControl?: boolean
  timestampType?: 'CreateTime' | 'LogAppendTime'
  /** Timestamp of records that have none, and the LogAppendTime of a LogAppendTime batch. */
  nowMs?: bigint | number
  /** Compresses the records; default this package's TypeScript codecs (compression.ts). */
  compressor?: Compressor
  /** CRC-32C of the bytes after the CRC field; default this package's TypeScript crc32c (crc32c.ts). */
  checksum?: (data: Uint8Array) => number
}

/** Below this magnitude timestamps and their differences are exact as numbers. */
const SAFE_BOUND = 2 ** 52
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

function invalidArgument(why: string): RecordError {
  return new RecordError('INVALID_ARGUMENT', why)
}

function checkInt(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw invalidArgument(`${name} ${value} out of range [${min}, ${max}]`)
  return value
}

function checkInt64(name: string, value: bigint): bigint {
  if (typeof value !== 'bigint' || value < INT64_MIN || value > INT64_MAX) throw invalidArgument(`${name} ${String(value)} is not an int64`)
  return value
}

function toTimestamp(value: bigint | number): bigint | number {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw invalidArgument(`timestamp ${value} is not a safe integer`)
    return value > -SAFE_BOUND && value < SAFE_BOUND ? value : BigInt(value)
  }
  checkInt64('timestamp', value)
  return value > -SAFE_BOUND && value < SAFE_BOUND ? Number(value) : value
}

/** UTF-8 byte length of a key, value or header value; -1 for null. */
function lengthOf(x: Buffer | string | null | undefined): number {
  if (x === null || x === undefined) return -1
  return typeof x === 'string' ? Buffer.byteLength(x, 'utf8') : x.length
}

function sizeOfField(len: number): number {
  return len < 0 ? 1 : sizeOfVarint(len) + len
}

function writeField(buf: Buffer, x: Buffer | string | null | undefined, len: number, at: number): number {
  at = writeVarint(buf, len, at)
  if (len <= 0) return at
  if (typeof x === 'string') return at + buf.write(x, at, len, 'utf8')
  buf.set(x as Buffer, at)
  return at + len
}

/** Builds one complete magic-2 record batch holding `records` (at least one). */
export function buildBatch(records: readonly ProducerRecord[], options: BuildBatchOptions = {}): Buffer {
  const count = records.length
  if (count === 0) throw invalidArgument('a record batch needs at least one record')
  if (count > 0x7fffffff) throw invalidArgument('too many records for one batch')
  const compression = options.compression ?? 'none'
  const codec = compressionId(compression)
  const baseOffset = checkInt64('baseOffset', options.baseOffset ?? 0n)
  const partitionLeaderEpoch = checkInt('partitionLeaderEpoch', options.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, -0x80000000, 0x7fffffff)
  const producerId = checkInt64('producerId', options.producerId ?? NO_PRODUCER_ID)
  const producerEpoch = checkInt('producerEpoch', options.producerEpoch ?? NO_PRODUCER_EPOCH, -0x8000, 0x7fff)
  const baseSequence = checkInt('baseSequence', options.baseSequence ?? NO_SEQUENCE, -0x80000000, 0x7fffffff)
  const logAppendTime = options.timestampType === 'LogAppendTime'
  const now = toTimestamp(options.nowMs ?? Date.now())

  // Timestamps, as numbers while exact, else bigints.
  const deltas: Array<number | bigint> = new Array(count)
  const base = toTimestamp(records[0]!.timestamp ?? now)
  let max = base
  let exact = typeof base === 'number'
  for (let i = 0; i < count; i++) {
    const ts = i === 0 ? base : toTimestamp(records[i]!.timestamp ?? now)
    if (typeof ts === 'bigint') exact = false
    deltas[i] = ts
    if (ts > max) max = ts
  }
  if (exact) {
    for (let i = 0; i < count; i++) deltas[i] = (deltas[i] as number) - (base as number)
  } else {
    const b = BigInt(base)
    for (let i = 0; i < count; i++) deltas[i] = BigInt.asIntN(64, BigInt(deltas[i]!) - b)
  }

  // Sizes: per record its body size, and every key/value/header length in write order.
  const bodySizes = new Array<number>(count)
  const lengths: number[] = []
  let recordsSize = 0
  for (let i = 0; i < count; i++) {
    const r = records[i]!
    const keyLen = lengthOf(r.key)
    const valueLen = lengthOf(r.value)
    lengths.push(keyLen, valueLen)
    let body = 1 + sizeOfVarlong(deltas[i]!) + sizeOfVarint(i) + sizeOfField(keyLen) + sizeOfField(valueLen)
    const headers = r.headers
    const headerCount = headers === undefined ? 0 : headers.length
    body += sizeOfVarint(headerCount)
    for (let j = 0; j < headerCount; j++) {
      const h = headers![j]!
      if (typeof h.key !== 'string') throw invalidArgument('header keys must be strings')
      const hkLen = Buffer.byteLength(h.key, 'utf8')
      const hvLen = lengthOf(h.value)
      lengths.push(hkLen, hvLen)
      body += sizeOfField(hkLen) + sizeOfField(hvLen)
    }
    bodySizes[i] = body
    recordsSize += sizeOfVarint(body) + body
  }
  if (recordsSize > 0x7fffffff - RECORDS_OFFSET) throw invalidArgument('batch too large')

  // Records: straight into the batch when uncompressed, else into a scratch buffer.
  const direct = codec === 0
  const out = Buffer.allocUnsafe(direct ? RECORDS_OFFSET + recordsSize : recordsSize)
  let at = direct ? RECORDS_OFFSET : 0
  let l = 0
  for (let i = 0; i < count; i++) {
    const r = records[i]!
    at = writeVarint(out, bodySizes[i]!, at)
    out[at++] = 0
    at = writeVarlong(out, deltas[i]!, at)
    at = writeVarint(out, i, at)
    at = writeField(out, r.key, lengths[l++]!, at)
    at = writeField(out, r.value, lengths[l++]!, at)
    const headers = r.headers
    const headerCount = headers === undefined ? 0 : headers.length
    at = writeVarint(out, headerCount, at)
    for (let j = 0; j < headerCount; j++) {
      const h = headers![j]!
      at = writeField(out, h.key, lengths[l++]!, at)
      at = writeField(out, h.value, lengths[l++]!, at)
    }
  }

  let batch: Buffer
  if (direct) {
    batch = out
  } else {
    const compressed = (options.compressor ?? compress)(compression, out)
    batch = Buffer.allocUnsafe(RECORDS_OFFSET + compressed.length)
    compressed.copy(batch, RECORDS_OFFSET)
  }

  let attributes = codec
  if (logAppendTime) attributes |= TIMESTAMP_TYPE_MASK
  if (options.isTransactional) attributes |= TRANSACTIONAL_FLAG_MASK
  if (options.isControl) attributes |= CONTROL_FLAG_MASK
  batch.writeBigInt64BE(baseOffset, BASE_OFFSET_OFFSET)
  batch.writeInt32BE(batch.length - LOG_OVERHEAD, LENGTH_OFFSET)
  batch.writeInt32BE(partitionLeaderEpoch, PARTITION_LEADER_EPOCH_OFFSET)
  batch.writeInt8(MAGIC_V2, MAGIC_OFFSET)
  batch.writeInt16BE(attributes, ATTRIBUTES_OFFSET)
  batch.writeInt32BE(count - 1, LAST_OFFSET_DELTA_OFFSET)
  batch.writeBigInt64BE(BigInt(base), BASE_TIMESTAMP_OFFSET)
  batch.writeBigInt64BE(BigInt(logAppendTime ? now : max), MAX_TIMESTAMP_OFFSET)
  batch.writeBigInt64BE(producerId, PRODUCER_ID_OFFSET)
  batch.writeInt16BE(producerEpoch, PRODUCER_EPOCH_OFFSET)
  batch.writeInt32BE(baseSequence, BASE_SEQUENCE_OFFSET)
  batch.writeInt32BE(count, RECORDS_COUNT_OFFSET)
  batch.writeUInt32BE(options.checksum ? options.checksum(batch.subarray(ATTRIBUTES_OFFSET)) >>> 0 : crc32c(batch, ATTRIBUTES_OFFSET, batch.length), CRC_OFFSET)
  return batch
}
