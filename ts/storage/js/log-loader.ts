/**
 * Opening a partition directory: Kafka's `LogLoader`, with recovery after an unclean stop.
 *
 * 1. Stray files: `leader-epoch-checkpoint.tmp` and `*.deleted` are removed; an index whose
 *    `.log` is missing is an orphan and is removed.
 * 2. Each `<base>.log` becomes a segment. Its indexes are read and sanity-checked; a missing or
 *    unsound index makes the segment be rebuilt from its log.
 * 3. Without a clean shutdown, the segment holding the recovery point and every later one is
 *    recovered: batches walked from position 0 (whole header, magic 2, CRC, offsets growing),
 *    indexes rebuilt while walking. At the first bad or partial batch the `.log` is cut there
 *    and every later segment deleted.
 *    A recovered segment's `.txnindex` is rebuilt too: the producer state is first brought to
 *    the segment's base (log-producer-state.ts), then every batch walked is applied to it.
 * 4. The LEO is the next offset after the last batch of the last segment; the leader epoch
 *    cache is read (rebuilt from batch headers if unreadable), cut to [logStartOffset, LEO).
 *    A log start offset checkpoint beyond the LEO is not believed: the log starts at its first
 *    segment and nothing is deleted (as loader.rs; a report line says so).
 * 5. Stray snapshots (at no segment's base, but the newest above the last base) are deleted,
 *    the producer state is brought to the LEO (from the newest snapshot at or below the first
 *    recovered segment, or the LEO when none was recovered; log-producer-state.ts), and the
 *    snapshots above the LEO are deleted.
 *
 * Opening needs no free space (a full disk): a rebuilt index that cannot be written is left
 * empty, an epoch checkpoint that cannot be rewritten is rewritten by the next append; each such
 * fallback is a line of the report.
 *
 * Everything here is async: files are read in RECOVERY_CHUNK pieces through libuv's pool.
 */
import * as fs from 'node:fs'
import { recoverSwaps } from './log-swap.js'
import { join } from 'node:path'
import {
  CRC_OFFSET,
  ATTRIBUTES_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LENGTH_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAGIC_V2,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
} from '../../protocol/batch-header.js'
import { crc32c } from '../../protocol/crc32c.js'
import type { OpenLogOptions, RecoveryReport } from '../types.js'
import {
  LEADER_EPOCH_CHECKPOINT_FILE,
  ftruncateAsync,
  ioAsync,
  logFile,
  offsetIndexFile,
  parseSegmentFileName,
  parseSnapshotFileName,
  readFullyAsync,
  removeFiles,
  timeIndexFile,
  txnIndexFile,
} from './files.js'
import { LeaderEpochFileCache } from './leader-epoch-cache.js'
import { LogSegment, MAX_RELATIVE_OFFSET, type SegmentSettings } from './log-segment.js'
import { OffsetIndex } from './offset-index.js'
import { TimeIndex } from './time-index.js'
import { deleteSnapshotsAbove, loadProducerStateTo, producerBatchAt, removeStraySnapshots, type ProducerStateContext } from './log-producer-state.js'
import { ProducerStateManager } from './producer-state-manager.js'
import { TransactionIndex, type AbortedTxn } from './transaction-index.js'

const RECOVERY_CHUNK = 1024 * 1024

export interface LoadedLog {
  segments: LogSegment[]
  logStartOffset: bigint
  logEndOffset: bigint
  recoveryPoint: bigint
  epochCache: LeaderEpochFileCache
  report: RecoveryReport
  producerState: ProducerStateManager
  snapshots: bigint[]
  lastSnapOffset: bigint
}

/**
 * Runs `fn` with the segment's `.log` descriptor borrowed: the bound on open segments
 * (open-segments.ts) cannot close it while `fn` awaits reads on it.
 */
async function withFd<T>(seg: LogSegment, fn: (fd: number) => Promise<T>): Promise<T> {
  const fd = seg.borrowFd()
  try {
    return await fn(fd)
  } finally {
    seg.releaseFd()
  }
}

/** Async positional reads of one file through a reusable buffer. */
class ChunkReader {
  buf = Buffer.allocUnsafe(RECOVERY_CHUNK)
  private start = 0
  private len = 0

