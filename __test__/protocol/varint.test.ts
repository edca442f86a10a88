import { describe, expect, it } from 'vitest'
import { crc32c } from '../../ts/protocol/crc32c.js'
import {
  Cursor,
  readUnsignedVarint,
  readVarint,
  readVarlong,
  readVarlongNumber,
  sizeOfUnsignedVarint,
  sizeOfVarint,
  sizeOfVarlong,
  skipVarint,
  writeUnsignedVarint,
  writeVarint,
  writeVarlong,
} from '../../ts/protocol/varint.js'
import { expectRecordError, rng } from './helpers.js'

const INT32_MIN = -2147483648
const INT32_MAX = 2147483647
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

function varint(value: number): string {
  const buf = Buffer.alloc(10)
  const end = writeVarint(buf, value, 0)
  expect(end).toBe(sizeOfVarint(value))
  return buf.subarray(0, end).toString('hex')
}

function varlong(value: bigint | number): string {
  const buf = Buffer.alloc(12)
  const end = writeVarlong(buf, value, 0)
  expect(end).toBe(sizeOfVarlong(value))
  return buf.subarray(0, end).toString('hex')
}

function cursor(hex: string): Cursor {
  return new Cursor(Buffer.from(hex, 'hex'))
}

describe('varint (zig-zag int32)', () => {
  it('encodes as Kafka does', () => {
    expect(varint(0)).toBe('00')
    expect(varint(-1)).toBe('01')
    expect(varint(1)).toBe('02')
    expect(varint(63)).toBe('7e')
    expect(varint(-64)).toBe('7f')
    expect(varint(64)).toBe('8001')
    expect(varint(300)).toBe('d804')
    expect(varint(INT32_MAX)).toBe('feffffff0f')
    expect(varint(INT32_MIN)).toBe('ffffffff0f')
  })

  it('round-trips edge values and reports sizes', () => {
    for (const v of [0, -1, 1, 63, -64, 64, -65, 8191, 8192, -8193, 1 << 20, -(1 << 27), INT32_MAX, INT32_MIN]) {
      const c = cursor(varint(v))
      expect(readVarint(c)).toBe(v)
      expect(c.pos).toBe(sizeOfVarint(v))
    }
    expect([0, -64, 64, -8192, 8192, INT32_MIN].map(sizeOfVarint)).toEqual([1, 1, 2, 2, 3, 5])
  })

  it('reads from the cursor position and within its end', () => {
    const c = new Cursor(Buffer.from('ff0204ff', 'hex'), 1, 3)
    expect(readVarint(c)).toBe(1)
    expect(readVarint(c)).toBe(2)
    expectRecordError(() => readVarint(c), 'INVALID_RECORD', /truncated/)
  })

  it('refuses truncated and overlong input with INVALID_RECORD', () => {
    expectRecordError(() => readVarint(cursor('')), 'INVALID_RECORD', /truncated/)
    expectRecordError(() => readVarint(cursor('80')), 'INVALID_RECORD', /truncated/)
    expectRecordError(() => readVarint(cursor('ffffffff')), 'INVALID_RECORD', /truncated/)
    expectRecordError(() => readVarint(cursor('ffffffff8f01')), 'INVALID_RECORD', /too long/)
    expectRecordError(() => skipVarint(cursor('ffffffffff01')), 'INVALID_RECORD', /too long/)
    expectRecordError(() => skipVarint(cursor('ff')), 'INVALID_RECORD', /truncated/)
  })

  it('drops bits beyond 32 in the fifth byte, as Kafka does', () => {
    // Java's readVarint shifts the fifth byte left by 28 in an int: the high bits fall off.
    expect(readVarint(cursor('feffffff7f'))).toBe(INT32_MAX)
    // A non-minimal but short enough encoding of 1 is accepted too.
    expect(readVarint(cursor('8280808000'))).toBe(1)
  })

  it('unsigned varints (snappy preamble)', () => {
    const buf = Buffer.alloc(5)
    for (const v of [0, 127, 128, 0xffff, 0xffffffff]) {
      const end = writeUnsignedVarint(buf, v, 0)
      expect(end).toBe(sizeOfUnsignedVarint(v))
      expect(readUnsignedVarint(new Cursor(buf, 0, end))).toBe(v)
    }
  })
})

