/**
 * Control records (Kafka's `ControlRecordType` and `EndTransactionMarker`): the one record of a
 * control batch (attributes transactional + control), which a transaction coordinator appends to
 * every partition of a transaction when it ends it. Big-endian:
 *
 *   key    version int16 = 0 | type int16 (0 ABORT, 1 COMMIT)
 *   value  version int16 = 0 | coordinatorEpoch int32
 *
 * The batch carries the producer id and epoch of the transaction, no sequence (-1). Only the
 * coordinator writes them (AppendOrigin COORDINATOR); clients may not.
 */
import { buildBatch } from './batch-builder.js'
import { Reader } from './reader.js'
import { Writer } from './writer.js'

export const ControlRecordType = { ABORT: 0, COMMIT: 1 } as const
export type ControlRecordTypeId = (typeof ControlRecordType)[keyof typeof ControlRecordType]

const CONTROL_KEY_VERSION = 0
const END_TXN_MARKER_VERSION = 0

export interface EndTransactionMarker {
  type: ControlRecordTypeId
  coordinatorEpoch: number
}

export function encodeControlKey(type: number): Buffer {
  return new Writer(4).int16(CONTROL_KEY_VERSION).int16(type).finish()
}

/** The control type of a control record's key; -1 when it is not one this code knows. */
export function controlTypeOf(key: Buffer | null): number {
  if (key === null || key.length < 4) return -1
  return key.readInt16BE(2)
}

/** The end transaction marker of a control record, or null for another control record. */
export function decodeEndTransactionMarker(key: Buffer | null, value: Buffer | null): EndTransactionMarker | null {
  const type = controlTypeOf(key)
  if ((type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) || value === null || value.length < 6) return null
  const r = new Reader(value)
  r.int16()
  return { type, coordinatorEpoch: r.int32() }
}

/** The control batch of one end transaction marker. */
export function buildEndTxnMarkerBatch(producerId: bigint, producerEpoch: number, marker: EndTransactionMarker, nowMs = Date.now()): Buffer {
  const value = new Writer(6).int16(END_TXN_MARKER_VERSION).int32(marker.coordinatorEpoch).finish()
  return buildBatch([{ key: encodeControlKey(marker.type), value, timestamp: BigInt(nowMs) }], {
    producerId,
    producerEpoch,
    baseSequence: -1,
    isTransactional: true,
    isControl: true,
    nowMs,
  })
}
