/**
 * Control records (Kafka's `ControlRecordType`, `EndTransactionMarker`), the one record of a
 * control batch (attributes: control bit, and transactional for transaction markers). The Rust
 * twin is crates/record/src/control.rs.
 *
 *   key   = version int16 (0) + type int16 (0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, ...)
 *   value = version int16 (0) + coordinatorEpoch int32        (ABORT and COMMIT markers)
 *
 * As Kafka, a key needs at least 4 bytes and a version >= 0; extra bytes are allowed.
 * `buildEndTxnMarker` is the control-batch builder: the batch Kafka's
 * `MemoryRecords.withEndTransactionMarker` writes (uncompressed, one record, offset delta 0,
 * transactional + control attributes, the producer's id and epoch, baseSequence -1).
 * `readEndTxnMarker` reads a marker back from a control batch's bytes (uncompressed, as markers
 * always are), `decodeEndTransactionMarker` from a decoded control record's key and value.
 */
import { CONTROL_FLAG_MASK, COMPRESSION_CODEC_MASK, ATTRIBUTES_OFFSET, LOG_OVERHEAD, LENGTH_OFFSET, RECORDS_COUNT_OFFSET, RECORDS_OFFSET } from './batch-header.js'
import { buildBatch } from './batch-builder.js'
import { Cursor, readVarint, readVarlong } from './varint.js'

export const CONTROL_RECORD_KEY_VERSION = 0
export const END_TXN_MARKER_VALUE_VERSION = 0
export const CONTROL_RECORD_KEY_SIZE = 4
export const END_TXN_MARKER_VALUE_SIZE = 6

/** Kafka's `ControlRecordType` ids. */
export const ControlRecordType = Object.freeze({
  ABORT: 0,
  COMMIT: 1,
  LEADER_CHANGE: 2,
} as const)

export interface EndTxnMarkerOptions {
  type: 'ABORT' | 'COMMIT'
  producerId: bigint
  producerEpoch: number
  coordinatorEpoch: number
  /** The marker's timestamp (Kafka: the coordinator's clock); default now. */
  timestamp?: bigint | number
  baseOffset?: bigint
  partitionLeaderEpoch?: number
}

export function controlRecordKey(type: number): Buffer {
  const key = Buffer.alloc(CONTROL_RECORD_KEY_SIZE)
  key.writeInt16BE(CONTROL_RECORD_KEY_VERSION, 0)
  key.writeInt16BE(type, 2)
  return key
}

export function endTxnMarkerValue(coordinatorEpoch: number): Buffer {
  const value = Buffer.alloc(END_TXN_MARKER_VALUE_SIZE)
  value.writeInt16BE(END_TXN_MARKER_VALUE_VERSION, 0)
  value.writeInt32BE(coordinatorEpoch, 2)
  return value
}

/** A COMMIT or ABORT control batch, as the transaction coordinator writes it. */
export function buildEndTxnMarker(options: EndTxnMarkerOptions): Buffer {
  const timestamp = options.timestamp ?? Date.now()
  return buildBatch([{ key: controlRecordKey(ControlRecordType[options.type]), value: endTxnMarkerValue(options.coordinatorEpoch), timestamp }], {
    baseOffset: options.baseOffset ?? 0n,
    partitionLeaderEpoch: options.partitionLeaderEpoch,
    producerId: options.producerId,
    producerEpoch: options.producerEpoch,
    isTransactional: true,
    isControl: true,
    nowMs: timestamp,
  })
}

/** A transaction marker read from a control batch. */
export interface EndTxnMarker {
  type: 'ABORT' | 'COMMIT'
  coordinatorEpoch: number
}

/**
 * The transaction marker of a decoded control record (its key and value), or null for another
 * control type or a record too short (Kafka: a key needs at least 4 bytes and a version >= 0;
 * extra bytes are allowed).
 */
export function decodeEndTransactionMarker(key: Buffer | null, value: Buffer | null): EndTxnMarker | null {
  if (key === null || key.length < CONTROL_RECORD_KEY_SIZE || key.readInt16BE(0) < 0) return null
  const type = key.readInt16BE(2)
  if (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) return null
  if (value === null || value.length < END_TXN_MARKER_VALUE_SIZE || value.readInt16BE(0) < 0) return null
  return { type: type === ControlRecordType.ABORT ? 'ABORT' : 'COMMIT', coordinatorEpoch: value.readInt32BE(2) }
}

/**
 * The transaction marker of the control batch at `buf[at..]` (the header and its first record's
 * start must be there, `CONTROL_TYPE_PREFIX_BYTES`), or null when the batch is no control batch,
 * is compressed, empty, holds another control type, or its first record is unreadable (Kafka: an
 * empty control batch is no marker).
 */
export function readEndTxnMarker(buf: Buffer, at: number): EndTxnMarker | null {
  const attributes = buf.readInt16BE(at + ATTRIBUTES_OFFSET)
  if ((attributes & CONTROL_FLAG_MASK) === 0 || (attributes & COMPRESSION_CODEC_MASK) !== 0) return null
  if (buf.readInt32BE(at + RECORDS_COUNT_OFFSET) < 1) return null
  const end = Math.min(buf.length, at + LOG_OVERHEAD + buf.readInt32BE(at + LENGTH_OFFSET))
  try {
    const c = new Cursor(buf, at + RECORDS_OFFSET, end)
    readVarint(c) // record length
    c.pos += 1 // attributes
    readVarlong(c) // timestamp delta
    readVarint(c) // offset delta
    const key = slice(buf, c, readVarint(c), end)
    const value = slice(buf, c, readVarint(c), end)
    return decodeEndTransactionMarker(key, value)
  } catch {
    return null
  }
}

/** The `length` bytes at the cursor (null for -1), the cursor moved past them; throws past `end`. */
function slice(buf: Buffer, c: Cursor, length: number, end: number): Buffer | null {
  if (length < 0) return null
  if (c.pos + length > end) throw new RangeError('control record past its batch')
  const bytes = buf.subarray(c.pos, c.pos + length)
  c.pos += length
  return bytes
}

/** Bytes of a control batch enough to read its marker: the header and a marker record. */
export const CONTROL_TYPE_PREFIX_BYTES = RECORDS_OFFSET + 40
