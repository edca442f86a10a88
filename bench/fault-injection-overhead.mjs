// The request-path cost of fault injection (tests only): CPU per serial one-record Produce round trip
// (each its own request; client and broker in this process), with injection off, on with no rule,
// and on with three rules that match nothing; medians of 5 interleaved rounds, as ratios to off.
//   node scripts/build.mjs ts && node bench/fault-injection-overhead.mjs [requests per round, default 3000]
import { startBroker, Producer } from '../dist/ts/index.js'
const N = Number(process.argv[2] ?? 3000)
async function run(label, options, setup) {
  const broker = await startBroker(options)
  await broker.createTopic('t', 1, {})
  setup?.(broker)
  const p = new Producer({ bootstrapServers: broker.bootstrapServers, 'linger.ms': 0 })
  for (let i = 0; i < 200; i++) await p.send({ topic: 't', partition: 0, value: 'w' })
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  for (let i = 0; i < N; i++) await p.send({ topic: 't', partition: 0, value: 'x'.repeat(100) })
  const ms = performance.now() - t0
  const c = process.cpuUsage(c0)
  await p.close()
  await broker.stop()
  return { label, perSec: Math.round(N / (ms / 1000)), cpuUs: (c.user + c.system) / N }
}
const results = {}
for (let round = 0; round < 5; round++) {
  for (const [label, opts, setup] of [
    ['off', {}, null],
    ['on, no rule', { faultInjection: true }, null],
    [
      'on, 3 non-matching rules',
      { faultInjection: true },
      (b) => {
        for (let i = 0; i < 3; i++) b.inject({ apiKey: 'Produce', clientId: 'nobody', latencyMs: 1000 })
      },
    ],
  ]) {
    const r = await run(label, opts, setup)
    ;(results[label] ??= []).push(r.cpuUs)
  }
}
const med = (a) => a.slice().sort((x, y) => x - y)[2]
for (const [k, v] of Object.entries(results))
  console.log(
    `${k}: CPU µs per Produce round trip (client and broker, one process) ${v.map((x) => x.toFixed(1)).join(', ')}; median ${med(v).toFixed(1)}, ratio to off ${(med(v) / med(results.off)).toFixed(3)}`,
  )
