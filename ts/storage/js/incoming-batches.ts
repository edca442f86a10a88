/**
 * The checks an append runs before anything is written (docs/storage.md "Appends"), and where
 * the checked batches lie in the caller's buffer. One instance per log, reused by every append.
 */
import {
  ATTRIBUTES_OFFSET,
  CONTROL_FLAG_MASK,
  CRC_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LENGTH_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAGIC_V2,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  parseBatchHeader,
  sizeInBytes,
  type BatchHeader,
} from '../../protocol/batch-header.js'
import { crc32c } from '../../protocol/crc32c.js'
import { recordLimitsFor, validateRecordsBounded, validateRecordsBoundedAsync, type RecordLimits } from '../../protocol/records.js'
import { timestampChecksFor } from '../../protocol/record-violations.js'
import { StorageError, asLogStorageError } from '../errors.js'
import { isCompacted, type AppendOrigin, type LogConfig } from '../types.js'

/** What a leader's checks take from the log's config (the Rust engine's `LeaderChecks`). */
export type LeaderCheckConfig = Pick<LogConfig, 'maxMessageBytes' | 'cleanupPolicy' | 'messageTimestampType' | 'messageTimestampBeforeMaxMs' | 'messageTimestampAfterMaxMs'>

/** A leader's checks of records in a log at `nowMs` (the Rust engine's `LeaderChecks::record_limits`). */
function leaderRecordLimits(config: LeaderCheckConfig, nowMs: number): RecordLimits {
  const timestamps = timestampChecksFor(config.messageTimestampType, nowMs, config.messageTimestampBeforeMaxMs, config.messageTimestampAfterMaxMs)
  return recordLimitsFor(config.maxMessageBytes, isCompacted(config), timestamps)
}

/** Where a leader checks: the clock, and the log's name in Kafka's messages ("topic-0", its directory's name). */
export interface LeaderCheckContext {
  nowMs: number
  topicPartition: string
}

/** Fewer bytes than this at the end of a follower's buffer are a partial batch (Kafka's HEADER_SIZE_UP_TO_MAGIC). */
const HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1

function corrupt(message: string): StorageError {
  return new StorageError('CORRUPT_RECORD', message)
}

function checkCrc(buf: Buffer, at: number, size: number): void {
  const stored = buf.readUInt32BE(at + CRC_OFFSET)
  const computed = crc32c(buf, at + ATTRIBUTES_OFFSET, at + size)
  if (stored !== computed) {
    throw corrupt(`record batch CRC mismatch: stored 0x${stored.toString(16).padStart(8, '0')}, computed 0x${computed.toString(16).padStart(8, '0')}`)
  }
}

export class IncomingBatches {
  count = 0
  readonly starts: number[] = []
  readonly sizes: number[] = []
  readonly lastDeltas: number[] = []
  readonly records: number[] = []

  private push(start: number, size: number, lastDelta: number, records: number): void {
    const i = this.count++
    this.starts[i] = start
    this.sizes[i] = size
    this.lastDeltas[i] = lastDelta
    this.records[i] = records
  }

  /**
   * A leader's checks: whole batches, magic 2, sizes, max.message.bytes, CRC, no control
   * batches unless from the transaction coordinator, records that decode with offsetDelta == index and a count equal to recordsCount,
   * and compressed records within recordLimitsFor(max.message.bytes), judged as they inflate,
   * then Kafka's LogValidator's per-record rules at `at.nowMs` (a key if the log is compacted,
   * the timestamps). Throws at the first bad batch; records that break a per-record rule are all
   * named (the StorageError's `recordErrors`).
   */
  checkLeader(buf: Buffer, config: LeaderCheckConfig, where: LeaderCheckContext, origin: AppendOrigin = 'CLIENT'): this {
    this.count = 0
    const limits = leaderRecordLimits(config, where.nowMs)
    let at = 0
    while (at < buf.length) {
      const h = this.checkLeaderHeader(buf, at, config.maxMessageBytes, origin)
      try {
        validateRecordsBounded(buf, at, h, limits)
      } catch (err) {
        throw asLogStorageError(err, where.topicPartition)
      }
      at = this.pushLeader(at, h)
    }
    return this
  }

