/**
 * Record batches written by Apache Kafka itself:
 *
 * - fixtures/kafka-clients/: one batch per codec and variant, built by kafka-clients 4.4.0's
 *   MemoryRecordsBuilder (fixtures/kafka-clients/Golden.java) from records.json. The `none`
 *   ones are what buildBatch must write byte for byte.
 * - ../fixtures/kafka/fixture-0/: a partition directory written by a Kafka 4.4.0 broker, with
 *   Kafka's own view of it in expected.json (see that folder's README.md).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildBatch, type BuildBatchOptions } from '../../ts/protocol/batch-builder.js'
import { validateBatch } from '../../ts/protocol/batch-header.js'
import { batchesOf, decodeBatch, decodeBatches, validateRecords } from '../../ts/protocol/records.js'
import type { ProducerRecord, RecordBatch } from '../../ts/storage/types.js'

const CLIENTS = join(__dirname, 'fixtures', 'kafka-clients')
const FIXTURE_0 = join(__dirname, '..', 'fixtures', 'kafka', 'fixture-0')
const EXPECTED_0 = join(__dirname, '..', 'fixtures', 'kafka', 'expected.json')

interface JsonRecord {
  timestamp: string
  key: string | null
  value: string | null
  headers: Array<{ key: string; value: string | null }>
}

const text = (b: Buffer | null) => (b === null ? null : b.toString('utf8'))

describe('batches built by kafka-clients (MemoryRecordsBuilder)', () => {
  const records: JsonRecord[] = JSON.parse(readFileSync(join(CLIENTS, 'records.json'), 'utf8'))
  const producerRecords: ProducerRecord[] = records.map((r) => ({ ...r, timestamp: BigInt(r.timestamp) }))
  const variants: Record<string, { options: BuildBatchOptions; expect: Partial<RecordBatch> }> = {
    plain: {
      options: {},
      expect: { baseOffset: 0n, producerId: -1n, producerEpoch: -1, baseSequence: -1, partitionLeaderEpoch: -1, isTransactional: false, timestampType: 'CreateTime' },
    },
    idempotent: {
      options: { baseOffset: 1234567n, producerId: 42n, producerEpoch: 3, baseSequence: 1000, partitionLeaderEpoch: 7 },
      expect: { baseOffset: 1234567n, producerId: 42n, producerEpoch: 3, baseSequence: 1000, partitionLeaderEpoch: 7, isTransactional: false },
    },
    'txn-logappend': {
      options: { baseOffset: 1234567n, producerId: 99n, producerEpoch: 0, baseSequence: 0, partitionLeaderEpoch: 12, isTransactional: true, timestampType: 'LogAppendTime', nowMs: 1_800_000_000_000n },
      expect: { producerId: 99n, isTransactional: true, timestampType: 'LogAppendTime', maxTimestamp: 1_800_000_000_000n },
    },
  }

  for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
    for (const [variant, v] of Object.entries(variants)) {
      it(`decodes ${codec}-${variant}`, () => {
        const buf = readFileSync(join(CLIENTS, `${codec}-${variant}.bin`))
        validateRecords(buf, 0, validateBatch(buf))
        const batch = decodeBatch(buf)
        expect(batch).toMatchObject({ ...v.expect, compression: codec, sizeInBytes: buf.length })
        expect(batch.records.length).toBe(records.length)
        const logAppend = v.options.timestampType === 'LogAppendTime'
        batch.records.forEach((r, i) => {
          const want = records[i]
          expect(r.offset).toBe(batch.baseOffset + BigInt(i))
          expect(r.timestamp).toBe(logAppend ? 1_800_000_000_000n : BigInt(want.timestamp))
          expect(text(r.key)).toBe(want.key)
          expect(text(r.value)).toBe(want.value)
          expect(r.headers.map((h) => ({ key: h.key, value: text(h.value) }))).toEqual(want.headers)
        })
      })
    }
  }

  for (const [variant, v] of Object.entries(variants)) {
    it(`buildBatch writes the bytes Kafka writes (${variant}, uncompressed)`, () => {
      const kafka = readFileSync(join(CLIENTS, `none-${variant}.bin`))
      const ours = buildBatch(producerRecords, v.options)
      expect(ours.length).toBe(kafka.length)
      expect(ours.equals(kafka)).toBe(true)
    })
  }
})

describe('segments written by a Kafka broker (fixture-0)', () => {
  interface Expected {
    segments: Array<{ baseOffset: number; log: string }>
    batches: Array<{
      segment: string
      baseOffset: number
      lastOffset: number
      count: number
      position: number
      size: number
      compression: string
      crc: number
      timestampType: string
      maxTimestamp: number
      producerId: number
      producerEpoch: number
      baseSequence: number
      partitionLeaderEpoch: number
      isTransactional: boolean
      isControl: boolean
    }>
    records: Array<{
      offset: number
      timestamp: number
      key: string | null
      value: string | null
      headers: Array<{ key: string; value: string | null }>
      compression: string
      control: { type: 'COMMIT' | 'ABORT'; coordinatorEpoch: number } | null
    }>
  }
  const expected: Expected = JSON.parse(readFileSync(EXPECTED_0, 'utf8'))

  it('walks every batch at Kafka’s positions with Kafka’s header values', () => {
    const seen: Array<Record<string, unknown>> = []
    for (const seg of expected.segments) {
      const buf = readFileSync(join(FIXTURE_0, seg.log))
      const it = batchesOf(buf)
      for (const { position, size, header } of it) {
        const batch = decodeBatch(buf, position)
        seen.push({
          segment: seg.log,
          baseOffset: Number(batch.baseOffset),
          lastOffset: Number(batch.lastOffset),
          count: batch.records.length,
          position,
          size,
          compression: batch.compression,
          crc: header.crc,
          timestampType: batch.timestampType,
          maxTimestamp: Number(batch.maxTimestamp),
          producerId: Number(batch.producerId),
          producerEpoch: batch.producerEpoch,
          baseSequence: batch.baseSequence,
          partitionLeaderEpoch: batch.partitionLeaderEpoch,
          isTransactional: batch.isTransactional,
          isControl: batch.isControl,
        })
      }
      expect(it.partial).toBe(false)
      expect(it.position).toBe(buf.length)
    }
    expect(seen).toEqual(
      expected.batches.map((b) => ({
        segment: b.segment,
        baseOffset: b.baseOffset,
        lastOffset: b.lastOffset,
        count: b.count,
        position: b.position,
        size: b.size,
        compression: b.compression,
        crc: b.crc,
        timestampType: b.timestampType,
        maxTimestamp: b.maxTimestamp,
        producerId: b.producerId,
        producerEpoch: b.producerEpoch,
        baseSequence: b.baseSequence,
        partitionLeaderEpoch: b.partitionLeaderEpoch,
        isTransactional: b.isTransactional,
        isControl: b.isControl,
      })),
    )
    expect(new Set(seen.map((b) => b.compression))).toEqual(new Set(['none', 'gzip', 'snappy', 'lz4', 'zstd']))
  })

  it('decodes every record (all codecs, control markers) as Kafka does', () => {
    const decoded: Array<{ batch: RecordBatch; index: number }> = []
    for (const seg of expected.segments) {
      for (const batch of decodeBatches(readFileSync(join(FIXTURE_0, seg.log)))) {
        batch.records.forEach((_, index) => decoded.push({ batch, index }))
      }
    }
    expect(decoded.length).toBe(expected.records.length)
    expected.records.forEach((want, i) => {
      const { batch, index } = decoded[i]
      const r = batch.records[index]
      expect(r.offset).toBe(BigInt(want.offset))
      expect(r.timestamp).toBe(BigInt(want.timestamp))
      expect(batch.compression).toBe(want.compression)
      if (want.control) {
        expect(batch.isControl).toBe(true)
        // key: version int16 0, type int16 (0 ABORT, 1 COMMIT); value: version int16 0, coordinatorEpoch int32.
        expect(r.key?.readInt16BE(0)).toBe(0)
        expect(r.key?.readInt16BE(2)).toBe(want.control.type === 'COMMIT' ? 1 : 0)
        expect(r.value?.readInt16BE(0)).toBe(0)
        expect(r.value?.readInt32BE(2)).toBe(want.control.coordinatorEpoch)
      } else {
        expect(text(r.key)).toBe(want.key)
        expect(text(r.value)).toBe(want.value)
        expect(r.headers.map((h) => ({ key: h.key, value: text(h.value) }))).toEqual(want.headers)
      }
    })
  })

  it('accepts every batch on the leader append path', () => {
    for (const seg of expected.segments) {
      const buf = readFileSync(join(FIXTURE_0, seg.log))
      for (const { position } of batchesOf(buf)) validateRecords(buf, position, validateBatch(buf, position))
    }
  })
})
