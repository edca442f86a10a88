/**
 * The file work of one twin cleaning round (Kafka's `Cleaner.doClean` without the swap): the
 * offset map over the dirty section, then each group of segments cleaned into
 * `<base>.{log,index,timeindex,txnindex}.cleaned`, synced. Synchronous, on plain data only (no
 * log object), so that it runs on the cleaner's worker thread (clean-thread.ts); the swap stays
 * with the log on the JS thread (../log-clean.ts). A failed round removes the files it wrote.
 */
import * as fs from 'node:fs'
import type { LogCleanRequest, LogCleanResult } from '../../types.js'
import { io, txnIndexFile } from '../files.js'
import { TransactionIndex } from '../transaction-index.js'
import { buildOffsetMap, CLEANED_FILE_SUFFIX, cleanSegments, type LastRecord, type SourceSegment } from './cleaner.js'
import { SkimpyOffsetMap } from './offset-map.js'
import type { AbortedTxn } from './transaction-metadata.js'

const I32_MAX = 2147483647n

/** A segment as the round's snapshot saw it. */
export interface JobSegment {
  baseOffset: bigint
  logPath: string
  size: number
  offsetIndexBytes: number
  timeIndexBytes: number
}

/** Everything a round's file work needs (structured-cloneable: it crosses to the worker). */
export interface CleanJob {
  dir: string
  request: LogCleanRequest
  /** The first uncleanable offset, capped at the active segment's base. */
  end: bigint
  segments: JobSegment[]
  aborted: AbortedTxn[]
  activeProducers: Map<bigint, LastRecord>
  segmentBytes: number
  segmentIndexBytes: number
  indexIntervalBytes: number
  maxDecompressedBytes: number
  /** Set to non-zero (Atomics) to stop before the next group: the log is closing. */
  cancel: Int32Array
}

export interface CleanJobGroup {
  baseOffset: bigint
  /** Indexes into the job's segments of those this group replaces. */
  replaces: number[]
  files: string[]
}

/** What a job hands back: the round's result but for what the swap decides, and its groups. */
export interface CleanJobResult extends Omit<LogCleanResult, 'segmentsBefore' | 'segmentsAfter' | 'aborted'> {
  groups: CleanJobGroup[]
}

function source(s: JobSegment): SourceSegment {
  return { baseOffset: s.baseOffset, logPath: s.logPath }
}

/** Kafka's `collectAbortedTransactions(start, upper)`. */
function abortedOverlapping(all: readonly AbortedTxn[], start: bigint, upper: bigint): AbortedTxn[] {
  return all.filter((t) => t.lastOffset >= start && t.firstOffset < upper)
}

function removeQuietly(files: readonly string[]): void {
  for (const f of files) fs.rmSync(f, { force: true })
}

/** A round's figures before it cleaned anything (or when it cleans nothing): all zero, ending at `endOffset`. */
export function noCleaning(endOffset: bigint): Omit<CleanJobResult, 'groups'> {
  return { endOffset, bytesRead: 0, bytesWritten: 0, recordsRead: 0, recordsRetained: 0, mapSize: 0, mapMemory: 0, bufferUtilization: 0, latestDeleteHorizonMs: null }
}