describe('varlong (zig-zag int64)', () => {
  it('encodes as Kafka does', () => {
    expect(varlong(0)).toBe('00')
    expect(varlong(-1n)).toBe('01')
    expect(varlong(1)).toBe('02')
    expect(varlong(INT64_MAX)).toBe('feffffffffffffffff01')
    expect(varlong(INT64_MIN)).toBe('ffffffffffffffffff01')
    expect(varlong(1700000000000)).toBe(varlong(1700000000000n))
    expect(varlong(-1700000000000)).toBe(varlong(-1700000000000n))
    expect(varlong(Number.MAX_SAFE_INTEGER)).toBe(varlong(BigInt(Number.MAX_SAFE_INTEGER)))
    expect(varlong(Number.MIN_SAFE_INTEGER)).toBe(varlong(BigInt(Number.MIN_SAFE_INTEGER)))
  })

  it('round-trips extremes as bigint and as numbers where exact', () => {
    const values = [0n, -1n, 1n, 63n, -64n, 64n, 2n ** 31n, -(2n ** 31n) - 1n, 2n ** 48n, -(2n ** 48n), 2n ** 52n, 2n ** 53n - 1n, -(2n ** 53n) + 1n, 2n ** 53n, 2n ** 62n, INT64_MAX, INT64_MIN]
    for (const v of values) {
      const hex = varlong(v)
      const c = cursor(hex)
      expect(readVarlong(c)).toBe(v)
      expect(c.pos).toBe(hex.length / 2)
      const n = cursor(hex)
      const asNumber = readVarlongNumber(n)
      expect(n.pos).toBe(hex.length / 2)
      if (v >= -(2n ** 53n) + 1n && v <= 2n ** 53n - 1n) {
        expect(Number.isSafeInteger(asNumber)).toBe(true)
        expect(asNumber).toBe(Number(v))
      } else {
        expect(Number.isSafeInteger(asNumber)).toBe(false)
      }
    }
    expect(sizeOfVarlong(INT64_MIN)).toBe(10)
    expect(sizeOfVarlong(0)).toBe(1)
  })

  it('refuses truncated and overlong input with INVALID_RECORD', () => {
    expectRecordError(() => readVarlong(cursor('')), 'INVALID_RECORD', /truncated/)
    expectRecordError(() => readVarlong(cursor('ffffffffffffffffff')), 'INVALID_RECORD', /truncated/)
    expectRecordError(() => readVarlong(cursor('ffffffffffffffffffff01')), 'INVALID_RECORD', /too long/)
    expectRecordError(() => readVarlongNumber(cursor('ffffffffffffffffffff01')), 'INVALID_RECORD', /too long/)
    expectRecordError(() => readVarlongNumber(cursor('8080')), 'INVALID_RECORD', /truncated/)
  })

  it('round-trips random values', () => {
    const next = rng(7)
    const buf = Buffer.alloc(10)
    for (let i = 0; i < 2000; i++) {
      const bits = BigInt(Math.floor(next() * 64))
      const v = BigInt.asIntN(64, (BigInt(Math.floor(next() * 2 ** 32)) * BigInt(Math.floor(next() * 2 ** 32))) >> (64n - bits))
      const end = writeVarlong(buf, v, 0)
      expect(readVarlong(new Cursor(buf, 0, end))).toBe(v)
      const small = Math.floor((next() - 0.5) * 2 ** 32) | 0
      const e2 = writeVarint(buf, small, 0)
      expect(readVarint(new Cursor(buf, 0, e2))).toBe(small)
    }
  })
})

describe('crc32c', () => {
  it('has the standard check value', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283)
    expect(crc32c(Buffer.alloc(0))).toBe(0)
    expect(crc32c(Buffer.from('xx123456789yy'), 2, 11)).toBe(0xe3069283)
  })
})
