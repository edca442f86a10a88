import { describe, expect, it } from 'vitest'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ATTRIBUTES_OFFSET, CRC_OFFSET, LENGTH_OFFSET, MAGIC_OFFSET, RECORDS_COUNT_OFFSET, RECORDS_OFFSET, parseBatchHeader, updateCrc, validateBatch } from '../../ts/protocol/batch-header.js'
import { compress } from '../../ts/protocol/compression.js'
import { BatchIterator, batchesOf, decodeBatch, decodeBatches, validateRecords } from '../../ts/protocol/records.js'
import { sizeOfVarint, writeVarint, writeVarlong } from '../../ts/protocol/varint.js'
import type { CompressionType, ProducerRecord } from '../../ts/storage/types.js'
import { expectRecordError } from './helpers.js'

const TS = 1_700_000_000_000

/** A record's bytes from its parts, written as the format says (for building bad records). */
function recordBytes(parts: {
  offsetDelta: number
  timestampDelta?: number
  key?: Buffer | null
  value?: Buffer | null
  headers?: Array<[string, Buffer | null]>
  bodySize?: number
  keyLength?: number
}): Buffer {
  const body = Buffer.alloc(1024)
  let at = 0
  body[at++] = 0
  at = writeVarlong(body, parts.timestampDelta ?? 0, at)
  at = writeVarint(body, parts.offsetDelta, at)
  const field = (b: Buffer | null | undefined, forced?: number) => {
    at = writeVarint(body, forced ?? (b == null ? -1 : b.length), at)
    if (b != null) at += b.copy(body, at)
  }
  field(parts.key ?? null, parts.keyLength)
  field(parts.value === undefined ? Buffer.from('v') : parts.value)
  const headers = parts.headers ?? []
  at = writeVarint(body, headers.length, at)
  for (const [k, v] of headers) {
    field(Buffer.from(k))
    field(v)
  }
  const size = parts.bodySize ?? at
  const out = Buffer.alloc(sizeOfVarint(size) + at)
  const start = writeVarint(out, size, 0)
  body.copy(out, start, 0, at)
  return out
}

/** A batch around `records` bytes with the given header values; CRC correct. */
function rawBatch(records: Buffer, o: { count: number; lastOffsetDelta?: number; attributes?: number; compress?: CompressionType }): Buffer {
  const payload = o.compress ? compress(o.compress, records) : records
  const b = Buffer.alloc(RECORDS_OFFSET + payload.length)
  b.writeBigInt64BE(100n, 0)
  b.writeInt32BE(b.length - 12, LENGTH_OFFSET)
  b.writeInt32BE(-1, 12)
  b[MAGIC_OFFSET] = 2
  b.writeInt16BE(o.attributes ?? 0, ATTRIBUTES_OFFSET)
  b.writeInt32BE(o.lastOffsetDelta ?? o.count - 1, 23)
  b.writeBigInt64BE(BigInt(TS), 27)
  b.writeBigInt64BE(BigInt(TS), 35)
  b.writeBigInt64BE(-1n, 43)
  b.writeInt16BE(-1, 51)
  b.writeInt32BE(-1, 53)
  b.writeInt32BE(o.count, RECORDS_COUNT_OFFSET)
  payload.copy(b, RECORDS_OFFSET)
  updateCrc(b)
  return b
}

const SAMPLE: ProducerRecord[] = [
  { key: 'k0', value: 'v0', timestamp: TS, headers: [{ key: 'h', value: 'x' }] },
  { key: null, value: null, timestamp: TS - 10 },
  {
    key: '',
    value: '',
    timestamp: TS + 50,
    headers: [
      { key: 'nul', value: null },
      { key: 'ü', value: Buffer.from([0, 255]) },
    ],
  },
]

