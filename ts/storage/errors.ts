/**
 * Storage errors cross from Rust and from the TypeScript twin as the same code strings
 * (`err.code`); this is the one table that maps them to Kafka's numeric error codes.
 */

import { ErrorCode } from '../protocol/error-codes.js'
import { RecordError } from '../protocol/record-error.js'

/** Kafka error codes used by the storage layer (a view of the protocol's one table). */
export const KafkaErrorCode = {
  UNKNOWN_SERVER_ERROR: ErrorCode.UNKNOWN_SERVER_ERROR,
  NONE: ErrorCode.NONE,
  OFFSET_OUT_OF_RANGE: ErrorCode.OFFSET_OUT_OF_RANGE,
  CORRUPT_MESSAGE: ErrorCode.CORRUPT_MESSAGE,
  MESSAGE_TOO_LARGE: ErrorCode.MESSAGE_TOO_LARGE,
  UNSUPPORTED_FOR_MESSAGE_FORMAT: ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
  KAFKA_STORAGE_ERROR: ErrorCode.KAFKA_STORAGE_ERROR,
  UNSUPPORTED_COMPRESSION_TYPE: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
  INVALID_RECORD: ErrorCode.INVALID_RECORD,
} as const

export const STORAGE_ERROR_CODES = {
  OFFSET_OUT_OF_RANGE: KafkaErrorCode.OFFSET_OUT_OF_RANGE,
  CORRUPT_RECORD: KafkaErrorCode.CORRUPT_MESSAGE,
  INVALID_RECORD: KafkaErrorCode.INVALID_RECORD,
  RECORD_TOO_LARGE: KafkaErrorCode.MESSAGE_TOO_LARGE,
  UNSUPPORTED_MAGIC: KafkaErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
  UNSUPPORTED_COMPRESSION: KafkaErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
  UNEXPECTED_APPEND_OFFSET: KafkaErrorCode.UNKNOWN_SERVER_ERROR,
  STORAGE_ERROR: KafkaErrorCode.KAFKA_STORAGE_ERROR,
  LOG_CLOSED: KafkaErrorCode.KAFKA_STORAGE_ERROR,
  /** A failed append could not be undone: Kafka takes the log directory offline. */
  LOG_OFFLINE: KafkaErrorCode.KAFKA_STORAGE_ERROR,
  INVALID_ARGUMENT: KafkaErrorCode.UNKNOWN_SERVER_ERROR,
} as const

export type StorageErrorCode = keyof typeof STORAGE_ERROR_CODES

/** An error of the storage engine; `code` is one of STORAGE_ERROR_CODES' keys. */
export class StorageError extends Error {
  readonly code: StorageErrorCode

  constructor(code: StorageErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'StorageError'
    this.code = code
  }
}

export function isStorageErrorCode(code: unknown): code is StorageErrorCode {
  return typeof code === 'string' && Object.hasOwn(STORAGE_ERROR_CODES, code)
}

/**
 * The storage layer's view of an error of the record format (ts/protocol `RecordError`): a
 * StorageError with the same code and the RecordError as its cause, as crates/storage's
 * `StorageError::Record` wraps crates/record's `RecordError`. Anything else is returned as is.
 * (That `new StorageError(err.code, ...)` type-checks is what keeps every RecordErrorCode a
 * StorageErrorCode.)
 */
export function asStorageError(err: unknown): unknown {
  return err instanceof RecordError ? new StorageError(err.code, err.message, { cause: err }) : err
}

/** Runs `fn`, rethrowing a RecordError as a StorageError (`asStorageError`). */
export function recordErrorsAsStorageErrors<T>(fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    throw asStorageError(err)
  }
}

/** The Kafka error code for any error thrown by either backend or by the record format. */
export function kafkaErrorCodeOf(err: unknown): number {
  const code = (err as { code?: unknown } | null)?.code
  return isStorageErrorCode(code) ? STORAGE_ERROR_CODES[code] : KafkaErrorCode.UNKNOWN_SERVER_ERROR
}

/** A binding error's message: `CODE: message` (crates/binding convert.rs `coded_error`). */
const CODED = /^([A-Z_]+): ([\s\S]*)$/

/** Rethrows a binding error as a StorageError with its code. */
export function rethrow(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err)
  const match = CODED.exec(message)
  if (match && isStorageErrorCode(match[1])) throw new StorageError(match[1], match[2], { cause: err })
  throw err
}

/** Runs a binding call, rethrowing its errors as StorageErrors (`rethrow`). */
export function call<T>(fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    rethrow(err)
  }
}
