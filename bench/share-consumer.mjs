#!/usr/bin/env node
// ferrolog's ShareConsumer (KIP-932) as a work queue: four consumers in one share group over one
// partition, against a ferrolog broker and against Apache Kafka 4.4, in one run.
//
//   node scripts/build.mjs ts && node bench/share-consumer.mjs
//   BENCH_RECORDS=500000 BENCH_RUNS=3 node bench/share-consumer.mjs
//
// Steps: one ferrolog broker (dist/, its own process) and one Kafka broker
// (tools/kafka/run-broker.sh); on each a 1-partition topic filled with BENCH_RECORDS records of
// 100 B (ferrolog's Producer, linger.ms 5); then BENCH_RUNS rounds, the brokers interleaved: a new
// share group (share.auto.offset.reset=earliest), four ShareConsumers (implicit acknowledgement,
// max.poll.records 500, the other settings Kafka's defaults) in this process read until every
// offset was delivered, then close (the last acknowledgements go out). Measured from the
// subscribes to the end of the closes: records/s, and the broker's CPU-seconds (from /proc) per
// million records delivered and accepted. Medians of the rounds. The consumers run in this
// process for both brokers alike, so the ratio is what compares; absolute figures depend on the
// machine's load (printed).
// Env: BENCH_RECORDS (200000), BENCH_RUNS (3). The table goes to stdout and bench/.out/share-consumer.md.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { KAFKA_NAME, fetchJars, kafkaTools } from './lib/kafka-tools.mjs'
import { cpuSeconds, exited, freePort, root, run, startDaemon, stopChild, waitForPort } from './lib/processes.mjs'
import { fmt, loadavg, makeSay, tail } from './lib/report.mjs'

const dist = path.join(root, 'dist', 'ts', 'index.js')
const mainJs = path.join(root, 'dist', 'ts', 'cli', 'main.js')
const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const CONSUMERS = 4
const TOPIC = 'share-bench'
const say = makeSay('share-consumer')
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-share-bench-'))
const { Admin, Producer, ShareConsumer } = await import(dist)

async function startFerrolog() {
  const port = await freePort()
  const dataDir = path.join(tmp, 'ferrolog')
  const logFile = path.join(tmp, 'ferrolog.log')
  const args = [mainJs, 'broker', '--data-dir', dataDir, '--listen', `127.0.0.1:${port}`]
  say(`starting ferrolog: node ${args.map((a) => path.relative(root, a) || a).join(' ')}`)
  const child = startDaemon(process.execPath, args, logFile, { FERROLOG_LOG_LEVEL: 'warn' })
  await waitForPort(port, 120_000, () => (exited(child) ? `the broker exited: ${tail(logFile, 5)}` : null))
  return { name: 'ferrolog', pid: child.pid, bootstrap: `127.0.0.1:${port}`, stop: () => stopChild(child, 'ferrolog', say) }
}

async function startKafka() {
  const dataDir = path.join(tmp, 'kafka')
  say(`starting ${KAFKA_NAME}: tools/kafka/run-broker.sh --data-dir ${dataDir}`)
  const r = await run(path.join(kafkaTools, 'run-broker.sh'), ['--data-dir', dataDir, '--wait-secs', '110'], { timeoutMs: 150_000, env: { KAFKA_JARS_DIR: fetchJars() }, label: 'run-broker.sh' })
  const pid = Number(/^pid=(\d+)$/m.exec(r.stdout)?.[1])
  const bootstrap = /^bootstrap=(\S+)$/m.exec(r.stdout)?.[1]
  if (r.code !== 0 || !pid || !bootstrap) throw new Error(`run-broker.sh exited ${r.code}: ${r.stderr.trim().split('\n').slice(-5).join(' / ')}`)
  const stop = () => run(path.join(kafkaTools, 'stop-broker.sh'), [dataDir, '--timeout', '60'], { timeoutMs: 90_000, label: 'stop-broker.sh' })
  return { name: KAFKA_NAME, pid, bootstrap, stop }
}

async function fill(broker) {
  const admin = new Admin({ bootstrapServers: broker.bootstrap })
  try {
    await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 1 }]).all()
  } finally {
    await admin.close()
  }
  const producer = new Producer({ bootstrapServers: broker.bootstrap, 'linger.ms': 5 })
  const value = Buffer.alloc(100, 'v')
  try {
    let sends = []
    for (let i = 0; i < RECORDS; i++) {
      sends.push(producer.send({ topic: TOPIC, value }))
      if (sends.length >= 10_000) await Promise.all(sends.splice(0))
    }
    await Promise.all(sends)
  } finally {
    await producer.close()
  }
}

