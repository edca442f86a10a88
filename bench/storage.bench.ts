/**
 * Storage engine benchmarks, each native case next to its pure-TypeScript twin, measured in one
 * run so that the ratios mean something on a noisy machine. Results go to stdout as a table and
 * to bench/.out/storage.json; bench/RESULTS.md records them with the machine.
 *
 *   npm run bench
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import * as binding from '../ts/native/index.js'
import { buildBatch } from '../ts/protocol/batch-builder.js'
import { validateBatch, batchSizeAt } from '../ts/protocol/batch-header.js'
import { LogManager, silentLogger, type BackendName, type Log } from '../ts/index.js'

const BENCH_MS = Number(process.env.BENCH_MS ?? 1500)

interface Row {
  case: string
  native: number
  js: number
  unit: string
}

type Bench = InstanceType<typeof import('tinybench', { with: { 'resolution-mode': 'import' } }).Bench>

function opsPerSecond(bench: Bench, name: string, opsPerCall: number): number {
  const task = bench.getTask(name)
  const result = task?.result
  if (!result || !('period' in result)) throw new Error(`benchmark ${name} did not complete: ${JSON.stringify(result)}`)
  return (opsPerCall * 1000) / result.period
}

/** A buffer of whole batches of about `batchBytes` each, `totalBytes` in all. */
function batchesBuffer(totalBytes: number, batchBytes: number): Buffer {
  const recordBytes = 512
  const perBatch = Math.max(1, Math.floor(batchBytes / (recordBytes + 20)))
  const one = buildBatch(
    Array.from({ length: perBatch }, (_, i) => ({ key: `k${i}`, value: Buffer.alloc(recordBytes, i), timestamp: 1_700_000_000_000 + i })),
    { nowMs: 1 },
  )
  const count = Math.ceil(totalBytes / one.length)
  return Buffer.concat(Array.from({ length: count }, () => one))
}

async function openLog(backend: BackendName, dataDir: string, segmentBytes: number): Promise<{ manager: LogManager; log: Log }> {
  const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
  const log = await manager.getOrCreateLog('bench', 0, { config: { segmentBytes, retentionMs: -1 } })
  return { manager, log }
}

async function main(): Promise<void> {
  const { Bench } = await import('tinybench')
  const root = mkdtempSync(join(tmpdir(), 'ferrolog-bench-'))
  const rows: Row[] = []
  try {
    // 1. Batch scan with CRC validation over 64 MiB of 16 KiB batches in memory.
    const scan = batchesBuffer(64 * 1024 * 1024, 16 * 1024)
    const scanBench = new Bench({ time: BENCH_MS, warmup: true })
    scanBench.add('native', () => {
      binding.validateBatches(scan)
    })
    scanBench.add('js', () => {
      for (let at = 0; at < scan.length; at += batchSizeAt(scan, at)) validateBatch(scan, at)
    })
    await scanBench.run()
    rows.push({
      case: 'batch scan + CRC-32C validation (64 MiB of 16 KiB batches)',
      native: opsPerSecond(scanBench, 'native', scan.length) / 1e9,
      js: opsPerSecond(scanBench, 'js', scan.length) / 1e9,
      unit: 'GB/s',
    })

    // 2. Read-path lookups (floor segment, offset index binary search, batch-header scan)
    //    through the public Log.read, on a log of 1,000,000 records in 100,000 batches (53 MB)
    //    in 16 MiB segments, at random offsets (cold for the CPU caches: the worst case).
    const lookups: Record<BackendName, number> = { native: NaN, js: NaN }
    const appends: Record<BackendName, number> = { native: NaN, js: NaN }
    const sixteenK = batchesBuffer(16 * 1024, 16 * 1024)
    for (const backend of ['native', 'js'] as BackendName[]) {
      const { manager, log } = await openLog(backend, join(root, `lookup-${backend}`), 16 * 1024 * 1024)
      const small = buildBatch(
        Array.from({ length: 10 }, (_, i) => ({ value: Buffer.alloc(40, i), timestamp: 1_700_000_000_000 })),
        { nowMs: 1 },
      )
      for (let i = 0; i < 100_000; i++) log.append(small)
      const end = Number(log.logEndOffset())
      let seed = 42
      const offsets = Array.from({ length: 4096 }, () => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff
        return BigInt(seed % end)
      })
      const bench = new Bench({ time: BENCH_MS, warmup: true })
      bench.add('lookup', () => {
        for (let i = 0; i < offsets.length; i++) log.read(offsets[i]!, { maxBytes: 4096 })
      })
      await bench.run()
      lookups[backend] = opsPerSecond(bench, 'lookup', offsets.length)
      await manager.close()

      // 3. Appends of 16 KiB batches as leader (validation, offset assignment, index), no fsync.
      const appendDir = join(root, `append-${backend}`)
      const opened = await openLog(backend, appendDir, 256 * 1024 * 1024)
      const appendBench = new Bench({ time: BENCH_MS, warmup: false })
      appendBench.add('append', () => {
        for (let i = 0; i < 64; i++) opened.log.append(sixteenK)
      })
      await appendBench.run()
      appends[backend] = opsPerSecond(appendBench, 'append', 64 * sixteenK.length) / 1e6
      await opened.manager.close()
      rmSync(appendDir, { recursive: true, force: true })
    }
    rows.push({ case: 'read-path lookup: Log.read at a random offset (1M records, 4 segments)', native: lookups.native, js: lookups.js, unit: 'ops/s' })
    rows.push({ case: 'append 16 KiB batches as leader, no fsync', native: appends.native, js: appends.js, unit: 'MB/s' })
  } finally {
    rmSync(root, { recursive: true, force: true })
  }

  const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`
  console.log(`ferrolog storage benchmarks (${machine}), ${BENCH_MS} ms per case\n`)
  console.log('| case | native | pure TS | native / TS | unit |')
  console.log('|---|---:|---:|---:|---|')
  for (const r of rows) {
    const fmt = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2))
    console.log(`| ${r.case} | ${fmt(r.native)} | ${fmt(r.js)} | ${(r.native / r.js).toFixed(1)}x | ${r.unit} |`)
  }
  const outDir = join(__dirname, '..', '..', 'bench', '.out')
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, 'storage.json'), JSON.stringify({ machine, benchMs: BENCH_MS, rows }, null, 2))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
