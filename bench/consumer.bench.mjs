#!/usr/bin/env node
// ferrolog's Consumer next to kafkajs and @platformatic/kafka, in one run, reading the same
// topics from the same ferrolog broker.
//
//   node scripts/build.mjs ts && node bench/consumer.bench.mjs
//   BENCH_RECORDS_100=1000000 BENCH_RECORDS_1K=1000000 node bench/consumer.bench.mjs
//
// Steps: one ferrolog broker (dist/, native storage, its own process); per row (record size 100 B
// or 1 KiB x compression none, lz4, zstd) a 1-partition topic filled by ferrolog's produce with
// batches of 16 KiB; then each client in a fresh process of its own reads the topic from the
// start to its last record: records/s and the consumer's CPU-seconds per GB of record values,
// both measured from the subscribe/assign call to the last record (group joins included:
// measuring from the first record favoured a client that buffers much before yielding one),
// each client BENCH_RUNS times (default 3), the median reported. Every client gets its records as
// values it could read (the byte length of each value is summed). ferrolog is run twice: with
// the Rust decoder (the binding) and with the TypeScript twin (FERROLOG_NATIVE=0). kafkajs has no lz4 or zstd
// codec of its own (they are plugins): those rows say n/a for it, as for a client that fails a
// row (@platformatic/kafka reads zstd only on Node versions whose node:zlib has it).
// Env: BENCH_RECORDS_100 (default 300000), BENCH_RECORDS_1K (default 100000), BENCH_RUNS (3),
// BENCH_ROWS (comma list like 100-none,1024-lz4; default all six).
// The table goes to stdout and bench/.out/consumer.md.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = path.join(root, 'dist', 'ts', 'index.js')
const self = fileURLToPath(import.meta.url)

// ---- child: one consumer run ---------------------------------------------------------------
async function child(mode, bootstrap, topic, count) {
  let first = 0
  let cpu0
  let n = 0
  let bytes = 0
  const start = () => {
    first = performance.now()
    cpu0 = process.cpuUsage()
  }
  const finish = () => {
    const ms = performance.now() - first
    const cpu = process.cpuUsage(cpu0)
    process.stdout.write(JSON.stringify({ n, bytes, ms, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\n')
  }
  if (mode === 'ferrolog' || mode === 'ferrolog-ts') {
    const { Consumer } = await import(dist)
    const c = new Consumer({ bootstrapServers: bootstrap, 'auto.offset.reset': 'earliest', 'max.poll.records': 10_000 })
    start()
    c.assign([{ topic, partition: 0 }])
    for await (const batch of c) {
      for (const r of batch.records) bytes += r.value.length
      n += batch.records.length
      if (n >= count) break
    }
    finish()
    await c.close()
  } else if (mode === 'kafkajs') {
    const { Kafka, logLevel } = await import('kafkajs')
    const kafka = new Kafka({ clientId: 'bench', brokers: [bootstrap], logLevel: logLevel.NOTHING })
    const c = kafka.consumer({ groupId: `bench-${process.pid}`, maxBytes: 52_428_800, maxBytesPerPartition: 1_048_576 })
    await c.connect()
    start()
    await c.subscribe({ topic, fromBeginning: true })
    await new Promise((resolve) => {
      c.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          for (const m of batch.messages) bytes += m.value.length
          n += batch.messages.length
          if (n >= count) resolve()
        },
      })
    })
    finish()
    await c.disconnect()
  } else if (mode === 'platformatic') {
    const { Consumer } = await import('@platformatic/kafka')
    const c = new Consumer({ clientId: 'bench', groupId: `bench-${process.pid}`, bootstrapBrokers: [bootstrap], maxWaitTime: 500 })
    start()
    const stream = await c.consume({ topics: [topic], mode: 'earliest', autocommit: false })
    for await (const m of stream) {
      bytes += m.value.length
      n++
      if (n >= count) break
    }
    finish()
    await stream.close().catch(() => undefined)
    await c.close(true).catch(() => undefined)
  }
  process.exit(0)
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv[4], process.argv[5], Number(process.argv[6]))
}

// ---- parent ---------------------------------------------------------------------------------
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const COUNTS = { 100: Number(process.env.BENCH_RECORDS_100 ?? 300_000), 1024: Number(process.env.BENCH_RECORDS_1K ?? 100_000) }
const ALL_ROWS = [100, 1024].flatMap((size) => ['none', 'lz4', 'zstd'].map((compression) => ({ size, compression })))
const ROWS = process.env.BENCH_ROWS ? ALL_ROWS.filter((r) => process.env.BENCH_ROWS.split(',').includes(`${r.size}-${r.compression}`)) : ALL_ROWS
// ferrolog-ts: ferrolog's Consumer with the TypeScript decoder (FERROLOG_NATIVE=0), the twin.
const CLIENTS = ['ferrolog', 'ferrolog-ts', 'kafkajs', 'platformatic']

