import { describe, expect, it } from 'vitest'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { parseBatchHeader, validateBatch } from '../../ts/protocol/batch-header.js'
import { decodeBatch, validateRecords } from '../../ts/protocol/records.js'
import type { ProducerRecord } from '../../ts/storage/types.js'
import { expectRecordError, rng } from './helpers.js'

describe('buildBatch', () => {
  it('writes the hand-computed golden bytes', () => {
    const batch = buildBatch([
      { key: null, value: 'a', timestamp: 1000, headers: [{ key: 'h', value: null }] },
      { key: 'k', value: null, timestamp: 990n },
    ])
    const expected = [
      '0000000000000000', // baseOffset 0
      '00000044', // batchLength 68 (80 bytes in all)
      'ffffffff', // partitionLeaderEpoch -1
      '02', // magic
      'eb0c37bb', // CRC-32C of the bytes from attributes on (computed independently)
      '0000', // attributes: none, CreateTime
      '00000001', // lastOffsetDelta
      '00000000000003e8', // baseTimestamp 1000 (the first record's)
      '00000000000003e8', // maxTimestamp 1000
      'ffffffffffffffff', // producerId -1
      'ffff', // producerEpoch -1
      'ffffffff', // baseSequence -1
      '00000002', // recordsCount
      // record 0: length 10, attributes 0, timestampDelta 0, offsetDelta 0, key null (-1),
      // value "a", 1 header: key "h", value null
      '14' + '00' + '00' + '00' + '01' + '0261' + '02' + '0268' + '01',
      // record 1: length 7, attributes 0, timestampDelta -10, offsetDelta 1, key "k", value null, 0 headers
      '0e' + '00' + '13' + '02' + '026b' + '01' + '00',
    ].join('')
    expect(batch.toString('hex')).toBe(expected)
  })

  it('fills the header from the options', () => {
    const batch = buildBatch([{ value: 'x', timestamp: 5 }], {
      baseOffset: 77n,
      partitionLeaderEpoch: 4,
      producerId: 1234n,
      producerEpoch: 2,
      baseSequence: 99,
      isTransactional: true,
    })
    const h = validateBatch(batch)
    expect(h).toMatchObject({
      baseOffset: 77n,
      partitionLeaderEpoch: 4,
      producerId: 1234n,
      producerEpoch: 2,
      baseSequence: 99,
      attributes: 0x10,
      recordsCount: 1,
      lastOffsetDelta: 0,
    })
    expect(parseBatchHeader(buildBatch([{ value: 'x' }], { isControl: true })).attributes).toBe(0x20)
  })

  it('takes baseTimestamp from the first record and maxTimestamp as the largest', () => {
    const h = validateBatch(
      buildBatch([
        { value: 'a', timestamp: 50 },
        { value: 'b', timestamp: 10 },
        { value: 'c', timestamp: 70 },
        { value: 'd', timestamp: 60 },
      ]),
    )
    expect(h.baseTimestamp).toBe(50n)
    expect(h.maxTimestamp).toBe(70n)
  })

  it('stamps nowMs on records without a timestamp and as a LogAppendTime', () => {
    const b = decodeBatch(buildBatch([{ value: 'a' }, { value: 'b', timestamp: 3n }], { nowMs: 1000 }))
    expect(b.records.map((r) => r.timestamp)).toEqual([1000n, 3n])
    expect(b.maxTimestamp).toBe(1000n)
    const before = BigInt(Date.now())
    const d = decodeBatch(buildBatch([{ value: 'a' }]))
    expect(d.baseTimestamp >= before && d.baseTimestamp <= BigInt(Date.now())).toBe(true)
    const l = validateBatch(buildBatch([{ value: 'a', timestamp: 1 }], { timestampType: 'LogAppendTime', nowMs: 9n }))
    expect(l.attributes).toBe(0x08)
    expect(l.baseTimestamp).toBe(1n)
    expect(l.maxTimestamp).toBe(9n)
  })

  it('writes strings and Buffers identically', () => {
    const asStrings: ProducerRecord[] = [{ key: 'ключ', value: 'wört ✓', headers: [{ key: 'h', value: 'v' }], timestamp: 1 }]
    const asBuffers: ProducerRecord[] = [{ key: Buffer.from('ключ'), value: Buffer.from('wört ✓'), headers: [{ key: 'h', value: Buffer.from('v') }], timestamp: 1n }]
    expect(buildBatch(asStrings).equals(buildBatch(asBuffers))).toBe(true)
  })

  it('refuses bad arguments with INVALID_ARGUMENT', () => {
    expectRecordError(() => buildBatch([]), 'INVALID_ARGUMENT', /at least one/)
    expectRecordError(() => buildBatch([{ value: 'a' }], { producerEpoch: 40000 }), 'INVALID_ARGUMENT', /producerEpoch/)
    expectRecordError(() => buildBatch([{ value: 'a', timestamp: 1.5 }]), 'INVALID_ARGUMENT', /timestamp/)
    expectRecordError(() => buildBatch([{ value: 'a', timestamp: 2n ** 63n }]), 'INVALID_ARGUMENT', /timestamp/)
    expectRecordError(() => buildBatch([{ value: 'a' }], { baseOffset: 2n ** 64n }), 'INVALID_ARGUMENT', /baseOffset/)
    expectRecordError(() => buildBatch([{ value: 'a' }], { compression: 'brotli' as 'zstd' }), 'UNSUPPORTED_COMPRESSION')
  })
})

describe('buildBatch -> decodeBatch round trips', () => {
  const next = rng(42)
  const randomRecords = (n: number): ProducerRecord[] =>
    Array.from({ length: n }, (_, i) => {
      const len = Math.floor(next() * 300)
      const value = next() < 0.1 ? null : Buffer.from(Array.from({ length: len }, () => (next() < 0.7 ? 97 + (i % 5) : Math.floor(next() * 256))))
      return {
        key: next() < 0.3 ? null : `key-${i}`,
        value,
        timestamp: 1_700_000_000_000 + Math.floor((next() - 0.3) * 100_000),
        headers: Array.from({ length: Math.floor(next() * 3) }, (_, j) => ({ key: `h${j}`, value: next() < 0.2 ? null : `hv${i}.${j}` })),
      }
    })

  for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
    it(compression, () => {
      for (const n of [1, 2, 17, 500]) {
        const records = randomRecords(n)
        const buf = buildBatch(records, { compression, baseOffset: 1000n, producerId: 7n, producerEpoch: 0, baseSequence: 0 })
        const h = validateBatch(buf)
        validateRecords(buf, 0, h)
        const batch = decodeBatch(buf)
        expect(batch.compression).toBe(compression)
        expect(batch.sizeInBytes).toBe(buf.length)
        expect(batch.records.length).toBe(n)
        batch.records.forEach((r, i) => {
          const want = records[i]
          expect(r.offset).toBe(1000n + BigInt(i))
          expect(r.timestamp).toBe(BigInt(want.timestamp!))
          expect(r.key === null ? null : r.key.toString()).toBe(want.key ?? null)
          expect(r.value).toEqual(want.value)
          expect(r.headers.map((x) => [x.key, x.value === null ? null : x.value.toString()])).toEqual(want.headers!.map((x) => [x.key, x.value]))
        })
      }
    })
  }
})
