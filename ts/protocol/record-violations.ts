/**
 * The records of a producer's batch that Kafka's LogValidator refuses one by one (KIP-467), the
 * Rust twin's `RecordViolation` (crates/record decode.rs): a record without a key on a compacted
 * log (INVALID_RECORD); on a CreateTime log, a timestamp (other than -1) outside
 * [now - message.timestamp.before.max.ms, now + message.timestamp.after.max.ms]; a batch the
 * producer marked LogAppendTime (both INVALID_TIMESTAMP). Every record of the batch is judged,
 * the key first, then the timestamp; the batch is refused naming each bad record by its index
 * (the Produce answer's `record_errors`), with Kafka's messages, so a client fails those and may
 * retry the others. Timestamps and offsets are int64 and wrap as Java's longs do.
 */

/** What `LogValidator.validateTimestamp` checks of each record, at the leader's clock `nowMs`. */
export interface TimestampChecks {
  /** The log's message.timestamp.type is CreateTime. */
  createTime: boolean
  nowMs: bigint
  /** message.timestamp.before.max.ms (Number.MAX_SAFE_INTEGER and up: Long.MAX_VALUE). */
  beforeMaxMs: bigint
  /** message.timestamp.after.max.ms (likewise). */
  afterMaxMs: bigint
}

const LONG_MAX = 2n ** 63n - 1n

/** A long setting as Kafka holds it: ferrolog's "never" (Number.MAX_SAFE_INTEGER) is Long.MAX_VALUE. */
function longSetting(value: number): bigint {
  return value >= Number.MAX_SAFE_INTEGER ? LONG_MAX : BigInt(value)
}

export function timestampChecksFor(timestampType: 'CreateTime' | 'LogAppendTime', nowMs: number, beforeMaxMs: number, afterMaxMs: number): TimestampChecks {
  return { createTime: timestampType === 'CreateTime', nowMs: BigInt(nowMs), beforeMaxMs: longSetting(beforeMaxMs), afterMaxMs: longSetting(afterMaxMs) }
}

export type RecordViolation =
  | { batchIndex: number; kind: 'NO_KEY' }
  /** `offset`: the record's offset as the producer sent it (baseOffset + offsetDelta), as Kafka prints it. */
  | { batchIndex: number; kind: 'TIMESTAMP_OUT_OF_RANGE'; timestamp: bigint; offset: bigint; low: bigint; high: bigint }
  | { batchIndex: number; kind: 'LOG_APPEND_TIME_FROM_PRODUCER'; offset: bigint; timestamp: bigint; keyBytes: number; valueBytes: number }

/** Whether Kafka answers INVALID_TIMESTAMP for it (else INVALID_RECORD). */
export function isTimestampViolation(v: RecordViolation): boolean {
  return v.kind !== 'NO_KEY'
}

const long = (v: bigint): bigint => BigInt.asIntN(64, v)

/**
 * The timestamp violation of a record (`timestamp` as the record reads: baseTimestamp +
 * timestampDelta, or maxTimestamp in a LogAppendTime batch), or null.
 */
export function timestampViolation(
  t: TimestampChecks,
  batchIndex: number,
  logAppendTimeBatch: boolean,
  timestamp: bigint,
  offset: bigint,
  keyBytes: number,
  valueBytes: number,
): RecordViolation | null {
  if (t.createTime && timestamp !== -1n) {
    const diff = long(t.nowMs - timestamp)
    if (diff > t.beforeMaxMs || long(-diff) > t.afterMaxMs) {
      return { batchIndex, kind: 'TIMESTAMP_OUT_OF_RANGE', timestamp, offset, low: long(t.nowMs - t.beforeMaxMs), high: long(t.nowMs + t.afterMaxMs) }
    }
  } else if (logAppendTimeBatch) {
    return { batchIndex, kind: 'LOG_APPEND_TIME_FROM_PRODUCER', offset, timestamp, keyBytes, valueBytes }
  }
  return null
}

/** Kafka's message for the record (its `RecordError.message`), in the log `topicPartition` ("topic-0"). */
export function violationMessage(v: RecordViolation, topicPartition: string): string {
  switch (v.kind) {
    case 'NO_KEY':
      return `Compacted topic cannot accept message without key in topic partition ${topicPartition}`
    case 'TIMESTAMP_OUT_OF_RANGE':
      return `Timestamp ${v.timestamp} of message with offset ${v.offset} is out of range. The timestamp should be within [${v.low}, ${v.high}]`
    case 'LOG_APPEND_TIME_FROM_PRODUCER':
      return `Invalid timestamp type in message DefaultRecord(offset=${v.offset}, timestamp=${v.timestamp}, key=${v.keyBytes} bytes, value=${v.valueBytes} bytes). Producer should not set timestamp type to LogAppendTime.`
  }
}

/** Kafka's `LogValidator.processRecordErrors` message for a batch refused for `violations` (the Produce answer's `error_message`). */
export function recordErrorsMessage(violations: readonly RecordViolation[], topicPartition: string): string {
  if (violations.some(isTimestampViolation)) return 'One or more records have been rejected due to invalid timestamp'
  const shown = violations.slice(0, 3).map((v) => `RecordError(batchIndex=${v.batchIndex}, message='${violationMessage(v, topicPartition)}')`)
  return `One or more records have been rejected due to ${violations.length} record errors in total, and only showing the first three errors at most: [${shown.join(', ')}]`
}
