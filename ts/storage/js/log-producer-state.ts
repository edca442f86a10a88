/**
 * The log's side of transactions, docs/storage.md "Transactions": the producer state
 * (producer-state-manager.ts) kept by appends, rebuilt from snapshots and batch headers, the
 * `.snapshot` files (producer-snapshot.ts) and the aborted transactions of reads (Kafka's
 * `UnifiedLog.collectAbortedTransactions`). The Rust twin is crates/storage/src/log/txn.rs.
 *
 * Snapshots are written at each roll (at the new segment's base offset) and on close (at the
 * LEO), when something was applied since the last one (Kafka's `takeSnapshot`); a write that
 * fails leaves no snapshot (a torn one fails its CRC and is deleted when read), which only makes
 * the next load scan further. They are not fsynced at roll (Kafka does it in the background):
 * the CRC makes a torn one harmless. A snapshot goes with the segment whose base offset it
 * carries (retention, DeleteRecords), truncation deletes those above the new LEO.
 *
 * Loading the state to an offset (`loadProducerStateTo`): continue from where it is when it is
 * not past the offset; else start from the newest readable snapshot at or below it (unreadable
 * ones are deleted), else from the first segment, and apply the batch headers up to it (a
 * control batch's marker record is read too). Without a snapshot: after a clean shutdown, Kafka's
 * rule: the state is taken as empty before the second-to-last segment and only the last two are
 * scanned (a clean close writes a snapshot at the LEO, so a clean log without any is one written
 * before snapshots existed: by Kafka before 0.11, by ferrolog before transactions, with no
 * transaction in it); after an unclean stop, the whole log's headers are scanned, from the first
 * segment (snapshots deleted by hand or lost: a correct LSO over a fast open). Once the segments
 * are recovered, stray snapshots (at no segment's base) are deleted but the newest above the
 * last segment's base (Kafka's `removeStraySnapshots`). "Without a
 * snapshot" means no `.snapshot` file at all, as Kafka's `latestSnapshotOffset` before loading:
 * where every one is unreadable, the state is rebuilt from the first segment even after a clean
 * shutdown (Kafka's `loadFromSnapshot` falls back to the log start).
 */
import * as fs from 'node:fs'
import {
  ATTRIBUTES_OFFSET,
  BASE_SEQUENCE_OFFSET,
  CONTROL_FLAG_MASK,
  LAST_OFFSET_DELTA_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  TRANSACTIONAL_FLAG_MASK,
} from '../../protocol/batch-header.js'
import { CONTROL_TYPE_PREFIX_BYTES, readEndTxnMarker } from '../../protocol/control-record.js'
import { FILE_MODE, io, producerSnapshotFile } from './files.js'
import type { LogSegment } from './log-segment.js'
import { decodeProducerSnapshot, encodeProducerSnapshot } from './producer-snapshot.js'
import type { ProducerBatch, ProducerStateManager } from './producer-state-manager.js'
import type { AbortedTransaction } from './transaction-index.js'

/** What loading and snapshots need of a log (a `LogState`, or the loader's view of one). */
export interface ProducerStateContext {
  readonly dir: string
  segments: LogSegment[]
  readonly producerState: ProducerStateManager
  /** Offsets of the `.snapshot` files, ascending. */
  snapshots: bigint[]
  /** The offset of the last snapshot written or loaded (Kafka's lastSnapOffset). */
  lastSnapOffset: bigint
  /** Lines for the recovery report. */
  messages?: string[]
}

/** The producer state's view of the batch at `buf[at..]` (a control batch's marker record must be there too). */
export function producerBatchAt(buf: Buffer, at: number, baseOffset: bigint): ProducerBatch {
  const attributes = buf.readInt16BE(at + ATTRIBUTES_OFFSET)
  const isControl = (attributes & CONTROL_FLAG_MASK) !== 0
  return {
    baseOffset,
    lastOffset: baseOffset + BigInt(buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET)),
    producerId: buf.readBigInt64BE(at + PRODUCER_ID_OFFSET),
    producerEpoch: buf.readInt16BE(at + PRODUCER_EPOCH_OFFSET),
    baseSequence: buf.readInt32BE(at + BASE_SEQUENCE_OFFSET),
    maxTimestamp: buf.readBigInt64BE(at + MAX_TIMESTAMP_OFFSET),
    isTransactional: (attributes & TRANSACTIONAL_FLAG_MASK) !== 0,
    isControl,
    marker: isControl ? readEndTxnMarker(buf, at) : null,
  }
}

/**
 * Applies one appended batch (`buf[at..]` whole, in `seg`): an aborted transaction its marker
 * completes goes to the segment's transaction index, with the LSO Kafka records.
 */
export function applyAppendedBatch(ctx: ProducerStateContext, seg: LogSegment, buf: Buffer, at: number, baseOffset: bigint, highWatermark: bigint): void {
  const psm = ctx.producerState
  if (buf.readBigInt64BE(at + PRODUCER_ID_OFFSET) < 0n) {
    // No producer: only the map end moves (the common case, kept cheap).
    psm.mapEndOffset = baseOffset + BigInt(buf.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET)) + 1n
    return
  }
  const completed = psm.apply(producerBatchAt(buf, at, baseOffset))
  if (completed === null) return
  if (completed.isAborted) {
    seg.txnIndex.append({
      producerId: completed.producerId,
      firstOffset: completed.firstOffset,
      lastOffset: completed.lastOffset,
      lastStableOffset: psm.lastStableOffsetAfter(completed),
    })
  }
  psm.completeTxn(completed, highWatermark)
}

