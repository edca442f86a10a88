#!/usr/bin/env node
// ferrolog's Consumer next to kafkajs and @platformatic/kafka, in one run, reading the same
// topics from the same ferrolog broker.
//
//   node scripts/build.mjs ts && node bench/consumer.bench.mjs
//   BENCH_RECORDS_100=1000000 BENCH_RECORDS_1K=300000 BENCH_RUNS=5 node bench/consumer.bench.mjs
//
// Steps: one ferrolog broker (dist/, native storage, its own process); per row (record size 100 B
// or 1 KiB x compression none, lz4, zstd) a 1-partition topic filled by ferrolog's produce with
// batches of 16 KiB; then each client in a fresh process of its own reads the topic from the
// start to its last record as a member of a new consumer group (subscribe, no commits):
// records/s and the consumer's CPU-seconds per GB of record values, both measured from the
// subscribe call to the last record (the group join included: measuring from the first record
// favoured a client that fetches and decodes much before yielding one). Every client gets its
// records as values it could read (the byte length of each value is summed).
//
// Fairness:
// - Placement (BENCH_PIN, default 1 where taskset exists and there are two CPUs or more): the
//   broker's threads on CPU 0, each consumer process on CPU 1, so that a consumer never competes
//   with the broker for a core (the filling producer runs before, unpinned).
// - The same fetch settings for every client, Kafka's defaults where the client has the knob:
//   fetch.max.bytes 50 MiB, max.partition.fetch.bytes 1 MiB, fetch.min.bytes 1,
//   fetch.max.wait.ms 500, READ_UNCOMMITTED, no auto-commit.
// - @platformatic/kafka as its own benchmarks (benchmarks/consumer.ts) read it: the stream's
//   'data' event, not for-await (one promise per message), and READ_UNCOMMITTED (its default is
//   READ_COMMITTED). Its default maxBytesPerPartition is its maxBytes (10 MiB): with one
//   partition each response was one 10 MiB buffer, and a 100,000-record topic (10 MB) came
//   whole in the first response; measured from the first record, that read only an in-memory
//   stream (the 884,000 rec/s of the first run). 1 MiB per partition is also faster for it.
// - Per row, one warm-up run of each client (not counted), then BENCH_RUNS (default 5) rounds
//   with the clients interleaved (so load that comes and goes touches all of them); medians.
// - The broker's CPU-seconds over each run (from /proc) give "broker busy": its CPU time over the
//   run's wall time; near 100% a row is bound by the broker, not by the consumer.
//
// ferrolog is run twice: with the Rust decoder (the binding) and with the TypeScript twin
// (FERROLOG_NATIVE=0). kafkajs has no lz4 or zstd codec of its own (they are plugins): those rows
// say n/a for it, as for a client that fails a row (@platformatic/kafka reads zstd only on Node
// versions whose node:zlib has it).
//
// BENCH_READ=1, the application reading the records (issue 29): the topics get a key per record
// (`key-<n>`), and every client's application reads each record's key and value as strings
// (UTF-8) into one Set, the same work on every client: kafkajs's message.key/value.toString(),
// @platformatic/kafka's message.key/value.toString() (Buffer deserializers, its default),
// ferrolog's record.key/value.toString(). The Set keeps every string (as an application that
// collects what it reads); BENCH_SET_MAX=n clears it at n entries instead.
// Env: BENCH_RECORDS_100 (default 300000), BENCH_RECORDS_1K (default 100000), BENCH_RUNS (5),
// BENCH_ROWS (comma list like 100-none,1024-lz4; default all six), BENCH_PIN (1), BENCH_READ (0),
// BENCH_SET_MAX (no bound), BENCH_CPU_PROF (a directory: CPU profiles of ferrolog's runs), BENCH_CLIENTS (comma list of ferrolog, ferrolog-ts, kafkajs,
// platformatic; default all).
// The table goes to stdout and bench/.out/consumer.md.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { BROKER_CPU, TOOLS_CPU, cpuSeconds, pin, pinned } from './lib/processes.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = path.join(root, 'dist', 'ts', 'index.js')
const self = fileURLToPath(import.meta.url)

