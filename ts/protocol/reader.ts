/**
 * Reads Kafka protocol primitives from a buffer (big-endian fixed-width types, unsigned varints
 * for the compact types of flexible versions, tagged fields). Every read is bounds-checked and
 * throws a ProtocolError on input that ends early or lies about lengths.
 */
import { ProtocolError } from './protocol-error.js'

export interface TaggedField {
  tag: number
  data: Buffer
}

export class Reader {
  readonly buf: Buffer
  pos: number
  readonly end: number

  constructor(buf: Buffer, pos = 0, end = buf.length) {
    this.buf = buf
    this.pos = pos
    this.end = end
  }

  get remaining(): number {
    return this.end - this.pos
  }

  private need(n: number, what: string): number {
    if (n < 0 || this.pos + n > this.end) {
      throw new ProtocolError(`truncated ${what}: needs ${n} bytes, ${this.end - this.pos} left at ${this.pos}`)
    }
    const at = this.pos
    this.pos += n
    return at
  }

  int8(): number {
    return this.buf.readInt8(this.need(1, 'int8'))
  }

  bool(): boolean {
    return this.buf[this.need(1, 'boolean')] !== 0
  }

  int16(): number {
    return this.buf.readInt16BE(this.need(2, 'int16'))
  }

  uint16(): number {
    return this.buf.readUInt16BE(this.need(2, 'uint16'))
  }

  int32(): number {
    return this.buf.readInt32BE(this.need(4, 'int32'))
  }

  uint32(): number {
    return this.buf.readUInt32BE(this.need(4, 'uint32'))
  }

  int64(): bigint {
    return this.buf.readBigInt64BE(this.need(8, 'int64'))
  }

  float64(): number {
    return this.buf.readDoubleBE(this.need(8, 'float64'))
  }

  uuid(): Buffer {
    const at = this.need(16, 'uuid')
    return Buffer.from(this.buf.subarray(at, at + 16))
  }

  unsignedVarint(): number {
    let value = 0
    for (let shift = 0; shift < 35; shift += 7) {
      const b = this.buf[this.need(1, 'varint')]!
      value += (b & 0x7f) * 2 ** shift
      if ((b & 0x80) === 0) {
        if (value > 0xffffffff) throw new ProtocolError('unsigned varint larger than 32 bits')
        return value
      }
    }
    throw new ProtocolError('unsigned varint longer than 5 bytes')
  }

  varint(): number {
    const raw = this.unsignedVarint()
    return (raw >>> 1) ^ -(raw & 1)
  }

  // Strings: int16 length (-1 null) or, flexible, unsigned varint length + 1 (0 null).

  string(): string {
    const s = this.nullableString()
    if (s === null) throw new ProtocolError('null where a string is required')
    return s
  }

  nullableString(): string | null {
    const len = this.int16()
    if (len < 0) return null
    const at = this.need(len, 'string')
    return this.buf.toString('utf8', at, at + len)
  }

  compactString(): string {
    const s = this.compactNullableString()
    if (s === null) throw new ProtocolError('null where a string is required')
    return s
  }

  compactNullableString(): string | null {
    const len = this.unsignedVarint() - 1
    if (len < 0) return null
    const at = this.need(len, 'string')
    return this.buf.toString('utf8', at, at + len)
  }

  // Bytes: int32 length (-1 null) or, flexible, unsigned varint length + 1 (0 null). The
  // result is a view into the request buffer (no copy).

  bytes(): Buffer {
    const b = this.nullableBytes()
    if (b === null) throw new ProtocolError('null where bytes are required')
    return b
  }

  nullableBytes(): Buffer | null {
    const len = this.int32()
    if (len < 0) return null
    const at = this.need(len, 'bytes')
    return this.buf.subarray(at, at + len)
  }

  compactNullableBytes(): Buffer | null {
    const len = this.unsignedVarint() - 1
    if (len < 0) return null
    const at = this.need(len, 'bytes')
    return this.buf.subarray(at, at + len)
  }

  compactBytes(): Buffer {
    const b = this.compactNullableBytes()
    if (b === null) throw new ProtocolError('null where bytes are required')
    return b
  }

  // Arrays: int32 count (-1 null) or, flexible, unsigned varint count + 1 (0 null). Counts are
  // checked against the bytes left (every element takes at least one byte), so a lying count
  // cannot make us allocate.

  array<T>(item: (r: Reader) => T): T[] {
    const a = this.nullableArray(item)
    if (a === null) throw new ProtocolError('null where an array is required')
    return a
  }

