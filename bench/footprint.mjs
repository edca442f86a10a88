#!/usr/bin/env node
// Footprint (issue #17): how fast a broker answers its first request and how much memory it holds,
// ferrolog next to Apache Kafka's single-node KRaft broker, in one run on one machine.
//
//   npm run bench:footprint
//   BENCH_RUNS=5 BENCH_KAFKA_RUNS=1 BENCH_SKIP_KAFKA=1 node bench/footprint.mjs
//
// ferrolog runs from dist/ as npm install (or npm run build) left it: this script builds nothing.
// Measures, each broker on 127.0.0.1 with a fresh temp data dir:
//   - in-process start: a fresh `node` runs startBroker({ port: 0 }) from dist/ts/index.js and
//     ferrolog's own KafkaConnection sends ApiVersions; timed from the startBroker call to the
//     answer (importing dist/ts/index.js beforehand is reported apart);
//   - CLI start: `node dist/ts/cli/main.js broker --listen 127.0.0.1:P --data-dir D`, timed from
//     spawn until an ApiVersions request is answered (connections retried every PROBE_MS);
//   - Kafka start: `tools/kafka/run-broker.sh --foreground` on a fresh dir, timed from spawn until
//     an ApiVersions request is answered. That includes the StorageTool format JVM which the script
//     runs before it execs the broker's JVM (a fresh dir is formatted on its first start); the
//     time until the exec (seen in /proc/<pid>/cmdline) is reported apart;
//   - idle RSS: VmRSS from /proc/<pid>/status SETTLE_MS after the first answer (the CLI's node
//     process, Kafka's JVM with run-broker.sh's default heap, -Xms256m -Xmx1g);
//   - RSS with 1,000 partitions: kafkajs's admin creates one topic of PARTITIONS partitions
//     (and waits for their leaders), then VmRSS again SETTLE_MS later.
// ferrolog is measured BENCH_RUNS times (default 3, medians reported), Kafka BENCH_KAFKA_RUNS
// times (default 2). The table goes to stdout and bench/.out/footprint.md.
// Env: BENCH_RUNS, BENCH_KAFKA_RUNS, BENCH_SKIP_KAFKA=1, BENCH_KEEP=1 (keep the temp dirs),
// KAFKA_JARS_DIR (default: tools/kafka/.jars when it exists, else what fetch-jars.sh prints).
import { spawn, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { root, exited, waitForExit, stopChild, freePort } from './lib/processes.mjs'
import { KAFKA_NAME, kafkaTools } from './lib/kafka-tools.mjs'
import { makeSay, loadavg, tail } from './lib/report.mjs'

const dist = path.join(root, 'dist', 'ts')
const mainJs = path.join(dist, 'cli', 'main.js')
const outDir = path.join(root, 'bench', '.out')

const RUNS = positiveInt('BENCH_RUNS', 3)
const KAFKA_RUNS = positiveInt('BENCH_KAFKA_RUNS', 2)
const SKIP_KAFKA = process.env.BENCH_SKIP_KAFKA === '1'
const KEEP = process.env.BENCH_KEEP === '1'
const PARTITIONS = 1000
const SETTLE_MS = 5_000
const PROBE_MS = 5
const START_TIMEOUT_MS = 120_000
const STOP_TIMEOUT_MS = 60_000
const TARGET_IN_PROCESS_MS = 100

function positiveInt(name, fallback) {
  const n = Number(process.env[name] ?? fallback)
  if (!(Number.isInteger(n) && n > 0)) throw new Error(`${name} must be a positive integer, not ${process.env[name]}`)
  return n
}

const ferrolog = () => import(pathToFileURL(path.join(dist, 'index.js')).href)
const apiVersions = () => import(pathToFileURL(path.join(dist, 'protocol', 'apis', 'api-versions.js')).href)

// ---------------------------------------------------------------------------------------------
// the in-process child: `node bench/footprint.mjs --in-process` prints one JSON line

if (process.argv[2] === '--in-process') {
  const t0 = performance.now()
  const { startBroker, KafkaConnection } = await ferrolog()
  const { apiVersionsCodec } = await apiVersions()
  const t1 = performance.now()
  const broker = await startBroker({ port: 0 })
  const t2 = performance.now()
  const conn = await KafkaConnection.open('127.0.0.1', broker.port)
  const res = await conn.send(apiVersionsCodec, 3, { clientSoftwareName: 'footprint', clientSoftwareVersion: '1' })
  const t3 = performance.now()
  if (res.errorCode !== 0) throw new Error(`ApiVersions answered error ${res.errorCode}`)
  await conn.close()
  await broker.stop()
  process.stdout.write(`${JSON.stringify({ importMs: t1 - t0, listeningMs: t2 - t1, answeredMs: t3 - t1, rssKiB: vmRssKiB(process.pid) })}\n`)
  process.exit(0)
}

// ---------------------------------------------------------------------------------------------
// helpers

const say = makeSay('footprint')

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/** VmRSS of a process in KiB, from /proc/<pid>/status. */
function vmRssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(status)
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`)
  return Number(m[1])
}

/**
 * Retries a connection every PROBE_MS until one opens, then sends ApiVersions v3 on it; resolves
 * with performance.now() at the answer. onPoll runs at each retry (to notice a dead broker).
 */
async function firstAnswer(port, onPoll) {
  const { KafkaConnection } = await ferrolog()
  const { apiVersionsCodec } = await apiVersions()
  const deadline = performance.now() + START_TIMEOUT_MS
  for (;;) {
    onPoll()
    let conn
    try {
      conn = await KafkaConnection.open('127.0.0.1', port, { connectTimeoutMs: 1_000 })
    } catch {
      if (performance.now() > deadline) throw new Error(`nothing accepts connections on 127.0.0.1:${port} after ${START_TIMEOUT_MS / 1000}s`)
      await sleep(PROBE_MS)
      continue
    }
    try {
      const res = await conn.send(apiVersionsCodec, 3, { clientSoftwareName: 'footprint', clientSoftwareVersion: '1' }, { timeoutMs: 30_000 })
      const at = performance.now()
      if (res.errorCode !== 0) throw new Error(`ApiVersions answered error ${res.errorCode}`)
      return at
    } catch (err) {
      // A broker that accepts before it is ready may close or refuse the first connection.
      if (performance.now() > deadline) throw err
      await sleep(PROBE_MS)
    } finally {
      await conn.close()
    }
  }
}

/** Creates one topic of PARTITIONS partitions with kafkajs's admin, waiting for their leaders. */
async function createPartitions(bootstrap) {
  const { Kafka, logLevel } = (await import('kafkajs')).default
  const admin = new Kafka({ brokers: [bootstrap], clientId: 'footprint', logLevel: logLevel.NOTHING }).admin()
  await admin.connect()
  try {
    const started = performance.now()
    const created = await admin.createTopics({
      topics: [{ topic: 'footprint', numPartitions: PARTITIONS, replicationFactor: 1 }],
      waitForLeaders: true,
      timeout: 120_000,
    })
    if (!created) throw new Error('topic "footprint" already exists')
    const meta = await admin.fetchTopicMetadata({ topics: ['footprint'] })
    const withLeader = meta.topics[0].partitions.filter((p) => p.leader >= 0).length
    if (withLeader !== PARTITIONS) throw new Error(`${withLeader} of ${PARTITIONS} partitions have a leader`)
    return performance.now() - started
  } finally {
    await admin.disconnect()
  }
}

// ---------------------------------------------------------------------------------------------
// the measures

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-footprint-'))
const children = new Set()

async function inProcessRun() {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--in-process'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let out = ''
  let err = ''
  child.stdout.on('data', (c) => (out += c))
  child.stderr.on('data', (c) => (err += c))
  const done = await waitForExit(child, START_TIMEOUT_MS)
  children.delete(child)
  if (!done) {
    child.kill('SIGKILL')
    await waitForExit(child, 10_000)
  }
  if (child.exitCode !== 0) throw new Error(`in-process run exited ${child.exitCode ?? child.signalCode}: ${err.trim()}`)
  return JSON.parse(out.trim().split('\n').pop())
}

async function cliRun(i) {
  const port = await freePort()
  const dataDir = path.join(tmp, `ferrolog-${i}`)
  const logFile = path.join(tmp, `ferrolog-${i}.log`)
  const fd = fs.openSync(logFile, 'a')
  const args = [mainJs, 'broker', '--listen', `127.0.0.1:${port}`, '--data-dir', dataDir]
  const started = performance.now()
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', fd, fd] })
  fs.closeSync(fd)
  children.add(child)
  try {
    const answered = await firstAnswer(port, () => {
      if (exited(child)) throw new Error(`ferrolog exited during start-up: ${tail(logFile, 5)}`)
    })
    const startMs = answered - started
    await sleep(SETTLE_MS)
    const idleKiB = vmRssKiB(child.pid)
    const createMs = await createPartitions(`127.0.0.1:${port}`)
    await sleep(SETTLE_MS)
    const loadedKiB = vmRssKiB(child.pid)
    return { startMs, idleKiB, createMs, loadedKiB }
  } finally {
    await stopChild(child, 'ferrolog', say, STOP_TIMEOUT_MS)
    children.delete(child)
  }
}

function kafkaJars() {
  if (process.env.KAFKA_JARS_DIR) return process.env.KAFKA_JARS_DIR
  const local = path.join(kafkaTools, '.jars')
  if (fs.existsSync(local)) return local
  return execFileSync(path.join(kafkaTools, 'fetch-jars.sh'), { encoding: 'utf8' }).trim()
}

async function kafkaRun(i, jars) {
  const port = await freePort()
  const dataDir = path.join(tmp, `kafka-${i}`)
  const logFile = path.join(tmp, `kafka-${i}.log`)
  const fd = fs.openSync(logFile, 'a')
  const started = performance.now()
  // --foreground: the script execs the JVM, so this child's pid becomes the broker's.
  const child = spawn(path.join(kafkaTools, 'run-broker.sh'), ['--data-dir', dataDir, '--port', String(port), '--foreground'], {
    cwd: root,
    env: { ...process.env, KAFKA_JARS_DIR: jars },
    stdio: ['ignore', fd, fd],
  })
  fs.closeSync(fd)
  children.add(child)
  let execAt = null
  try {
    const answered = await firstAnswer(port, () => {
      if (exited(child)) throw new Error(`Kafka exited during start-up: ${tail(logFile, 5)}`)
      if (execAt === null) {
        try {
          if (fs.readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').includes('kafka.Kafka')) execAt = performance.now()
        } catch {
          /* not yet, or gone: the next poll tells */
        }
      }
    })
    const comm = fs.readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim()
    if (comm !== 'java') throw new Error(`pid ${child.pid} is "${comm}", not Kafka's JVM`)
    const startMs = answered - started
    const toExecMs = execAt === null ? null : execAt - started
    await sleep(SETTLE_MS)
    const idleKiB = vmRssKiB(child.pid)
    const createMs = await createPartitions(`127.0.0.1:${port}`)
    await sleep(SETTLE_MS)
    const loadedKiB = vmRssKiB(child.pid)
    return { startMs, toExecMs, idleKiB, createMs, loadedKiB }
  } finally {
    await stopChild(child, 'Kafka', say, STOP_TIMEOUT_MS)
    children.delete(child)
  }
}

