/**
 * A record of the group coordinator's log (`__consumer_offsets`) for the classic groups and the
 * groups of KIP-848 and KIP-932 (Kafka's `CoordinatorRecord`), framed as Kafka's
 * `CoordinatorRecordSerde` frames it, with the codecs generated from the group-coordinator jar's
 * schemas (ts/protocol/messages/coordinator):
 *
 *   key    int16 record type (the key schema's apiKey), then the key struct at version 0
 *   value  int16 version (0, unless the record's module says otherwise), then the value struct
 *          at that version; null: a tombstone of its key
 *
 * The record types are listed in the modules that write them (./group-metadata-records.ts,
 * ./consumer/consumer-group-records.ts, ./share/share-group-records.ts).
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

/** A record's value: its version (0 unless given), then `value` at that version. */
export function encodeValue<V>(codec: MessageCodec<V>, value: V, version = 0): Buffer {
  const w = new Writer(128).int16(version)
  codec.write(w, version, value)
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

/** The version of a value (its first int16). */
export function valueVersionOf(value: Buffer): number {
  return value.readInt16BE(0)
}

/** A reader of the value struct (past the version). */
export function valueReader(value: Buffer): Reader {
  return new Reader(value.subarray(2))
}
