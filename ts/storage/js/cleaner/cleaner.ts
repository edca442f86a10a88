/**
 * Kafka's `Cleaner.buildOffsetMap` and `cleanSegments` (with `MemoryRecords.filterTo`), twin of
 * crates/storage/src/cleaner/clean.rs, which documents the rules; both write the same bytes.
 *
 * Output in the partition directory: `<base>.log.cleaned`, `<base>.index.cleaned`,
 * `<base>.timeindex.cleaned` (live formats), written by an ordinary LogSegment in the scratch
 * directory `<base>.cleaning/` and renamed into place once complete and synced.
 */
import * as fs from 'node:fs'
import { join } from 'node:path'
import {
  ATTRIBUTES_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  COMPRESSION_CODEC_MASK,
  CONTROL_FLAG_MASK,
  CRC_OFFSET,
  DELETE_HORIZON_FLAG_MASK,
  LAST_OFFSET_DELTA_OFFSET,
  LENGTH_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAGIC_V2,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  BASE_SEQUENCE_OFFSET,
  RECORDS_COUNT_OFFSET,
  RECORDS_OFFSET,
  TIMESTAMP_TYPE_MASK,
  TRANSACTIONAL_FLAG_MASK,
  parseBatchHeader,
  type BatchHeader,
} from '../../../protocol/batch-header.js'
import { compress, compressionTypeOf } from '../../../protocol/compression.js'
import { crc32c } from '../../../protocol/crc32c.js'
import { batchesOf, decodeBatch } from '../../../protocol/records.js'
import { sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from '../../../protocol/varint.js'
import { StorageError } from '../../errors.js'
import type { LogRecord } from '../../types.js'
import { filenamePrefixFromOffset, INDEX_FILE_SUFFIX, LOG_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX } from '../files.js'
import { LogSegment } from '../log-segment.js'
import { SkimpyOffsetMap } from './offset-map.js'
import { CleanedTransactionMetadata, type AbortedTxn } from './transaction-metadata.js'

export const CLEANED_FILE_SUFFIX = '.cleaned'
const SCRATCH_DIR_SUFFIX = '.cleaning'

export interface SourceSegment {
  baseOffset: bigint
  logPath: string
}

/** What an active producer last wrote (Kafka's `LastRecord`). */
export interface LastRecord {
  lastDataOffset: bigint | null
  producerEpoch: number
}

export interface CleanParams {
  currentTimeMs: bigint
  deleteRetentionMs: bigint
  firstUncleanableOffset: bigint
  /** The map's latest offset + 1: the batch ending here is kept even if empty. */
  upperBoundOffset: bigint
  aborted: readonly AbortedTxn[]
  lastRecordsOfActiveProducers: ReadonlyMap<bigint, LastRecord>
  maxDecompressedBytes: number
  indexIntervalBytes: number
  segmentIndexBytes: number
}

/** A finished round: the `.cleaned` files, the stats, and the aborted transactions whose markers stayed (the cleaned `.txnindex` entries). */
export interface Cleaned {
  paths: string[]
  stats: CleanerStats
  retainedAborted: AbortedTxn[]
}

export interface CleanerStats {
  bytesRead: number
  bytesWritten: number
  recordsRead: number
  recordsRetained: number
  /** The latest delete horizon of the kept batches still holding a tombstone or removable marker (null: none). */
  latestDeleteHorizonMs: bigint | null
}

function lastOffset(h: BatchHeader): bigint {
  return h.baseOffset + BigInt(h.lastOffsetDelta)
}

function firstControlKey(records: readonly LogRecord[]): Buffer | null {
  return records.length > 0 ? records[0]!.key : null
}

/** Kafka's `buildOffsetMap` over [start, end); returns whether the map filled up. */
export function buildOffsetMap(segments: readonly SourceSegment[], start: bigint, end: bigint, map: SkimpyOffsetMap, aborted: readonly AbortedTxn[], maxDecompressedBytes: number): boolean {
  map.clear()
  const txns = new CleanedTransactionMetadata(aborted)
  const maxDesired = map.maxDesiredSize()
  for (let i = 0; i < segments.length; i++) {
    const next = i + 1 < segments.length ? segments[i + 1]!.baseOffset : end
    const nextStart = next < end ? next : end
    const buf = fs.readFileSync(segments[i]!.logPath)
    for (const { position } of batchesOf(buf)) {
      const h = parseBatchHeader(buf, position)
      if (h.baseOffset >= end) break
      const batch = decodeBatch(buf, position, { maxDecompressedBytes })
      const last = lastOffset(h)
      if (batch.isControl) {
        txns.onControlBatchRead(last, h.producerId, firstControlKey(batch.records))
      } else if (!txns.onBatchRead(last, batch.isTransactional, h.producerId)) {
        for (const r of batch.records) {
          if (r.key !== null && r.offset >= start) {
            if (map.size < maxDesired) map.put(r.key, r.offset)
            else return true
          }
        }
      }
      if (last >= start) map.latestOffset = last
    }
    map.latestOffset = nextStart - 1n
  }
  return false
}

/** The three `.cleaned` paths of a group starting at `baseOffset`. */
export function cleanedPaths(dir: string, baseOffset: bigint): string[] {
  const prefix = filenamePrefixFromOffset(baseOffset)
  return [LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX].map((s) => join(dir, prefix + s + CLEANED_FILE_SUFFIX))
}

/** Kafka's `cleanSegments`: the retained batches of `group` into `<base>.*.cleaned` in `dir`. */
export function cleanSegments(dir: string, group: readonly SourceSegment[], map: SkimpyOffsetMap, params: CleanParams): Cleaned {
  if (group.length === 0) throw new StorageError('INVALID_ARGUMENT', 'no segment to clean')
  const base = group[0]!.baseOffset
  const scratch = join(dir, filenamePrefixFromOffset(base) + SCRATCH_DIR_SUFFIX)
  fs.rmSync(scratch, { recursive: true, force: true })
  fs.mkdirSync(scratch)
  const targets = cleanedPaths(dir, base)
  try {
    const { stats, retainedAborted } = writeCleaned(scratch, base, group, map, params, targets)
    fs.rmdirSync(scratch)
    return { paths: targets, stats, retainedAborted }
  } catch (err) {
    // A failed round leaves neither the scratch directory nor a part of the output behind.
    fs.rmSync(scratch, { recursive: true, force: true })
    for (const t of targets) fs.rmSync(t, { force: true })
    throw err
  }
}

function writeCleaned(
  scratch: string,
  base: bigint,
  group: readonly SourceSegment[],
  map: SkimpyOffsetMap,
  params: CleanParams,
  targets: string[],
): { stats: CleanerStats; retainedAborted: AbortedTxn[] } {
  const now = Number(params.currentTimeMs)
  const dest = LogSegment.create(scratch, base, { indexIntervalBytes: params.indexIntervalBytes, segmentIndexBytes: params.segmentIndexBytes }, now)
  const txns = new CleanedTransactionMetadata(params.aborted)
  const stats: CleanerStats = { bytesRead: 0, bytesWritten: 0, recordsRead: 0, recordsRetained: 0, latestDeleteHorizonMs: null }
  try {
    for (const segment of group) {
      const buf = fs.readFileSync(segment.logPath)
      for (const { position, size } of batchesOf(buf)) {
        const h = parseBatchHeader(buf, position)
        stats.bytesRead += size
        let out: Buffer | null
        if (h.baseOffset >= params.firstUncleanableOffset) {
          out = buf.subarray(position, position + size)
          stats.recordsRead += h.recordsCount
          stats.recordsRetained += h.recordsCount
        } else {
          out = filterBatch(buf, position, size, h, map, params, txns, stats)
        }
        if (out !== null) {
          const written = parseBatchHeader(out, 0)
          dest.append(out, 0, out.length, Number(lastOffset(written) - base), written.maxTimestamp, now)
          stats.bytesWritten += out.length
        }
      }
    }
  } finally {
    dest.close()
  }
  const from = [LOG_FILE_SUFFIX, INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX].map((s) => join(scratch, filenamePrefixFromOffset(base) + s))
  for (let i = 0; i < 3; i++) {
    const fd = fs.openSync(from[i]!, 'r')
    try {
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(from[i]!, targets[i]!)
  }
  return { stats, retainedAborted: txns.retainedAborted }
}

function filterBatch(buf: Buffer, position: number, size: number, h: BatchHeader, map: SkimpyOffsetMap, params: CleanParams, txns: CleanedTransactionMetadata, stats: CleanerStats): Buffer | null {
  const batch = decodeBatch(buf, position, { maxDecompressedBytes: params.maxDecompressedBytes })
  const last = lastOffset(h)
  const isControl = batch.isControl
  const hasHorizon = (h.attributes & DELETE_HORIZON_FLAG_MASK) !== 0
  const canDiscard = isControl ? txns.onControlBatchRead(last, h.producerId, firstControlKey(batch.records)) : txns.onBatchRead(last, batch.isTransactional, h.producerId)
  const discardRecords = isControl ? canDiscard && hasHorizon && h.baseTimestamp <= params.currentTimeMs : canDiscard
  const lastRecord = params.lastRecordsOfActiveProducers.get(h.producerId)
  const lastOfProducer = lastRecord !== undefined && (lastRecord.lastDataOffset !== null ? last === lastRecord.lastDataOffset : isControl && h.producerEpoch === lastRecord.producerEpoch)
  const retainEmpty = (h.producerId >= 0n && lastOfProducer) || last + 1n === params.upperBoundOffset
  const containsMarkerForEmptyTxn = canDiscard && isControl

  const retained: LogRecord[] = []
  let containsTombstones = false
  for (const r of batch.records) {
    stats.recordsRead++
    let keep: boolean
    if (discardRecords) keep = false
    else if (isControl) keep = true
    else if (r.offset > map.latestOffset) keep = true
    else if (r.key !== null) {
      const retainDeletes = !hasHorizon || params.currentTimeMs < h.baseTimestamp
      keep = r.offset >= map.get(r.key) && (r.value !== null || retainDeletes)
    } else keep = false
    if (keep) {
      if (r.value === null) containsTombstones = true
      retained.push(r)
    }
  }
  stats.recordsRetained += retained.length
  if (retained.length > 0) {
    const removable = containsTombstones || containsMarkerForEmptyTxn
    const needHorizon = removable && !hasHorizon
    const horizon = needHorizon ? params.currentTimeMs + params.deleteRetentionMs : hasHorizon ? h.baseTimestamp : null
    if (removable && horizon !== null && (stats.latestDeleteHorizonMs === null || horizon > stats.latestDeleteHorizonMs)) {
      stats.latestDeleteHorizonMs = horizon
    }
    if (retained.length === batch.records.length && !needHorizon) return buf.subarray(position, position + size)
    // decodeBatch already gives LogAppendTime records the batch's maxTimestamp.
    const baseTimestamp = horizon ?? retained[0]!.timestamp
    let maxTimestamp = retained[0]!.timestamp
    for (const r of retained) if (r.timestamp > maxTimestamp) maxTimestamp = r.timestamp
    if ((h.attributes & TIMESTAMP_TYPE_MASK) !== 0) maxTimestamp = h.maxTimestamp
    const records = encodeRecords(retained, h.baseOffset, baseTimestamp)
    const body = compress(compressionTypeOf(h.attributes), records)
    let attributes = h.attributes & (COMPRESSION_CODEC_MASK | TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)
    if (horizon !== null) attributes |= DELETE_HORIZON_FLAG_MASK
    return writeBatch(h, attributes, baseTimestamp, maxTimestamp, retained.length, body)
  }
  if (retainEmpty) {
    const attributes = h.attributes & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)
    return writeBatch(h, attributes, h.maxTimestamp, h.maxTimestamp, 0, Buffer.alloc(0))
  }
  return null
}

function fieldSize(b: Buffer | null): number {
  return b === null ? 1 : sizeOfVarint(b.length) + b.length
}

function writeField(out: Buffer, b: Buffer | null, at: number): number {
  if (b === null) return writeVarint(out, -1, at)
  at = writeVarint(out, b.length, at)
  b.copy(out, at)
  return at + b.length
}

/** The records re-encoded (attributes 0) with their offset deltas and timestamps relative to `baseTimestamp`. */
function encodeRecords(records: readonly LogRecord[], baseOffset: bigint, baseTimestamp: bigint): Buffer {
  const parts: Buffer[] = []
  for (const r of records) {
    const tsDelta = BigInt.asIntN(64, r.timestamp - baseTimestamp)
    const offsetDelta = Number(r.offset - baseOffset)
    const headerKeys = r.headers.map((x) => Buffer.from(x.key, 'utf8'))
    let body = 1 + sizeOfVarlong(tsDelta) + sizeOfVarint(offsetDelta) + fieldSize(r.key) + fieldSize(r.value) + sizeOfVarint(r.headers.length)
    for (let i = 0; i < r.headers.length; i++) body += fieldSize(headerKeys[i]!) + fieldSize(r.headers[i]!.value)
    const out = Buffer.allocUnsafe(sizeOfVarint(body) + body)
    let at = writeVarint(out, body, 0)
    out[at++] = 0
    at = writeVarlong(out, tsDelta, at)
    at = writeVarint(out, offsetDelta, at)
    at = writeField(out, r.key, at)
    at = writeField(out, r.value, at)
    at = writeVarint(out, r.headers.length, at)
    for (let i = 0; i < r.headers.length; i++) {
      at = writeField(out, headerKeys[i]!, at)
      at = writeField(out, r.headers[i]!.value, at)
    }
    parts.push(out)
  }
  return Buffer.concat(parts)
}

function writeBatch(h: BatchHeader, attributes: number, baseTimestamp: bigint, maxTimestamp: bigint, count: number, body: Buffer): Buffer {
  const b = Buffer.alloc(RECORDS_OFFSET + body.length)
  body.copy(b, RECORDS_OFFSET)
  b.writeBigInt64BE(h.baseOffset, 0)
  b.writeInt32BE(b.length - LOG_OVERHEAD, LENGTH_OFFSET)
  b.writeInt32BE(h.partitionLeaderEpoch, PARTITION_LEADER_EPOCH_OFFSET)
  b.writeInt8(MAGIC_V2, MAGIC_OFFSET)
  b.writeInt16BE(attributes, ATTRIBUTES_OFFSET)
  b.writeInt32BE(h.lastOffsetDelta, LAST_OFFSET_DELTA_OFFSET)
  b.writeBigInt64BE(baseTimestamp, BASE_TIMESTAMP_OFFSET)
  b.writeBigInt64BE(maxTimestamp, MAX_TIMESTAMP_OFFSET)
  b.writeBigInt64BE(h.producerId, PRODUCER_ID_OFFSET)
  b.writeInt16BE(h.producerEpoch, PRODUCER_EPOCH_OFFSET)
  b.writeInt32BE(h.baseSequence, BASE_SEQUENCE_OFFSET)
  b.writeInt32BE(count, RECORDS_COUNT_OFFSET)
  b.writeUInt32BE(crc32c(b, ATTRIBUTES_OFFSET, b.length), CRC_OFFSET)
  return b
}
