/**
 * Reads (Kafka's `UnifiedLog.read` -> `LocalLog.read` -> `LogSegment.read`) and offset lookups
 * by timestamp (`fetchOffsetByTimestamp`), docs/storage.md "Reads".
 *
 * A read returns a `FileSlice`, no bytes: the floor segment's `translateOffset` (offset index
 * lookup, then a header scan) finds where the slice starts; the isolation bound, translated the
 * same way and cached in `LogState.boundCache`, limits where it may end. A TXN_COMMITTED read
 * (bound: the LSO) also answers the aborted transactions its records overlap.
 */
import * as fs from 'node:fs'
import { batchesOf, decodeBatch } from '../../protocol/records.js'
import { StorageError } from '../errors.js'
import { loadNative } from '../../native/binding.js'
import { JsFileRecords, openFileRecords, type FileRecords } from '../file-records.js'
import type { AbortedTransaction, FetchDataInfo, FetchIsolation, FileSlice, LogOffsetMetadata, RecordBatch, TimestampAndOffset } from '../types.js'
import { io, readFully } from './files.js'
import { floorIndex } from './log-loader.js'
import type { LogSegment } from './log-segment.js'
import type { BoundPosition, LogState } from './log-state.js'
import { collectAbortedTransactions } from './log-producer-state.js'
import { findOffsetByTimestamp, findOffsetOfMaxTimestamp } from './offset-by-timestamp.js'

/** ListOffsets' special timestamps. */
export const LATEST_TIMESTAMP = -1n
export const EARLIEST_TIMESTAMP = -2n
export const MAX_TIMESTAMP = -3n
export const EARLIEST_LOCAL_TIMESTAMP = -4n
const EMPTY = Buffer.alloc(0)

export function read(log: LogState, offset: bigint, maxBytes: number, isolation: FetchIsolation, minOneMessage: boolean): FetchDataInfo {
  const info = readUpTo(log, offset, maxBytes, isolation, minOneMessage)
  if (isolation === 'TXN_COMMITTED') info.abortedTransactions = info.records.size === 0 ? [] : abortedTransactionsOf(log, info)
  return info
}

/**
 * Kafka's `LocalLog.addAbortedTransactions`: the aborted transactions from the read's offset to
 * the offset index entry at or past the end of its slice (else the next segment's base, or the LEO).
 */
function abortedTransactionsOf(log: LogState, info: FetchDataInfo): AbortedTransaction[] {
  const segs = log.segments
  const i = floorIndex(segs, info.fetchOffsetMetadata.segmentBaseOffset)
  const seg = segs[i]!
  const rel = seg.offsetIndex.upperBoundRelativeOffset(info.records.position + info.records.size)
  const upperBound = rel >= 0 ? seg.baseOffset + BigInt(rel) : i + 1 < segs.length ? segs[i + 1]!.baseOffset : log.logEndOffset
  return collectAbortedTransactions(segs, info.fetchOffsetMetadata.messageOffset, upperBound)
}

function readUpTo(log: LogState, offset: bigint, maxBytes: number, isolation: FetchIsolation, minOneMessage: boolean): FetchDataInfo {
  log.checkOpen()
  if (!Number.isInteger(maxBytes) || maxBytes < 0) throw new StorageError('INVALID_ARGUMENT', `invalid maxBytes ${maxBytes}`)
  if (offset < log.logStartOffset || offset > log.logEndOffset) {
    throw new StorageError('OFFSET_OUT_OF_RANGE', `offset ${offset} is out of range [${log.logStartOffset}, ${log.logEndOffset}] of ${log.dir}`)
  }
  const bound = boundFor(log, isolation)
  if (offset >= bound) {
    const meta = offset === bound ? boundPosition(log, bound) : positionOf(log, offset)
    return emptyRead(offset, meta.seg, meta.position)
  }
  const limit = boundPosition(log, bound)
  const segs = log.segments
  for (let i = floorIndex(segs, offset); i < segs.length; i++) {
    const seg = segs[i]!
    const found = seg.translateOffset(seg.relativeOffset(offset))
    if (found === null) continue
    if (seg.baseOffset > limit.seg.baseOffset) return emptyRead(offset, seg, found.position)
    const maxPosition = seg === limit.seg ? limit.position : seg.size
    const adjustedMaxSize = minOneMessage ? Math.max(maxBytes, found.size) : maxBytes
    if (adjustedMaxSize === 0) return emptyRead(offset, seg, found.position)
    const size = Math.max(0, Math.min(maxPosition - found.position, adjustedMaxSize))
    return {
      fetchOffsetMetadata: { messageOffset: offset, segmentBaseOffset: seg.baseOffset, relativePositionInSegment: found.position },
      records: { file: seg.file, position: found.position, size },
      firstEntryIncomplete: adjustedMaxSize < found.size,
    }
  }
  const last = log.active()
  return emptyRead(offset, last, last.size)
}

