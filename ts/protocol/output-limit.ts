/**
 * The bound a decompressor stops at, and the callback that sees its output as it grows.
 *
 * `OutputLimitError` is what every codec throws when its output would pass `maxOutput`:
 * CORRUPT_RECORD for whoever reads a stored batch back, turned into RECORD_TOO_LARGE by a
 * leader's check of a producer's batch (records.ts `validateRecordsBounded`), as the Rust twin's
 * `RecordError::DecompressedTooLarge` is.
 */
import { StorageError } from '../storage/errors.js'

export class OutputLimitError extends StorageError {
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
