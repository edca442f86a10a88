/**
 * Storage errors cross from Rust and from the TypeScript twin as the same code strings
 * (`err.code`); this is the one table that maps them to Kafka's numeric error codes.
 */

import { ErrorCode } from '../protocol/error-codes.js'
import { RecordError } from '../protocol/record-error.js'
import { recordErrorsMessage, violationMessage } from '../protocol/record-violations.js'

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
  INVALID_TIMESTAMP: ErrorCode.INVALID_TIMESTAMP,
} as const

export const STORAGE_ERROR_CODES = {
  OFFSET_OUT_OF_RANGE: KafkaErrorCode.OFFSET_OUT_OF_RANGE,
  CORRUPT_RECORD: KafkaErrorCode.CORRUPT_MESSAGE,
  INVALID_RECORD: KafkaErrorCode.INVALID_RECORD,
  /** Records of a producer's batch refused for their timestamps (their `recordErrors` name them). */
  INVALID_TIMESTAMP: KafkaErrorCode.INVALID_TIMESTAMP,
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

/**
 * A record of a producer's batch the leader refuses on its own (Kafka's
 * `ProduceResponse.RecordError`, KIP-467): its index in the batch and Kafka's message for it.
 */
export interface BatchRecordError {
  batchIndex: number
  message: string
}

/**
 * An error of the storage engine; `code` is one of STORAGE_ERROR_CODES' keys. An append refused
 * for records Kafka's LogValidator judges one by one (INVALID_RECORD: no key on a compacted log;
 * INVALID_TIMESTAMP) names each of them in `recordErrors`, and its message is Kafka's
 * `processRecordErrors` text (the Produce answer's `error_message`).
 */
export class StorageError extends Error {
  readonly code: StorageErrorCode
  readonly recordErrors?: readonly BatchRecordError[]

  constructor(code: StorageErrorCode, message: string, options?: { cause?: unknown; recordErrors?: readonly BatchRecordError[] }) {
    super(message, options)
    this.name = 'StorageError'
    this.code = code
    if (options?.recordErrors) this.recordErrors = options.recordErrors
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

/**
 * `asStorageError` in the log `topicPartition` ("topic-0", its directory's name): a RecordError
 * naming records (`violations`) becomes a StorageError whose `recordErrors` carry Kafka's
 * messages for them, as crates/storage's `StorageError::RecordErrors`.
 */
export function asLogStorageError(err: unknown, topicPartition: string): unknown {
  if (err instanceof RecordError && err.violations) {
    const recordErrors = err.violations.map((v) => ({ batchIndex: v.batchIndex, message: violationMessage(v, topicPartition) }))
    return new StorageError(err.code, recordErrorsMessage(err.violations, topicPartition), { cause: err, recordErrors })
  }
  return asStorageError(err)
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

/**
 * A binding error's message: `CODE: message` (crates/binding convert.rs `coded_error`), then for
 * each record a `RecordErrors` names, U+001E, its batch index, U+001F and Kafka's message for it
 * (convert.rs `storage_error`).
 */
const CODED = /^([A-Z_]+): ([\s\S]*)$/
const RECORD_SEPARATOR = '\u001e'
const UNIT_SEPARATOR = '\u001f'

/** Rethrows a binding error as a StorageError with its code (and its `recordErrors`). */
export function rethrow(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err)
  const [, code, body] = CODED.exec(message) ?? []
  if (isStorageErrorCode(code) && body !== undefined) {
    // split gives at least one part.
    const [text = '', ...named] = body.split(RECORD_SEPARATOR)
    if (named.length === 0) throw new StorageError(code, text, { cause: err })
    const recordErrors = named.map((part) => {
      const unit = part.indexOf(UNIT_SEPARATOR)
      return { batchIndex: Number(part.slice(0, unit)), message: part.slice(unit + 1) }
    })
    throw new StorageError(code, text, { cause: err, recordErrors })
  }
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