// The fetch settings every client gets (Kafka's consumer defaults, fetch.max.wait.ms 500).
const FETCH_MAX_BYTES = 52_428_800
const PARTITION_MAX_BYTES = 1_048_576
const FETCH_MAX_WAIT_MS = 500
const FETCH_MIN_BYTES = 1

// ---- child: one consumer run ---------------------------------------------------------------
async function child(mode, bootstrap, topic, count) {
  const read = process.env.BENCH_READ === '1'
  const setMax = Number(process.env.BENCH_SET_MAX ?? Infinity)
  // The application's work per record in BENCH_READ mode: its key and value as strings, kept.
  const seen = new Set()
  const keep = (key, value) => {
    if (seen.size >= setMax) seen.clear()
    seen.add(key)
    seen.add(value)
  }
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
  const groupId = `bench-${process.pid}-${Date.now()}`
  if (mode === 'ferrolog' || mode === 'ferrolog-ts' || mode === 'ferrolog-str') {
    const { Consumer } = await import(dist)
    // ferrolog-str: the string deserializers, keys and values decoded straight from the fetched data.
    const deserializers = mode === 'ferrolog-str' ? { 'key.deserializer': 'string', 'value.deserializer': 'string' } : {}
    const c = new Consumer({
      ...deserializers,
      bootstrapServers: bootstrap,
      groupId,
      'auto.offset.reset': 'earliest',
      'enable.auto.commit': false,
      'fetch.max.bytes': FETCH_MAX_BYTES,
      'max.partition.fetch.bytes': PARTITION_MAX_BYTES,
      'fetch.min.bytes': FETCH_MIN_BYTES,
      'fetch.max.wait.ms': FETCH_MAX_WAIT_MS,
      'max.poll.records': 10_000,
    })
    start()
    c.subscribe([topic])
    for await (const batch of c) {
      if (read && mode === 'ferrolog-str') {
        for (const r of batch.records) {
          const value = r.value
          keep(r.key, value)
          bytes += value.length
        }
      } else if (read) {
        for (const r of batch.records) {
          const value = r.value.toString()
          keep(r.key.toString(), value)
          bytes += value.length
        }
      } else for (const r of batch.records) bytes += r.value.length
      n += batch.records.length
      if (n >= count) break
    }
    finish()
    await c.close()
  } else if (mode === 'kafkajs') {
    const { Kafka, logLevel } = await import('kafkajs')
    const kafka = new Kafka({ clientId: 'bench', brokers: [bootstrap], logLevel: logLevel.NOTHING })
    const c = kafka.consumer({ groupId, maxBytes: FETCH_MAX_BYTES, maxBytesPerPartition: PARTITION_MAX_BYTES, minBytes: FETCH_MIN_BYTES, maxWaitTimeInMs: FETCH_MAX_WAIT_MS })
    await c.connect()
    start()
    await c.subscribe({ topic, fromBeginning: true })
    await new Promise((resolve) => {
      c.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          if (read) {
            for (const m of batch.messages) {
              const value = m.value.toString()
              keep(m.key.toString(), value)
              bytes += value.length
            }
          } else for (const m of batch.messages) bytes += m.value.length
          n += batch.messages.length
          if (n >= count) resolve()
        },
      })
    })
    finish()
    await c.disconnect()
  } else if (mode === 'platformatic') {
    const { Consumer } = await import('@platformatic/kafka')
    const c = new Consumer({
      clientId: 'bench',
      groupId,
      bootstrapBrokers: [bootstrap],
      maxBytes: FETCH_MAX_BYTES,
      maxBytesPerPartition: PARTITION_MAX_BYTES,
      minBytes: FETCH_MIN_BYTES,
      maxWaitTime: FETCH_MAX_WAIT_MS,
      isolationLevel: 0,
      autocommit: false,
    })
    start()
    const stream = await c.consume({ topics: [topic], mode: 'earliest' })
    await new Promise((resolve, reject) => {
      stream.on('error', reject)
      stream.on('data', (m) => {
        if (read) {
          const value = m.value.toString()
          keep(m.key.toString(), value)
          bytes += value.length
        } else bytes += m.value.length
        if (++n === count) resolve()
      })
    })
    finish()
    stream.pause()
    await c.close(true).catch(() => undefined)
  }
  process.exit(0)
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv[4], process.argv[5], Number(process.argv[6]))
}

