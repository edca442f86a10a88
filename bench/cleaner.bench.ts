/**
 * Log cleaner core: cleaning throughput (MB/s of dirty log read, native `cleanLog` vs the
 * TypeScript twin's) and the offset map's memory per million keys. Each case builds its own
 * segments, cleans them `RUNS` times with each engine, and reports the median.
 *
 *   node scripts/build.mjs ts && node dist/bench/cleaner.bench.js
 */
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as binding from '../ts/native/index.js'
import type { CleanLogRequest, CleanLogResult } from '../ts/native/index.js'
import { buildBatch } from '../ts/protocol/batch-builder.js'
import type { CompressionType } from '../ts/storage/types.js'
import { cleanLog as cleanLogJs } from '../ts/storage/js/cleaner/index.js'
import { filenamePrefixFromOffset } from '../ts/storage/js/files.js'
import { DEFAULT_LOAD_FACTOR, ENTRY_SIZE } from '../ts/storage/js/cleaner/offset-map.js'

const RUNS = Number(process.env.BENCH_RUNS ?? 5)

/** `records` records of `valueBytes` over `keys` distinct keys, in batches of `perBatch`, `segments` files. */
function dirtyLog(dir: string, records: number, keys: number, valueBytes: number, perBatch: number, segments: number, compression: CompressionType) {
  const perSegment = Math.ceil(records / segments)
  const out: { baseOffset: bigint; logPath: string }[] = []
  let bytes = 0
  for (let s = 0; s < segments; s++) {
    const base = s * perSegment
    const batches: Buffer[] = []
    for (let o = base; o < Math.min(records, base + perSegment); o += perBatch) {
      const n = Math.min(perBatch, base + perSegment - o, records - o)
      const recs = Array.from({ length: n }, (_, i) => ({ key: `key-${(o + i) % keys}`, value: Buffer.alloc(valueBytes, (o + i) & 0xff), timestamp: 1_700_000_000_000 + o + i }))
      batches.push(buildBatch(recs, { baseOffset: BigInt(o), compression, nowMs: 1 }))
    }
    const logPath = join(dir, filenamePrefixFromOffset(BigInt(base)) + '.log')
    const data = Buffer.concat(batches)
    bytes += data.length
    writeFileSync(logPath, data)
    out.push({ baseOffset: BigInt(base), logPath })
  }
  return { segments: out, bytes }
}

function request(dir: string, segments: { baseOffset: bigint; logPath: string }[], end: number, dedupeBufferSize: number): CleanLogRequest {
  return {
    dir,
    segments,
    firstDirtyOffset: 0n,
    firstUncleanableOffset: BigInt(end),
    currentTimeMs: 1_800_000_000_000n,
    deleteRetentionMs: 86_400_000n,
    dedupeBufferSize,
    indexIntervalBytes: 4096,
    segmentIndexBytes: 10 * 1024 * 1024,
    maxDecompressedBytes: 1 << 26,
    aborted: [],
    activeProducers: [],
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

function timeRuns(run: () => CleanLogResult): { seconds: number; result: CleanLogResult } {
  const times: number[] = []
  let result!: CleanLogResult
  for (let i = 0; i < RUNS; i++) {
    const t = process.hrtime.bigint()
    result = run()
    times.push(Number(process.hrtime.bigint() - t) / 1e9)
    for (const p of result.paths) unlinkSync(p)
  }
  return { seconds: median(times), result }
}

function main(): void {
  const root = mkdtempSync(join(tmpdir(), 'ferrolog-cleaner-bench-'))
  try {
    const rows: string[] = []
    for (const [name, compression] of [['uncompressed', 'none'], ['lz4', 'lz4']] as const) {
      // 64K records of 512 bytes over 8K keys (8 versions each) in 32-record batches, 4 segments.
      const dir = join(root, name)
      rmSync(dir, { recursive: true, force: true })
      mkdirSync(dir)
      const records = 65_536
      const { segments, bytes } = dirtyLog(dir, records, 8192, 512, 32, 4, compression)
      const native = timeRuns(() => binding.cleanLog(request(dir, segments, records, 16 << 20)))
      const js = timeRuns(() => cleanLogJs(request(dir, segments, records, 16 << 20)))
      const mb = bytes / 1e6
      rows.push(
        `| clean ${(mb).toFixed(1)} MB, ${name}, 8 versions a key | ${(mb / native.seconds).toFixed(1)} MB/s | ${(mb / js.seconds).toFixed(1)} MB/s | ${(js.seconds / native.seconds).toFixed(1)}x | kept ${native.result.recordsRetained} of ${native.result.recordsRead} |`,
      )
      if (native.result.recordsRetained !== js.result.recordsRetained) throw new Error('engines disagree')
    }
    // The map for a million distinct keys: slots for 1M at the load factor, 24 bytes each.
    const million = 1_000_000
    const memory = Math.ceil(million / DEFAULT_LOAD_FACTOR + 1) * ENTRY_SIZE
    const dir = join(root, 'million')
    mkdirSync(dir)
    const { segments } = dirtyLog(dir, million, million, 8, 1000, 4, 'none')
    const t = process.hrtime.bigint()
    const result = binding.cleanLog(request(dir, segments, million, memory))
    const seconds = Number(process.hrtime.bigint() - t) / 1e9
    if (result.mapFull || result.mapSize !== million) throw new Error(`map held ${result.mapSize} keys, full=${result.mapFull}`)
    rows.push(`| offset map, 1M distinct keys | ${(result.mapMemory / 1e6).toFixed(1)} MB (${(result.mapMemory / million).toFixed(1)} B a key) | | | native clean of 1M keys: ${seconds.toFixed(2)} s |`)
    console.log('| case | native | twin | ratio | notes |\n|---|---|---|---|---|\n' + rows.join('\n'))
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

main()
