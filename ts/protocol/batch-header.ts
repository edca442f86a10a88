/**
 * The record batch header (magic 2). Big-endian; byte offset(length):
 *
 *    0(8) baseOffset           12(4) partitionLeaderEpoch   16(1) magic = 2
 *    8(4) batchLength          17(4) crc (CRC-32C of bytes 21..end)
 *   21(2) attributes           23(4) lastOffsetDelta        27(8) baseTimestamp
 *   35(8) maxTimestamp         43(8) producerId             51(2) producerEpoch
 *   53(4) baseSequence         57(4) recordsCount           61(..) records
 *
 * A batch occupies LOG_OVERHEAD + batchLength bytes. baseOffset and partitionLeaderEpoch are
 * outside the CRC. The Rust twin is crates/record/src/batch.rs.
 */
import { RecordError } from './record-error.js'
import { crc32c } from './crc32c.js'

export const BASE_OFFSET_OFFSET = 0
export const LENGTH_OFFSET = 8
export const PARTITION_LEADER_EPOCH_OFFSET = 12
export const MAGIC_OFFSET = 16
export const CRC_OFFSET = 17
export const ATTRIBUTES_OFFSET = 21
export const LAST_OFFSET_DELTA_OFFSET = 23
export const BASE_TIMESTAMP_OFFSET = 27
export const MAX_TIMESTAMP_OFFSET = 35
export const PRODUCER_ID_OFFSET = 43
export const PRODUCER_EPOCH_OFFSET = 51
export const BASE_SEQUENCE_OFFSET = 53
export const RECORDS_COUNT_OFFSET = 57
export const RECORDS_OFFSET = 61

export const LOG_OVERHEAD = 12
export const RECORD_BATCH_OVERHEAD = RECORDS_OFFSET
export const MAGIC_V2 = 2

export const COMPRESSION_CODEC_MASK = 0x07
export const TIMESTAMP_TYPE_MASK = 0x08
export const TRANSACTIONAL_FLAG_MASK = 0x10
export const CONTROL_FLAG_MASK = 0x20
export const DELETE_HORIZON_FLAG_MASK = 0x40

export const NO_PRODUCER_ID = -1n
export const NO_PRODUCER_EPOCH = -1
export const NO_SEQUENCE = -1
export const NO_PARTITION_LEADER_EPOCH = -1
export const NO_TIMESTAMP = -1n

export interface BatchHeader {
  baseOffset: bigint
  batchLength: number
  partitionLeaderEpoch: number
  magic: number
  crc: number
  attributes: number
  lastOffsetDelta: number
  baseTimestamp: bigint
  maxTimestamp: bigint
  producerId: bigint
  producerEpoch: number
  baseSequence: number
  recordsCount: number
}

/** Size on disk of the batch whose header starts at `buf[at]` (batchLength + 12). */
export function batchSizeAt(buf: Buffer, at: number): number {
  return LOG_OVERHEAD + buf.readInt32BE(at + LENGTH_OFFSET)
}

/**
 * Decodes the header at `buf[at]`. Checks only that the header bytes are there, a batchLength
 * covering a header, and magic 2; `validateBatch` checks the rest.
 */
export function parseBatchHeader(buf: Buffer, at = 0): BatchHeader {
  const available = buf.length - at
  if (available < RECORD_BATCH_OVERHEAD) {
    throw new RecordError('CORRUPT_RECORD', `record batch truncated: needs ${RECORD_BATCH_OVERHEAD} bytes, ${available} available`)
  }
  const batchLength = buf.readInt32BE(at + LENGTH_OFFSET)
  if (batchLength < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) {
    throw new RecordError('CORRUPT_RECORD', `invalid batchLength ${batchLength}`)
  }
  const magic = buf.readInt8(at + MAGIC_OFFSET)
  if (magic !== MAGIC_V2) throw new RecordError('UNSUPPORTED_MAGIC', `unsupported record batch magic ${magic} (only 2)`)
  return {
    baseOffset: buf.readBigInt64BE(at + BASE_OFFSET_OFFSET),
    batchLength,
    partitionLeaderEpoch: buf.readInt32BE(at + PARTITION_LEADER_EPOCH_OFFSET),
    magic,
    crc: buf.readUInt32BE(at + CRC_OFFSET),
    attributes: buf.readInt16BE(at + ATTRIBUTES_OFFSET),
    lastOffsetDelta: buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET),
    baseTimestamp: buf.readBigInt64BE(at + BASE_TIMESTAMP_OFFSET),
    maxTimestamp: buf.readBigInt64BE(at + MAX_TIMESTAMP_OFFSET),
    producerId: buf.readBigInt64BE(at + PRODUCER_ID_OFFSET),
    producerEpoch: buf.readInt16BE(at + PRODUCER_EPOCH_OFFSET),
    baseSequence: buf.readInt32BE(at + BASE_SEQUENCE_OFFSET),
    recordsCount: buf.readInt32BE(at + RECORDS_COUNT_OFFSET),
  }
}

export function sizeInBytes(h: BatchHeader): number {
  return LOG_OVERHEAD + h.batchLength
}

export function lastOffsetOf(h: BatchHeader): bigint {
  return h.baseOffset + BigInt(h.lastOffsetDelta)
}

/**
 * Checks the whole batch at `buf[at]`, in Kafka's order (`ByteBufferLogInputStream.nextBatch`,
 * then `DefaultRecordBatch.ensureValid`): a batchLength that covers a header, all its bytes
 * present, magic 2, the CRC over bytes 21..end, a non-negative record count and a
 * lastOffsetDelta consistent with it. Records are not decoded.
 */
export function validateBatch(buf: Buffer, at = 0): BatchHeader {
  const available = buf.length - at
  if (available >= LOG_OVERHEAD) {
    const size = LOG_OVERHEAD + buf.readInt32BE(at + LENGTH_OFFSET)
    if (size >= RECORD_BATCH_OVERHEAD && available < size) {
      throw new RecordError('CORRUPT_RECORD', `record batch truncated: needs ${size} bytes, ${available} available`)
    }
  }
  const h = parseBatchHeader(buf, at)
  const size = sizeInBytes(h)
  const computed = crc32c(buf, at + ATTRIBUTES_OFFSET, at + size)
  if (computed !== h.crc) {
    throw new RecordError('CORRUPT_RECORD', `record batch CRC mismatch: stored 0x${h.crc.toString(16).padStart(8, '0')}, computed 0x${computed.toString(16).padStart(8, '0')}`)
  }
  if (h.recordsCount < 0) throw new RecordError('INVALID_RECORD', `invalid recordsCount ${h.recordsCount}`)
  if (h.lastOffsetDelta < 0 || (h.recordsCount > 0 && h.lastOffsetDelta < h.recordsCount - 1)) {
    throw new RecordError('INVALID_RECORD', `lastOffsetDelta ${h.lastOffsetDelta} does not fit recordsCount ${h.recordsCount}`)
  }
  return h
}

/** Recomputes and stores the CRC of the whole batch at `buf[at]`. */
export function updateCrc(buf: Buffer, at = 0): void {
  const size = batchSizeAt(buf, at)
  buf.writeUInt32BE(crc32c(buf, at + ATTRIBUTES_OFFSET, at + size), at + CRC_OFFSET)
}