// ---- parent ---------------------------------------------------------------------------------
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const COUNTS = { 100: Number(process.env.BENCH_RECORDS_100 ?? 300_000), 1024: Number(process.env.BENCH_RECORDS_1K ?? 100_000) }
const ALL_ROWS = [100, 1024].flatMap((size) => ['none', 'lz4', 'zstd'].map((compression) => ({ size, compression })))
const ROWS = process.env.BENCH_ROWS ? ALL_ROWS.filter((r) => process.env.BENCH_ROWS.split(',').includes(`${r.size}-${r.compression}`)) : ALL_ROWS
// ferrolog-ts: ferrolog's Consumer with the TypeScript decoder (FERROLOG_NATIVE=0), the twin.
const READ = process.env.BENCH_READ === '1'
// ferrolog-str (BENCH_READ): ferrolog's Consumer with key.deserializer and value.deserializer `string`.
const CLIENTS = process.env.BENCH_CLIENTS ? process.env.BENCH_CLIENTS.split(',') : ['ferrolog', READ ? 'ferrolog-str' : 'ferrolog-ts', 'kafkajs', 'platformatic']

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
        records.push({ key: READ ? Buffer.from(`key-${i}`) : null, value: v })
      }
      await produce(client, topic, records, { partition: 0, compression, batchBytes: 16_384, acks: 1 })
    }
  } finally {
    await client.close()
  }
}

/** One consumer run in a fresh process (on TOOLS_CPU when pinned), with the broker's CPU-seconds over it. */
function runChild(mode, bootstrap, topic, count, brokerPid) {
  const env = mode === 'ferrolog-ts' ? { ...process.env, FERROLOG_NATIVE: '0' } : process.env
  // BENCH_CPU_PROF=dir: each run of ferrolog's Consumer writes a V8 CPU profile there.
  const prof = process.env.BENCH_CPU_PROF && mode.startsWith('ferrolog') ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []
  const args = [...prof, self, '--child', mode, bootstrap, topic, String(count)]
  const [cmd, argv] = pinned() ? ['taskset', ['-c', TOOLS_CPU, process.execPath, ...args]] : [process.execPath, args]
  const broker0 = cpuSeconds(brokerPid, 'broker')
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 600_000, env })
  const brokerCpuS = cpuSeconds(brokerPid, 'broker') - broker0
  const line = r.stdout.trim().split('\n').pop()
  if (r.status !== 0 || !line) throw new Error(`${mode} on ${topic}: exit ${r.status} ${r.stderr.slice(-500)}`)
  const res = JSON.parse(line)
  if (res.n < count) throw new Error(`${mode} read ${res.n} of ${count}`)
  return { ...res, brokerCpuS }
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (x) => Math.round(x).toLocaleString('en-US')