/** Applies the batches of [from, to) from the segments' headers (and markers). */
export function replayBatches(ctx: ProducerStateContext, from: bigint, to: bigint): void {
  const psm = ctx.producerState
  const segs = ctx.segments
  let first = segs.length - 1
  while (first > 0 && segs[first]!.baseOffset > from) first--
  for (let i = Math.max(first, 0); i < segs.length; i++) {
    const seg = segs[i]!
    if (seg.baseOffset >= to) break
    let position = 0
    if (seg.baseOffset < from) {
      const found = seg.translateOffset(seg.relativeOffset(from))
      if (found === null) continue
      position = found.position
    }
    seg.scanHeaders(
      position,
      (buf, at, pos, size) => {
        const base = seg.baseOffset + BigInt(seg.relativeBaseAt(buf, at))
        if (base >= to) return false
        const attributes = buf.readInt16BE(at + ATTRIBUTES_OFFSET)
        if ((attributes & CONTROL_FLAG_MASK) !== 0) {
          const bytes = seg.readBytes(pos, Math.min(size, CONTROL_TYPE_PREFIX_BYTES))
          psm.apply(producerBatchAt(bytes, 0, base))
        } else {
          psm.apply(producerBatchAt(buf, at, base))
        }
        return true
      },
      true,
    )
  }
  psm.mapEndOffset = to
}

/** Brings the producer state to `offset` (see the module comment). */
export function loadProducerStateTo(ctx: ProducerStateContext, offset: bigint, fresh = false, withoutSnapshotFrom?: bigint): void {
  const psm = ctx.producerState
  if (fresh || psm.mapEndOffset > offset) {
    let from = withoutSnapshotFrom ?? (ctx.segments.length > 0 ? ctx.segments[0]!.baseOffset : offset)
    if (from > offset) from = offset
    psm.reset([], from)
    for (let i = ctx.snapshots.length - 1; i >= 0; i--) {
      const at = ctx.snapshots[i]!
      if (at > offset) continue
      const file = producerSnapshotFile(ctx.dir, at)
      try {
        psm.reset(decodeProducerSnapshot(fs.readFileSync(file)), at)
        from = at
        break
      } catch (err) {
        ctx.messages?.push(`${file}: unreadable (${(err as Error).message}): deleted`)
        deleteSnapshot(ctx, at)
      }
    }
    psm.mapEndOffset = from
    ctx.lastSnapOffset = ctx.snapshots.filter((s) => s <= offset).pop() ?? from
  }
  if (psm.mapEndOffset < offset) replayBatches(ctx, psm.mapEndOffset, offset)
}

/** Kafka's `takeSnapshot`: the state at `offset` (its mapEndOffset) to `<offset>.snapshot`, when new. */
export function takeSnapshot(ctx: ProducerStateContext, offset: bigint): void {
  if (offset <= ctx.lastSnapOffset) return
  const file = producerSnapshotFile(ctx.dir, offset)
  try {
    io('write producer snapshot', file, () => fs.writeFileSync(file, encodeProducerSnapshot(ctx.producerState.entries()), { mode: FILE_MODE }))
  } catch {
    // No snapshot: the next load scans further (module comment).
    fs.rmSync(file, { force: true })
    return
  }
  if (!ctx.snapshots.includes(offset)) {
    ctx.snapshots.push(offset)
    ctx.snapshots.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  }
  ctx.lastSnapOffset = offset
}

export function deleteSnapshot(ctx: ProducerStateContext, offset: bigint): void {
  const i = ctx.snapshots.indexOf(offset)
  if (i >= 0) ctx.snapshots.splice(i, 1)
  const file = producerSnapshotFile(ctx.dir, offset)
  io('delete producer snapshot', file, () => fs.rmSync(file, { force: true }))
}

/**
 * Kafka's `removeStraySnapshots`, at load: a snapshot at no segment's base offset (a close's, at
 * the LEO of its time) is deleted, unless it is the newest such one and above the last segment's
 * base (the last close's, which spares the next open a scan). Without this, every clean restart
 * left one snapshot that no segment's deletion would ever take.
 */
export function removeStraySnapshots(ctx: ProducerStateContext): void {
  const bases = new Set(ctx.segments.map((s) => s.baseOffset))
  const strays = ctx.snapshots.filter((at) => !bases.has(at))
  const newest = strays.at(-1)
  const lastBase = ctx.segments.at(-1)?.baseOffset
  for (const at of strays) if (at !== newest || lastBase === undefined || at < lastBase) deleteSnapshot(ctx, at)
}

/** Deletes the snapshots above `offset` (truncation, load). */
export function deleteSnapshotsAbove(ctx: ProducerStateContext, offset: bigint): void {
  for (const at of ctx.snapshots.filter((s) => s > offset)) deleteSnapshot(ctx, at)
  if (ctx.lastSnapOffset > offset) ctx.lastSnapOffset = ctx.snapshots.at(-1) ?? offset
}

/**
 * Kafka's `collectAbortedTransactions(startOffset, upperBoundOffset)`: the aborted transactions
 * overlapping [startOffset, upperBoundOffset), from the transaction indexes of the segment
 * holding startOffset on, until one says the search is complete.
 */
export function collectAbortedTransactions(segments: readonly LogSegment[], startOffset: bigint, upperBoundOffset: bigint): AbortedTransaction[] {
  const out: AbortedTransaction[] = []
  let i = segments.length - 1
  while (i > 0 && segments[i]!.baseOffset > startOffset) i--
  for (; i >= 0 && i < segments.length; i++) {
    const result = segments[i]!.txnIndex.collectAbortedTxns(startOffset, upperBoundOffset)
    for (const t of result.abortedTransactions) out.push({ producerId: t.producerId, firstOffset: t.firstOffset })
    if (result.isComplete) break
  }
  return out
}
