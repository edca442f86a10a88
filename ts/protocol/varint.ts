/**
 * Kafka's zig-zag varints (protobuf style: 7 bits a byte, least significant group first, high bit
 * set on every byte but the last; the value is zig-zag mapped first so small negatives stay short).
 *
 *   varint   int32, at most 5 bytes (Kafka's ByteUtils.readVarint / writeVarint)
 *   varlong  int64, at most 10 bytes (ByteUtils.readVarlong / writeVarlong)
 *
 * As in Kafka, bits that a fifth (tenth) byte carries beyond 32 (64) are dropped, and a longer
 * sequence is refused. Reads go through a `Cursor` and throw RecordError('INVALID_RECORD') on
 * truncated or overlong input; writes follow Buffer's convention of returning the next offset.
 * varlong reads and writes use plain numbers while the value is exact in a double and fall back
 * to bigint only beyond that.
 */
import { RecordError } from './record-error.js'

export const MAX_VARINT_BYTES = 5
export const MAX_VARLONG_BYTES = 10

/** 2^52: below it, values and their differences stay exact as numbers. */
const SAFE_BOUND = 4503599627370496

/** A read position in `buf[pos, end)`; `end` never exceeds `buf.length`, so reads checked against `end` are in range. */
export class Cursor {
  buf: Buffer
  pos: number
  end: number

  constructor(buf: Buffer, pos = 0, end = buf.length) {
    this.buf = buf
    this.pos = pos
    this.end = end
  }

  get remaining(): number {
    return this.end - this.pos
  }
}

function truncated(what: string): RecordError {
  return new RecordError('INVALID_RECORD', `truncated ${what}`)
}

function overlong(what: string): RecordError {
  return new RecordError('INVALID_RECORD', `${what} is too long (more than ${what === 'varint' ? MAX_VARINT_BYTES : MAX_VARLONG_BYTES} bytes)`)
}

/** Reads a zig-zag varint (int32). */
export function readVarint(c: Cursor): number {
  const buf = c.buf
  const end = c.end
  let pos = c.pos
  if (pos >= end) throw truncated('varint')
  let b = buf[pos++]!
  if (b < 0x80) {
    c.pos = pos
    return (b >>> 1) ^ -(b & 1)
  }
  let raw = b & 0x7f
  for (let shift = 7; ; shift += 7) {
    if (pos >= end) throw truncated('varint')
    b = buf[pos++]!
    raw |= (b & 0x7f) << shift
    if (b < 0x80) break
    if (shift === 28) throw overlong('varint')
  }
  c.pos = pos
  return (raw >>> 1) ^ -(raw & 1)
}

/** Reads an unsigned (not zig-zag) varint of up to 32 bits. Snappy's length preamble is one. */
export function readUnsignedVarint(c: Cursor): number {
  const buf = c.buf
  let pos = c.pos
  let raw = 0
  for (let shift = 0; ; shift += 7) {
    if (pos >= c.end) throw truncated('varint')
    const b = buf[pos++]!
    raw |= (b & 0x7f) << shift
    if (b < 0x80) break
    if (shift === 28) throw overlong('varint')
  }
  c.pos = pos
  return raw >>> 0
}

/**
 * Reads a zig-zag varlong as a number: exact whenever the result is a safe integer
 * (`Number.isSafeInteger`); a value of magnitude 2^53 or more comes back rounded and not safe,
 * and the caller who needs it exactly reads it again with `readVarlong`.
 */
export function readVarlongNumber(c: Cursor): number {
  const buf = c.buf
  const end = c.end
  let pos = c.pos
  if (pos >= end) throw truncated('varlong')
  let b = buf[pos++]!
  if (b < 0x80) {
    c.pos = pos
    return (b >>> 1) ^ -(b & 1)
  }
  // Up to 7 bytes accumulate exactly (49 bits); further ones only scale.
  let u = b & 0x7f
  let mul = 128
  let n = 1
  for (;;) {
    if (pos >= end) throw truncated('varlong')
    b = buf[pos++]!
    n++
    u += (b & 0x7f) * mul
    if (b < 0x80) break
    if (n === MAX_VARLONG_BYTES) throw overlong('varlong')
    mul *= 128
  }
  c.pos = pos
  if (n <= 7) return u % 2 === 0 ? u / 2 : -(u + 1) / 2
  // Beyond 49 bits: let bigint do the 64-bit wrap and zig-zag, then round.
  c.pos -= n
  return Number(readVarlong(c))
}

