/**
 * What the generated codecs (ts/protocol/messages, written by scripts/protocol/generate.mjs from
 * Kafka's message schemas) share: the codec and ApiKey descriptions, the typed seam for `records`
 * fields, and the few checks every generated reader and writer makes.
 *
 * Conventions of the generated code, as Kafka's MessageDataGenerator:
 * - Every field is a property, present in every version: a field a version lacks decodes to its
 *   default, and so does a tagged field that is not on the wire.
 * - Encoding a version that lacks a field drops it when the schema marks it ignorable and throws
 *   UnsupportedVersionError when it does not and the value is not the default. A tagged field is
 *   written only when its value is not the default.
 * - int64 is bigint, uuid a 16-byte Buffer, bytes and records views into the input (no copy).
 * - Tags the version does not define, or the codec does not know, are skipped when reading and
 *   never written.
 * - Every fault of the bytes read is a ProtocolError.
 */
import { ProtocolError } from './protocol-error.js'
import type { Reader } from './reader.js'
import { UnsupportedVersionError } from './unsupported-version-error.js'
import { Writer } from './writer.js'

export { UnsupportedVersionError }

/** The kinds of Kafka message schema. */
export type MessageType = 'request' | 'response' | 'header' | 'data' | 'coordinator-key' | 'coordinator-value'

/** A generated codec of one message (all its versions). */
export interface MessageCodec<T> {
  /** Kafka's name of the message, e.g. "FetchRequest". */
  readonly name: string
  readonly type: MessageType
  /** The ApiKey of a request or response, the record type of a coordinator record, else -1. */
  readonly apiKey: number
  readonly lowestVersion: number
  readonly highestVersion: number
  /** The first flexible version, or Infinity when none is. */
  readonly flexibleFrom: number
  read(r: Reader, version: number): T
  write(w: Writer, version: number, value: T): void
  /** A new message with every field at its default. */
  defaults(): T
}

/** An ApiKey as Kafka's ApiMessageType describes it: its two messages and their versions. */
export interface ApiMessageType<Req = unknown, Res = unknown> {
  readonly apiKey: number
  /** "Fetch", "Produce", ... */
  readonly name: string
  readonly lowestVersion: number
  readonly highestVersion: number
  readonly latestVersionUnstable: boolean
  /** The listeners that accept it: "broker", "controller", "zkBroker". */
  readonly listeners: readonly string[]
  readonly request: MessageCodec<Req>
  readonly response: MessageCodec<Res>
  requestHeaderVersion(version: number): number
  responseHeaderVersion(version: number): number
}

/**
 * The seam of a `records` field (Produce's and Fetch's record batches): how a writer sizes and
 * writes records it holds in whatever form (a Buffer, a range of a segment file). `sizeOf`
 * returns -1 for null records; `write` is called after the length prefix, for non-null records,
 * and writes them into `w` or remembers where they go. Readers always give a view of the input.
 */
export interface RecordsWriter<R> {
  sizeOf(records: R): number
  write(w: Writer, records: R, size: number): void
}

/** Records held as Buffers, copied into the writer. */
export const BUFFER_RECORDS: RecordsWriter<Buffer | null> = {
  sizeOf: (records) => (records === null ? -1 : records.length),
  write: (w, records) => {
    if (records !== null) w.raw(records)
  },
}

/** The all-zero uuid: Kafka's default and "no topic id". Shared; never write into it. */
export const ZERO_UUID: Buffer = Buffer.alloc(16)

/** The default of a bytes field. Shared and empty. */
export const EMPTY_BYTES: Buffer = Buffer.alloc(0)

/** A uuid field's value equals `other` (the default). */
export function uuidEquals(a: Buffer, b: Buffer): boolean {
  return a.equals(b)
}

/** The byte counts of bytes, or null. */
export function bytesEqual(a: Buffer | null, b: Buffer | null): boolean {
  return a === b || (a !== null && b !== null && a.equals(b))
}

/**
 * The length of an array, bytes or string of the classic (int32) or compact (varint + 1) form;
 * -1 for null. An array's count is checked against the bytes left (every element takes at least
 * one byte), so a lying count cannot make us allocate.
 */
export function readArrayLength(r: Reader, flexible: boolean): number {
  const n = flexible ? r.unsignedVarint() - 1 : r.int32()
  if (n > r.remaining) throw new ProtocolError(`array of ${n} elements in ${r.remaining} bytes`)
  return n
}

export function writeArrayLength(w: Writer, flexible: boolean, n: number): void {
  if (flexible) w.unsignedVarint(n + 1)
  else w.int32(n)
}

/** A null read where the version does not allow one. */
export function nullNotAllowed(message: string, field: string): ProtocolError {
  return new ProtocolError(`${message}: non-nullable field ${field} was serialized as null`)
}

/** Kafka's "Attempted to write a non-default X at version N". */
export function cannotCarry(message: string, version: number, field: string): UnsupportedVersionError {
  return new UnsupportedVersionError(`${message} v${version} cannot carry ${field} (a non-default value of a field the version lacks)`)
}

/** A null where the version does not allow one. */
export function cannotCarryNull(message: string, version: number, field: string): UnsupportedVersionError {
  return new UnsupportedVersionError(`${message} v${version} cannot carry a null ${field}`)
}

export function versionCheck(message: string, version: number, lowest: number, highest: number): void {
  if (!(Number.isInteger(version) && version >= lowest && version <= highest)) {
    throw new UnsupportedVersionError(`${message} v${version} is not one of v${lowest}-v${highest}`)
  }
}

/**
 * Reads the header of one tagged field (its size) and returns where its value ends; the caller
 * reads the value and calls `endTaggedField`, or skips to the end.
 */
export function taggedFieldEnd(r: Reader, tag: number): number {
  const size = r.unsignedVarint()
  if (size > r.remaining) throw new ProtocolError(`tagged field ${tag} of ${size} bytes in ${r.remaining}`)
  return r.pos + size
}

export function endTaggedField(r: Reader, tag: number, end: number): void {
  if (r.pos !== end) throw new ProtocolError(`tagged field ${tag} has ${end - r.pos} bytes past its value`)
}

/** Writes one tagged field whose value `value` wrote into a writer of its own. */
export function writeTaggedField(w: Writer, tag: number, value: Writer): void {
  const bytes = value.finish()
  w.unsignedVarint(tag).unsignedVarint(bytes.length).raw(bytes)
}

/** A writer for one tagged field's value. */
export function taggedWriter(): Writer {
  return new Writer(32)
}
