/**
 * A record of the group coordinator's log (`__consumer_offsets`) for the groups of KIP-848 and
 * KIP-932 (Kafka's `CoordinatorRecord`), framed as Kafka's `CoordinatorRecordSerde` frames it,
 * with the codecs generated from the group-coordinator jar's schemas
 * (ts/protocol/messages/coordinator):
 *
 *   key    int16 record type (the key schema's apiKey), then the key struct at version 0
 *   value  int16 version (0), then the value struct at version 0; null: a tombstone of its key
 *
 * The record types are listed in the modules that write them (./consumer/consumer-group-records.ts,
 * ./share/share-group-records.ts).
 */
import type { MessageCodec } from '../protocol/message-codec.js'
import { Reader } from '../protocol/reader.js'
import { Writer } from '../protocol/writer.js'

export interface CoordinatorRecord {
  key: Buffer
  /** null: a tombstone. */
  value: Buffer | null
}

/** A record's key: its type, then `key`. */
export function encodeKey<K>(codec: MessageCodec<K>, key: K): Buffer {
  const w = new Writer(64).int16(codec.apiKey)
  codec.write(w, 0, key)
  return Buffer.from(w.finish())
}

/** A record's value: version 0, then `value`. */
export function encodeValue<V>(codec: MessageCodec<V>, value: V): Buffer {
  const w = new Writer(128).int16(0)
  codec.write(w, 0, value)
  return Buffer.from(w.finish())
}

/** The record type of a key (its first int16); -1 when too short to have one. */
export function recordTypeOf(key: Buffer): number {
  return key.length >= 2 ? key.readInt16BE(0) : -1
}

/** A reader of the key struct (past the record type). */
export function keyReader(key: Buffer): Reader {
  return new Reader(key.subarray(2))
}

/** A reader of the value struct (past the version). */
export function valueReader(value: Buffer): Reader {
  return new Reader(value.subarray(2))
}
