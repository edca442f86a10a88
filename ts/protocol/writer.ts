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
    this.buf.writeInt8(v, this.ensure(1))
    return this
  }

  bool(v: boolean): this {
    this.buf[this.ensure(1)] = v ? 1 : 0
    return this
  }

  int16(v: number): this {
    this.buf.writeInt16BE(v, this.ensure(2))
    return this
  }

  uint16(v: number): this {
    this.buf.writeUInt16BE(v, this.ensure(2))
    return this
  }

  int32(v: number): this {
    this.buf.writeInt32BE(v, this.ensure(4))
    return this
  }

  uint32(v: number): this {
    this.buf.writeUInt32BE(v, this.ensure(4))
    return this
  }

  int64(v: bigint): this {
    this.buf.writeBigInt64BE(v, this.ensure(8))
    return this
  }

  float64(v: number): this {
    this.buf.writeDoubleBE(v, this.ensure(8))
    return this
  }

  uuid(v: Buffer): this {
    if (v.length !== 16) throw new Error(`a uuid has 16 bytes, not ${v.length}`)
    v.copy(this.buf, this.ensure(16))
    return this
  }

  unsignedVarint(v: number): this {
    let value = v >>> 0
    while (value >= 0x80) {
      this.buf[this.ensure(1)] = (value & 0x7f) | 0x80
      value >>>= 7
    }
    this.buf[this.ensure(1)] = value
    return this
  }

  varint(v: number): this {
    return this.unsignedVarint(((v << 1) ^ (v >> 31)) >>> 0)
  }

  raw(bytes: Uint8Array): this {
    this.buf.set(bytes, this.ensure(bytes.length))
    return this
  }

  string(s: string): this {
    return this.nullableString(s)
  }

  nullableString(s: string | null): this {
    if (s === null) return this.int16(-1)
    const len = Buffer.byteLength(s)
    this.int16(len)
    this.buf.write(s, this.ensure(len), 'utf8')
    return this
  }

  compactString(s: string): this {
    return this.compactNullableString(s)
  }

  compactNullableString(s: string | null): this {
    if (s === null) return this.unsignedVarint(0)
    const len = Buffer.byteLength(s)
    this.unsignedVarint(len + 1)
    this.buf.write(s, this.ensure(len), 'utf8')
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

  /** Overwrites an int32 written earlier at `at` (a size prefix). */
  patchInt32(at: number, v: number): this {
    this.buf.writeInt32BE(v, at)
    return this
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.pos)
  }
}
