/**
 * One cleaning round on the live twin log (Kafka's `Cleaner.clean`, `groupSegmentsBySize` and
 * `LocalLog.replaceSegments`), twin of crates/storage/src/log/clean.rs, which documents the steps.
 * The snapshot is taken when `clean` is called; the file work (the offset map and the `.cleaned`
 * groups, cleaner/clean-groups.ts) runs on the cleaner's worker thread (cleaner/clean-thread.ts),
 * so appends and reads go on meanwhile; close stops it before its next group. The swap runs on
 * the JS thread in the log's exclusive queue (after any truncation or retention queued before it).
 */
import * as fs from 'node:fs'
import { StorageError } from '../errors.js'
import type { LogCleanRequest, LogCleanResult } from '../types.js'
import { CLEANED_FILE_SUFFIX, type AbortedTxn } from './cleaner/index.js'
import type { LastRecord } from './cleaner/cleaner.js'
import { runOnCleanerThread } from './cleaner/clean-thread.js'
import { noCleaning } from './cleaner/clean-groups.js'
import { fsyncPath, io, ioAsync, logFile, offsetIndexFile, removeFiles, timeIndexFile, txnIndexFile } from './files.js'
import { LogSegment } from './log-segment.js'
import { OffsetIndex } from './offset-index.js'
import { TimeIndex } from './time-index.js'
import type { LogState } from './log-state.js'
import { SWAP_FILE_SUFFIX } from './log-swap.js'
import { TransactionIndex } from './transaction-index.js'

/** Offset and time index entry sizes, for the group's index budget. */
const OFFSET_INDEX_ENTRY_BYTES = 8
const TIME_INDEX_ENTRY_BYTES = 12
/** The decompression limit's floor (crates/record DEFAULT_MAX_DECOMPRESSED_SIZE). */
const DEFAULT_MAX_DECOMPRESSED_SIZE = 256 * 1024 * 1024

interface SnapshotSegment {
  segment: LogSegment
  baseOffset: bigint
  logPath: string
  size: number
  offsetIndexBytes: number
  timeIndexBytes: number
}

interface CleanedGroup {
  baseOffset: bigint
  replaces: SnapshotSegment[]
  files: string[]
}

/** A round on `log`; `swap` runs the swap step in the log's exclusive queue. */
export async function cleanLog(log: LogState, request: LogCleanRequest, swap: (step: () => Promise<LogCleanResult>) => Promise<LogCleanResult>): Promise<LogCleanResult> {
  log.checkOpen()
  if (!(request.dedupeBufferSize > 0)) throw new StorageError('INVALID_ARGUMENT', 'the dedupe buffer size must be positive')
  const activeBase = log.active().baseOffset
  const firstUncleanable = request.firstUncleanableOffset < activeBase ? request.firstUncleanableOffset : activeBase
  const segments: SnapshotSegment[] = log.segments
    .filter((s) => s.baseOffset < firstUncleanable)
    .map((s) => ({
      segment: s,
      baseOffset: s.baseOffset,
      logPath: s.file,
      size: s.size,
      offsetIndexBytes: s.offsetIndex.entries * OFFSET_INDEX_ENTRY_BYTES,
      timeIndexBytes: s.timeIndex.entries * TIME_INDEX_ENTRY_BYTES,
    }))
  const aborted: AbortedTxn[] = segments.flatMap((s) => [...s.segment.txnIndex.all()])
  aborted.sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
  const active = new Map<bigint, LastRecord>()
  for (const e of log.producerState.entries()) {
    active.set(e.producerId, { lastDataOffset: e.lastOffset >= 0n ? e.lastOffset : null, producerEpoch: e.producerEpoch })
  }
  const truncations = log.truncations
  const config = log.config
  const cancel = new Int32Array(new SharedArrayBuffer(4))
  const groups: CleanedGroup[] = []
  let stats: LogCleanResult
  let failure: unknown = null
  log.cleaningCancel = cancel
  try {
    const done = await runOnCleanerThread({
      dir: log.dir,
      request,
      end: firstUncleanable,
      segments: segments.map(({ baseOffset, logPath, size, offsetIndexBytes, timeIndexBytes }) => ({ baseOffset, logPath, size, offsetIndexBytes, timeIndexBytes })),
      aborted,
      activeProducers: active,
      segmentBytes: config.segmentBytes,
      segmentIndexBytes: config.segmentIndexBytes,
      indexIntervalBytes: config.indexIntervalBytes,
      maxDecompressedBytes: Math.max(Math.max(0, request.maxMessageBytes ?? config.maxMessageBytes), DEFAULT_MAX_DECOMPRESSED_SIZE),
      cancel,
    })
    for (const g of done.groups) groups.push({ baseOffset: g.baseOffset, replaces: g.replaces.map((i) => segments[i]!), files: g.files })
    const { groups: _, ...rest } = done
    stats = { ...rest, segmentsBefore: segments.length, segmentsAfter: segments.length, aborted: false }
  } catch (err) {
    failure = err
    stats = { ...noCleaning(request.firstDirtyOffset), segmentsBefore: segments.length, segmentsAfter: segments.length, aborted: false }
  } finally {
    if (log.cleaningCancel === cancel) log.cleaningCancel = null
  }
  return swap(async () => {
    const unchanged =
      !log.closed &&
      log.offline === null &&
      log.truncations === truncations &&
      segments.every((was) => was.segment !== log.active() && log.segments.includes(was.segment) && was.segment.size === was.size)
    if (!unchanged) {
      for (const g of groups) await removeFiles(g.files)
      return { ...stats, aborted: true, segmentsAfter: stats.segmentsBefore }
    }
    if (failure !== null) throw failure
    await swapIn(log, groups)
    if (groups.length > 0) log.boundCache = null
    const replaced = groups.reduce((n, g) => n + g.replaces.length, 0)
    return { ...stats, segmentsAfter: stats.segmentsBefore - replaced + groups.length }
  })
}