  nullableArray<T>(item: (r: Reader) => T): T[] | null {
    return this.readArray(this.int32(), item)
  }

  compactArray<T>(item: (r: Reader) => T): T[] {
    const a = this.compactNullableArray(item)
    if (a === null) throw new ProtocolError('null where an array is required')
    return a
  }

  compactNullableArray<T>(item: (r: Reader) => T): T[] | null {
    return this.readArray(this.unsignedVarint() - 1, item)
  }

  private readArray<T>(count: number, item: (r: Reader) => T): T[] | null {
    if (count < 0) return null
    if (count > this.remaining) throw new ProtocolError(`array of ${count} elements in ${this.remaining} bytes`)
    const out = new Array<T>(count)
    for (let i = 0; i < count; i++) out[i] = item(this)
    return out
  }

  /** The tagged fields of a flexible structure; unknown tags are kept as raw bytes. */
  taggedFields(): TaggedField[] {
    const count = this.unsignedVarint()
    if (count > this.remaining) throw new ProtocolError(`${count} tagged fields in ${this.remaining} bytes`)
    const fields: TaggedField[] = []
    let last = -1
    for (let i = 0; i < count; i++) {
      const tag = this.unsignedVarint()
      if (tag <= last) throw new ProtocolError(`tagged field ${tag} out of order`)
      last = tag
      const size = this.unsignedVarint()
      const at = this.need(size, 'tagged field')
      fields.push({ tag, data: this.buf.subarray(at, at + size) })
    }
    return fields
  }

  /** Skips the tagged fields of a flexible structure that has none we read. */
  skipTaggedFields(): void {
    this.taggedFields()
  }

  // Version-aware forms for the API codecs: the compact encoding when `flexible`, the classic
  // one otherwise.

  flexString(flexible: boolean): string {
    return flexible ? this.compactString() : this.string()
  }

  flexNullableString(flexible: boolean): string | null {
    return flexible ? this.compactNullableString() : this.nullableString()
  }

  flexArray<T>(flexible: boolean, item: (r: Reader) => T): T[] {
    return flexible ? this.compactArray(item) : this.array(item)
  }

  flexNullableArray<T>(flexible: boolean, item: (r: Reader) => T): T[] | null {
    return flexible ? this.compactNullableArray(item) : this.nullableArray(item)
  }

  /**
   * An array of structures, each ended by its tagged fields when `flexible` (skipped). A structure
   * with tagged fields the codec models reads them itself, in a plain `flexArray`.
   */
  flexStructArray<T>(flexible: boolean, item: (r: Reader) => T): T[] {
    return this.flexArray(flexible, (r) => {
      const v = item(r)
      r.endStruct(flexible)
      return v
    })
  }

  flexNullableStructArray<T>(flexible: boolean, item: (r: Reader) => T): T[] | null {
    return this.flexNullableArray(flexible, (r) => {
      const v = item(r)
      r.endStruct(flexible)
      return v
    })
  }

  flexBytes(flexible: boolean): Buffer {
    return flexible ? this.compactBytes() : this.bytes()
  }

  /** Nullable bytes, the form of a records field. */
  flexNullableBytes(flexible: boolean): Buffer | null {
    return flexible ? this.compactNullableBytes() : this.nullableBytes()
  }

  /** An array of int32 (broker ids, partition indexes). */
  flexInt32Array(flexible: boolean): number[] {
    return this.flexArray(flexible, readInt32)
  }

  /** An array of strings (group ids, topic names, config keys). */
  flexStringArray(flexible: boolean): string[] {
    return this.flexArray(flexible, (r) => r.flexString(flexible))
  }

  flexNullableStringArray(flexible: boolean): string[] | null {
    return this.flexNullableArray(flexible, (r) => r.flexString(flexible))
  }

  /** The end of a structure: its tagged fields when `flexible` (skipped), nothing otherwise. */
  endStruct(flexible: boolean): void {
    if (flexible) this.skipTaggedFields()
  }

  /**
   * The tagged fields of a flexible structure, handing each known tag's value to `read` in a
   * reader bounded to that value (which it must consume exactly); unknown tags are skipped.
   */
  readTaggedFields(read: Partial<Record<number, (r: Reader) => void>>): void {
    for (const field of this.taggedFields()) {
      const readValue = read[field.tag]
      if (readValue === undefined) continue
      const value = new Reader(field.data)
      readValue(value)
      if (value.remaining !== 0) {
        throw new ProtocolError(`tagged field ${field.tag} has ${value.remaining} bytes past its value`)
      }
    }
  }
}

const readInt32 = (r: Reader): number => r.int32()
