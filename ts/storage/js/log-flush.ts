/**
 * Flushing (docs/storage.md "Flush"): fsync every segment with unflushed data, and the directory
 * when segments were created since the last flush, off the JS thread; then move the recovery
 * point to the LEO the log had when the flush began, unless it was truncated meanwhile. Runs
 * inside `JsLog`'s queue; `JsLog` also starts it in the background when flush.messages is due.
 *
 * A roll makes the segments below the new one complete: `JsLog` then runs `flushUpTo` its base
 * offset in the background (Kafka's `UnifiedLog.roll` schedules
 * `flushUptoOffsetExclusive(newSegment.baseOffset)`), so the recovery point follows the rolls
 * even with flush.messages and flush.ms at their defaults (never). As flush.rs does.
 */
import { fsyncPath, ioAsync } from './files.js'
import type { LogState } from './log-state.js'

/** flush.messages: true once LEO - recovery point reaches it. */
export function flushDue(log: LogState): boolean {
  return log.logEndOffset - log.recoveryPoint >= log.flushMessages
}

export async function flush(log: LogState): Promise<void> {
  await flushUpTo(log, log.logEndOffset)
}

/**
 * Makes the offsets below `upto` durable: the dirty segments that start below it (every dirty
 * one when `upto` is the LEO) and the directory if segments were created; then the recovery
 * point moves to `upto` (at most the LEO), unless the log was truncated meanwhile.
 */
export async function flushUpTo(log: LogState, upto: bigint): Promise<void> {
  const target = upto < log.logEndOffset ? upto : log.logEndOffset
  const wholeLog = target === log.logEndOffset
  const truncations = log.truncations
  const dirty = log.segments.filter((s) => s.dirty && (wholeLog || s.baseOffset < target))
  const newSegments = log.newSegments
  for (const s of dirty) s.dirty = false
  log.newSegments = false
  try {
    for (const s of dirty) {
      for (const f of s.files()) await fsyncIfPresent(f)
    }
    if (newSegments) await fsyncIfPresent(log.dir)
  } catch (err) {
    for (const s of dirty) s.dirty = true
    log.newSegments ||= newSegments
    throw err
  }
  if (truncations === log.truncations && target > log.recoveryPoint) {
    log.recoveryPoint = target < log.logEndOffset ? target : log.logEndOffset
  }
}

/** fsync by path; a file deleted meanwhile has nothing left to make durable. */
async function fsyncIfPresent(path: string): Promise<void> {
  await ioAsync('fsync', path, () =>
    fsyncPath(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err
    }),
  )
}