describe('decodeBatch', () => {
  it('decodes header fields and records', () => {
    const batch = decodeBatch(buildBatch(SAMPLE, { baseOffset: 40n, partitionLeaderEpoch: 2, producerId: 9n, producerEpoch: 1, baseSequence: 5 }))
    expect(batch).toMatchObject({
      baseOffset: 40n,
      lastOffset: 42n,
      partitionLeaderEpoch: 2,
      compression: 'none',
      timestampType: 'CreateTime',
      isTransactional: false,
      isControl: false,
      baseTimestamp: BigInt(TS),
      maxTimestamp: BigInt(TS + 50),
      producerId: 9n,
      producerEpoch: 1,
      baseSequence: 5,
    })
    const [r0, r1, r2] = batch.records
    expect(r0.offset).toBe(40n)
    expect(r0.timestamp).toBe(BigInt(TS))
    expect(r0.key?.toString()).toBe('k0')
    expect(r0.headers).toEqual([{ key: 'h', value: Buffer.from('x') }])
    expect(r1).toEqual({ offset: 41n, timestamp: BigInt(TS - 10), key: null, value: null, headers: [] })
    expect(r2.key).toEqual(Buffer.alloc(0))
    expect(r2.value).toEqual(Buffer.alloc(0))
    expect(r2.headers).toEqual([
      { key: 'nul', value: null },
      { key: 'ü', value: Buffer.from([0, 255]) },
    ])
  })

  it('gives every record the batch maxTimestamp in a LogAppendTime batch', () => {
    const batch = decodeBatch(buildBatch(SAMPLE, { timestampType: 'LogAppendTime', nowMs: 1_800_000_000_000n }))
    expect(batch.timestampType).toBe('LogAppendTime')
    expect(batch.maxTimestamp).toBe(1_800_000_000_000n)
    expect(batch.records.map((r) => r.timestamp)).toEqual(Array(3).fill(1_800_000_000_000n))
  })

  it('handles int64 extremes of offsets and timestamps exactly', () => {
    const big = 2n ** 62n
    const records: ProducerRecord[] = [
      { value: 'a', timestamp: big },
      { value: 'b', timestamp: -big },
      { value: 'c', timestamp: 2n ** 63n - 1n },
    ]
    const batch = decodeBatch(buildBatch(records, { baseOffset: 2n ** 62n + 3n }))
    expect(batch.records.map((r) => r.timestamp)).toEqual([big, -big, 2n ** 63n - 1n])
    expect(batch.records.map((r) => r.offset)).toEqual([2n ** 62n + 3n, 2n ** 62n + 4n, 2n ** 62n + 5n])
    expect(batch.maxTimestamp).toBe(2n ** 63n - 1n)
  })

  it('keeps the stored offsetDelta (compacted batches have gaps)', () => {
    const recs = Buffer.concat([recordBytes({ offsetDelta: 0 }), recordBytes({ offsetDelta: 5 })])
    const batch = decodeBatch(rawBatch(recs, { count: 2, lastOffsetDelta: 5 }))
    expect(batch.records.map((r) => r.offset)).toEqual([100n, 105n])
    expect(batch.lastOffset).toBe(105n)
  })

  it('decodes an empty batch (all records compacted away)', () => {
    const batch = decodeBatch(rawBatch(Buffer.alloc(0), { count: 0, lastOffsetDelta: 3 }))
    expect(batch.records).toEqual([])
    expect(batch.lastOffset).toBe(103n)
  })

  it('decodes a batch in the middle of a buffer', () => {
    const a = buildBatch([{ value: 'a', timestamp: TS }])
    const b = buildBatch([{ value: 'b', timestamp: TS }], { baseOffset: 1n })
    const buf = Buffer.concat([a, b, Buffer.from('tail')])
    expect(decodeBatch(buf, a.length).records[0].value?.toString()).toBe('b')
  })
})