const { process: broker, bootstrap } = await startBrokerProcess()
pin(broker.pid)
const lines = []
const load0 = os.loadavg()
try {
  const { NetworkClient } = await import(dist)
  const admin = new NetworkClient({ bootstrapServers: bootstrap })
  await admin.refreshMetadata(null)
  await admin.close()
  lines.push(
    READ
      ? '| records | compression | ferrolog rec/s | ferrolog string deserializers | kafkajs rec/s | platformatic rec/s | ferrolog vs faster | string deserializers vs faster | CPU-s/GB ferrolog | string deserializers | kafkajs | platformatic | broker busy (ferrolog run) |'
      : '| records | compression | ferrolog rec/s | ferrolog TS decoder | kafkajs rec/s | platformatic rec/s | ferrolog vs faster | CPU-s/GB ferrolog | TS decoder | kafkajs | platformatic | broker busy (ferrolog run) |',
  )
  lines.push(READ ? '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|' : '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const { size, compression } of ROWS) {
    const topic = `bench-${size}-${compression}${READ ? '-keyed' : ''}`
    const count = COUNTS[size]
    await fill(bootstrap, topic, size, compression, count)
    const runs = Object.fromEntries(CLIENTS.map((m) => [m, []]))
    const failed = new Set(CLIENTS.filter((m) => m === 'kafkajs' && compression !== 'none'))
    // Round 0 warms up (the page cache, the broker's JIT): not counted.
    for (let round = 0; round <= RUNS; round++) {
      for (const mode of CLIENTS) {
        if (failed.has(mode)) continue
        try {
          const r = runChild(mode, bootstrap, topic, count, broker.pid)
          if (round > 0) runs[mode].push(r)
        } catch (err) {
          // e.g. @platformatic/kafka on Node 20 has no zstd (node:zlib has it from Node 22.15).
          process.stderr.write(
            `${topic} ${mode}: failed, n/a (${
              String(err.message)
                .split('\n')
                .find((l) => /code|Error/.test(l)) ?? ''
            })\n`,
          )
          failed.add(mode)
        }
      }
    }
    const results = {}
    for (const mode of CLIENTS) {
      if (failed.has(mode) || runs[mode].length === 0) {
        results[mode] = null
        continue
      }
      const rs = runs[mode]
      results[mode] = {
        rate: median(rs.map((r) => (r.n * 1000) / r.ms)),
        cpuPerGB: median(rs.map((r) => r.cpuMs / 1000 / (r.bytes / 1e9))),
        cpuS: median(rs.map((r) => r.cpuMs / 1000)),
        brokerBusy: median(rs.map((r) => r.brokerCpuS / (r.ms / 1000))),
        all: rs.map((r) => Math.round((r.n * 1000) / r.ms)),
      }
      process.stderr.write(
        `${topic} ${mode}: ${fmt(results[mode].rate)} rec/s (runs ${results[mode].all.map(fmt).join(', ')}), ${results[mode].cpuS.toFixed(2)} CPU-s, ${results[mode].cpuPerGB.toFixed(1)} CPU-s/GB, broker busy ${(100 * results[mode].brokerBusy).toFixed(0)}%\n`,
      )
    }
    const others = ['kafkajs', 'platformatic'].map((m) => results[m]?.rate ?? 0)
    const ratio = (m) => (Math.max(...others) > 0 && results[m] ? `${(results[m].rate / Math.max(...others)).toFixed(2)}x` : 'n/a')
    const cell = (m, f) => (results[m] ? f(results[m]) : 'n/a')
    const second = READ ? 'ferrolog-str' : 'ferrolog-ts'
    lines.push(
      `| ${fmt(count)} x ${size} B | ${compression} | ${cell('ferrolog', (r) => fmt(r.rate))} | ${cell(second, (r) => fmt(r.rate))} | ${cell('kafkajs', (r) => fmt(r.rate))} | ${cell('platformatic', (r) => fmt(r.rate))} | ${ratio('ferrolog')}${READ ? ` | ${ratio(second)}` : ''} | ${cell('ferrolog', (r) => r.cpuPerGB.toFixed(1))} | ${cell(second, (r) => r.cpuPerGB.toFixed(1))} | ${cell('kafkajs', (r) => r.cpuPerGB.toFixed(1))} | ${cell('platformatic', (r) => r.cpuPerGB.toFixed(1))} | ${cell('ferrolog', (r) => `${(100 * r.brokerBusy).toFixed(0)}%`)} |`,
    )
  }
} finally {
  broker.stdin.end()
}
const load1 = os.loadavg()
lines.push('')
lines.push(`- runs: ${RUNS} per client per row after one warm-up, clients interleaved; medians`)
lines.push(`- placement: ${pinned() ? `broker on CPU ${BROKER_CPU}, each consumer on CPU ${TOOLS_CPU} (taskset)` : 'not pinned (BENCH_PIN=0 or no taskset)'}`)
lines.push(`- load average (1 min) ${load0[0].toFixed(2)} at the start, ${load1[0].toFixed(2)} at the end; ${os.cpus().length} CPUs, Node ${process.version}`)
const table = lines.join('\n')
process.stdout.write(table + '\n')
fs.mkdirSync(path.join(root, 'bench', '.out'), { recursive: true })
fs.writeFileSync(path.join(root, 'bench', '.out', 'consumer.md'), table + '\n')
