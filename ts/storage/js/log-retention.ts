/**
 * Retention, the log start offset and truncation (Kafka's `deleteOldSegments`,
 * `maybeIncrementLogStartOffset`, `truncateTo`, `truncateFullyAndStartAt`), docs/storage.md
 * "Retention, start offset, truncation".
 *
 * Retention deletes whole segments from the oldest on, the active one included, as Kafka's
 * `deletableSegments` does: a segment goes only when its next offset (the next segment's base, or
 * the LEO for the active segment) is at most the high watermark, so the log start offset cannot
 * pass it; an empty active segment never goes, and the log start offset rule needs a next
 * segment, so it never takes the active one. Deleting every segment first rolls a new empty
 * active segment at the LEO. Deleting raises the log start offset to the first remaining
 * segment's base (the LEO when everything went). Segments leave
 * service at once (files renamed to `.deleted`); their files are removed afterwards, off the JS
 * thread. The async functions here run inside `JsLog`'s queue, one at a time.
 *
 * A segment's `.txnindex` and the `.snapshot` at its base offset go with it. Truncation cuts the
 * transaction index of the segment it cuts (entries whose marker is at or past the offset),
 * deletes the snapshots above the new LEO and reloads the producer state to it
 * (log-producer-state.ts).
 */
import { StorageError } from '../errors.js'
import { removeFiles } from './files.js'
import { floorIndex } from './log-loader.js'
import { deleteSnapshotsAbove, loadProducerStateTo } from './log-producer-state.js'
import type { LogSegment } from './log-segment.js'
import type { LogState } from './log-state.js'

/** DeleteRecords: raises the log start offset, never above the high watermark. */
export function maybeIncrementLogStartOffset(log: LogState, offset: bigint): void {
  log.checkOpen()
  if (offset > log.highWatermark) {
    throw new StorageError('OFFSET_OUT_OF_RANGE', `cannot raise the log start offset to ${offset}: above the high watermark ${log.highWatermark}`)
  }
  if (offset > log.logStartOffset) updateLogStartOffset(log, offset)
}

/** Drops everything from the batch holding `offset` on (whole later segments, the floor segment cut). */
export async function truncateTo(log: LogState, offset: bigint): Promise<void> {
  if (offset < 0n) throw new StorageError('INVALID_ARGUMENT', `cannot truncate to a negative offset ${offset}`)
  if (offset >= log.logEndOffset) return
  if (offset < log.segments[0]!.baseOffset) {
    await truncateFullyAndStartAt(log, offset)
    return
  }
  const seg = log.segments[floorIndex(log.segments, offset)]!
  // Kafka truncates to the batch holding the offset: the LEO becomes that batch's base.
  const found = seg.translateOffset(seg.relativeOffset(offset))
  const end = found === null ? offset : seg.baseOffset + BigInt(found.baseRel)
  log.truncations++
  const doomed = log.segments.filter((s) => s.baseOffset > offset)
  log.segments = log.segments.filter((s) => s.baseOffset <= offset)
  const files = log.detach(doomed)
  seg.truncateTo(seg.relativeOffset(offset), Date.now())
  log.logEndOffset = end
  if (log.recoveryPoint > end) log.recoveryPoint = end
  if (log.logStartOffset > end) log.logStartOffset = end
  if (log.highWatermark > end) log.highWatermark = end
  log.boundCache = null
  if (log.epochs.truncateFromEnd(end)) log.epochs.write()
  // Kafka's truncateAndReload: the producer state as of the new LEO, from a snapshot below it.
  deleteSnapshotsAbove(log, end)
  loadProducerStateTo(log, end, true)
  log.producerState.onHighWatermarkUpdated(log.highWatermark)
  await removeFiles(files)
}

/** Deletes every segment; a new empty one at `offset`, which becomes every offset of the log. */
export async function truncateFullyAndStartAt(log: LogState, offset: bigint): Promise<void> {
  if (offset < 0n) throw new StorageError('INVALID_ARGUMENT', `cannot start at a negative offset ${offset}`)
  log.truncations++
  const files = log.detach(log.segments)
  log.segments = [log.newSegment(offset, Date.now())]
  log.logStartOffset = offset
  log.logEndOffset = offset
  log.highWatermark = offset
  log.recoveryPoint = offset
  log.boundCache = null
  deleteSnapshotsAbove(log, -1n)
  log.producerState.reset([], offset)
  log.lastSnapOffset = offset
  if (log.epochs.entries().length > 0) {
    log.epochs.clear()
    log.epochs.write()
  }
  await removeFiles(files)
}

/** Retention by log start offset, size (retention.bytes) and time (retention.ms); returns the segments deleted. */
export async function deleteOldSegments(log: LogState, nowMs: number): Promise<number> {
  const { retentionMs, retentionBytes } = log.config
  let deleted = await deleteWhile(log, (_seg, next) => next !== undefined && next.baseOffset <= log.logStartOffset)
  if (retentionBytes >= 0) {
    let diff = log.segments.reduce((n, s) => n + s.size, 0) - retentionBytes
    if (diff >= 0) {
      deleted += await deleteWhile(log, (seg) => {
        if (diff - seg.size < 0) return false
        diff -= seg.size
        return true
      })
    }
  }
  if (retentionMs >= 0) {
    deleted += await deleteWhile(log, (seg) => nowMs - seg.largestTimestamp() > retentionMs)
  }
  return deleted
}

/**
 * Kafka's `deleteOldSegments(predicate)`: the oldest segments while the predicate holds (`next`
 * is undefined for the active segment) and the segment ends at or below the high watermark; an
 * empty active segment stays. When that is every segment, a new empty active segment is rolled
 * at the LEO first.
 */
async function deleteWhile(log: LogState, predicate: (seg: LogSegment, next: LogSegment | undefined) => boolean): Promise<number> {
  const count = log.segments.length
  let n = 0
  while (n < count) {
    const seg = log.segments[n]!
    const next = n + 1 < count ? log.segments[n + 1] : undefined
    const nextOffset = next === undefined ? log.logEndOffset : next.baseOffset
    if (log.highWatermark < nextOffset || (next === undefined && seg.size === 0) || !predicate(seg, next)) break
    n++
  }
  if (n === 0) return 0
  // The active segment is not empty, so the LEO is above its base.
  if (n === count) log.rollAt(log.logEndOffset, Date.now())
  const doomed = log.segments.slice(0, n)
  log.segments = log.segments.slice(n)
  const files = log.detach(doomed)
  log.boundCache = null
  const newStart = log.segments[0]!.baseOffset
  if (newStart > log.logStartOffset) updateLogStartOffset(log, newStart)
  await removeFiles(files)
  return n
}

function updateLogStartOffset(log: LogState, offset: bigint): void {
  log.logStartOffset = offset
  if (log.highWatermark < offset) log.highWatermark = offset
  if (log.recoveryPoint < offset) log.recoveryPoint = offset
  if (log.epochs.truncateFromStart(offset)) log.epochs.write()
}