/** Reads a zig-zag varlong (int64). */
export function readVarlong(c: Cursor): bigint {
  const buf = c.buf
  const end = c.end
  let pos = c.pos
  let lo = 0 // bits 0..48, exact as a number
  let hi = 0 // bits 49.., at most 15 bits of them
  let shift = 0
  for (let n = 1; ; n++) {
    if (pos >= end) throw truncated('varlong')
    const b = buf[pos++]!
    if (shift < 49) lo += (b & 0x7f) * 2 ** shift
    else hi += (b & 0x7f) * 2 ** (shift - 49)
    if (b < 0x80) break
    if (n === MAX_VARLONG_BYTES) throw overlong('varlong')
    shift += 7
  }
  c.pos = pos
  if (hi === 0) {
    // lo < 2^49: zig-zag exactly in numbers.
    return BigInt(lo % 2 === 0 ? lo / 2 : -(lo + 1) / 2)
  }
  const u = BigInt.asUintN(64, BigInt(lo) + (BigInt(hi) << 49n))
  return (u >> 1n) ^ -(u & 1n)
}

/** Skips one varint (or varlong: `max` bytes), checking only that it ends in time. */
export function skipVarint(c: Cursor, max: number = MAX_VARINT_BYTES): void {
  const buf = c.buf
  let pos = c.pos
  const stop = Math.min(c.end, pos + max)
  while (pos < stop) {
    if (buf[pos++]! < 0x80) {
      c.pos = pos
      return
    }
  }
  throw pos >= c.end ? truncated(max === MAX_VARINT_BYTES ? 'varint' : 'varlong') : overlong(max === MAX_VARINT_BYTES ? 'varint' : 'varlong')
}

/** Writes `value` (int32) as a zig-zag varint at `offset`; returns the offset after it. */
export function writeVarint(buf: Buffer, value: number, offset: number): number {
  let u = ((value << 1) ^ (value >> 31)) >>> 0
  while (u >= 0x80) {
    buf[offset++] = (u & 0x7f) | 0x80
    u >>>= 7
  }
  buf[offset++] = u
  return offset
}

/** Writes an unsigned varint of up to 32 bits. */
export function writeUnsignedVarint(buf: Buffer, value: number, offset: number): number {
  let u = value >>> 0
  while (u >= 0x80) {
    buf[offset++] = (u & 0x7f) | 0x80
    u >>>= 7
  }
  buf[offset++] = u
  return offset
}

/** Writes `value` (int64; a number must be a safe integer) as a zig-zag varlong. */
export function writeVarlong(buf: Buffer, value: bigint | number, offset: number): number {
  if (typeof value === 'number' && value > -SAFE_BOUND && value < SAFE_BOUND) {
    // Zig-zag in numbers: 2v or -2v-1, below 2^53.
    let u = value >= 0 ? value * 2 : -value * 2 - 1
    while (u >= 0x80) {
      buf[offset++] = (u % 128) | 0x80
      u = Math.floor(u / 128)
    }
    buf[offset++] = u
    return offset
  }
  const v = BigInt.asIntN(64, BigInt(value))
  let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n))
  while (u >= 0x80n) {
    buf[offset++] = Number(u & 0x7fn) | 0x80
    u >>= 7n
  }
  buf[offset++] = Number(u)
  return offset
}

/** Bytes `writeVarint(value)` takes. */
export function sizeOfVarint(value: number): number {
  const u = ((value << 1) ^ (value >> 31)) >>> 0
  if (u < 0x80) return 1
  if (u < 0x4000) return 2
  if (u < 0x200000) return 3
  if (u < 0x10000000) return 4
  return 5
}

/** Bytes `writeUnsignedVarint(value)` takes. */
export function sizeOfUnsignedVarint(value: number): number {
  return sizeOfZigZagged(value >>> 0)
}

function sizeOfZigZagged(u: number): number {
  let n = 1
  while (u >= 0x80) {
    u = Math.floor(u / 128)
    n++
  }
  return n
}

/** Bytes `writeVarlong(value)` takes. */
export function sizeOfVarlong(value: bigint | number): number {
  if (typeof value === 'number' && value > -SAFE_BOUND && value < SAFE_BOUND) {
    return sizeOfZigZagged(value >= 0 ? value * 2 : -value * 2 - 1)
  }
  const v = BigInt.asIntN(64, BigInt(value))
  let u = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n))
  let n = 1
  while (u >= 0x80n) {
    u >>= 7n
    n++
  }
  return n
}
