/**
 * The cleaning core (Kafka's Cleaner) in both engines: the same segments in, byte-identical
 * `.cleaned` files out of the native `cleanLog` and the twin's, with the (key, value, offset)
 * survivors Kafka's rules leave, and Kafka's own DumpLogSegments accepting the result.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { CleanLogRequest, CleanLogResult } from '../../../ts/native/index.js'
import { requireNative } from '../../../ts/native/binding.js'
import { buildBatch, type BuildBatchOptions } from '../../../ts/protocol/batch-builder.js'
import { decodeBatches } from '../../../ts/protocol/records.js'
import type { CompressionType, ProducerRecord } from '../../../ts/storage/types.js'
import { cleanLog as cleanLogJs } from '../../../ts/storage/js/cleaner/index.js'
import { filenamePrefixFromOffset } from '../../../ts/storage/js/files.js'
import { tempDir } from '../../helpers/tmp.js'

const ROOT = join(__dirname, '../../..')
const T0 = 1_700_000_000_000
const DAY = 86_400_000n

type Batch = [ProducerRecord[], BuildBatchOptions]

function rec(key: string | null, value: string | null, i: number): ProducerRecord {
  return { key, value, timestamp: T0 + i * 10, headers: i % 2 === 0 ? [{ key: 'h', value: `v${i}` }] : [] }
}

function marker(commit: boolean): ProducerRecord[] {
  const key = Buffer.alloc(4)
  key.writeInt16BE(commit ? 1 : 0, 2)
  const value = Buffer.alloc(6)
  value.writeInt32BE(3, 2)
  return [{ key, value, timestamp: T0 }]
}

/** Three segments: [0, 8) and [8, 17) cleanable, [17, 19) the active one. */
function segmentsOf(rebuiltCodec: CompressionType = 'none'): Batch[][] {
  return [
    [
      [[rec('k1', 'a', 0), rec('k2', 'b', 1), rec('k3', 'c', 2)], { baseOffset: 0n }],
      [[rec('k1', 'a2', 3), rec('k2', null, 4)], { baseOffset: 3n, compression: rebuiltCodec }],
      [[rec('k4', 'd', 5), rec('k3', 'c2', 6)], { baseOffset: 5n, producerId: 7n, producerEpoch: 1, baseSequence: 0, partitionLeaderEpoch: 2 }],
      [[rec(null, 'no key', 7)], { baseOffset: 7n }],
    ],
    [
      [[rec('k1', 'x', 8), rec('k5', 'y', 9)], { baseOffset: 8n, producerId: 9n, producerEpoch: 0, baseSequence: 0, isTransactional: true }],
      [marker(false), { baseOffset: 10n, producerId: 9n, producerEpoch: 0, isTransactional: true, isControl: true }],
      [[rec('k4', 't4', 11), rec('k6', 't6', 12)], { baseOffset: 11n, producerId: 10n, producerEpoch: 0, baseSequence: 0, isTransactional: true }],
      [marker(true), { baseOffset: 13n, producerId: 10n, producerEpoch: 0, isTransactional: true, isControl: true }],
      [[rec('k6', 'z', 14), rec('k7', 'w', 15)], { baseOffset: 14n, compression: 'lz4' }],
      [[rec('k5', 'p', 16)], { baseOffset: 16n, producerId: 8n, producerEpoch: 0, baseSequence: 0 }],
    ],
    [[[rec('k5', 'q', 17), rec('k1', 'r', 18)], { baseOffset: 17n }]],
  ]
}

function writeSegments(dir: string, segments: Batch[][]): { baseOffset: bigint; logPath: string }[] {
  return segments.map((batches) => {
    const baseOffset = batches[0][1].baseOffset!
    const logPath = join(dir, filenamePrefixFromOffset(baseOffset) + '.log')
    writeFileSync(logPath, Buffer.concat(batches.map(([records, options]) => buildBatch(records, { nowMs: T0, ...options }))))
    return { baseOffset, logPath }
  })
}

function request(dir: string, segments: { baseOffset: bigint; logPath: string }[], over: Partial<CleanLogRequest> = {}): CleanLogRequest {
  return {
    dir,
    segments,
    firstDirtyOffset: 0n,
    firstUncleanableOffset: 17n,
    currentTimeMs: BigInt(T0) + DAY,
    deleteRetentionMs: DAY,
    dedupeBufferSize: 1 << 20,
    indexIntervalBytes: 64,
    segmentIndexBytes: 1 << 20,
    maxDecompressedBytes: 1 << 24,
    aborted: [{ producerId: 9n, firstOffset: 8n, lastOffset: 10n, lastStableOffset: 8n }],
    activeProducers: [
      { producerId: 8n, lastDataOffset: 16n, producerEpoch: 0 },
      { producerId: 7n, lastDataOffset: 6n, producerEpoch: 1 },
    ],
    ...over,
  }
}

