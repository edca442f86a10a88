// Start-up of an in-process cluster (`startCluster`, ts/server/embedded-cluster.ts): the time from
// the call until it resolves (every broker listening, registered and seeing all the others), until
// a controller is elected, and the time `stop()` takes, over several rounds in one process (the
// first pays the modules' first use). Not a CI test; nothing is asserted.
//
//   node scripts/build.mjs ts && node bench/start-cluster.mjs [--brokers N] [--rounds R]
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'

const { values } = parseArgs({ options: { brokers: { type: 'string', default: '3' }, rounds: { type: 'string', default: '7' } } })
const brokers = Number(values.brokers)
const rounds = Number(values.rounds)
const here = resolve(import.meta.dirname, '../dist')
const t0 = performance.now()
const { startCluster } = await import(join(here, 'ts/index.js'))
const importMs = performance.now() - t0

const rows = []
for (let r = 0; r < rounds; r++) {
  const start = performance.now()
  const cluster = await startCluster({ brokers })
  const started = performance.now() - start
  for (let i = 0; i < 2000 && !cluster.brokers.every((b) => b.cluster.cache.controllerId() >= 0); i++) await new Promise((res) => setTimeout(res, 1))
  const controller = performance.now() - start
  const stopAt = performance.now()
  await cluster.stop()
  rows.push({ started, controller, stop: performance.now() - stopAt })
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (x) => x.toFixed(1)
console.log(`node ${process.version}, ${brokers} brokers, ${rounds} rounds; import of dist/ts/index.js ${fmt(importMs)} ms`)
console.log('round  startCluster resolved ms  controller elected ms  stop ms')
rows.forEach((row, i) => console.log(`${String(i + 1).padStart(5)}  ${fmt(row.started).padStart(25)}  ${fmt(row.controller).padStart(21)}  ${fmt(row.stop).padStart(7)}`))
console.log(
  `median (rounds 2-${rounds}): startCluster ${fmt(median(rows.slice(1).map((x) => x.started)))} ms, controller ${fmt(median(rows.slice(1).map((x) => x.controller)))} ms, stop ${fmt(median(rows.slice(1).map((x) => x.stop)))} ms; first round ${fmt(rows[0].started)} ms`,
)
