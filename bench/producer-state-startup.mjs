// Start-up with many producers: the time to open a partition's log and load its idempotence
// window (ts/replica/producer-state.ts `loadFromLog`), and how many producers the window knows,
// for this build's window (joined to the log's producer state) next to another build's (the
// tail scan alone), over the same log. Not a CI test.
//
//   node scripts/build.mjs && node bench/producer-state-startup.mjs [--producers N] [--filler-mb M] [--before <dist dir>]
//
// The log: N producers write one idempotent batch each, then M MiB of plain batches, in
// segments of 16 MiB; a clean close. `--before` names the dist/ directory of the build to
// compare with (default: /work/main/dist); its ProducerStateManager loads from this build's log.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'

const { values } = parseArgs({
  options: {
    producers: { type: 'string', default: '100000' },
    'filler-mb': { type: 'string', default: '40' },
    before: { type: 'string', default: '/work/main/dist' },
    rounds: { type: 'string', default: '3' },
  },
})
const producers = Number(values.producers)
const fillerMb = Number(values['filler-mb'])
const rounds = Number(values.rounds)
const here = resolve(import.meta.dirname, '../dist')
const { LogManager, buildBatch, silentLogger } = await import(join(here, 'ts/index.js'))
const after = (await import(join(here, 'ts/replica/producer-state.js'))).ProducerStateManager
const before = (await import(join(resolve(values.before), 'ts/replica/producer-state.js'))).ProducerStateManager

const dataDir = mkdtempSync(join(tmpdir(), 'ferrolog-psm-bench-'))
const options = { dataDir, backend: 'native', logger: silentLogger, retentionCheckIntervalMs: 0, defaultConfig: { segmentBytes: 16 * 1024 * 1024, retentionMs: -1 } }
{
  const manager = await LogManager.open(options)
  const log = await manager.getOrCreateLog('t', 0)
  for (let id = 0; id < producers; id++) log.append(buildBatch([{ value: `p${id}` }], { producerId: BigInt(id), producerEpoch: 0, baseSequence: 0 }))
  const filler = Array.from({ length: 1000 }, () => ({ value: Buffer.alloc(1024, 'x') }))
  for (let i = 0; i < fillerMb; i++) log.append(buildBatch(filler))
  await manager.close()
}

async function measure(Psm) {
  const t0 = performance.now()
  const manager = await LogManager.open(options)
  const log = manager.getLog('t', 0)
  const t1 = performance.now()
  const state = Psm.loadFromLog(log)
  const t2 = performance.now()
  // Producer 0 wrote first: is its retry a duplicate?
  const check = state.check([{ producerId: 0n, producerEpoch: 0, baseSequence: 0, lastOffsetDelta: 0 }])
  await manager.close()
  return { openMs: t1 - t0, windowMs: t2 - t1, known: state.size, oldestRetry: check.kind }
}

const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const results = {}
for (const [name, Psm] of [
  ['before (tail scan)', before],
  ['after (log state + tail scan)', after],
]) {
  const runs = []
  for (let i = 0; i < rounds; i++) runs.push(await measure(Psm))
  results[name] = {
    'log open ms': median(runs.map((r) => r.openMs)).toFixed(1),
    'window load ms': median(runs.map((r) => r.windowMs)).toFixed(1),
    'producers known': runs[0].known,
    "producer 0's retry": runs[0].oldestRetry,
  }
}
console.log(`${producers} producers, then ${fillerMb} MiB of plain batches; median of ${rounds}`)
console.table(results)
rmSync(dataDir, { recursive: true, force: true })
