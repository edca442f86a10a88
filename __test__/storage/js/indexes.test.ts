/** OffsetIndex and TimeIndex on their own: search, trailing zeros, truncation, files. */
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { OffsetIndex } from '../../../ts/storage/js/offset-index.js'
import { TimeIndex } from '../../../ts/storage/js/time-index.js'
import { tempDir } from '../../helpers/tmp.js'

function offsetIndexBytes(entries: Array<[number, number]>, zeroSlots = 0): Buffer {
  const b = Buffer.alloc((entries.length + zeroSlots) * 8)
  entries.forEach(([r, p], i) => {
    b.writeUInt32BE(r, i * 8)
    b.writeUInt32BE(p, i * 8 + 4)
  })
  return b
}

function timeIndexBytes(entries: Array<[bigint, number]>, zeroSlots = 0): Buffer {
  const b = Buffer.alloc((entries.length + zeroSlots) * 12)
  entries.forEach(([t, r], i) => {
    b.writeBigInt64BE(t, i * 12)
    b.writeUInt32BE(r, i * 12 + 8)
  })
  return b
}

describe('OffsetIndex', () => {
  it('is created preallocated to segment.index.bytes rounded down to whole entries', () => {
    const file = join(tempDir(), 'a.index')
    const idx = OffsetIndex.create(file, 1003)
    expect(idx.maxEntries).toBe(125)
    expect(statSync(file).size).toBe(1000)
    idx.append(3, 0)
    idx.append(9, 400)
    expect(readFileSync(file).subarray(0, 16)).toEqual(
      offsetIndexBytes([
        [3, 0],
        [9, 400],
      ]),
    )
    idx.trimAndClose()
    expect(readFileSync(file)).toEqual(
      offsetIndexBytes([
        [3, 0],
        [9, 400],
      ]),
    )
  })

  it('looks up the largest entry <= the target, else position 0', () => {
    const idx = OffsetIndex.fromBytes(
      'x',
      1000,
      offsetIndexBytes([
        [5, 100],
        [10, 200],
        [20, 300],
      ]),
    )
    expect(idx.lookupPosition(0)).toBe(0)
    expect(idx.lookupPosition(4)).toBe(0)
    expect(idx.lookupPosition(5)).toBe(100)
    expect(idx.lookupPosition(19)).toBe(200)
    expect(idx.lookupPosition(20)).toBe(300)
    expect(idx.lookupPosition(1e9)).toBe(300)
    expect(idx.lookupPosition(-7)).toBe(0)
  })

  it('ends the entries at the first zero relative offset after the first entry (preallocated file)', () => {
    const idx = OffsetIndex.fromBytes(
      'x',
      1000,
      offsetIndexBytes(
        [
          [0, 0],
          [7, 300],
        ],
        10,
      ),
    )
    expect(idx.entries).toBe(2)
    expect(OffsetIndex.fromBytes('x', 1000, Buffer.alloc(80)).entries).toBe(1)
  })

  it('truncates: no entry <= target drops all, an exact entry goes, else the ones above', () => {
    const make = () =>
      OffsetIndex.fromBytes(
        'x',
        1000,
        offsetIndexBytes([
          [5, 100],
          [10, 200],
          [20, 300],
        ]),
      )
    const a = make()
    a.truncateTo(3)
    expect(a.entries).toBe(0)
    const b = make()
    b.truncateTo(10)
    expect(b.entries).toBe(1)
    const c = make()
    c.truncateTo(15)
    expect(c.entries).toBe(2)
  })

  it('keeps zeros after the entries when truncated while preallocated', () => {
    const file = join(tempDir(), 'b.index')
    const idx = OffsetIndex.create(file, 80)
    for (let i = 1; i <= 5; i++) idx.append(i * 10, i * 100)
    idx.truncateTo(30)
    const bytes = readFileSync(file)
    expect(bytes.length).toBe(80)
    expect(bytes.subarray(0, 16)).toEqual(
      offsetIndexBytes([
        [10, 100],
        [20, 200],
      ]),
    )
    expect(bytes.subarray(16).every((x) => x === 0)).toBe(true)
  })

  it('is full at maxEntries', () => {
    const idx = OffsetIndex.create(join(tempDir(), 'c.index'), 16)
    idx.append(1, 1)
    expect(idx.isFull()).toBe(false)
    idx.append(2, 2)
    expect(idx.isFull()).toBe(true)
  })

  it('sanity check refuses partial entries, non-increasing offsets and positions past the log', () => {
    expect(
      OffsetIndex.sanityCheck(
        offsetIndexBytes([
          [1, 0],
          [2, 50],
        ]),
        100,
      ),
    ).toBeNull()
    expect(OffsetIndex.sanityCheck(Buffer.alloc(12), 100)).toMatch(/multiple of 8/)
    expect(
      OffsetIndex.sanityCheck(
        offsetIndexBytes([
          [5, 0],
          [3, 50],
        ]),
        100,
      ),
    ).toMatch(/not increasing/)
    expect(
      OffsetIndex.sanityCheck(
        offsetIndexBytes([
          [1, 0],
          [2, 500],
        ]),
        100,
      ),
    ).toMatch(/past the log/)
  })
})