/** Runs both engines on copies of the same input; checks identical files; returns the native result. */
function cleanBoth(build: (dir: string) => CleanLogRequest): { files: Buffer[]; result: CleanLogResult; dir: string } {
  const native = requireNative('log cleaner test')
  const a = tempDir()
  const b = tempDir()
  const ra = native.cleanLog(build(a))
  const rb = cleanLogJs(build(b))
  const filesA = ra.paths.map((p) => readFileSync(p))
  const filesB = rb.paths.map((p) => readFileSync(p))
  expect(rb.paths.map((p) => p.slice(b.length))).toEqual(ra.paths.map((p) => p.slice(a.length)))
  for (let i = 0; i < 3; i++) expect(filesB[i].equals(filesA[i]), ra.paths[i]).toBe(true)
  expect({ ...rb, paths: [] }).toEqual({ ...ra, paths: [] })
  expect(existsSync(join(a, '00000000000000000000.cleaning'))).toBe(false)
  return { files: filesA, result: ra, dir: a }
}

function survivors(log: Buffer): Array<[string | null, string | null, bigint]> {
  return decodeBatches(log)
    .filter((b) => !b.isControl)
    .flatMap((b) => b.records.map((r) => [r.key?.toString() ?? null, r.value?.toString() ?? null, r.offset] as [string | null, string | null, bigint]))
}

