/**
 * Log cleaner core: cleaning throughput (MB/s of dirty log read, native `cleanLog` vs the
 * TypeScript twin's) and the offset map's memory per million keys. Each case builds its own
 * segments, cleans them `RUNS` times with each engine, and reports the median.
 *
 * Then the full round, `Log.clean` on a live log of each backend (offset map + clean + swap; the
 * native one on a libuv worker, the twin on its cleaner thread), one run per case as a round
 * changes its log: MB/s of dirty log, 1 KiB and 100 B records; and the offset map's memory per
 * million keys measured from a round whose map filled up (mapMemory / mapSize).
 *
 *   node scripts/build.mjs ts && node dist/bench/cleaner.bench.js
 */
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as binding from '../ts/native/index.js'
import { LogManager } from '../ts/storage/log-manager.js'
import type { Log } from '../ts/storage/log.js'
import type { BackendName } from '../ts/storage/backends.js'
import type { LogCleanResult } from '../ts/storage/types.js'
import { silentLogger } from '../ts/logger.js'
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
  const m = s[Math.floor(s.length / 2)]
  if (m === undefined) throw new Error('median of no samples')
  return m
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

/** A live log of `backend` with `records` records of `valueBytes` over `keys` keys (100 a batch), rolled: all dirty. */
async function liveLog(dataDir: string, backend: BackendName, records: number, keys: number, valueBytes: number): Promise<{ manager: LogManager; log: Log; bytes: number }> {
  const manager = await LogManager.open({
    dataDir,
    backend,
    logger: silentLogger,
    retentionCheckIntervalMs: 0,
    cleaner: { enableCleaner: false, numThreads: 1, dedupeBufferSize: 1 << 20, ioBufferSize: 1 << 19, backOffMs: 15_000 },
  })
  const log = await manager.getOrCreateLog('bench', 0, { config: { cleanupPolicy: ['compact'], segmentBytes: 16 * 1024 * 1024 } })
  for (let o = 0; o < records; o += 100) {
    const n = Math.min(100, records - o)
    log.append(
      buildBatch(
        Array.from({ length: n }, (_, i) => ({ key: `key-${(o + i) % keys}`, value: Buffer.alloc(valueBytes, (o + i) & 0xff), timestamp: 1_700_000_000_000 + o + i })),
        { nowMs: 1 },
      ),
    )
  }
  log.roll()
  await log.flush()
  const bytes = log.segments().reduce((sum, seg) => sum + seg.size, 0)
  return { manager, log, bytes }
}

async function fullRound(
  root: string,
  backend: BackendName,
  records: number,
  keys: number,
  valueBytes: number,
  dedupeBufferSize: number,
): Promise<{ seconds: number; bytes: number; result: LogCleanResult }> {
  const dataDir = join(root, `round-${backend}-${valueBytes}-${keys}`)
  mkdirSync(dataDir)
  const { manager, log, bytes } = await liveLog(dataDir, backend, records, keys, valueBytes)
  try {
    const t = process.hrtime.bigint()
    const result = await log.clean({ firstDirtyOffset: 0n, firstUncleanableOffset: log.logEndOffset(), currentTimeMs: 1_800_000_000_000n, deleteRetentionMs: 86_400_000n, dedupeBufferSize })
    return { seconds: Number(process.hrtime.bigint() - t) / 1e9, bytes, result }
  } finally {
    await manager.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

async function fullRounds(root: string): Promise<string[]> {
  const rows: string[] = []
  // About 64 MB of dirty log each: 8 versions a key.
  for (const [valueBytes, records] of [
    [1024, 60_000],
    [100, 480_000],
  ] as const) {
    const keys = records / 8
    const native = await fullRound(root, 'native', records, keys, valueBytes, 16 << 20)
    const js = await fullRound(root, 'js', records, keys, valueBytes, 16 << 20)
    if (native.result.recordsRetained !== keys || js.result.recordsRetained !== keys) throw new Error('a round kept the wrong records')
    const mb = native.bytes / 1e6
    rows.push(
      `| Log.clean round, ${mb.toFixed(1)} MB of ${valueBytes} B records, 8 versions a key | ${(mb / native.seconds).toFixed(1)} MB/s | ${(js.bytes / 1e6 / js.seconds).toFixed(1)} MB/s | ${(js.seconds / native.seconds).toFixed(1)}x | ${native.result.segmentsBefore} -> ${native.result.segmentsAfter} segments, kept ${keys} of ${records} |`,
    )
  }
  // A map that fills up: 4 MiB for 400,000 distinct keys of 100 B records (the round stops at 0.9 x slots).
  for (const backend of ['native', 'js'] as const) {
    const full = await fullRound(root, backend, 400_000, 400_000, 100, 4 << 20)
    const { mapMemory, mapSize } = full.result
    rows.push(
      `| offset map at full, ${backend} round | ${mapSize} keys in ${(mapMemory / 1e6).toFixed(2)} MB | | | ${(((mapMemory / mapSize) * 1e6) / 1e6).toFixed(1)} MB per million keys (${(mapMemory / mapSize).toFixed(1)} B a key) |`,
    )
  }
  return rows
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'ferrolog-cleaner-bench-'))
  try {
    const rows: string[] = []
    for (const [name, compression] of [
      ['uncompressed', 'none'],
      ['lz4', 'lz4'],
    ] as const) {
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
        `| clean ${mb.toFixed(1)} MB, ${name}, 8 versions a key | ${(mb / native.seconds).toFixed(1)} MB/s | ${(mb / js.seconds).toFixed(1)} MB/s | ${(js.seconds / native.seconds).toFixed(1)}x | kept ${native.result.recordsRetained} of ${native.result.recordsRead} |`,
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
    rows.push(
      `| offset map, 1M distinct keys | ${(result.mapMemory / 1e6).toFixed(1)} MB (${(result.mapMemory / million).toFixed(1)} B a key) | | | native clean of 1M keys: ${seconds.toFixed(2)} s |`,
    )
    rows.push(...(await fullRounds(root)))
    console.log('| case | native | twin | ratio | notes |\n|---|---|---|---|---|\n' + rows.join('\n'))
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