  constructor(
    private readonly fd: number,
    private readonly file: string,
  ) {}

  /** Makes file bytes [pos, pos + n) available; returns their offset in `buf`, -1 if the file ends first. */
  async ensure(pos: number, n: number, fileSize: number): Promise<number> {
    if (pos >= this.start && pos + n <= this.start + this.len) return pos - this.start
    if (pos + n > fileSize) return -1
    const want = Math.min(Math.max(n, RECOVERY_CHUNK), fileSize - pos)
    if (this.buf.length < want) this.buf = Buffer.allocUnsafe(want)
    this.start = pos
    this.len = await ioAsync('read segment', this.file, () => readFullyAsync(this.fd, this.buf, 0, want, pos))
    return this.len < n ? -1 : 0
  }
}

interface WalkResult {
  /** Bytes of whole, valid batches from the start. */
  validBytes: number
  /** Why the walk stopped before the end, or null. */
  reason: string | null
  /** The relative offset after the last valid batch (0 if none). */
  nextRel: number
  offsetIndex: OffsetIndex
  timeIndex: TimeIndex
  maxTimestamp: bigint
  offsetOfMaxTimestamp: number
  /** The segment's transaction index, rebuilt. */
  abortedTxns: AbortedTxn[]
}

/**
 * Kafka's `LogSegment.recover`: walks every batch, checking it, rebuilding both indexes with
 * the append rule (check the bytes before the batch against index.interval.bytes, then add) and
 * assigning newer leader epochs. Ends with the time index entry a close would add.
 */
async function walkSegment(seg: LogSegment, settings: SegmentSettings, epochs: LeaderEpochFileCache, psm: ProducerStateManager): Promise<WalkResult> {
  return withFd(seg, (fd) => walkSegmentFd(seg, fd, settings, epochs, psm))
}

async function walkSegmentFd(seg: LogSegment, fd: number, settings: SegmentSettings, epochs: LeaderEpochFileCache, psm: ProducerStateManager): Promise<WalkResult> {
  const abortedTxns: AbortedTxn[] = []
  const oi = OffsetIndex.detached(seg.offsetIndex.file, settings.segmentIndexBytes)
  const ti = TimeIndex.detached(seg.timeIndex.file, settings.segmentIndexBytes)
  const reader = new ChunkReader(fd, seg.file)
  const size = seg.size
  let valid = 0
  let lastIndexEntry = 0
  let nextRel = 0
  let maxTs = -1n
  let maxTsRel = -1
  let reason: string | null = null
  while (valid < size) {
    const remaining = size - valid
    if (remaining < RECORD_BATCH_OVERHEAD) {
      reason = `partial batch header (${remaining} bytes)`
      break
    }
    let at = await reader.ensure(valid, RECORD_BATCH_OVERHEAD, size)
    let buf = reader.buf
    const batchSize = LOG_OVERHEAD + buf.readInt32BE(at + LENGTH_OFFSET)
    if (batchSize < RECORD_BATCH_OVERHEAD) {
      reason = `invalid batch size ${batchSize}`
      break
    }
    if (batchSize > remaining) {
      reason = `partial batch (${batchSize} bytes announced, ${remaining} present)`
      break
    }
    const magic = buf.readInt8(at + MAGIC_OFFSET)
    if (magic !== MAGIC_V2) {
      reason = `unsupported magic ${magic}`
      break
    }
    at = await reader.ensure(valid, batchSize, size)
    buf = reader.buf
    const stored = buf.readUInt32BE(at + CRC_OFFSET)
    const computed = crc32c(buf, at + ATTRIBUTES_OFFSET, at + batchSize)
    if (stored !== computed) {
      reason = `CRC mismatch (stored 0x${stored.toString(16).padStart(8, '0')}, computed 0x${computed.toString(16).padStart(8, '0')})`
      break
    }
    const relBase = seg.relativeBaseAt(buf, at)
    const lastDelta = buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET)
    if (relBase < nextRel) {
      reason = `baseOffset ${seg.baseOffset + BigInt(relBase)} is below the expected ${seg.baseOffset + BigInt(nextRel)}`
      break
    }
    const count = buf.readInt32BE(at + RECORDS_COUNT_OFFSET)
    if (count < 0 || lastDelta < 0 || lastDelta < count - 1) {
      reason = `lastOffsetDelta ${lastDelta} does not fit recordsCount ${count}`
      break
    }
    const lastRel = relBase + lastDelta
    if (lastRel > MAX_RELATIVE_OFFSET) {
      reason = `lastOffset ${seg.baseOffset + BigInt(lastRel)} does not fit the segment's index`
      break
    }
    const ts = buf.readBigInt64BE(at + MAX_TIMESTAMP_OFFSET)
    if (ts > maxTs) {
      maxTs = ts
      maxTsRel = lastRel
    }
    if (valid - lastIndexEntry > settings.indexIntervalBytes && !oi.isFull() && !ti.isFull()) {
      oi.append(lastRel, valid)
      ti.maybeAppend(maxTs, maxTsRel)
      lastIndexEntry = valid
    }
    const epoch = buf.readInt32BE(at + PARTITION_LEADER_EPOCH_OFFSET)
    if (epoch >= 0) {
      const latest = epochs.latestEpoch()
      if (latest === null || epoch > latest) epochs.assignIfNewer(epoch, seg.baseOffset + BigInt(relBase))
    }
    const completed = psm.apply(producerBatchAt(buf, at, seg.baseOffset + BigInt(relBase)))
    if (completed !== null && completed.isAborted) {
      const { producerId, firstOffset, lastOffset } = completed
      abortedTxns.push({ producerId, firstOffset, lastOffset, lastStableOffset: psm.lastStableOffsetAfter(completed) })
    }
    valid += batchSize
    nextRel = lastRel + 1
  }
  if (maxTs >= 0n) ti.maybeAppend(maxTs, maxTsRel, true)
  psm.mapEndOffset = seg.baseOffset + BigInt(nextRel)
  return { validBytes: valid, reason, nextRel, offsetIndex: oi, timeIndex: ti, maxTimestamp: maxTs, offsetOfMaxTimestamp: maxTsRel, abortedTxns }
}