describe('decodeBatch refuses damage with the right code', () => {
  const good = buildBatch(SAMPLE)

  it('CRC mismatch: CORRUPT_RECORD', () => {
    const bad = Buffer.from(good)
    bad[bad.length - 2] ^= 1
    expectRecordError(() => decodeBatch(bad), 'CORRUPT_RECORD', /CRC/)
  })

  it('truncated batch: CORRUPT_RECORD', () => {
    expectRecordError(() => decodeBatch(good.subarray(0, good.length - 1)), 'CORRUPT_RECORD', /truncated/)
    expectRecordError(() => decodeBatch(good.subarray(0, 30)), 'CORRUPT_RECORD', /truncated/)
  })

  it('magic other than 2: UNSUPPORTED_MAGIC', () => {
    const bad = Buffer.from(good)
    bad[MAGIC_OFFSET] = 1
    expectRecordError(() => decodeBatch(bad), 'UNSUPPORTED_MAGIC')
  })

  it('codec id 5-7: UNSUPPORTED_COMPRESSION', () => {
    const bad = Buffer.from(good)
    bad.writeInt16BE(6, ATTRIBUTES_OFFSET)
    updateCrc(bad)
    expectRecordError(() => decodeBatch(bad), 'UNSUPPORTED_COMPRESSION')
  })

  it('a record length that lies: INVALID_RECORD', () => {
    const longer = recordBytes({ offsetDelta: 0, bodySize: 40 })
    expectRecordError(() => decodeBatch(rawBatch(longer, { count: 1 })), 'INVALID_RECORD', /record size/)
    const rec = recordBytes({ offsetDelta: 0 })
    const shorter = recordBytes({ offsetDelta: 0, bodySize: rec.length - 3 })
    expectRecordError(() => decodeBatch(rawBatch(shorter, { count: 1 })), 'INVALID_RECORD')
    const negative = Buffer.concat([Buffer.from([0x01]), rec.subarray(1)])
    expectRecordError(() => decodeBatch(rawBatch(negative, { count: 1 })), 'INVALID_RECORD', /record size -1/)
  })

  it('a key longer than its record: INVALID_RECORD', () => {
    const rec = recordBytes({ offsetDelta: 0, key: Buffer.from('abc'), keyLength: 60 })
    expectRecordError(() => decodeBatch(rawBatch(rec, { count: 1 })), 'INVALID_RECORD', /key length/)
  })

  it('any negative key length reads as a null key, as Kafka reads it', () => {
    const negative = recordBytes({ offsetDelta: 0, key: null, keyLength: -2 })
    expect(decodeBatch(rawBatch(negative, { count: 1 })).records[0].key).toBeNull()
  })

  it('a bad varint: INVALID_RECORD', () => {
    // length 10, attributes, then a timestampDelta of 10 continuation bytes.
    const rec = Buffer.from('14' + '00' + 'ffffffffffffffffffff', 'hex')
    expectRecordError(() => decodeBatch(rawBatch(rec, { count: 1 })), 'INVALID_RECORD', /varlong/)
  })

  it('a count that does not match the records: INVALID_RECORD', () => {
    const two = Buffer.concat([recordBytes({ offsetDelta: 0 }), recordBytes({ offsetDelta: 1 })])
    expectRecordError(() => decodeBatch(rawBatch(two, { count: 3, lastOffsetDelta: 2 })), 'INVALID_RECORD', /announces 3/)
    expectRecordError(() => decodeBatch(rawBatch(two, { count: 1, lastOffsetDelta: 1 })), 'INVALID_RECORD', /bytes left/)
    expectRecordError(() => decodeBatch(rawBatch(two, { count: -1, lastOffsetDelta: 1 })), 'INVALID_RECORD')
  })

  it('compressed data that does not decompress: CORRUPT_RECORD', () => {
    const bad = rawBatch(Buffer.from('definitely not gzip'), { count: 1, attributes: 1 })
    expectRecordError(() => decodeBatch(bad), 'CORRUPT_RECORD', /gzip/)
  })

  it('a bomb: CORRUPT_RECORD past maxDecompressedBytes', () => {
    const big: ProducerRecord[] = [{ value: Buffer.alloc(2_000_000), timestamp: TS }]
    for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
      const batch = buildBatch(big, { compression: codec })
      expect(batch.length).toBeLessThan(200_000)
      expectRecordError(() => decodeBatch(batch, 0, { maxDecompressedBytes: 1_000_000 }), 'CORRUPT_RECORD', /limit|allowed/)
      expect(decodeBatch(batch, 0, { maxDecompressedBytes: 3_000_000 }).records[0].value?.length).toBe(2_000_000)
    }
  })
})

