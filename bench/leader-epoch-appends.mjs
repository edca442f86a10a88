#!/usr/bin/env node
// The event loop's time for the first append of a new leader epoch to many partitions (what a
// topic becoming writable costs its leaders), next to the same appends once the epoch is known,
// for one or more builds in one run, builds taking turns (issue 30 item 1).
//
//   node bench/leader-epoch-appends.mjs [distDir...]     # default: this tree's dist/
//   BENCH_PARTITIONS=300 BENCH_ROUNDS=3 node bench/leader-epoch-appends.mjs /tmp/before/dist dist
//
// Each round, each build in a fresh child process: opens BENCH_PARTITIONS native logs in a temp
// dir, appends one 100-byte record to each in leader epoch 1 (the first append of the epoch),
// then one more to each in the same epoch; prints the milliseconds of each pass (synchronous
// appends: the time the event loop was held). Medians per build over the rounds.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const here = fileURLToPath(import.meta.url)
const root = path.join(path.dirname(here), '..')
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 300)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)

async function child(dist) {
  const { LogManager, silentLogger } = await import(pathToFileURL(path.join(dist, 'ts', 'index.js')).href)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-epoch-appends-'))
  try {
    const manager = await LogManager.open({ dataDir, backend: 'native', logger: silentLogger, retentionCheckIntervalMs: 0 })
    const logs = []
    for (let p = 0; p < PARTITIONS; p++) logs.push(await manager.getOrCreateLog('t', p))
    const pass = () => {
      const start = process.hrtime.bigint()
      for (const log of logs) log.append([{ value: Buffer.alloc(100) }], { leaderEpoch: 1 })
      return Number(process.hrtime.bigint() - start) / 1e6
    }
    const first = pass()
    const next = pass()
    await manager.close()
    process.stdout.write(JSON.stringify({ first, next }))
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

if (process.argv[2] === '--child') {
  await child(process.argv[3])
} else {
  const dists = process.argv.slice(2).length > 0 ? process.argv.slice(2).map((d) => path.resolve(d)) : [path.join(root, 'dist')]
  const results = new Map(dists.map((d) => [d, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const dist of dists) {
      const out = execFileSync(process.execPath, [here, '--child', dist], { encoding: 'utf8' })
      results.get(dist).push(JSON.parse(out))
    }
  }
  process.stdout.write(`${PARTITIONS} partitions, ${ROUNDS} round(s), load average ${os.loadavg()[0].toFixed(1)}\n\n`)
  process.stdout.write('| build | first appends of epoch 1, ms | next appends, ms | rounds (first) |\n|---|---:|---:|---|\n')
  for (const [dist, rs] of results) {
    const firsts = rs.map((r) => r.first)
    process.stdout.write(`| ${path.relative(root, dist) || dist} | ${median(firsts).toFixed(1)} | ${median(rs.map((r) => r.next)).toFixed(1)} | ${firsts.map((x) => x.toFixed(0)).join(', ')} |\n`)
  }
}
