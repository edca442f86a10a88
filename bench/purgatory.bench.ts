/**
 * Delayed-operation purgatory benchmarks: the cost per operation of parking and completing, of
 * parking and expiring, and the heap a parked operation holds, each next to the naive design
 * (one Node setTimeout per operation) where one exists. Results go to stdout as a table and to
 * bench/.out/purgatory.json.
 *
 *   node scripts/build.mjs ts && node --expose-gc dist/bench/purgatory.bench.js
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { DelayedOperation } from '../ts/purgatory/delayed-operation.js'
import { DelayedOperationPurgatory, topicPartitionOperationKey } from '../ts/purgatory/purgatory.js'
import { SystemTimer } from '../ts/purgatory/timing-wheel.js'
import { silentLogger } from '../ts/logger.js'

const BENCH_MS = Number(process.env.BENCH_MS ?? 1500)
const KEYS = Array.from({ length: 1_000 }, (_, i) => topicPartitionOperationKey('bench', i))

interface Row {
  case: string
  purgatory: number
  naive: number | null
  unit: string
}

type Bench = InstanceType<typeof import('tinybench', { with: { 'resolution-mode': 'import' } }).Bench>

/** Nanoseconds per operation of a task that handles `opsPerCall` operations per call. */
function nsPerOp(bench: Bench, name: string, opsPerCall: number): number {
  const result = bench.getTask(name)?.result
  if (!result || !('period' in result)) throw new Error(`benchmark ${name} did not complete: ${JSON.stringify(result)}`)
  return (result.period * 1e6) / opsPerCall
}

/** The smallest useful operation: completes when `ready`, does nothing on completion. */
class BenchOperation extends DelayedOperation {
  ready = false

  tryComplete(): boolean {
    return this.ready ? this.forceComplete() : false
  }

  onComplete(): void {}

  onExpiration(): void {}
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc
  if (!collect) throw new Error('run with node --expose-gc')
  collect()
  collect()
}

/** Heap bytes per item that `make(i)` creates and keeps reachable, over `count` items. */
function heapBytesPer(count: number, make: (i: number) => unknown): number {
  const kept: unknown[] = new Array(count)
  gc()
  const before = process.memoryUsage().heapUsed
  for (let i = 0; i < count; i++) kept[i] = make(i)
  gc()
  const after = process.memoryUsage().heapUsed
  if (kept.length !== count) throw new Error('unreachable')
  return (after - before) / count
}