function startBrokerProcess() {
  const script = `import(${JSON.stringify(dist)}).then(async (m) => { const b = await m.startBroker(); process.stdout.write(b.bootstrapServers + '\\n'); process.stdin.on('end', () => b.stop().then(() => process.exit(0))); process.stdin.resume() })`
  const p = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    p.stdout.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve({ process: p, bootstrap: out.trim() })
    })
    p.on('exit', (code) => reject(new Error(`broker exited ${code}`)))
  })
}

async function fill(bootstrap, topic, size, compression, count) {
  const { NetworkClient, produce } = await import(dist)
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    const value = Buffer.alloc(size)
    for (let i = 0; i < size; i++) value[i] = 97 + ((i * 7 + (i >> 3)) % 26)
    const chunk = Math.max(1, Math.floor((4 << 20) / size))
    for (let from = 0; from < count; from += chunk) {
      const records = []
      for (let i = from; i < Math.min(count, from + chunk); i++) {
        const v = Buffer.from(value)
        v.write(String(i).padStart(10, '0'), 0)
        records.push({ key: null, value: v })
      }
      await produce(client, topic, records, { partition: 0, compression, batchBytes: 16_384, acks: 1 })
    }
  } finally {
    await client.close()
  }
}

function runChild(mode, bootstrap, topic, count) {
  const env = mode === 'ferrolog-ts' ? { ...process.env, FERROLOG_NATIVE: '0' } : process.env
  const r = spawnSync(process.execPath, [self, '--child', mode, bootstrap, topic, String(count)], { encoding: 'utf8', timeout: 600_000, env })
  const line = r.stdout.trim().split('\n').pop()
  if (r.status !== 0 || !line) throw new Error(`${mode} on ${topic}: exit ${r.status} ${r.stderr.slice(-500)}`)
  const res = JSON.parse(line)
  if (res.n < count) throw new Error(`${mode} read ${res.n} of ${count}`)
  return res
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (x) => Math.round(x).toLocaleString('en-US')

const { process: broker, bootstrap } = await startBrokerProcess()
const lines = []
try {
  const { NetworkClient } = await import(dist)
  const admin = new NetworkClient({ bootstrapServers: bootstrap })
  await admin.refreshMetadata(null)
  await admin.close()
  lines.push('| records | compression | ferrolog rec/s | ferrolog TS decoder | kafkajs rec/s | platformatic rec/s | ferrolog vs faster | CPU-s/GB ferrolog | TS decoder | kafkajs | platformatic |')
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const { size, compression } of ROWS) {
    const topic = `bench-${size}-${compression}`
    const count = COUNTS[size]
    await fill(bootstrap, topic, size, compression, count)
    const results = {}
    for (const mode of CLIENTS) {
      if (mode === 'kafkajs' && compression !== 'none') {
        results[mode] = null
        continue
      }
      const runs = []
      try {
        for (let i = 0; i < RUNS; i++) runs.push(runChild(mode, bootstrap, topic, count))
      } catch (err) {
        // e.g. @platformatic/kafka on Node 20 has no zstd (node:zlib has it from Node 22.15).
        process.stderr.write(`${topic} ${mode}: failed, n/a (${String(err.message).split('\n').find((l) => /code|Error/.test(l)) ?? ''})\n`)
        results[mode] = null
        continue
      }
      results[mode] = {
        rate: median(runs.map((r) => (r.n * 1000) / r.ms)),
        cpuPerGB: median(runs.map((r) => r.cpuMs / 1000 / (r.bytes / 1e9))),
      }
      process.stderr.write(`${topic} ${mode}: ${fmt(results[mode].rate)} rec/s, ${results[mode].cpuPerGB.toFixed(1)} CPU-s/GB\n`)
    }
    const others = ['kafkajs', 'platformatic'].map((m) => results[m]?.rate ?? 0)
    const ratio = Math.max(...others) > 0 ? `${(results.ferrolog.rate / Math.max(...others)).toFixed(2)}x` : 'n/a'
    const cell = (m, f) => (results[m] ? f(results[m]) : 'n/a')
    lines.push(
      `| ${fmt(count)} x ${size} B | ${compression} | ${fmt(results.ferrolog.rate)} | ${fmt(results['ferrolog-ts'].rate)} | ${cell('kafkajs', (r) => fmt(r.rate))} | ${cell('platformatic', (r) => fmt(r.rate))} | ${ratio} | ${results.ferrolog.cpuPerGB.toFixed(1)} | ${results['ferrolog-ts'].cpuPerGB.toFixed(1)} | ${cell('kafkajs', (r) => r.cpuPerGB.toFixed(1))} | ${cell('platformatic', (r) => r.cpuPerGB.toFixed(1))} |`,
    )
  }
} finally {
  broker.stdin.end()
}
const table = lines.join('\n')
process.stdout.write(table + '\n')
fs.mkdirSync(path.join(root, 'bench', '.out'), { recursive: true })
fs.writeFileSync(path.join(root, 'bench', '.out', 'consumer.md'), table + '\n')