function withSuffix(file: string, from: string, to: string): string {
  return (file.endsWith(from) ? file.slice(0, -from.length) : file) + to
}

/** A swapped-in segment, sealed, its indexes as the round wrote and synced them. */
function openCleanedSegment(log: LogState, base: bigint): LogSegment {
  const file = logFile(log.dir, base)
  const size = io('stat segment', file, () => fs.statSync(file)).size
  const read = (f: string) => io('read index', f, () => fs.readFileSync(f))
  const oiFile = offsetIndexFile(log.dir, base)
  const tiFile = timeIndexFile(log.dir, base)
  const oi = OffsetIndex.fromBytes(oiFile, log.settings.segmentIndexBytes, read(oiFile))
  const ti = TimeIndex.fromBytes(tiFile, log.settings.segmentIndexBytes, read(tiFile))
  const seg = new LogSegment(base, file, null, size, oi, ti, log.settings, Date.now())
  const txnFile = txnIndexFile(log.dir, base)
  const txn = fs.existsSync(txnFile) ? TransactionIndex.parse(read(txnFile)) : []
  seg.txnIndex = new TransactionIndex(txnFile, txn ?? [])
  return seg
}

/** Kafka's `replaceSegments` for every group, in base order (log-swap.ts has the file order). */
async function swapIn(log: LogState, groups: readonly CleanedGroup[]): Promise<void> {
  if (groups.length === 0) return
  const swapped: string[] = []
  try {
    for (const g of groups) {
      for (const f of g.files) {
        const to = withSuffix(f, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        await ioAsync('rename', f, () => fs.promises.rename(f, to))
        swapped.push(to)
      }
    }
    await ioAsync('fsync', log.dir, () => fsyncPath(log.dir))
  } catch (err) {
    // Nothing old is touched yet: the log stays as it was.
    await removeFiles(swapped).catch(() => undefined)
    for (const g of groups) await removeFiles(g.files).catch(() => undefined)
    throw err
  }
  // The segment list changes in one synchronous step (sync renames, indexes read from the
  // files just written): a read sees the old segments or the new ones, never a gap.
  const deleted: string[] = []
  try {
    for (const g of groups) {
      const doomed = new Set(g.replaces.map((r) => r.segment))
      log.segments = log.segments.filter((s) => !doomed.has(s))
      for (const s of doomed) {
        log.byFile.delete(s.file)
        // As retention does: descriptors closed once no zero-copy read holds them, files renamed .deleted.
        deleted.push(...s.detachForDelete())
      }
      for (const f of g.files) {
        const from = withSuffix(f, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        io('rename', from, () => fs.renameSync(from, withSuffix(f, CLEANED_FILE_SUFFIX, '')))
      }
      const seg = openCleanedSegment(log, g.baseOffset)
      const at = log.segments.findIndex((s) => s.baseOffset > g.baseOffset)
      log.segments.splice(at < 0 ? log.segments.length : at, 0, seg)
      log.byFile.set(seg.file, seg)
    }
  } catch (err) {
    log.offline = `swapping cleaned segments in failed: ${(err as Error).message}`
    throw err
  }
  // The log is whole from here: `.deleted` files left by a failure go at the next open.
  await removeFiles(deleted)
  await ioAsync('fsync', log.dir, () => fsyncPath(log.dir))
}