/** The round's map and `.cleaned` groups (crates/storage/src/log/clean.rs `clean_groups`). */
export function runCleanJob(job: CleanJob): CleanJobResult {
  const { request, end, segments } = job
  const result: CleanJobResult = {
    ...noCleaning(request.firstDirtyOffset),
    groups: [],
  }
  const firstDirty = request.firstDirtyOffset
  const nextBase = (i: number): bigint => (i + 1 < segments.length ? segments[i + 1]!.baseOffset : end)
  const dirty = segments.filter((_, i) => nextBase(i) > firstDirty).map(source)
  const map = new SkimpyOffsetMap(request.dedupeBufferSize)
  if (dirty.length === 0 || firstDirty >= end) {
    // Nothing dirty: the clean section again against an empty map ending at the first dirty
    // offset, which drops only tombstones and markers past their delete horizon (log/clean.rs).
    const cleanEnd = firstDirty < end ? firstDirty : end
    if (segments.length === 0 || segments[0]!.baseOffset >= cleanEnd) return result
    map.latestOffset = cleanEnd - 1n
  } else {
    const mapStart = firstDirty > dirty[0]!.baseOffset ? firstDirty : dirty[0]!.baseOffset
    buildOffsetMap(dirty, mapStart, end, map, abortedOverlapping(job.aborted, dirty[0]!.baseOffset, end), job.maxDecompressedBytes)
  }
  const upper = map.latestOffset + 1n
  result.endOffset = upper
  result.mapSize = map.size
  result.mapMemory = map.memory
  result.bufferUtilization = map.size / Math.max(1, map.slots)
  const cleanable = segments.filter((s) => s.baseOffset < upper)
  try {
    for (const group of groupSegmentsBySize(cleanable, job.segmentBytes, job.segmentIndexBytes, end)) {
      if (Atomics.load(job.cancel, 0) !== 0) break
      const last = group[group.length - 1]!.baseOffset
      const after = segments.find((s) => s.baseOffset > last)
      const groupEnd = after === undefined ? end : after.baseOffset
      const base = group[0]!.baseOffset
      const cleaned = cleanSegments(job.dir, group.map(source), map, {
        currentTimeMs: request.currentTimeMs,
        deleteRetentionMs: request.deleteRetentionMs,
        firstUncleanableOffset: end,
        upperBoundOffset: upper,
        aborted: abortedOverlapping(job.aborted, base, groupEnd),
        lastRecordsOfActiveProducers: job.activeProducers,
        maxDecompressedBytes: job.maxDecompressedBytes,
        indexIntervalBytes: job.indexIntervalBytes,
        segmentIndexBytes: job.segmentIndexBytes,
      })
      const files = [...cleaned.paths]
      result.groups.push({ baseOffset: base, replaces: group.map((s) => segments.indexOf(s)), files })
      if (cleaned.retainedAborted.length > 0) {
        const file = txnIndexFile(job.dir, base) + CLEANED_FILE_SUFFIX
        files.push(file)
        io('write', file, () => fs.writeFileSync(file, TransactionIndex.encode(cleaned.retainedAborted), { mode: 0o644 }))
        io('fsync', file, () => fsyncPathSync(file))
      }
      result.bytesRead += cleaned.stats.bytesRead
      result.bytesWritten += cleaned.stats.bytesWritten
      result.recordsRead += cleaned.stats.recordsRead
      result.recordsRetained += cleaned.stats.recordsRetained
      const h = cleaned.stats.latestDeleteHorizonMs
      if (h !== null && (result.latestDeleteHorizonMs === null || h > result.latestDeleteHorizonMs)) result.latestDeleteHorizonMs = h
    }
  } catch (err) {
    for (const g of result.groups) removeQuietly(g.files)
    throw err
  }
  return result
}

function fsyncPathSync(file: string): void {
  const fd = fs.openSync(file, 'r')
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

/** Kafka's `groupSegmentsBySize` (log/clean.rs `group_segments_by_size`). */
export function groupSegmentsBySize<S extends { baseOffset: bigint; size: number; offsetIndexBytes: number; timeIndexBytes: number }>(
  segments: readonly S[],
  maxSize: number,
  maxIndexSize: number,
  firstUncleanable: bigint,
): S[][] {
  const groups: S[][] = []
  let i = 0
  while (i < segments.length) {
    const first = segments[i]!
    const group = [first]
    let log = first.size
    let index = first.offsetIndexBytes
    let time = first.timeIndexBytes
    i++
    while (i < segments.length) {
      const next = segments[i]!
      const lastOffset = (i + 1 < segments.length ? segments[i + 1]!.baseOffset : firstUncleanable) - 1n
      const fits =
        log + next.size <= maxSize && index + next.offsetIndexBytes <= maxIndexSize && time + next.timeIndexBytes <= maxIndexSize && (next.size === 0 || lastOffset - first.baseOffset <= I32_MAX)
      if (!fits) break
      log += next.size
      index += next.offsetIndexBytes
      time += next.timeIndexBytes
      group.push(next)
      i++
    }
    groups.push(group)
  }
  return groups
}