describe('TimeIndex', () => {
  it('appends only growing timestamps and keeps one slot for the inactive-segment entry', () => {
    const file = join(tempDir(), 'a.timeindex')
    const idx = TimeIndex.create(file, 36)
    expect(statSync(file).size).toBe(36)
    expect(idx.maxEntries).toBe(3)
    idx.maybeAppend(-1n, 0)
    expect(idx.entries).toBe(0)
    idx.maybeAppend(100n, 1)
    idx.maybeAppend(100n, 2)
    idx.maybeAppend(90n, 3)
    expect(idx.entries).toBe(1)
    idx.maybeAppend(200n, 4)
    expect(idx.entries).toBe(2)
    expect(idx.isFull()).toBe(true)
    idx.maybeAppend(300n, 5)
    expect(idx.entries).toBe(2)
    idx.maybeAppend(300n, 5, true)
    expect(idx.entries).toBe(3)
    idx.trimAndClose()
    expect(readFileSync(file)).toEqual(
      timeIndexBytes([
        [100n, 1],
        [200n, 4],
        [300n, 5],
      ]),
    )
  })

  it('looks up the largest timestamp <= the target, else none', () => {
    const idx = TimeIndex.fromBytes(
      'x',
      1200,
      timeIndexBytes([
        [100n, 1],
        [200n, 4],
        [300n, 9],
      ]),
    )
    expect(idx.slotFor(50n)).toBe(-1)
    expect(idx.slotFor(100n)).toBe(0)
    expect(idx.slotFor(299n)).toBe(1)
    expect(idx.slotFor(1000n)).toBe(2)
  })

  it('ends the entries at the first all-zero slot after the first entry', () => {
    expect(
      TimeIndex.fromBytes(
        'x',
        1200,
        timeIndexBytes(
          [
            [100n, 1],
            [200n, 4],
          ],
          5,
        ),
      ).entries,
    ).toBe(2)
    // a zero timestamp with a non-zero offset is an entry
    expect(
      TimeIndex.fromBytes(
        'x',
        1200,
        timeIndexBytes([
          [0n, 0],
          [0n, 3],
        ]),
      ).entries,
    ).toBe(2)
  })

  it('truncates by offset like Kafka', () => {
    const make = () =>
      TimeIndex.fromBytes(
        'x',
        1200,
        timeIndexBytes([
          [100n, 1],
          [200n, 4],
          [300n, 9],
        ]),
      )
    const a = make()
    a.truncateTo(4)
    expect(a.entries).toBe(1)
    const b = make()
    b.truncateTo(5)
    expect(b.entries).toBe(2)
    const c = make()
    c.truncateTo(0)
    expect(c.entries).toBe(0)
  })

  it('sanity check refuses partial entries and decreasing timestamps', () => {
    expect(
      TimeIndex.sanityCheck(
        timeIndexBytes([
          [1n, 0],
          [2n, 3],
        ]),
      ),
    ).toBeNull()
    expect(TimeIndex.sanityCheck(Buffer.alloc(13))).toMatch(/multiple of 12/)
    expect(
      TimeIndex.sanityCheck(
        timeIndexBytes([
          [5n, 0],
          [3n, 3],
        ]),
      ),
    ).toMatch(/not increasing/)
  })
})