/** One round: a new group, four consumers until every offset came; records/s and broker CPU. */
async function round(broker, n) {
  const group = `share-bench-${n}`
  const admin = new Admin({ bootstrapServers: broker.bootstrap })
  try {
    await admin.incrementalAlterConfigs([[{ type: 'GROUP', name: group }, [{ name: 'share.auto.offset.reset', value: 'earliest', opType: 'SET' }]]]).all()
  } finally {
    await admin.close()
  }
  const consumers = Array.from({ length: CONSUMERS }, () => new ShareConsumer({ bootstrapServers: broker.bootstrap, groupId: group, 'max.poll.records': 500 }))
  const seen = new Uint8Array(RECORDS)
  let distinct = 0
  let deliveries = 0
  const cpu0 = cpuSeconds(broker.pid, 'broker pid')
  const t0 = performance.now()
  for (const c of consumers) c.subscribe([TOPIC])
  let stop = false
  await Promise.all(
    consumers.map(async (c) => {
      while (!stop) {
        for (const r of await c.poll(1000)) {
          deliveries++
          const o = Number(r.offset)
          if (!seen[o]) {
            seen[o] = 1
            distinct++
          }
        }
        if (distinct === RECORDS) stop = true
      }
    }),
  )
  await Promise.all(consumers.map((c) => c.close()))
  const ms = performance.now() - t0
  const cpu = cpuSeconds(broker.pid, 'broker pid') - cpu0
  return { rps: (RECORDS / ms) * 1000, cpuPerM: (cpu / RECORDS) * 1e6, busy: (cpu / ms) * 1000, redelivered: deliveries - RECORDS }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const brokers = []
try {
  brokers.push(await startFerrolog(), await startKafka())
  for (const b of brokers) {
    say(`${b.name}: filling ${TOPIC} with ${fmt(RECORDS)} records`)
    await fill(b)
  }
  const results = new Map(brokers.map((b) => [b.name, []]))
  for (let i = 0; i < RUNS; i++)
    for (const b of brokers) {
      const r = await round(b, i)
      say(`${b.name} round ${i + 1}: ${fmt(r.rps)} records/s, broker ${fmt(r.cpuPerM, 2)} CPU-s per million records, broker busy ${fmt(r.busy * 100)}%, ${r.redelivered} delivered twice`)
      results.get(b.name).push(r)
    }
  const row = (name) => {
    const rs = results.get(name)
    return { rps: median(rs.map((r) => r.rps)), cpuPerM: median(rs.map((r) => r.cpuPerM)), busy: median(rs.map((r) => r.busy)), redelivered: Math.max(...rs.map((r) => r.redelivered)) }
  }
  const f = row('ferrolog')
  const k = row(KAFKA_NAME)
  const lines = [
    `ShareConsumer work queue: ${CONSUMERS} consumers, 1 partition, ${fmt(RECORDS)} records of 100 B, implicit acknowledgement; median of ${RUNS} rounds; load average ${loadavg()}`,
    '',
    '| broker | records/s | broker CPU-s per million records | broker busy | most records delivered twice in a round |',
    '|---|---:|---:|---:|---:|',
    `| ferrolog | ${fmt(f.rps)} | ${fmt(f.cpuPerM, 2)} | ${fmt(f.busy * 100)}% | ${f.redelivered} |`,
    `| ${KAFKA_NAME} | ${fmt(k.rps)} | ${fmt(k.cpuPerM, 2)} | ${fmt(k.busy * 100)}% | ${k.redelivered} |`,
    `| ferrolog / Kafka | ${fmt(f.rps / k.rps, 2)}x | ${fmt(f.cpuPerM / k.cpuPerM, 2)}x | | |`,
  ]
  const out = lines.join('\n')
  console.log(out)
  fs.mkdirSync(path.join(root, 'bench', '.out'), { recursive: true })
  fs.writeFileSync(path.join(root, 'bench', '.out', 'share-consumer.md'), out + '\n')
} finally {
  for (const b of brokers) await b.stop().catch((err) => say(`stopping ${b.name}: ${err.message}`))
  fs.rmSync(tmp, { recursive: true, force: true })
}