function cleanUp() {
  for (const child of children) if (!exited(child)) child.kill('SIGKILL')
  if (!KEEP) fs.rmSync(tmp, { recursive: true, force: true })
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    say(`${signal}: stopping`)
    cleanUp()
    process.exit(130)
  })
}

// ---------------------------------------------------------------------------------------------
// main

const ms = (x) => (x === null || x === undefined ? '-' : x < 100 ? x.toFixed(1) : x.toFixed(0))
const mib = (kib) => (kib / 1024).toFixed(0)
const spread = (xs, f) => (xs.length > 1 ? ` (${xs.map(f).join(', ')})` : '')

try {
  const inProcess = []
  for (let i = 0; i < RUNS; i++) {
    const r = await inProcessRun()
    say(`in-process ${i + 1}/${RUNS}: import ${ms(r.importMs)} ms, startBroker to ApiVersions answered ${ms(r.answeredMs)} ms (listening after ${ms(r.listeningMs)} ms)`)
    inProcess.push(r)
  }
  const cli = []
  for (let i = 0; i < RUNS; i++) {
    const r = await cliRun(i)
    say(
      `ferrolog CLI ${i + 1}/${RUNS}: answered ${ms(r.startMs)} ms after spawn, idle RSS ${mib(r.idleKiB)} MiB, ` +
        `${PARTITIONS} partitions created in ${ms(r.createMs)} ms, RSS then ${mib(r.loadedKiB)} MiB`,
    )
    cli.push(r)
  }
  const kafka = []
  if (!SKIP_KAFKA) {
    const jars = kafkaJars()
    for (let i = 0; i < KAFKA_RUNS; i++) {
      const r = await kafkaRun(i, jars)
      say(
        `Kafka ${i + 1}/${KAFKA_RUNS}: answered ${ms(r.startMs)} ms after spawn (broker JVM exec'd at ${ms(r.toExecMs)} ms), ` +
          `idle RSS ${mib(r.idleKiB)} MiB, ${PARTITIONS} partitions created in ${ms(r.createMs)} ms, RSS then ${mib(r.loadedKiB)} MiB`,
      )
      kafka.push(r)
    }
  }

  const col = (rs, key, f) =>
    rs.length
      ? `${f(median(rs.map((r) => r[key])))}${spread(
          rs.map((r) => r[key]),
          f,
        )}`
      : '-'
  const inProcessMedian = median(inProcess.map((r) => r.answeredMs))
  const lines = [
    `Footprint, ${new Date().toISOString()}, ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadavg(' ')} at the end`,
    `ferrolog: median of ${RUNS} runs (each run in brackets); ${KAFKA_NAME}: ${kafka.length ? `median of ${kafka.length}` : 'skipped'}`,
    '',
    '| measure | ferrolog in-process | ferrolog CLI | Apache Kafka (KRaft, 1 node) |',
    '|---|---:|---:|---:|',
    `| import dist/ts/index.js, ms | ${col(inProcess, 'importMs', ms)} | - | - |`,
    `| start to first ApiVersions answer, ms | ${col(inProcess, 'answeredMs', ms)} | ${col(cli, 'startMs', ms)} | ${col(kafka, 'startMs', ms)} |`,
    `| of which run-broker.sh and format before the broker JVM, ms | - | - | ${col(kafka, 'toExecMs', ms)} |`,
    `| idle RSS ${SETTLE_MS / 1000} s after the first answer, MiB | - | ${col(cli, 'idleKiB', mib)} | ${col(kafka, 'idleKiB', mib)} |`,
    `| create a topic of ${PARTITIONS} partitions, ms | - | ${col(cli, 'createMs', ms)} | ${col(kafka, 'createMs', ms)} |`,
    `| RSS ${SETTLE_MS / 1000} s after that, MiB | - | ${col(cli, 'loadedKiB', mib)} | ${col(kafka, 'loadedKiB', mib)} |`,
    '',
    `In-process start (startBroker to the first answer, median ${ms(inProcessMedian)} ms): ` +
      `${inProcessMedian < TARGET_IN_PROCESS_MS ? 'meets' : 'misses'} the target of under ${TARGET_IN_PROCESS_MS} ms.`,
  ]
  const text = `${lines.join('\n')}\n`
  process.stdout.write(`\n${text}`)
  fs.mkdirSync(outDir, { recursive: true })
  fs.writeFileSync(path.join(outDir, 'footprint.md'), text)
} catch (err) {
  say(`failed: ${err.stack ?? err}`)
  process.exitCode = 1
} finally {
  for (const child of children) if (!exited(child)) child.kill('SIGKILL')
  if (KEEP) say(`kept ${tmp}`)
  else fs.rmSync(tmp, { recursive: true, force: true })
}