export function readSlice(log: LogState, slice: FileSlice): Buffer {
  log.checkOpen()
  if (slice.size === 0) return EMPTY
  const seg = log.byFile.get(slice.file)
  if (seg !== undefined && seg.isOpen) return seg.readBytes(slice.position, slice.size)
  // A segment deleted since the read: its file may still be there.
  return io('read', slice.file, () => {
    const fd = fs.openSync(slice.file, 'r')
    try {
      const out = Buffer.allocUnsafe(slice.size)
      const n = readFully(fd, out, 0, slice.size, slice.position)
      return n === slice.size ? out : out.subarray(0, n)
    } finally {
      fs.closeSync(fd)
    }
  })
}

/** The largest range a FileRecords holds (u32): the shared handle covers any slice of the file. */
const WHOLE_FILE = 0xffff_ffff

/**
 * A slice's FileRecords, sharing its segment's handle (log-segment.ts `sharedRecords`); a slice
 * of a segment closed since the read opens the file, if it is still there (NOT_FOUND otherwise).
 */
export function fileRecords(log: LogState, slice: FileSlice): FileRecords {
  log.checkOpen()
  const seg = log.byFile.get(slice.file)
  if (seg === undefined || !seg.isOpen) return openFileRecords(slice)
  // logFd first: it opens the file again if the bound closed it (dropping the shared handle too).
  const fd = seg.logFd()
  // Without the binding Node cannot dup the fd: the shared handle opens the file again.
  const native = loadNative()
  seg.sharedRecords ??= io('open segment', slice.file, () => (native ? native.FileRecords.fromFd(fd, 0, WHOLE_FILE) : JsFileRecords.open(slice.file, 0, WHOLE_FILE)))
  return seg.sharedRecords.slice(slice.position, slice.size)
}

export function readBatches(log: LogState, offset: bigint, maxBytes: number, isolation: FetchIsolation): RecordBatch[] {
  const out: RecordBatch[] = []
  const bound = boundFor(log, isolation)
  let next = offset
  let budget = maxBytes
  while (next < bound) {
    const info = read(log, next, Math.max(budget, 0), isolation, out.length === 0)
    if (info.records.size === 0) break
    const bytes = readSlice(log, info.records)
    let added = 0
    for (const { position, size } of batchesOf(bytes)) {
      if (out.length > 0 && size > budget) return out
      const batch = decodeBatch(bytes, position)
      out.push(batch)
      budget -= size
      added++
      next = batch.lastOffset + 1n
    }
    if (added === 0 || budget <= 0) break
  }
  return out
}

export function fetchOffsetByTimestamp(log: LogState, timestamp: bigint): TimestampAndOffset | null {
  log.checkOpen()
  if (timestamp === EARLIEST_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) {
    return { timestamp: -1n, offset: log.logStartOffset, leaderEpoch: log.epochs.epochForOffset(log.logStartOffset) ?? -1 }
  }
  if (timestamp === LATEST_TIMESTAMP) {
    return { timestamp: -1n, offset: log.logEndOffset, leaderEpoch: log.epochs.latestEpoch() ?? -1 }
  }
  if (timestamp === MAX_TIMESTAMP) return findOffsetOfMaxTimestamp(log.segments)
  if (timestamp < 0n) return null
  return findOffsetByTimestamp(log.segments, timestamp, log.logStartOffset)
}

function boundFor(log: LogState, isolation: FetchIsolation): bigint {
  switch (isolation) {
    case 'LOG_END':
      return log.logEndOffset
    case 'HIGH_WATERMARK':
      return log.highWatermark
    case 'TXN_COMMITTED':
      return log.lastStableOffset()
    default:
      throw new StorageError('INVALID_ARGUMENT', `unknown isolation ${String(isolation)}`)
  }
}

/** Segment and position of the batch holding `offset`, else the end of its floor segment. */
function positionOf(log: LogState, offset: bigint): { seg: LogSegment; position: number } {
  const seg = log.segments[floorIndex(log.segments, offset)]!
  const found = offset < log.logEndOffset ? seg.translateOffset(seg.relativeOffset(offset)) : null
  return { seg, position: found === null ? seg.size : found.position }
}

/** `positionOf` for a read's upper bound, cached (the HW is asked for by every consumer read). */
function boundPosition(log: LogState, bound: bigint): { seg: LogSegment; position: number } {
  if (bound === log.logEndOffset) {
    const seg = log.active()
    return { seg, position: seg.size }
  }
  const cached = log.boundCache
  if (cached !== null && cached.offset === bound) return cached
  const p = positionOf(log, bound)
  const fresh: BoundPosition = { offset: bound, seg: p.seg, position: p.position }
  log.boundCache = fresh
  return fresh
}

function emptyRead(offset: bigint, seg: LogSegment, position: number): FetchDataInfo {
  const fetchOffsetMetadata: LogOffsetMetadata = {
    messageOffset: offset,
    segmentBaseOffset: seg.baseOffset,
    relativePositionInSegment: position,
  }
  return { fetchOffsetMetadata, records: { file: seg.file, position, size: 0 }, firstEntryIncomplete: false }
}
