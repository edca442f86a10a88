/**
 * The bound a decompressor stops at, and the callback that sees its output as it grows.
 *
 * `OutputLimitError` is what every codec throws when its output would pass `maxOutput`:
 * CORRUPT_RECORD for whoever reads a stored batch back, turned into RECORD_TOO_LARGE by a
 * leader's check of a producer's batch (records.ts `validateRecordsBounded`), as the Rust twin's
 * `RecordError::DecompressedTooLarge` is.
 */
import { RecordError } from './record-error.js'

export class OutputLimitError extends RecordError {
  readonly limit: number

  /** `what`: which size passes the limit (a declared content size, or the output). */
  constructor(codec: string, limit: number, what = 'decompressed size') {
    super('CORRUPT_RECORD', `${codec}: ${what} exceeds the limit of ${limit} bytes`)
    this.limit = limit
  }
}

/**
 * Called with the output buffer and how much of it is written, after every block (lz4, snappy
 * chunks, zstd) or once at the end (gzip, none); throwing stops the decompression.
 */
export type Progress = (out: Buffer, end: number) => void

export const NO_PROGRESS: Progress = () => {}

/**
 * Work done in steps: a generator that pauses (yields nothing) between blocks of output or
 * slices of records, and returns its result. `runSteps` runs one to the end at once;
 * `runStepsSliced` (records.ts's async checks) gives the event loop a turn between slices.
 */
export type Steps<T> = Generator<void, T, void>

export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
  }
}

/** How long `runStepsSliced` works before it lets the event loop run. */
export const SLICE_MS = 5

/**
 * Runs steps on the event loop in slices of about SLICE_MS, letting other I/O run between
 * (setImmediate): long work (a batch inflating to 100 MiB) does not stall other clients.
 */
export async function runStepsSliced<T>(steps: Steps<T>): Promise<T> {
  let deadline = performance.now() + SLICE_MS
  for (;;) {
    const r = steps.next()
    if (r.done) return r.value
    if (performance.now() >= deadline) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      deadline = performance.now() + SLICE_MS
    }
  }
}

/** Bytes copied per step by `copyToSteps`: a few milliseconds of memcpy and page faults. */
const COPY_STEP_BYTES = 4 * 1024 * 1024

/**
 * `out[0, op)` copied to a new buffer of `size` bytes, COPY_STEP_BYTES per step: a decoder
 * growing its output to 100 MiB does not stop the loop for the whole copy.
 */
export function* copyToSteps(out: Buffer, op: number, size: number): Steps<Buffer> {
  const grown = Buffer.allocUnsafe(size)
  for (let from = 0; from < op; from += COPY_STEP_BYTES) {
    if (from > 0) yield
    out.copy(grown, from, from, Math.min(op, from + COPY_STEP_BYTES))
  }
  return grown
}