/** Header-only walk of a trusted segment from `position`: where whole batches end and the next offset. */
async function scanTail(seg: LogSegment, position: number): Promise<{ end: number; nextRel: number }> {
  return withFd(seg, (fd) => scanTailFd(seg, fd, position))
}

async function scanTailFd(seg: LogSegment, fd: number, position: number): Promise<{ end: number; nextRel: number }> {
  const reader = new ChunkReader(fd, seg.file)
  const size = seg.size
  let pos = position
  let nextRel = 0
  while (pos + RECORD_BATCH_OVERHEAD <= size) {
    const at = await reader.ensure(pos, RECORD_BATCH_OVERHEAD, size)
    const buf = reader.buf
    const batchSize = LOG_OVERHEAD + buf.readInt32BE(at + LENGTH_OFFSET)
    if (batchSize < RECORD_BATCH_OVERHEAD || pos + batchSize > size) break
    nextRel = seg.relativeBaseAt(buf, at) + buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET) + 1
    pos += batchSize
  }
  return { end: pos, nextRel }
}

/** Every batch header's (epoch, baseOffset), to rebuild an unreadable epoch checkpoint. */
async function rebuildEpochs(segments: LogSegment[], epochs: LeaderEpochFileCache): Promise<void> {
  for (const seg of segments) {
    await withFd(seg, async (fd) => {
      const reader = new ChunkReader(fd, seg.file)
      let pos = 0
      while (pos + RECORD_BATCH_OVERHEAD <= seg.size) {
        const at = await reader.ensure(pos, RECORD_BATCH_OVERHEAD, seg.size)
        const buf = reader.buf
        const batchSize = LOG_OVERHEAD + buf.readInt32BE(at + LENGTH_OFFSET)
        if (batchSize < RECORD_BATCH_OVERHEAD || pos + batchSize > seg.size) break
        const epoch = buf.readInt32BE(at + PARTITION_LEADER_EPOCH_OFFSET)
        const latest = epochs.latestEpoch()
        if (epoch >= 0 && (latest === null || epoch > latest)) epochs.assignIfNewer(epoch, seg.baseOffset + BigInt(seg.relativeBaseAt(buf, at)))
        pos += batchSize
      }
    })
  }
}