describe('validateRecords (leader append)', () => {
  it('accepts well-formed batches of every codec that compresses', () => {
    for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
      const b = buildBatch(SAMPLE, { compression })
      validateRecords(b, 0, validateBatch(b))
    }
  })

  it('refuses offsetDelta != index, gaps and empty batches', () => {
    const swapped = Buffer.concat([recordBytes({ offsetDelta: 1 }), recordBytes({ offsetDelta: 0 })])
    const b1 = rawBatch(swapped, { count: 2 })
    expect(decodeBatch(b1).records.length).toBe(2)
    expectRecordError(() => validateRecords(b1, 0, validateBatch(b1)), 'INVALID_RECORD', /offsetDelta/)
    const gap = Buffer.concat([recordBytes({ offsetDelta: 0 }), recordBytes({ offsetDelta: 2 })])
    const b2 = rawBatch(gap, { count: 2, lastOffsetDelta: 2 })
    expectRecordError(() => validateRecords(b2, 0, validateBatch(b2)), 'INVALID_RECORD', /lastOffsetDelta 2 with 2/)
    const b3 = rawBatch(Buffer.alloc(0), { count: 0, lastOffsetDelta: 0 })
    expectRecordError(() => validateRecords(b3, 0, validateBatch(b3)), 'INVALID_RECORD', /count 0/)
    const lz = rawBatch(gap, { count: 2, lastOffsetDelta: 1, compress: 'lz4', attributes: 3 })
    expectRecordError(() => validateRecords(lz, 0, validateBatch(lz)), 'INVALID_RECORD', /offsetDelta 2/)
  })

  it('refuses what decodeBatch refuses', () => {
    const cases = [
      recordBytes({ offsetDelta: 0, bodySize: 40 }),
      recordBytes({ offsetDelta: 0, key: Buffer.from('abc'), keyLength: 60 }),
      recordBytes({ offsetDelta: 0, headers: [['a', null]], bodySize: 5 }),
      Buffer.from('14' + '00' + 'ffffffffffffffffffff', 'hex'),
      Buffer.concat([recordBytes({ offsetDelta: 0 }), Buffer.from([0])]),
    ]
    for (const recs of cases) {
      const b = rawBatch(recs, { count: 1 })
      expectRecordError(() => decodeBatch(b), 'INVALID_RECORD')
      expectRecordError(() => validateRecords(b, 0, validateBatch(b)), 'INVALID_RECORD')
    }
  })
})

describe('BatchIterator', () => {
  const batches = [0, 1, 2].map((i) =>
    buildBatch(
      Array.from({ length: i + 1 }, (_, j) => ({ value: `v${i}.${j}`, timestamp: TS })),
      { baseOffset: BigInt(i * 10) },
    ),
  )
  const all = Buffer.concat(batches)

  it('walks consecutive batches with positions, sizes and headers', () => {
    const it = batchesOf(all)
    const seen = [...it]
    expect(seen.map((e) => e.position)).toEqual([0, batches[0].length, batches[0].length + batches[1].length])
    expect(seen.map((e) => e.size)).toEqual(batches.map((b) => b.length))
    expect(seen.map((e) => e.header.baseOffset)).toEqual([0n, 10n, 20n])
    expect(it.position).toBe(all.length)
    expect(it.partial).toBe(false)
  })

  it('stops before a partial trailing batch', () => {
    const wholeTwo = batches[0].length + batches[1].length
    for (const cut of [1, 11, 16, 17, 30, 61, batches[2].length - 1]) {
      const it = new BatchIterator(all.subarray(0, wholeTwo + cut))
      expect([...it].length).toBe(2)
      expect(it.position).toBe(wholeTwo)
      expect(it.partial).toBe(true)
    }
    expect(decodeBatches(all.subarray(0, all.length - 1)).length).toBe(2)
  })

  it('respects start and end', () => {
    const it = new BatchIterator(all, batches[0].length, batches[0].length + batches[1].length)
    expect([...it].map((e) => e.header.baseOffset)).toEqual([10n])
    expect(decodeBatches(all, batches[0].length).map((b) => b.baseOffset)).toEqual([10n, 20n])
  })

  it('is empty on an empty buffer', () => {
    const it = batchesOf(Buffer.alloc(0))
    expect([...it]).toEqual([])
    expect(it.partial).toBe(false)
  })

  it('refuses a bad magic or a batchLength too small for a header', () => {
    const bad = Buffer.from(all)
    bad[batches[0].length + MAGIC_OFFSET] = 0
    const it = batchesOf(bad)
    expect(it.next().done).toBe(false)
    expectRecordError(() => it.next(), 'UNSUPPORTED_MAGIC')
    const small = Buffer.from(all)
    small.writeInt32BE(20, LENGTH_OFFSET)
    expectRecordError(() => [...batchesOf(small)], 'CORRUPT_RECORD', /batchLength/)
  })

  it('does not check CRCs (recovery does that per batch)', () => {
    const bad = Buffer.from(all)
    bad[CRC_OFFSET] ^= 0xff
    expect([...batchesOf(bad)].length).toBe(3)
    expect(parseBatchHeader(bad).crc).not.toBe(parseBatchHeader(all).crc)
  })
})
