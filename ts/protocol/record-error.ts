/**
 * Errors of the record format (batches, records, varints, compression), the protocol layer's
 * own type as crates/record's `RecordError` is the Rust side's. `code` is a stable string, the
 * same one the Rust `RecordError::code` gives; the layer above maps it to a Kafka error code
 * (ts/storage/errors.ts `kafkaErrorCodeOf`) and the TypeScript storage twin rethrows it as a
 * `StorageError` with the same code, as crates/storage wraps `RecordError` in `StorageError`.
 */

import type { RecordViolation } from './record-violations.js'

/**
 * `CORRUPT_RECORD` for damage the CRC or sizes reveal; `INVALID_RECORD` for well-formed bytes
 * with values Kafka refuses; `INVALID_TIMESTAMP` for records of a producer's batch refused for
 * their timestamps; `RECORD_TOO_LARGE` for a producer's batch whose records pass the leader's
 * bound; `INVALID_ARGUMENT` for a caller's bad argument to the batch builder.
 */
export type RecordErrorCode = 'CORRUPT_RECORD' | 'INVALID_RECORD' | 'INVALID_TIMESTAMP' | 'RECORD_TOO_LARGE' | 'UNSUPPORTED_MAGIC' | 'UNSUPPORTED_COMPRESSION' | 'INVALID_ARGUMENT'

export class RecordError extends Error {
  readonly code: RecordErrorCode
  /**
   * The records of a producer's batch refused one by one (record-violations.ts), never empty
   * when present: the Rust twin's `RecordError::Violations`.
   */
  readonly violations?: readonly RecordViolation[]

  constructor(code: RecordErrorCode, message: string, options?: { cause?: unknown; violations?: readonly RecordViolation[] }) {
    super(message, options)
    this.name = 'RecordError'
    this.code = code
    if (options?.violations) this.violations = options.violations
  }
}
