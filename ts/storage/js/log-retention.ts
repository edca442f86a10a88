/**
 * Retention, the log start offset and truncation (Kafka's `deleteOldSegments`,
 * `maybeIncrementLogStartOffset`, `truncateTo`, `truncateFullyAndStartAt`), docs/storage.md
 * "Retention, start offset, truncation".
 *
 * Retention deletes whole segments from the oldest on, never the active one, and never one whose
 * next segment starts above the high watermark (so the log start offset cannot pass it).
 * Deleting raises the log start offset to the first remaining segment's base. Segments leave
 * service at once (files renamed to `.deleted`); their files are removed afterwards, off the JS
 * thread. The async functions here run inside `JsLog`'s queue, one at a time.
 */
import { StorageError } from '../errors.js'
import { removeFiles } from './files.js'
import { floorIndex } from './log-loader.js'
import type { LogSegment } from './log-segment.js'
import type { LogState } from './log-state.js'

/** DeleteRecords: raises the log start offset, never above the high watermark. */
export function maybeIncrementLogStartOffset(log: LogState, offset: bigint): void {
  log.checkOpen()
  if (offset > log.highWatermark) {
    throw new StorageError(
      'OFFSET_OUT_OF_RANGE',
      `cannot raise the log start offset to ${offset}: above the high watermark ${log.highWatermark}`,
    )
  }
  if (offset > log.logStartOffset) updateLogStartOffset(log, offset)
}

/** Drops everything from the batch holding `offset` on (whole later segments, the floor segment cut). */
export async function truncateTo(log: LogState, offset: bigint): Promise<void> {
  if (offset < 0n) throw new StorageError('INVALID_ARGUMENT', `cannot truncate to a negative offset ${offset}`)
  if (offset >= log.logEndOffset) return
  if (offset < log.segments[0].baseOffset) {
    await truncateFullyAndStartAt(log, offset)
    return
  }
  const seg = log.segments[floorIndex(log.segments, offset)]
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
  if (log.epochs.entries().length > 0) {
    log.epochs.clear()
    log.epochs.write()
  }
  await removeFiles(files)
}

/** Retention by log start offset, size (retention.bytes) and time (retention.ms); returns the segments deleted. */
export async function deleteOldSegments(log: LogState, nowMs: number): Promise<number> {
  const { retentionMs, retentionBytes } = log.config
  let deleted = await deleteWhile(log, (_seg, next) => next.baseOffset <= log.logStartOffset)
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
 * Kafka's `deleteOldSegments(predicate)`: the oldest segments while the predicate holds, never
 * the active one, and only those wholly below the high watermark.
 */
async function deleteWhile(log: LogState, predicate: (seg: LogSegment, next: LogSegment) => boolean): Promise<number> {
  let n = 0
  while (n < log.segments.length - 1) {
    const next = log.segments[n + 1]
    if (log.highWatermark < next.baseOffset || !predicate(log.segments[n], next)) break
    n++
  }
  if (n === 0) return 0
  const doomed = log.segments.slice(0, n)
  log.segments = log.segments.slice(n)
  const files = log.detach(doomed)
  log.boundCache = null
  const newStart = log.segments[0].baseOffset
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