async function readIfExists(path: string): Promise<Buffer | null> {
  try {
    return await fs.promises.readFile(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

/**
 * A segment as found on disk, sealed and holding no descriptor: its indexes are read into memory
 * and closed, its `.log` is opened by its first read (log-segment.ts); the loader makes the last
 * one active.
 */
async function openSegment(dir: string, baseOffset: bigint, settings: SegmentSettings, hasTxnIndex: boolean): Promise<{ seg: LogSegment; why: string | null }> {
  const file = logFile(dir, baseOffset)
  const size = (await ioAsync('stat segment', file, () => fs.promises.stat(file))).size
  const oiFile = offsetIndexFile(dir, baseOffset)
  const tiFile = timeIndexFile(dir, baseOffset)
  const oiBytes = await ioAsync('read offset index', oiFile, () => readIfExists(oiFile))
  const tiBytes = await ioAsync('read time index', tiFile, () => readIfExists(tiFile))
  const txnFile = txnIndexFile(dir, baseOffset)
  const txnBytes = hasTxnIndex ? await ioAsync('read transaction index', txnFile, () => readIfExists(txnFile)) : null
  const txnEntries = txnBytes === null ? [] : TransactionIndex.parse(txnBytes)
  let why: string | null = null
  if (size === 0) {
    // an empty segment's missing or odd indexes are simply made anew
  } else if (oiBytes === null) why = `offset index ${oiFile} is missing`
  else if (tiBytes === null) why = `time index ${tiFile} is missing`
  else {
    const bad = OffsetIndex.sanityCheck(oiBytes, size)
    if (bad !== null) why = `offset index ${oiFile} is corrupt: ${bad}`
    else {
      const badTime = TimeIndex.sanityCheck(tiBytes)
      if (badTime !== null) why = `time index ${tiFile} is corrupt: ${badTime}`
      else if (txnEntries === null) why = `transaction index ${txnFile} is corrupt: ${txnBytes?.length} bytes`
    }
  }
  const empty = Buffer.alloc(0)
  const trusted = size > 0 && why === null
  const oi = OffsetIndex.fromBytes(oiFile, settings.segmentIndexBytes, trusted && oiBytes !== null ? oiBytes : empty)
  const ti = TimeIndex.fromBytes(tiFile, settings.segmentIndexBytes, trusted && tiBytes !== null ? tiBytes : empty)
  const seg = new LogSegment(baseOffset, file, null, size, oi, ti, settings, Date.now())
  seg.txnIndex = new TransactionIndex(txnFile, txnEntries ?? [])
  // An empty segment has no transactions: a `.txnindex` left beside it goes (as in Rust's loader).
  if (size === 0 && txnBytes !== null) await removeFiles([txnFile])
  return { seg, why }
}

async function deleteSegment(seg: LogSegment): Promise<void> {
  seg.closeForDelete()
  await removeFiles(seg.files())
}

export async function loadLog(options: OpenLogOptions): Promise<LoadedLog> {
  const { dir, config } = options
  const settings: SegmentSettings = {
    indexIntervalBytes: config.indexIntervalBytes,
    segmentIndexBytes: config.segmentIndexBytes,
  }
  const report: RecoveryReport = { segmentsRecovered: 0, bytesTruncated: 0, segmentsDeleted: 0, indexesRebuilt: 0, messages: [] }
  await ioAsync('create log directory', dir, () => fs.promises.mkdir(dir, { recursive: true }))
  await recoverSwaps(dir, report)
  const names = await ioAsync('list log directory', dir, () => fs.promises.readdir(dir))

  // 1. Stray files and orphan indexes.
  const logs = new Set<bigint>()
  const txnIndexes = new Set<bigint>()
  const snapshots: bigint[] = []
  const indexes: Array<{ name: string; base: bigint }> = []
  for (const name of names) {
    if (name === LEADER_EPOCH_CHECKPOINT_FILE + '.tmp' || name.endsWith('.deleted')) {
      await removeFiles([join(dir, name)])
      continue
    }
    const snapshot = parseSnapshotFileName(name)
    if (snapshot !== null) snapshots.push(snapshot)
    const parsed = parseSegmentFileName(name)
    if (parsed === null) continue
    if (parsed.kind === 'log') logs.add(parsed.baseOffset)
    else indexes.push({ name, base: parsed.baseOffset })
    if (parsed.kind === 'txnindex') txnIndexes.add(parsed.baseOffset)
  }
  for (const { name, base } of indexes) {
    if (!logs.has(base)) {
      report.messages.push(`deleted orphan index ${join(dir, name)}: no ${logFile(dir, base)}`)
      await removeFiles([join(dir, name)])
    }
  }

  // 2. Segments, in offset order.
  const bases = [...logs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const segments: LogSegment[] = []
  const unsound = new Map<LogSegment, string>()
  try {
    for (const base of bases) {
      const { seg, why } = await openSegment(dir, base, settings, txnIndexes.has(base))
      segments.push(seg)
      if (why !== null) unsound.set(seg, why)
    }
  } catch (err) {
    for (const s of segments) s.closeForDelete()
    throw err
  }

  try {
    // 3. Leader epochs (recovery may add to them).
    const epochs = new LeaderEpochFileCache(dir)
    const text = await ioAsync('read leader epoch checkpoint', epochs.file, () => readIfExists(epochs.file))
    let epochsUnreadable = false
    if (text !== null) {
      try {
        const parsed = LeaderEpochFileCache.parse(text.toString('latin1'))
        for (const e of parsed) epochs.assignIfNewer(e.epoch, e.startOffset)
        epochs.setOnDisk(parsed)
      } catch (err) {
        epochsUnreadable = true
        epochs.setOnDisk(null)
        report.messages.push(`${epochs.file} is unreadable (${(err as Error).message}): rebuilt from the batch headers`)
      }
    }

    // 4. Recovery and index rebuilds (with the producer state, for the transaction indexes).
    snapshots.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    const producers: ProducerStateContext = {
      dir,
      segments,
      producerState: new ProducerStateManager(),
      snapshots,
      lastSnapOffset: options.logStartOffset,
      messages: report.messages,
    }
    let producersLoaded = false
    // Kafka's rule for a clean log without snapshots: no producer state before the last two segments.
    // Only where no snapshot file exists at all: unreadable ones (deleted when read) mean a scan from the log start.
    const withoutSnapshotFrom = options.hadCleanShutdown && snapshots.length === 0 && segments.length > 2 ? segments[segments.length - 2]!.baseOffset : undefined
    const recoverFrom = options.hadCleanShutdown ? null : floorIndex(segments, options.recoveryPoint)
    let lastNextRel: number | null = null
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i]!
      const why = unsound.get(seg)
      let recover = recoverFrom !== null && i >= recoverFrom
      let counted = recover
      if (why !== undefined) {
        report.messages.push(`${seg.file}: rebuilding the indexes: ${why}`)
        report.indexesRebuilt++
        recover = true
      }
      if (!recover && i === segments.length - 1) {
        // A trusted last segment still has to end on a batch boundary for appends to follow it.
        const from = seg.offsetIndex.entries > 0 ? seg.offsetIndex.positionAt(seg.offsetIndex.entries - 1) : 0
        const tail = await scanTail(seg, from)
        if (tail.end === seg.size) lastNextRel = tail.nextRel
        else {
          report.messages.push(`${seg.file}: recovering: whole batches end at ${tail.end} of ${seg.size} bytes`)
          recover = true
          counted = true
        }
      }
      if (!recover) continue
      loadProducerStateTo(producers, seg.baseOffset, !producersLoaded, withoutSnapshotFrom)
      producersLoaded = true
      const walk = await walkSegment(seg, settings, epochs, producers.producerState)
      if (counted) report.segmentsRecovered++
      const truncated = seg.size - walk.validBytes
      if (truncated > 0) {
        await withFd(seg, (fd) => ioAsync('truncate segment', seg.file, () => ftruncateAsync(fd, walk.validBytes)))
        seg.size = walk.validBytes
        report.bytesTruncated += truncated
        report.messages.push(`${seg.file}: ${walk.reason} at position ${walk.validBytes}; truncated ${truncated} bytes`)
      }
      for (const index of [walk.offsetIndex, walk.timeIndex]) {
        try {
          await index.writeTrimmedAsync()
        } catch (err) {
          // Opening must not need free space: an index that cannot be written is left empty
          // (valid, only slower to search) rather than failing the open.
          await index.writeEmptyAsync()
          report.messages.push(`${index.file}: rebuilt empty (${(err as Error).message}): lookups walk the segment`)
        }
      }
      seg.replaceIndexes(walk.offsetIndex, walk.timeIndex, walk.maxTimestamp, walk.offsetOfMaxTimestamp)
      try {
        seg.txnIndex.reset(walk.abortedTxns)
      } catch (err) {
        report.messages.push(`${seg.txnIndex.file}: not rebuilt (${(err as Error).message})`)
      }
      lastNextRel = walk.nextRel
      if (truncated > 0 && i < segments.length - 1) {
        const later = segments.splice(i + 1)
        for (const s of later) {
          await deleteSegment(s)
          report.segmentsDeleted++
          report.messages.push(`${s.file}: deleted: an earlier segment of the log was damaged`)
        }
      }
    }
    if (epochsUnreadable) {
      epochs.clear()
      await rebuildEpochs(segments, epochs)
    }

    // 5. Offsets.
    let logStartOffset = options.logStartOffset
    if (segments.length > 0 && segments[0]!.baseOffset > logStartOffset) logStartOffset = segments[0]!.baseOffset
    let logEndOffset = logStartOffset
    if (segments.length > 0) {
      const last = segments[segments.length - 1]!
      logEndOffset = last.baseOffset + BigInt(lastNextRel ?? 0)
      if (logStartOffset > logEndOffset) {
        // The checkpoint says more than the data: it is not trusted with the data's fate.
        const firstBase = segments[0]!.baseOffset
        report.messages.push(`${dir}: the log start offset checkpoint says ${logStartOffset}, beyond the log end offset ${logEndOffset}: ignored, the log starts at ${firstBase}`)
        logStartOffset = firstBase
      }
    }
    if (segments.length === 0) {
      segments.push(LogSegment.create(dir, logStartOffset, settings, Date.now()))
      logEndOffset = logStartOffset
    }
    segments[segments.length - 1]!.makeActive()

    // 5. The producer state at the LEO; stray snapshots go, those above the LEO are stale.
    removeStraySnapshots(producers)
    loadProducerStateTo(producers, logEndOffset, !producersLoaded, withoutSnapshotFrom)
    deleteSnapshotsAbove(producers, logEndOffset)

    epochs.truncateFromEnd(logEndOffset)
    epochs.truncateFromStart(logStartOffset)
    // Rewrite the checkpoint when it says something else (an empty file is an empty cache, as in Kafka).
    const onDisk = text?.toString('latin1') ?? ''
    const current = LeaderEpochFileCache.format(epochs.entries())
    if ((epochs.entries().length > 0 || onDisk !== '') && current !== onDisk) {
      try {
        await epochs.writeAsync()
      } catch (err) {
        // A full disk: the cache knows the file is behind; the next append rewrites it first.
        report.messages.push(`${epochs.file}: not rewritten (${(err as Error).message}): rewritten with the next append`)
      }
    }

    const recoveryPoint = options.hadCleanShutdown ? logEndOffset : options.recoveryPoint < logEndOffset ? options.recoveryPoint : logEndOffset
    return {
      segments,
      logStartOffset,
      logEndOffset,
      recoveryPoint,
      epochCache: epochs,
      report,
      producerState: producers.producerState,
      snapshots: producers.snapshots,
      lastSnapOffset: producers.lastSnapOffset,
    }
  } catch (err) {
    for (const s of segments) s.closeForDelete()
    throw err
  }
}

/** Index of the segment with the largest base <= offset (0 if offset is below every base). */
export function floorIndex(segments: readonly LogSegment[], offset: bigint): number {
  let lo = 0
  let hi = segments.length - 1
  let found = 0
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    if (segments[mid]!.baseOffset <= offset) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return found
}
