/**
 * A partition directory written by a real Apache Kafka 4.4 broker (__test__/fixtures/kafka, with a
 * note on how it was made) opens and reads back exactly on both backends: every batch of every
 * codec, every record's offset, timestamp, key, value and headers, as Kafka's DumpLogSegments
 * saw them (expected.json). Recovering it from scratch rebuilds Kafka's own index files.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName, type RecordBatch } from '../../ts/index.js'
import { tempDir } from '../helpers/tmp.js'

const FIXTURE = join(__dirname, '../fixtures/kafka')

interface ExpectedRecord {
  offset: number
  timestamp: number
  key: string | null
  value: string | null
  headers: Array<{ key: string; value: string | null }>
  compression: string
  batchBaseOffset: number
  control: { type: string } | null
}
interface ExpectedBatch {
  baseOffset: number
  lastOffset: number
  count: number
  compression: string
  isTransactional: boolean
  isControl: boolean
  partitionLeaderEpoch: number
  producerId: number
  maxTimestamp: number
  size: number
}
const expected = JSON.parse(readFileSync(join(FIXTURE, 'expected.json'), 'utf8')) as {
  logEndOffset: number
  batches: ExpectedBatch[]
  records: ExpectedRecord[]
  segments: Array<{ baseOffset: number; log: string }>
}

/** A data dir holding a copy of the fixture partition, with or without Kafka's clean marker. */
function copyFixture(clean: boolean): string {
  const dataDir = tempDir()
  cpSync(join(FIXTURE, 'fixture-0'), join(dataDir, 'fixture-0'), { recursive: true })
  if (clean) writeFileSync(join(dataDir, '.kafka_cleanshutdown'), '')
  return dataDir
}

function readAll(batchesFrom: (offset: bigint) => RecordBatch[], end: bigint): RecordBatch[] {
  const out: RecordBatch[] = []
  let next = 0n
  while (next < end) {
    const got = batchesFrom(next)
    expect(got.length).toBeGreaterThan(0)
    out.push(...got)
    next = got.at(-1)!.lastOffset + 1n
  }
  return out
}

describe.each(['native', 'js'] as BackendName[])('a partition written by Apache Kafka, on the %s backend', (backend) => {
  it('reads back every batch and record exactly', async () => {
    const manager = await LogManager.open({ dataDir: copyFixture(true), backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
    const log = manager.getLog('fixture', 0)!
    expect(log.logStartOffset()).toBe(0n)
    expect(log.logEndOffset()).toBe(BigInt(expected.logEndOffset))
    expect(log.segments().map((s) => Number(s.baseOffset))).toEqual(expected.segments.map((s) => s.baseOffset))
    const batches = readAll((o) => log.readBatches(o, { isolation: 'LOG_END' }), log.logEndOffset())
    expect(
      batches.map((b) => ({
        baseOffset: Number(b.baseOffset),
        lastOffset: Number(b.lastOffset),
        count: b.records.length,
        compression: b.compression,
        isTransactional: b.isTransactional,
        isControl: b.isControl,
        partitionLeaderEpoch: b.partitionLeaderEpoch,
        producerId: Number(b.producerId),
        maxTimestamp: Number(b.maxTimestamp),
        size: b.sizeInBytes,
      })),
    ).toEqual(
      expected.batches.map((b) => ({
        baseOffset: b.baseOffset,
        lastOffset: b.lastOffset,
        count: b.count,
        compression: b.compression,
        isTransactional: b.isTransactional,
        isControl: b.isControl,
        partitionLeaderEpoch: b.partitionLeaderEpoch,
        producerId: b.producerId,
        maxTimestamp: b.maxTimestamp,
        size: b.size,
      })),
    )
    const records = batches.flatMap((b) => b.records.map((r) => ({ r, b })))
    const data = expected.records
    expect(records).toHaveLength(data.length)
    records.forEach(({ r, b }, i) => {
      const want = data[i]
      expect(Number(r.offset)).toBe(want.offset)
      expect(Number(r.timestamp)).toBe(want.timestamp)
      expect(b.compression).toBe(want.compression)
      if (want.control) return // marker records: key and value are the marker's, checked by isControl
      expect(r.key === null ? null : r.key.toString('utf8')).toBe(want.key)
      expect(r.value === null ? null : r.value.toString('utf8')).toBe(want.value)
      expect(r.headers.map((h) => ({ key: h.key, value: h.value === null ? null : h.value.toString('utf8') }))).toEqual(want.headers)
    })
    // readRecords skips control batches and records before the offset.
    const fromMiddle = log.readRecords(2n, { isolation: 'LOG_END' })
    expect(Number(fromMiddle[0].offset)).toBe(2)
    await manager.close()
  })

  it('recovers it from scratch and rebuilds the same index files Kafka wrote', async () => {
    const dataDir = copyFixture(false)
    const manager = await LogManager.open({
      dataDir,
      backend,
      logger: silentLogger,
      retentionCheckIntervalMs: 0,
      // The topic's own settings when Kafka wrote it.
      topicConfig: () => ({ segmentBytes: 16384, indexIntervalBytes: 1024, retentionMs: -1 }),
    })
    const log = manager.getLog('fixture', 0)!
    expect(log.recoveryReport().segmentsRecovered).toBe(expected.segments.length)
    expect(log.recoveryReport().bytesTruncated).toBe(0)
    expect(log.logEndOffset()).toBe(BigInt(expected.logEndOffset))
    await manager.close()
    for (const s of expected.segments) {
      for (const ext of ['.index', '.timeindex']) {
        const name = s.log.replace(/\.log$/, ext)
        expect(readFileSync(join(dataDir, 'fixture-0', name)), name).toEqual(readFileSync(join(FIXTURE, 'fixture-0', name)))
      }
      const log = s.log
      expect(readFileSync(join(dataDir, 'fixture-0', log)), log).toEqual(readFileSync(join(FIXTURE, 'fixture-0', log)))
    }
  })
})