describe('log cleaner core, native and twin', () => {
  it('keeps the latest record per key, the live tombstone, markers and producer state; drops aborted and keyless records', () => {
    const { files, result } = cleanBoth((dir) => request(dir, writeSegments(dir, segmentsOf().slice(0, 2))))
    expect(result.latestOffset).toBe(16n)
    expect(result.mapFull).toBe(false)
    // The abort marker stays with its transaction's batch gone: its .txnindex entry stays too.
    expect(result.retainedAborted).toEqual([{ producerId: 9n, firstOffset: 8n, lastOffset: 10n, lastStableOffset: 8n }])
    expect(survivors(files[0])).toEqual([
      ['k1', 'a2', 3n],
      ['k2', null, 4n],
      ['k3', 'c2', 6n],
      ['k4', 't4', 11n],
      ['k6', 'z', 14n],
      ['k7', 'w', 15n],
      ['k5', 'p', 16n],
    ])
    const batches = decodeBatches(files[0])
    expect(batches.map((b) => [b.baseOffset, b.lastOffset, b.isControl])).toEqual([
      [3n, 4n, false],
      [5n, 6n, false],
      [10n, 10n, true],
      [11n, 12n, false],
      [13n, 13n, true],
      [14n, 15n, false],
      [16n, 16n, false],
    ])
    // The tombstone's batch got its delete horizon (now + delete.retention.ms) and kept its codec.
    expect(batches[0].compression).toBe('none')
    expect(batches[0].baseTimestamp).toBe(BigInt(T0) + 2n * DAY)
    // The idempotent batch keeps its producer fields and last offset (sequence 0..1).
    expect([batches[1].producerId, batches[1].producerEpoch, batches[1].baseSequence, batches[1].partitionLeaderEpoch]).toEqual([7n, 1, 0, 2])
    expect(batches[5].compression).toBe('lz4')
    expect(batches[1].records[0].headers).toEqual([{ key: 'h', value: Buffer.from('v6') }])
  })

  it('drops the tombstone and the finished abort marker once their horizons pass, keeping an empty batch for an active producer', () => {
    const first = tempDir()
    const r1 = requireNative('log cleaner test').cleanLog(request(first, writeSegments(first, segmentsOf().slice(0, 2))))
    const later = BigInt(T0) + 3n * DAY
    const second = (dir: string): CleanLogRequest => {
      const logPath = join(dir, '00000000000000000000.log')
      copyFileSync(r1.paths[0], logPath)
      return request(dir, [{ baseOffset: 0n, logPath }], {
        currentTimeMs: later,
        activeProducers: [{ producerId: 7n, lastDataOffset: 6n, producerEpoch: 1 }],
      })
    }
    const { files, result: r2 } = cleanBoth(second)
    expect(r2.retainedAborted).toEqual([])
    expect(survivors(files[0])).toEqual([
      ['k1', 'a2', 3n],
      ['k3', 'c2', 6n],
      ['k4', 't4', 11n],
      ['k6', 'z', 14n],
      ['k7', 'w', 15n],
      ['k5', 'p', 16n],
    ])
    const batches = decodeBatches(files[0])
    // The abort marker's transaction is gone: it stays until the horizon set now passes.
    const abort = batches.find((b) => b.baseOffset === 10n)!
    expect(abort.baseTimestamp).toBe(later + DAY)
    const third = (dir: string): CleanLogRequest => {
      const logPath = join(dir, '00000000000000000000.log')
      writeFileSync(logPath, files[0])
      return request(dir, [{ baseOffset: 0n, logPath }], { currentTimeMs: later + 2n * DAY, activeProducers: [] })
    }
    const { files: thirdFiles } = cleanBoth(third)
    expect(decodeBatches(thirdFiles[0]).some((b) => b.baseOffset === 10n)).toBe(false)
  })

  it('cleans the clean section against a map of the dirty section only (firstDirtyOffset)', () => {
    const first = tempDir()
    const r1 = requireNative('log cleaner test').cleanLog(request(first, writeSegments(first, segmentsOf().slice(0, 2))))
    const { files, result } = cleanBoth((dir) => {
      const cleaned = join(dir, '00000000000000000000.log')
      copyFileSync(r1.paths[0], cleaned)
      const [dirty] = writeSegments(dir, segmentsOf().slice(2))
      return request(dir, [{ baseOffset: 0n, logPath: cleaned }, dirty], { firstDirtyOffset: 17n, firstUncleanableOffset: 19n })
    })
    expect(result.mapSize).toBe(2)
    expect(survivors(files[0])).toEqual([
      ['k2', null, 4n],
      ['k3', 'c2', 6n],
      ['k4', 't4', 11n],
      ['k6', 'z', 14n],
      ['k7', 'w', 15n],
      ['k5', 'q', 17n],
      ['k1', 'r', 18n],
    ])
  })

  it('keeps an empty batch for the last batch of an active idempotent producer', () => {
    const segments: Batch[][] = [
      [
        [[rec('k1', 'a', 0)], { baseOffset: 0n, producerId: 5n, producerEpoch: 3, baseSequence: 41, partitionLeaderEpoch: 4 }],
        [[rec('k1', 'b', 1)], { baseOffset: 1n }],
        [[rec('k2', 'c', 2)], { baseOffset: 2n }],
      ],
    ]
    const { files } = cleanBoth((dir) =>
      request(dir, writeSegments(dir, segments), { firstUncleanableOffset: 3n, aborted: [], activeProducers: [{ producerId: 5n, lastDataOffset: 0n, producerEpoch: 3 }] }),
    )
    const batches = decodeBatches(files[0])
    expect(batches.map((b) => [b.baseOffset, b.records.length, b.producerId, b.baseSequence, b.producerEpoch])).toEqual([
      [0n, 0, 5n, 41, 3],
      [1n, 1, -1n, -1, -1],
      [2n, 1, -1n, -1, -1],
    ])
  })

  it('rebuilds a LogAppendTime batch keeping its type and append time', () => {
    const segments: Batch[][] = [
      [
        [[rec('k1', 'a', 0), rec('k2', null, 1), rec('k1', 'b', 2), rec(null, 'x', 3)], { baseOffset: 0n, timestampType: 'LogAppendTime', nowMs: T0 + 500 }],
        [[rec('k3', 'c', 4)], { baseOffset: 4n }],
      ],
    ]
    const { files } = cleanBoth((dir) => request(dir, writeSegments(dir, segments), { firstUncleanableOffset: 5n, aborted: [], activeProducers: [] }))
    expect(survivors(files[0])).toEqual([
      ['k2', null, 1n],
      ['k1', 'b', 2n],
      ['k3', 'c', 4n],
    ])
    const [first] = decodeBatches(files[0])
    expect([first.timestampType, first.maxTimestamp, first.baseTimestamp, first.lastOffset]).toEqual(['LogAppendTime', BigInt(T0 + 500), BigInt(T0) + 2n * DAY, 3n])
    expect(first.records.map((r) => r.timestamp)).toEqual([BigInt(T0 + 500), BigInt(T0 + 500)])
  })

  it('never touches batches at or past the first uncleanable offset', () => {
    const { files, result } = cleanBoth((dir) => request(dir, writeSegments(dir, segmentsOf().slice(0, 2)), { firstUncleanableOffset: 14n }))
    expect(result.latestOffset).toBe(13n)
    const input = tempDir()
    const original = readFileSync(writeSegments(input, segmentsOf().slice(1, 2))[0].logPath)
    const tail = decodeBatches(original).filter((b) => b.baseOffset >= 14n)
    const tailBytes = original.subarray(original.length - tail.reduce((n, b) => n + b.sizeInBytes, 0))
    expect(files[0].subarray(files[0].length - tailBytes.length).equals(tailBytes)).toBe(true)
    // k6@12 is now the latest k6 in the cleaned range, and k7 is past the map.
    expect(survivors(files[0]).filter(([k]) => k === 'k6')).toEqual([
      ['k6', 't6', 12n],
      ['k6', 'z', 14n],
    ])
  })

  it('cleans only as far as a full offset map reached (Kafka stops buildOffsetMap there)', () => {
    const records: Batch[][] = [Array.from({ length: 40 }, (_, i): Batch => [[rec(`key-${i % 20}`, `v${i}`, i)], { baseOffset: BigInt(i) }])]
    // 10 slots at load factor 0.9: 9 keys fit, so offsets 0..8 are mapped and the rest kept.
    const { files, result } = cleanBoth((dir) => request(dir, writeSegments(dir, records), { firstUncleanableOffset: 40n, dedupeBufferSize: 24 * 10, aborted: [], activeProducers: [] }))
    expect(result.mapFull).toBe(true)
    expect(result.mapSize).toBe(9)
    expect(result.mapMemory).toBe(240)
    expect(result.latestOffset).toBe(8n)
    const kept = survivors(files[0])
    expect(kept.map(([, , o]) => o)).toEqual(Array.from({ length: 40 - 0 }, (_, i) => BigInt(i)).filter((o) => o > 8n || o >= 0n))
  })
})

