/**
 * Writes Kafka protocol primitives into a growing buffer: the twin of reader.ts. `finish()`
 * returns the bytes written (a view of the internal buffer).
 */
const INITIAL = 256

export class Writer {
  private buf: Buffer
  private pos = 0

  constructor(initialSize = INITIAL) {
    this.buf = Buffer.allocUnsafe(initialSize)
  }

  get length(): number {
    return this.pos
  }

  /**
   * Reserves `n` bytes and returns their offset. It may replace `this.buf`, so callers take the
   * offset first and only then touch `this.buf` (`this.buf.writeX(v, this.ensure(n))` would
   * write into the old buffer).
   */
  private ensure(n: number): number {
    if (this.pos + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n))
      this.buf.copy(next, 0, 0, this.pos)
      this.buf = next
    }
    const at = this.pos
    this.pos += n
    return at
  }

  int8(v: number): this {
    const at = this.ensure(1)
    this.buf.writeInt8(v, at)
    return this
  }

  bool(v: boolean): this {
    const at = this.ensure(1)
    this.buf[at] = v ? 1 : 0
    return this
  }

  int16(v: number): this {
    const at = this.ensure(2)
    this.buf.writeInt16BE(v, at)
    return this
  }

  uint16(v: number): this {
    const at = this.ensure(2)
    this.buf.writeUInt16BE(v, at)
    return this
  }

  int32(v: number): this {
    const at = this.ensure(4)
    this.buf.writeInt32BE(v, at)
    return this
  }

  uint32(v: number): this {
    const at = this.ensure(4)
    this.buf.writeUInt32BE(v, at)
    return this
  }

  int64(v: bigint): this {
    const at = this.ensure(8)
    this.buf.writeBigInt64BE(v, at)
    return this
  }

  float64(v: number): this {
    const at = this.ensure(8)
    this.buf.writeDoubleBE(v, at)
    return this
  }

  uuid(v: Buffer): this {
    if (v.length !== 16) throw new Error(`a uuid has 16 bytes, not ${v.length}`)
    const at = this.ensure(16)
    v.copy(this.buf, at)
    return this
  }

  unsignedVarint(v: number): this {
    let value = v >>> 0
    while (value >= 0x80) {
      const at = this.ensure(1)
      this.buf[at] = (value & 0x7f) | 0x80
      value >>>= 7
    }
    const at = this.ensure(1)
    this.buf[at] = value
    return this
  }

  varint(v: number): this {
    return this.unsignedVarint(((v << 1) ^ (v >> 31)) >>> 0)
  }

  raw(bytes: Uint8Array): this {
    const at = this.ensure(bytes.length)
    this.buf.set(bytes, at)
    return this
  }

  string(s: string): this {
    return this.nullableString(s)
  }

  nullableString(s: string | null): this {
    if (s === null) return this.int16(-1)
    const len = Buffer.byteLength(s)
    this.int16(len)
    const at = this.ensure(len)
    this.buf.write(s, at, 'utf8')
    return this
  }

  compactString(s: string): this {
    return this.compactNullableString(s)
  }

  compactNullableString(s: string | null): this {
    if (s === null) return this.unsignedVarint(0)
    const len = Buffer.byteLength(s)
    this.unsignedVarint(len + 1)
    const at = this.ensure(len)
    this.buf.write(s, at, 'utf8')
    return this
  }

  bytes(b: Uint8Array): this {
    return this.nullableBytes(b)
  }

  nullableBytes(b: Uint8Array | null): this {
    if (b === null) return this.int32(-1)
    this.int32(b.length)
    return this.raw(b)
  }

  compactBytes(b: Uint8Array): this {
    return this.compactNullableBytes(b)
  }

  compactNullableBytes(b: Uint8Array | null): this {
    if (b === null) return this.unsignedVarint(0)
    this.unsignedVarint(b.length + 1)
    return this.raw(b)
  }

  array<T>(items: readonly T[], item: (w: Writer, v: T) => void): this {
    return this.nullableArray(items, item)
  }

  nullableArray<T>(items: readonly T[] | null, item: (w: Writer, v: T) => void): this {
    if (items === null) return this.int32(-1)
    this.int32(items.length)
    for (const v of items) item(this, v)
    return this
  }

  compactArray<T>(items: readonly T[], item: (w: Writer, v: T) => void): this {
    return this.compactNullableArray(items, item)
  }

  compactNullableArray<T>(items: readonly T[] | null, item: (w: Writer, v: T) => void): this {
    if (items === null) return this.unsignedVarint(0)
    this.unsignedVarint(items.length + 1)
    for (const v of items) item(this, v)
    return this
  }

  /** Tagged fields, sorted by tag; `[]` writes the single zero byte of "none". */
  taggedFields(fields: ReadonlyArray<{ tag: number; data: Uint8Array }> = []): this {
    this.unsignedVarint(fields.length)
    for (const f of [...fields].sort((a, b) => a.tag - b.tag)) {
      this.unsignedVarint(f.tag)
      this.unsignedVarint(f.data.length)
      this.raw(f.data)
    }
    return this
  }

  // Version-aware forms for the API codecs: the compact encoding when `flexible`, the classic
  // one otherwise.

  flexString(flexible: boolean, s: string): this {
    return flexible ? this.compactString(s) : this.string(s)
  }

  flexNullableString(flexible: boolean, s: string | null): this {
    return flexible ? this.compactNullableString(s) : this.nullableString(s)
  }

  flexArray<T>(flexible: boolean, items: readonly T[], item: (w: Writer, v: T) => void): this {
    return flexible ? this.compactArray(items, item) : this.array(items, item)
  }

  flexNullableArray<T>(flexible: boolean, items: readonly T[] | null, item: (w: Writer, v: T) => void): this {
    return flexible ? this.compactNullableArray(items, item) : this.nullableArray(items, item)
  }

  /**
   * An array of structures, each ended by its (no) tagged fields when `flexible`. A structure with
   * tagged fields the codec models writes them itself, in a plain `flexArray`.
   */
  flexStructArray<T>(flexible: boolean, items: readonly T[], item: (w: Writer, v: T) => void): this {
    return this.flexArray(flexible, items, (w, v) => {
      item(w, v)
      w.endStruct(flexible)
    })
  }

  flexNullableStructArray<T>(flexible: boolean, items: readonly T[] | null, item: (w: Writer, v: T) => void): this {
    return this.flexNullableArray(flexible, items, (w, v) => {
      item(w, v)
      w.endStruct(flexible)
    })
  }

  flexBytes(flexible: boolean, b: Uint8Array): this {
    return flexible ? this.compactBytes(b) : this.bytes(b)
  }

  /** Nullable bytes, the form of a records field. */
  flexNullableBytes(flexible: boolean, b: Uint8Array | null): this {
    return flexible ? this.compactNullableBytes(b) : this.nullableBytes(b)
  }

  /** The length prefix of nullable bytes of `size` (-1 null) whose bytes the caller writes. */
  flexNullableBytesLength(flexible: boolean, size: number): this {
    return flexible ? this.unsignedVarint(size + 1) : this.int32(size)
  }

  /** An array of int32 (broker ids, partition indexes). */
  flexInt32Array(flexible: boolean, items: readonly number[]): this {
    return this.flexArray(flexible, items, writeInt32)
  }

  /** An array of strings (group ids, topic names, config keys). */
  flexStringArray(flexible: boolean, items: readonly string[]): this {
    return this.flexArray(flexible, items, (w, s) => w.flexString(flexible, s))
  }

  flexNullableStringArray(flexible: boolean, items: readonly string[] | null): this {
    return this.flexNullableArray(flexible, items, (w, s) => w.flexString(flexible, s))
  }

  /** The end of a structure: no tagged fields when `flexible`, nothing otherwise. */
  endStruct(flexible: boolean): this {
    return flexible ? this.taggedFields() : this
  }

  /**
   * The tagged fields of a flexible structure from `[tag, write]` pairs, `write` null for a field
   * at its default (not written). Each value is written apart to learn its size.
   */
  writeTaggedFields(fields: ReadonlyArray<readonly [number, ((w: Writer) => void) | null]>): this {
    const present: Array<{ tag: number; data: Uint8Array }> = []
    for (const [tag, write] of fields) {
      if (write === null) continue
      const value = new Writer(16)
      write(value)
      present.push({ tag, data: value.finish() })
    }
    return this.taggedFields(present)
  }

  /** Overwrites an int32 written earlier at `at` (a size prefix). */
  patchInt32(at: number, v: number): this {
    this.buf.writeInt32BE(v, at)
    return this
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.pos)
  }
}

const writeInt32 = (w: Writer, v: number): void => {
  w.int32(v)
}
