#!/usr/bin/env node
// ferrolog's Producer next to kafkajs and @platformatic/kafka, in one run, writing to the same
// ferrolog broker.
//
//   node scripts/build.mjs ts && node bench/producer.bench.mjs
//   BENCH_RECORDS=1000000 BENCH_RUNS=3 BENCH_ROWS=100-none,1024-lz4 node bench/producer.bench.mjs
//
// Steps: one ferrolog broker (dist/, native storage, its own process, on CPU 0 when pinned); per
// row (record size 100 B or 1 KiB x compression none, lz4, zstd) and per run, each client in a
// fresh process of its own (on CPU 1 when pinned) writes BENCH_RECORDS keyless records (default
// 1,000,000) to a new 6-partition topic of its own: records/s and the producer's CPU-seconds,
// both from the first send to the last acknowledgement.
//
// The same work for every client: acks=all (-1), idempotence (ferrolog's default, kafkajs's
// `idempotent`; not for @platformatic/kafka, whose idempotent producer fails its own concurrent
// sends with OUT_OF_ORDER_SEQUENCE_NUMBER: it runs without), the codec of the row,
// batches of at most 16 KiB (batch.size) in Produce requests per leader, values built in the child
// before timing starts (each record a distinct Buffer). Each client is driven through its fastest
// public API: ferrolog's per-record send (one promise per record, awaited all at the end, paced
// by waitForBufferSpace); kafkajs's and @platformatic/kafka's send of an array of messages, 1000
// per call, up to 5 calls outstanding (per-call promises; per-record sends would be far slower
// for them). Every client must report every record acknowledged, or the row says it failed.
//
// kafkajs has no lz4 or zstd codec of its own (they are plugins): those rows say n/a for it.
// Per row: BENCH_RUNS (default 3) rounds with the clients interleaved, medians.
// The table goes to stdout and bench/.out/producer.md.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { BROKER_CPU, TOOLS_CPU, pin, pinned } from './lib/processes.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = process.env.BENCH_DIST ?? path.join(root, 'dist', 'ts', 'index.js')
const self = fileURLToPath(import.meta.url)
const PARTITIONS = 6
const CHUNK = 1000
const OUTSTANDING = 5