  /**
   * checkLeader without blocking the event loop for long: the records of each batch are
   * checked by `validateRecordsBoundedAsync` (compressed batches inflate off the loop or in
   * slices). `buf` must not change until it settles.
   */
  async checkLeaderAsync(buf: Buffer, config: LeaderCheckConfig, where: LeaderCheckContext, origin: AppendOrigin = 'CLIENT'): Promise<this> {
    this.count = 0
    const limits = leaderRecordLimits(config, where.nowMs)
    let at = 0
    while (at < buf.length) {
      const h = this.checkLeaderHeader(buf, at, config.maxMessageBytes, origin)
      await validateRecordsBoundedAsync(buf, at, h, limits).catch((err: unknown) => {
        throw asLogStorageError(err, where.topicPartition)
      })
      at = this.pushLeader(at, h)
    }
    return this
  }

  /** A leader's checks of the batch at `buf[at]` up to its records. */
  private checkLeaderHeader(buf: Buffer, at: number, maxMessageBytes: number, origin: AppendOrigin): BatchHeader {
    const size = wholeBatchAt(buf, at)
    if (size < 0) throw corrupt(`record batch truncated: ${buf.length - at} bytes after the last whole batch`)
    const h = parseBatchHeader(buf, at)
    if (size > maxMessageBytes) {
      throw new StorageError('RECORD_TOO_LARGE', `record batch of ${size} bytes exceeds max.message.bytes ${maxMessageBytes}`)
    }
    checkCrc(buf, at, size)
    if ((h.attributes & CONTROL_FLAG_MASK) !== 0 && origin === 'CLIENT') {
      throw new StorageError('INVALID_RECORD', 'clients may not append control batches')
    }
    return h
  }

  /** Records a checked batch; where the next one starts. */
  private pushLeader(at: number, h: BatchHeader): number {
    const size = sizeInBytes(h)
    this.push(at, size, h.lastOffsetDelta, h.recordsCount)
    return at + size
  }

  /**
   * A follower's checks: magic 2, sizes, CRC, and offsets that continue the log exactly from
   * `logEndOffset`. A partial trailing batch (a fetch response may end inside one) is left out,
   * as Kafka does.
   */
  checkFollower(buf: Buffer, logEndOffset: bigint): this {
    this.count = 0
    let expected = logEndOffset
    let at = 0
    while (at < buf.length) {
      const size = wholeBatchAt(buf, at)
      if (size < 0) break
      checkCrc(buf, at, size)
      const lastDelta = buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET)
      const count = buf.readInt32BE(at + RECORDS_COUNT_OFFSET)
      if (count < 0 || lastDelta < 0 || lastDelta < count - 1) {
        throw new StorageError('INVALID_RECORD', `lastOffsetDelta ${lastDelta} does not fit recordsCount ${count}`)
      }
      const baseOffset = buf.readBigInt64BE(at)
      if (baseOffset !== expected) {
        throw new StorageError(
          'UNEXPECTED_APPEND_OFFSET',
          this.count === 0
            ? `first batch has baseOffset ${baseOffset}, the log end offset is ${expected}`
            : `batch at byte ${at} has baseOffset ${baseOffset}, expected ${expected} after the previous batch`,
        )
      }
      expected = baseOffset + BigInt(lastDelta) + 1n
      this.push(at, size, lastDelta, count)
      at += size
    }
    return this
  }
}

/**
 * The size of the whole batch at `buf[at]`, or -1 if only part of one is there, in Kafka's
 * order (`ByteBufferLogInputStream`): fewer than 17 bytes is partial; a batchLength too small
 * for a header is CORRUPT_RECORD; fewer bytes than announced is partial; then the magic.
 */
function wholeBatchAt(buf: Buffer, at: number): number {
  const remaining = buf.length - at
  if (remaining < HEADER_SIZE_UP_TO_MAGIC) return -1
  const batchLength = buf.readInt32BE(at + LENGTH_OFFSET)
  if (batchLength < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) throw corrupt(`invalid batchLength ${batchLength} at byte ${at}`)
  const size = LOG_OVERHEAD + batchLength
  if (size > remaining) return -1
  const magic = buf.readInt8(at + MAGIC_OFFSET)
  if (magic !== MAGIC_V2) throw new StorageError('UNSUPPORTED_MAGIC', `unsupported record batch magic ${magic} (only 2)`)
  return size
}