describe('a damaged input', () => {
  it('fails the round with CORRUPT_RECORD in both engines, leaving only the input', () => {
    for (const engine of ['native', 'js'] as const) {
      const dir = tempDir()
      const segments = writeSegments(dir, segmentsOf().slice(0, 1))
      const log = readFileSync(segments[0].logPath)
      log[log.length - 1] ^= 0xff
      writeFileSync(segments[0].logPath, log)
      const run = () => (engine === 'native' ? requireNative('log cleaner test').cleanLog(request(dir, segments)) : cleanLogJs(request(dir, segments)))
      expect(run).toThrow(engine === 'native' ? /^CORRUPT_RECORD: / : expect.objectContaining({ code: 'CORRUPT_RECORD' }))
      expect(readdirSync(dir)).toEqual(['00000000000000000000.log'])
    }
  })
})

describe('rebuilt batches of codecs whose encoders differ between the engines', () => {
  // The engines' encoders differ (snappy matches on some inputs only); a rebuilt compressed batch holds
  // the same records in differently compressed bytes (both valid), so compare records here.
  it.each(['gzip', 'snappy', 'lz4', 'zstd'] as CompressionType[])('%s: the same batches and records', (codec) => {
    const native = requireNative('log cleaner test')
    const a = tempDir()
    const b = tempDir()
    const ra = native.cleanLog(request(a, writeSegments(a, segmentsOf(codec).slice(0, 2))))
    const rb = cleanLogJs(request(b, writeSegments(b, segmentsOf(codec).slice(0, 2))))
    const strip = (log: Buffer) => decodeBatches(log).map((x) => ({ ...x, sizeInBytes: 0 }))
    expect(strip(readFileSync(rb.paths[0]))).toEqual(strip(readFileSync(ra.paths[0])))
    expect(decodeBatches(readFileSync(ra.paths[0]))[0].compression).toBe(codec)
  })
})

describe("Kafka's DumpLogSegments on a cleaned segment", () => {
  beforeAll(() => {
    execFileSync('bash', [join(ROOT, 'tools/kafka/fetch-jars.sh')], { stdio: 'ignore' })
  }, 300_000)

  it('accepts it with deep iteration and the index sanity check', () => {
    const { result, dir } = cleanBoth((d) => request(d, writeSegments(d, segmentsOf().slice(0, 2)), { indexIntervalBytes: 1 }))
    const live = join(dir, 'swapped-0')
    mkdirSync(live)
    for (const p of result.paths) copyFileSync(p, join(live, p.slice(dir.length + 1).replace('.cleaned', '')))
    const run = spawnSync('bash', [join(ROOT, 'tools/kafka/dump-log.sh'), live], { encoding: 'utf8', maxBuffer: 16 << 20 })
    // dump-log.sh reports every offset gap; in a compacted segment gaps are the point, so
    // those are the only problems allowed.
    const problems = run.stderr.split('\n').filter((l) => l.startsWith('dump-log.sh: PROBLEM: '))
    expect(problems.filter((l) => !/non-consecutive offsets in .*: \d+ is followed by \d+$/.test(l))).toEqual([])
    expect(problems.length).toBeGreaterThan(0)
    expect(run.stdout).not.toMatch(/isvalid: false/)
    expect(run.stdout.split('\n').filter((l) => l.startsWith('| offset: '))).toHaveLength(9)
    expect(run.stdout.match(/passed sanity check/g)?.length).toBe(2)
    expect(run.stdout).toContain('deleteHorizonMs: OptionalLong[')
  })
})