async function main(): Promise<void> {
  const { Bench } = await import('tinybench')
  const rows: Row[] = []
  const BATCH = 1_000

  // 1. Park (watch under one of 1,000 keys + add to the timer, 30 s timeout) then complete by
  //    checkAndComplete on each key: the long-poll fetch that an append wakes.
  {
    const purgatory = new DelayedOperationPurgatory<BenchOperation>('Fetch', { logger: silentLogger })
    const bench = new Bench({ time: BENCH_MS, warmup: true })
    bench.add('purgatory', () => {
      const ops: BenchOperation[] = new Array(BATCH)
      for (let i = 0; i < BATCH; i++) {
        const op = new BenchOperation(30_000)
        ops[i] = op
        purgatory.tryCompleteElseWatch(op, [KEYS[i]!])
      }
      for (let i = 0; i < BATCH; i++) ops[i]!.ready = true
      for (let i = 0; i < BATCH; i++) purgatory.checkAndComplete(KEYS[i]!)
    })
    await bench.run()
    if (purgatory.numDelayed() !== 0 || purgatory.watched() !== 0) throw new Error('operations left behind')
    // The baseline in a Bench of its own: run in the same one, its timer churn (warm-up included)
    // slowed the purgatory case by 2x to 4x on the reference machine.
    gc()
    const naive = new Bench({ time: BENCH_MS, warmup: true })
    naive.add('naive', () => {
      const handles: ReturnType<typeof setTimeout>[] = new Array(BATCH)
      for (let i = 0; i < BATCH; i++) handles[i] = setTimeout(() => {}, 30_000)
      for (let i = 0; i < BATCH; i++) clearTimeout(handles[i])
    })
    await naive.run()
    rows.push({
      case: 'park + complete (watch 1 key, 30 s timeout, then checkAndComplete)',
      purgatory: nsPerOp(bench, 'purgatory', BATCH),
      naive: nsPerOp(naive, 'naive', BATCH),
      unit: 'ns/op',
    })
    purgatory.shutdown()
  }

  // 2. Park then expire: 1,000 operations with timeouts of 500-599 ms (they cascade from the
  //    8 s wheel down to the 1 ms wheel), then the clock jumps 1 s and one advance expires them
  //    all, then the watch lists are purged. The clock is driven by hand so that expiry is
  //    measured, not waited for.
  {
    let clock = 0
    const timer = new SystemTimer({ now: () => clock, logger: silentLogger })
    const purgatory = new DelayedOperationPurgatory<BenchOperation>('Fetch', { timer, purgeInterval: BATCH - 1, logger: silentLogger })
    let expired = 0
    const bench = new Bench({ time: BENCH_MS, warmup: true })
    bench.add('purgatory', () => {
      for (let i = 0; i < BATCH; i++) purgatory.tryCompleteElseWatch(new BenchOperation(500 + (i % 100)), [KEYS[i]!])
      for (let t = 0; t < 1_000; t += 50) {
        clock += 50
        timer.advanceClock(clock)
      }
      purgatory.maybePurge()
      expired += BATCH
    })
    await bench.run()
    if (purgatory.expiredTotal() !== expired || purgatory.watched() !== 0) throw new Error('expiry incomplete')
    rows.push({
      case: 'park + expire (watch 1 key, 500-599 ms timeout, clock advanced in 50 ms steps)',
      purgatory: nsPerOp(bench, 'purgatory', BATCH),
      naive: null,
      unit: 'ns/op',
    })
    purgatory.shutdown()
    timer.shutdown()
  }

  // 3. Heap held per parked operation: 10,000 operations on 1,000 keys, 30 s timeout, each in a
  //    fresh purgatory (so the 1,000 watch lists and the timer's wheels are counted, amortized).
  //    The median of 5 rounds: heapUsed moves by a few hundred KB on its own.
  {
    const COUNT = 10_000
    const median = (f: () => number) => {
      const xs = Array.from({ length: 5 }, f).sort((a, b) => a - b)
      return xs[2]! // of 5
    }
    const parkedWith = (keysPerOp: number) =>
      median(() => {
        const purgatory = new DelayedOperationPurgatory<BenchOperation>('Fetch', { logger: silentLogger })
        const perOp = heapBytesPer(COUNT, (i) => {
          const op = new BenchOperation(30_000)
          const keys: string[] = []
          for (let k = 0; k < keysPerOp; k++) keys.push(KEYS[(i + k) % KEYS.length]!)
          purgatory.tryCompleteElseWatch(op, keys)
          return op
        })
        if (purgatory.numDelayed() !== COUNT) throw new Error('not parked')
        purgatory.shutdown()
        return perOp
      })
    const bare = median(() => heapBytesPer(COUNT, () => new BenchOperation(30_000)))
    const oneKey = parkedWith(1)
    const threeKeys = parkedWith(3)
    const naive = median(() => {
      const handles: ReturnType<typeof setTimeout>[] = []
      const perOp = heapBytesPer(COUNT, () => {
        const h = setTimeout(() => {}, 30_000)
        handles.push(h)
        return h
      })
      for (const h of handles) clearTimeout(h)
      return perOp
    })
    rows.push({ case: 'heap per operation object alone (a minimal DelayedOperation)', purgatory: bare, naive: null, unit: 'bytes' })
    rows.push({ case: 'heap per parked operation, 10,000 on 1,000 keys, 1 key each (object included)', purgatory: oneKey, naive, unit: 'bytes' })
    rows.push({ case: 'heap per parked operation, 10,000 on 1,000 keys, 3 keys each (object included)', purgatory: threeKeys, naive: null, unit: 'bytes' })
  }

  const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`
  console.log(`ferrolog purgatory benchmarks (${machine}), ${BENCH_MS} ms per case\n`)
  console.log('| case | purgatory (timing wheel) | one setTimeout per operation | unit |')
  console.log('|---|---:|---:|---|')
  for (const r of rows) {
    const fmt = (v: number | null) => (v === null ? '-' : v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1))
    console.log(`| ${r.case} | ${fmt(r.purgatory)} | ${fmt(r.naive)} | ${r.unit} |`)
  }
  const outDir = join(__dirname, '..', '..', 'bench', '.out')
  mkdirSync(outDir, { recursive: true })
  writeFileSync(join(outDir, 'purgatory.json'), JSON.stringify({ machine, benchMs: BENCH_MS, rows }, null, 2))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