// ---- child: one producer run ----------------------------------------------------------------
async function child(mode, bootstrap, topic, count, size, compression) {
  const base = Buffer.alloc(size)
  for (let i = 0; i < size; i++) base[i] = 97 + ((i * 7 + (i >> 3)) % 26)
  const values = new Array(count)
  for (let i = 0; i < count; i++) {
    const v = Buffer.from(base)
    v.write(String(i).padStart(10, '0'), 0)
    values[i] = v
  }
  let t0 = 0
  let cpu0
  const start = () => {
    t0 = performance.now()
    cpu0 = process.cpuUsage()
  }
  const finish = (acked) => {
    const ms = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    process.stdout.write(JSON.stringify({ n: acked, ms, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\n')
  }
  /** Sends chunks of CHUNK messages with up to OUTSTANDING in flight; resolves with the count acknowledged. */
  const chunked = async (sendChunk) => {
    let acked = 0
    const inFlight = new Set()
    for (let from = 0; from < count; from += CHUNK) {
      const p = sendChunk(values.slice(from, Math.min(count, from + CHUNK))).then((n) => {
        acked += n
        inFlight.delete(p)
      })
      inFlight.add(p)
      if (inFlight.size >= OUTSTANDING) await Promise.race(inFlight)
    }
    await Promise.all(inFlight)
    return acked
  }
  if (mode === 'ferrolog') {
    const { Producer } = await import(dist)
    const producer = new Producer({ bootstrapServers: bootstrap, acks: 'all', 'compression.type': compression, 'batch.size': 16_384 })
    // connect and learn the topic before timing, as the other clients' connect() does
    await producer.send({ topic, value: 'warm-up' })
    start()
    let acked = 0
    const done = () => acked++
    const sends = new Array(count)
    for (let i = 0; i < count; i++) {
      sends[i] = producer.send({ topic, value: values[i] }).then(done)
      if ((i & 1023) === 1023) await producer.waitForBufferSpace()
    }
    await Promise.all(sends)
    finish(acked)
    await producer.close()
  } else if (mode === 'kafkajs') {
    const { Kafka, logLevel, CompressionTypes, Partitioners } = await import('kafkajs')
    const kafka = new Kafka({ clientId: 'bench', brokers: [bootstrap], logLevel: logLevel.NOTHING })
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 5, createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    await producer.send({ topic, acks: -1, messages: [{ value: 'warm-up' }] })
    const codec = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP }[compression]
    start()
    const acked = await chunked(async (chunk) => {
      const res = await producer.send({ topic, acks: -1, compression: codec, messages: chunk.map((value) => ({ value })) })
      return res.length > 0 ? chunk.length : 0
    })
    finish(acked)
    await producer.disconnect()
  } else if (mode === 'platformatic') {
    const { Producer } = await import('@platformatic/kafka')
    const producer = new Producer({ clientId: 'bench', bootstrapBrokers: [bootstrap], idempotent: false, acks: -1, compression, autocreateTopics: false })
    await producer.send({ messages: [{ topic, value: Buffer.from('warm-up') }] })
    start()
    const acked = await chunked(async (chunk) => {
      await producer.send({ messages: chunk.map((value) => ({ topic, value })) })
      return chunk.length
    })
    finish(acked)
    await producer.close()
  }
  process.exit(0)
}

if (process.argv[2] === '--child') {
  const [mode, bootstrap, topic, count, size, compression] = process.argv.slice(3)
  await child(mode, bootstrap, topic, Number(count), Number(size), compression)
}

// ---- parent ---------------------------------------------------------------------------------
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const COUNT = Number(process.env.BENCH_RECORDS ?? 1_000_000)
const ALL_ROWS = [100, 1024].flatMap((size) => ['none', 'lz4', 'zstd'].map((compression) => ({ size, compression })))
const ROWS = process.env.BENCH_ROWS ? ALL_ROWS.filter((r) => process.env.BENCH_ROWS.split(',').includes(`${r.size}-${r.compression}`)) : ALL_ROWS
const CLIENTS = ['ferrolog', 'kafkajs', 'platformatic']

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

async function createTopic(bootstrap, topic) {
  const { NetworkClient } = await import(dist)
  const { createTopicsCodec } = await import(path.join(root, 'dist', 'ts', 'protocol', 'apis', 'create-topics.js'))
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    await client.refreshMetadata(null)
    const r = await client.request(client.candidateNodes()[0], createTopicsCodec, {
      topics: [{ name: topic, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 30_000,
      validateOnly: false,
    })
    if (r.topics[0].errorCode !== 0) throw new Error(`CreateTopics ${topic}: ${r.topics[0].errorCode}`)
  } finally {
    await client.close()
  }
}

function runChild(mode, bootstrap, topic, size, compression) {
  const args = [self, '--child', mode, bootstrap, topic, String(COUNT), String(size), compression]
  const [cmd, argv] = pinned() ? ['taskset', ['-c', TOOLS_CPU, process.execPath, ...args]] : [process.execPath, args]
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 900_000, maxBuffer: 1 << 24 })
  const line = r.stdout.trim().split('\n').pop()
  if (r.status !== 0 || !line) throw new Error(`${mode} on ${topic}: exit ${r.status} ${r.stderr.slice(-500)}`)
  const res = JSON.parse(line)
  if (res.n < COUNT) throw new Error(`${mode}: ${res.n} of ${COUNT} acknowledged`)
  return res
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (x) => Math.round(x).toLocaleString('en-US')

const { process: broker, bootstrap } = await startBrokerProcess()
pin(broker.pid)
const lines = []
const load0 = os.loadavg()
try {
  lines.push('| records | compression | ferrolog rec/s | kafkajs rec/s | platformatic rec/s | ferrolog vs faster | CPU-s ferrolog | kafkajs | platformatic | CPU vs the faster |')
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|')
  let topicNo = 0
  for (const { size, compression } of ROWS) {
    const runs = Object.fromEntries(CLIENTS.map((m) => [m, []]))
    const failed = new Set(CLIENTS.filter((m) => m === 'kafkajs' && compression !== 'none'))
    for (let round = 0; round < RUNS; round++) {
      for (const mode of CLIENTS) {
        if (failed.has(mode)) continue
        const topic = `bench-${size}-${compression}-${mode}-${topicNo++}`
        try {
          await createTopic(bootstrap, topic)
          runs[mode].push(runChild(mode, bootstrap, topic, size, compression))
        } catch (err) {
          process.stderr.write(`${topic}: failed, n/a (${String(err.message).slice(0, 300)})\n`)
          failed.add(mode)
        }
      }
    }
    const results = {}
    for (const mode of CLIENTS) {
      const rs = runs[mode]
      results[mode] =
        failed.has(mode) || rs.length === 0
          ? null
          : { rate: median(rs.map((r) => (r.n * 1000) / r.ms)), cpuS: median(rs.map((r) => r.cpuMs / 1000)), all: rs.map((r) => Math.round((r.n * 1000) / r.ms)) }
      if (results[mode])
        process.stderr.write(`${size} B ${compression} ${mode}: ${fmt(results[mode].rate)} rec/s (runs ${results[mode].all.map(fmt).join(', ')}), ${results[mode].cpuS.toFixed(2)} CPU-s\n`)
    }
    const others = ['kafkajs', 'platformatic'].filter((m) => results[m])
    const faster = others.sort((a, b) => results[b].rate - results[a].rate)[0]
    const ratio = faster && results.ferrolog ? `${(results.ferrolog.rate / results[faster].rate).toFixed(2)}x` : 'n/a'
    const cpuRatio = faster && results.ferrolog ? `${(results[faster].cpuS / results.ferrolog.cpuS).toFixed(2)}x less` : 'n/a'
    const cell = (m, f) => (results[m] ? f(results[m]) : 'n/a')
    lines.push(
      `| ${fmt(COUNT)} x ${size} B | ${compression} | ${cell('ferrolog', (r) => fmt(r.rate))} | ${cell('kafkajs', (r) => fmt(r.rate))} | ${cell('platformatic', (r) => fmt(r.rate))} | ${ratio} | ${cell('ferrolog', (r) => r.cpuS.toFixed(2))} | ${cell('kafkajs', (r) => r.cpuS.toFixed(2))} | ${cell('platformatic', (r) => r.cpuS.toFixed(2))} | ${cpuRatio} |`,
    )
  }
} finally {
  broker.stdin.end()
}
const load1 = os.loadavg()
lines.push('')
lines.push(`- runs: ${RUNS} per client per row, clients interleaved, each on a fresh ${PARTITIONS}-partition topic; medians`)
lines.push(`- placement: ${pinned() ? `broker on CPU ${BROKER_CPU}, each producer on CPU ${TOOLS_CPU} (taskset)` : 'not pinned (BENCH_PIN=0 or no taskset)'}`)
lines.push(`- load average (1 min) ${load0[0].toFixed(2)} at the start, ${load1[0].toFixed(2)} at the end; ${os.cpus().length} CPUs, Node ${process.version}`)
const table = lines.join('\n')
process.stdout.write(table + '\n')
fs.mkdirSync(path.join(root, 'bench', '.out'), { recursive: true })
fs.writeFileSync(path.join(root, 'bench', '.out', 'producer.md'), table + '\n')
