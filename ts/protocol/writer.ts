/**
 * Writes Kafka protocol primitives into a growing buffer: the twin of reader.ts. `finish()`
 * returns the bytes written (a view of the internal buffer).
 *
 * A gathering writer (`{ gather: true }`, the client's requests) does not copy large byte fields
 * (record batches): `raw` of at least GATHER_MIN_BYTES keeps a reference to the caller's bytes
 * between the pieces it wrote itself, and `finishChunks()` hands the pieces out for one gathered
 * socket write. The caller must not change such bytes until they are written. Without it a
 * Produce request of six 16 KiB batches was copied into a buffer grown by doubling: the copies
 * and the allocations were a quarter of the Producer's CPU.
 */
const INITIAL = 256
/** The smallest `raw` a gathering writer keeps by reference. */
const GATHER_MIN_BYTES = 2048

export class Writer {
  private buf: Buffer
  private pos = 0
  private readonly gather: boolean
  /** A gathering writer's finished pieces, in order, and their total size. */
  private chunks: Buffer[] | null = null
  private chunkBytes = 0

  constructor(initialSize = INITIAL, options: { gather?: boolean } = {}) {
    this.buf = Buffer.allocUnsafe(initialSize)
    this.gather = options.gather === true
  }

  get length(): number {
    return this.chunkBytes + this.pos
  }

  /**
   * Reserves `n` bytes and returns their offset. It may replace `this.buf`, so callers take the
   * offset first and only then touch `this.buf` (`this.buf.writeX(v, this.ensure(n))` would
   * write into the old buffer).
   */
  private ensure(n: number): number {
    if (this.pos + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n, INITIAL))
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
    if (this.gather && bytes.length >= GATHER_MIN_BYTES) {
      // The bytes written so far and then the caller's, by reference; writing goes on in the rest of the buffer.
      this.chunks ??= []
      if (this.pos > 0) this.chunks.push(this.buf.subarray(0, this.pos))
      this.chunks.push(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length))
      this.chunkBytes += this.pos + bytes.length
      this.buf = this.buf.subarray(this.pos)
      this.pos = 0
      return this
    }
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

  /** Overwrites an int32 written earlier at `at` (a size prefix), which no gathered piece splits. */
  patchInt32(at: number, v: number): this {
    if (this.chunks === null) {
      this.buf.writeInt32BE(v, at)
      return this
    }
    for (const chunk of [...this.chunks, this.buf]) {
      if (at < chunk.length) {
        if (at + 4 > chunk.length) throw new Error(`an int32 at ${at} spans two pieces of a gathering writer`)
        chunk.writeInt32BE(v, at)
        return this
      }
      at -= chunk.length
    }
    throw new Error(`patchInt32 at ${at} past the end`)
  }

  /** The bytes written, in one buffer (a gathering writer's pieces copied together). */
  finish(): Buffer {
    if (this.chunks === null) return this.buf.subarray(0, this.pos)
    return Buffer.concat([...this.chunks, this.buf.subarray(0, this.pos)], this.length)
  }

  /** The bytes written as the pieces a gathered write takes (one piece unless gathering kept some by reference). */
  finishChunks(): Buffer[] {
    const last = this.buf.subarray(0, this.pos)
    if (this.chunks === null) return [last]
    return this.pos > 0 ? [...this.chunks, last] : [...this.chunks]
  }
}

const writeInt32 = (w: Writer, v: number): void => {
  w.int32(v)
}
