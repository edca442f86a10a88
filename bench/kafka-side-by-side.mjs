#!/usr/bin/env node
// ferrolog next to Apache Kafka, in one run, on the same machine and the same data, measured
// by Kafka's own perf tools (kafka-producer-perf-test and kafka-consumer-perf-test, run as
// classes from the jars that tools/kafka/fetch-jars.sh copies from Maven Central).
//
//   npm run bench:kafka                       # after npm install; BENCH_GB=1 by default
//   BENCH_GB=0.25 BENCH_SKIP_KAFKA=1 node bench/kafka-side-by-side.mjs
//
// ferrolog runs from dist/ as npm install (or npm run build) left it: this script builds nothing.
// (A rebuild during a run used to kill the broker: scripts/build.mjs rewrote the mapped .node in
// place; it now renames a new file into place.)
// Steps, per system (ferrolog first, then Kafka), each broker on 127.0.0.1 and a fresh temp dir:
//   0. an unmeasured warm-up produce of 256 MiB to a third topic (JIT, page cache, sockets);
//   1. produce BENCH_GB GiB of 1 KiB records to a 1-partition topic with acks=1, then to another
//      with acks=-1 (ProducerPerformance, --throughput -1): records/s and MB/s as the tool
//      prints them, broker CPU-seconds (utime+stime from /proc/<pid>/stat) per GiB;
//   2. consume the acks=1 topic (BENCH_GB GiB) with ConsumerPerformance: the segment files are
//      read once into the page cache and BENCH_WARMUP_RUNS unmeasured consumer runs warm the
//      broker (its JIT, and the page cache's LRU, which moves pages read twice to its active
//      list: a broker's first runs after a produce pay that; one warm-up run was not enough
//      for ferrolog, whose MB/s still rose over the next four), then BENCH_CONSUME_RUNS runs are
//      measured and the median reported. ferrolog is measured with
//      `--transfer zero-copy` and then `--transfer copy` on the same data dir when `ferrolog --help` lists --transfer; without
//      it, once, as "ferrolog (current)".
// The table goes to stdout and to bench/.out/kafka-side-by-side.md.
//
// Placement (BENCH_PIN, default 1 where taskset exists and there are two CPUs or more): every
// thread of the broker runs on CPU 0 and the tools' JVMs on CPU 1. Unpinned, the consumer's
// fresh JVM compiles its hot paths during each 1-2 s run (its C2 threads took a fifth of the
// machine's samples in a profile of one run) on whichever CPU the broker is using, and the
// brokers' figures moved with it. BENCH_PIN=0 leaves the scheduler to it.
// Env: BENCH_GB (default 1), BENCH_SKIP_KAFKA=1, BENCH_KEEP=1 (keep the temp dirs), BENCH_PIN,
// BENCH_CONSUME_RUNS (measured consumer runs per system, default 3, the median reported),
// BENCH_WARMUP_RUNS (unmeasured consumer runs before them, default 3),
// FERROLOG_LOG_LEVEL (the broker's log level, default info; its log is in the temp dir and is
// copied to bench/.out/ when a step fails).
// The produce comparison alone (acks=1 against acks=-1, the idempotent producer's default):
// BENCH_PRODUCE_ONLY=1 skips the consume runs, BENCH_PRODUCE_PAIRS=N (default 1) measures N
// acks=1/acks=-1 pairs in a row on the same warm broker, each pair on topics of its own, so that
// the ratio is taken N times within one run:
//   BENCH_SKIP_KAFKA=1 BENCH_PRODUCE_ONLY=1 BENCH_PRODUCE_PAIRS=3 BENCH_GB=0.5 node bench/kafka-side-by-side.mjs
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  root,
  children,
  abort,
  isAborting,
  run as runChild,
  startDaemon,
  exited,
  waitForExit,
  stopChild,
  alive,
  freePort,
  waitForPort,
  cpuSeconds,
  pinned,
  pin,
  BROKER_CPU,
  TOOLS_CPU,
} from './lib/processes.mjs'
import { KAFKA_NAME, kafkaTools, fetchJars, java as runJava, producerSummary } from './lib/kafka-tools.mjs'
import { makeSay, fmt, loadavg, tail, lastLines, logProblems, machineInfo, commandLine as benchCommandLine } from './lib/report.mjs'

const mainJs = path.join(root, 'dist', 'ts', 'cli', 'main.js')
const outDir = path.join(root, 'bench', '.out')

const GB = Number(process.env.BENCH_GB ?? 1)
if (!(GB > 0)) throw new Error(`BENCH_GB must be a positive number, not ${process.env.BENCH_GB}`)
const SKIP_KAFKA = process.env.BENCH_SKIP_KAFKA === '1'
const KEEP = process.env.BENCH_KEEP === '1'
const CONSUME_RUNS = Number(process.env.BENCH_CONSUME_RUNS ?? 3)
if (!(Number.isInteger(CONSUME_RUNS) && CONSUME_RUNS > 0)) throw new Error(`BENCH_CONSUME_RUNS must be a positive integer, not ${process.env.BENCH_CONSUME_RUNS}`)
const WARMUP_RUNS = Number(process.env.BENCH_WARMUP_RUNS ?? 3)
if (!(Number.isInteger(WARMUP_RUNS) && WARMUP_RUNS >= 0)) throw new Error(`BENCH_WARMUP_RUNS must be a whole number, not ${process.env.BENCH_WARMUP_RUNS}`)
const PRODUCE_ONLY = process.env.BENCH_PRODUCE_ONLY === '1'
const PRODUCE_PAIRS = Number(process.env.BENCH_PRODUCE_PAIRS ?? 1)
if (!(Number.isInteger(PRODUCE_PAIRS) && PRODUCE_PAIRS > 0)) throw new Error(`BENCH_PRODUCE_PAIRS must be a positive integer, not ${process.env.BENCH_PRODUCE_PAIRS}`)
const RECORD_SIZE = 1024
const RECORDS = Math.max(1, Math.round((GB * 2 ** 30) / RECORD_SIZE))
const WARMUP_RECORDS = Math.min(RECORDS, 262_144) // 256 MiB
const PAYLOAD_GIB = (RECORDS * RECORD_SIZE) / 2 ** 30
const SEGMENT_BYTES = 1 << 30
// Generous per-step limits so that the script always ends: 10 minutes per GiB plus a minute.
const STEP_MS = 60_000 + Math.ceil(GB * 600_000)
const START_MS = 120_000

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-vs-kafka-'))
const kafkaDirs = new Set() // data dirs of Kafka brokers started by run-broker.sh
const failedLogs = [] // broker logs worth keeping after a failure
const say = makeSay('kafka-side-by-side')
// A child process is given STEP_MS unless the step says otherwise.
const run = (cmd, args, opts) => runChild(cmd, args, { timeoutMs: STEP_MS, ...opts })

// ---------------------------------------------------------------------------------------------
// brokers

function transferSupported() {
  let text = ''
  for (const args of [['--help'], ['broker', '--help']]) {
    const r = spawnSync(process.execPath, [mainJs, ...args], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' })
    text += `${r.stdout ?? ''}\n${r.stderr ?? ''}\n`
  }
  return /--transfer\b/.test(text)
}

async function startFerrolog(dataDir, transfer, name) {
  if (isAborting()) throw new Error('interrupted')
  const port = await freePort()
  // The same group setting as tools/kafka/run-broker.sh gives Kafka (no 3 s wait for more
  // members before a new group's first generation).
  const config = path.join(tmp, 'ferrolog.properties')
  fs.writeFileSync(config, 'group.initial.rebalance.delay.ms=0\n')
  const args = [mainJs, 'broker', '--data-dir', dataDir, '--listen', `127.0.0.1:${port}`, '--config', config]
  if (transfer) args.push('--transfer', transfer)
  const logFile = path.join(tmp, `${name}.log`)
  say(`starting ${name}: node ${args.map((a) => path.relative(root, a) || a).join(' ')}`)
  const child = startDaemon(process.execPath, args, logFile, { FERROLOG_LOG_LEVEL: process.env.FERROLOG_LOG_LEVEL ?? 'info' })
  try {
    await waitForPort(port, START_MS, () => (exited(child) ? 'the broker exited during start-up' : null))
  } catch (err) {
    child.kill('SIGKILL')
    failedLogs.push(logFile)
    await waitForExit(child, 5_000)
    throw new Error(`${err.message}; its log ends: ${tail(logFile, 5)}`, { cause: err })
  }
  return {
    name,
    pid: child.pid,
    bootstrap: `127.0.0.1:${port}`,
    logFile,
    partitionDir: (topic) => path.join(dataDir, `${topic}-0`),
    deadReason: () => (!exited(child) ? null : `the broker exited (${child.signalCode ?? `code ${child.exitCode}`}); its log ends: ${tail(logFile, 3)}`),
    async createTopic(topic) {
      const r = await run(
        process.execPath,
        [mainJs, 'topics', '--bootstrap-server', this.bootstrap, 'create', '--topic', topic, '--partitions', '1', '--replication-factor', '1', '--config', `segment.bytes=${SEGMENT_BYTES}`],
        { timeoutMs: 60_000, label: 'ferrolog topics' },
      )
      if (r.code !== 0) throw new Error(`ferrolog topics create ${topic} exited ${r.code}: ${r.stderr.trim()}`)
    },
    async stop() {
      await stopChild(child, name, say)
      children.delete(child)
    },
  }
}

async function startKafka(dataDir) {
  say(`starting Apache Kafka: tools/kafka/run-broker.sh --data-dir ${dataDir}`)
  kafkaDirs.add(dataDir)
  const r = await run(path.join(kafkaTools, 'run-broker.sh'), ['--data-dir', dataDir, '--wait-secs', String(START_MS / 1000 - 10)], {
    timeoutMs: START_MS + 30_000,
    env: { KAFKA_JARS_DIR: jars },
    label: 'run-broker.sh',
  })
  if (r.code !== 0) {
    failedLogs.push(path.join(dataDir, 'broker.log'))
    throw new Error(`run-broker.sh exited ${r.code}: ${r.stderr.trim().split('\n').slice(-5).join(' / ')}`)
  }
  const pid = Number(/^pid=(\d+)$/m.exec(r.stdout)?.[1])
  const bootstrap = /^bootstrap=(\S+)$/m.exec(r.stdout)?.[1]
  if (!pid || !bootstrap) throw new Error(`run-broker.sh printed no pid/bootstrap: ${r.stdout}`)
  const comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  if (comm !== 'java') throw new Error(`pid ${pid} from run-broker.sh is "${comm}", not the JVM: its CPU time would be wrong`)
  return {
    name: KAFKA_NAME,
    pid,
    bootstrap,
    logFile: path.join(dataDir, 'broker.log'),
    partitionDir: (topic) => path.join(dataDir, 'kafka-logs', `${topic}-0`),
    deadReason: () => (alive(pid) ? null : `the broker's JVM exited; its log ends: ${tail(path.join(dataDir, 'broker.log'), 3)}`),
    async createTopic(topic) {
      const r = await java(
        'org.apache.kafka.tools.TopicCommand',
        ['--bootstrap-server', bootstrap, '--create', '--topic', topic, '--partitions', '1', '--replication-factor', '1', '--config', `segment.bytes=${SEGMENT_BYTES}`],
        { timeoutMs: 90_000, label: 'kafka-topics' },
      )
      if (r.code !== 0) throw new Error(`kafka-topics --create ${topic} exited ${r.code}: ${r.stderr.trim()}`)
    },
    async stop() {
      await run(path.join(kafkaTools, 'stop-broker.sh'), [dataDir, '--timeout', '60'], { timeoutMs: 90_000, label: 'stop-broker.sh' })
      kafkaDirs.delete(dataDir)
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Kafka's tools

let jars = ''
const java = (mainClass, args, opts) => runJava(jars, mainClass, args, { timeoutMs: STEP_MS, ...opts })

async function produce(broker, topic, acks, records = RECORDS) {
  const before = cpuSeconds(broker.pid, 'broker pid')
  const started = Date.now()
  const r = await java(
    'org.apache.kafka.tools.ProducerPerformance',
    ['--topic', topic, '--num-records', String(records), '--record-size', String(RECORD_SIZE), '--throughput', '-1', '--producer-props', `acks=${acks}`, `bootstrap.servers=${broker.bootstrap}`],
    { label: `producer-perf acks=${acks}`, watch: broker.deadReason },
  )
  const wall = (Date.now() - started) / 1000
  const cpu = cpuSeconds(broker.pid, 'broker pid') - before
  const p = producerSummary(r, records)
  return {
    mbps: p.mbps,
    rps: p.rps,
    cpu,
    wall,
    note: `latency avg ${p.avgMs} ms, p99 ${p.p99Ms} ms, max ${p.maxMs} ms${p.problems.length ? `; errors: ${p.problems.join('; ')}` : ''}`,
  }
}

let groupSeq = 0
async function consumeOnce(broker, topic) {
  const group = `perf-${broker.name.replace(/\W+/g, '-')}-${++groupSeq}`
  const before = cpuSeconds(broker.pid, 'broker pid')
  const started = Date.now()
  const r = await java(
    'org.apache.kafka.tools.ConsumerPerformance',
    ['--bootstrap-server', broker.bootstrap, '--topic', topic, '--num-records', String(RECORDS), '--timeout', '30000', '--group', group],
    { label: 'consumer-perf', watch: broker.deadReason },
  )
  const wall = (Date.now() - started) / 1000
  const cpu = cpuSeconds(broker.pid, 'broker pid') - before
  const lines = r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  const h = lines.findIndex((l) => l.startsWith('start.time'))
  if (r.code !== 0 || h < 0 || !lines[h + 1]) throw new Error(`ConsumerPerformance exited ${r.code} without its summary: ${lastLines(r.stderr || r.stdout)}`)
  const names = lines[h].split(/,\s*/)
  const values = lines[h + 1].split(/,\s*/)
  const get = (k) => Number(values[names.indexOf(k) + (values.length - names.length)])
  const res = {
    mbps: get('MB.sec'),
    fetchMbps: get('fetch.MB.sec'),
    rps: get('nMsg.sec'),
    fetchRps: get('fetch.nMsg.sec'),
    count: get('data.consumed.in.nMsg'),
    rebalanceMs: get('rebalance.time.ms'),
    cpu,
    wall,
  }
  const problems = []
  if (res.count !== RECORDS) problems.push(`consumed ${res.count} records, ${RECORDS} wanted`)
  const warn = /WARNING[^\n]*/.exec(r.stdout + r.stderr)
  if (warn) problems.push(warn[0])
  res.problems = problems
  return res
}

async function consume(broker, topic) {
  // Page cache: read the partition's files once, then WARMUP_RUNS consumer runs (which also
  // warm the broker's JIT); the runs after them are the measured ones.
  await warmFiles(broker.partitionDir(topic))
  for (let i = 0; i < WARMUP_RUNS; i++) {
    say(`${broker.name}: warm-up consume ${i + 1}/${WARMUP_RUNS}`)
    const warm = await consumeOnce(broker, topic)
    say(`${broker.name}: warm-up run: ${Number(warm.fetchMbps).toFixed(0)} MB/s${warm.problems.length ? `; ${warm.problems.join('; ')}` : ''}`)
  }
  // CONSUME_RUNS measured runs; the median by fetch MB/s is reported (one run moves with the
  // machine), all runs in the note.
  const runs = []
  for (let i = 0; i < CONSUME_RUNS; i++) {
    say(`${broker.name}: measured consume ${i + 1}/${CONSUME_RUNS}`)
    runs.push(await consumeOnce(broker, topic))
  }
  const res = [...runs].sort((a, b) => a.fetchMbps - b.fetchMbps)[runs.length >> 1]
  const problems = runs.flatMap((r) => r.problems)
  const all = runs.length > 1 ? `; runs: ${runs.map((r) => `${r.fetchMbps.toFixed(0)} MB/s ${(r.cpu / PAYLOAD_GIB).toFixed(2)} CPU-s/GiB`).join(', ')}` : ''
  return {
    mbps: res.fetchMbps,
    rps: res.fetchRps,
    cpu: res.cpu,
    wall: res.wall,
    note: `median of ${runs.length}${all}; MB/s incl. group join ${res.mbps.toFixed(1)}, join ${res.rebalanceMs} ms` + (problems.length ? `; **${problems.join('; ')}**` : ''),
  }
}

async function warmFiles(dir) {
  for (const f of fs.readdirSync(dir)) {
    const p = path.join(dir, f)
    if (!fs.statSync(p).isFile()) continue
    await new Promise((resolve, reject) =>
      fs
        .createReadStream(p, { highWaterMark: 1 << 20 })
        .on('data', () => {})
        .on('end', resolve)
        .on('error', reject),
    )
  }
}

// ---------------------------------------------------------------------------------------------
// the run

const rows = [] // { test, system, mbps, rps, cpu, wall, note } or { test, system, error }

async function measure(test, system, broker, fn) {
  say(`${system}: ${test}`)
  try {
    const r = await fn()
    rows.push({ test, system, ...r })
    say(`${system}: ${test}: ${r.mbps} MB/s, ${r.rps} records/s, broker ${r.cpu.toFixed(1)} CPU-s (${r.note})`)
  } catch (err) {
    rows.push({ test, system, error: err.message })
    if (!isAborting()) failedLogs.push(broker.logFile)
    say(`${system}: ${test} FAILED: ${err.message}`)
  }
}

/**
 * One system: the first broker that starts gets the produce runs (warm-up, acks=1, acks=-1),
 * then each mode gets a consume of the acks=1 topic, one broker after the other on the same
 * data dir. A mode whose broker does not start is a failed row; the next mode still runs.
 */
async function benchSystem(startBroker, modes, nameOf) {
  const system = modes.length > 1 ? nameOf(modes[0]).replace(/ \(.*\)$/, '') : nameOf(modes[0])
  let produced = null // the acks=1 produce row, once the produce runs are done
  for (const mode of modes) {
    let broker
    try {
      broker = await startBroker(mode)
      pin(broker.pid)
    } catch (err) {
      rows.push({ test: 'broker start', system: nameOf(mode), error: err.message })
      say(`${nameOf(mode)}: ${err.message}`)
      continue
    }
    try {
      if (!produced) {
        await broker.createTopic('perf-warmup')
        // Not measured: a freshly started JVM (and, less so, Node) compiles its hot paths during
        // the first seconds of load; both brokers get the same warm-up before the measured runs.
        say(`${system}: warm-up produce, ${fmt(WARMUP_RECORDS)} records to perf-warmup (not measured)`)
        const warm = await produce(broker, 'perf-warmup', '1', WARMUP_RECORDS)
        say(`${system}: warm-up produce: ${warm.mbps} MB/s, broker ${warm.cpu.toFixed(2)} CPU-s`)
        for (let pair = 1; pair <= PRODUCE_PAIRS; pair++) {
          const suffix = pair === 1 ? '' : `-${pair}`
          const label = PRODUCE_PAIRS === 1 ? '' : ` (pair ${pair})`
          await broker.createTopic(`perf-acks1${suffix}`)
          await broker.createTopic(`perf-acksall${suffix}`)
          await measure(`produce, acks=1${label}`, system, broker, () => produce(broker, `perf-acks1${suffix}`, '1'))
          await measure(`produce, acks=-1${label}`, system, broker, () => produce(broker, `perf-acksall${suffix}`, '-1'))
        }
        produced = rows.find((r) => r.system === system && r.test.startsWith('produce, acks=1'))
        if (PRODUCE_ONLY) break
      }
      if (produced.error) rows.push({ test: 'consume', system: broker.name, error: 'skipped: the acks=1 produce failed' })
      else await measure('consume', broker.name, broker, () => consume(broker, 'perf-acks1'))
    } catch (err) {
      if (!isAborting()) failedLogs.push(broker.logFile)
      rows.push({ test: '-', system: broker.name, error: err.message })
      produced ??= { error: err.message } // the next mode has no data to consume
      say(`${broker.name}: ${err.message}`)
    } finally {
      await broker.stop()
      logNotes.push(`${broker.name}: ${logProblems(broker.logFile, { suffix: " in the broker's log" })}`)
    }
  }
}

const logNotes = [] // per broker: warnings and errors in its log

function commandLine() {
  return benchCommandLine(
    ['BENCH_GB', 'BENCH_SKIP_KAFKA', 'BENCH_PRODUCE_ONLY', 'BENCH_PRODUCE_PAIRS', 'BENCH_KEEP', 'BENCH_CONSUME_RUNS', 'BENCH_WARMUP_RUNS', 'BENCH_PIN', 'FERROLOG_LOG_LEVEL'],
    'bench:kafka',
    'bench/kafka-side-by-side.mjs',
  )
}

function report(info, startedAt, loadStart, transfer) {
  const lines = []
  lines.push(`## ferrolog vs Apache Kafka, side by side`, '')
  lines.push(`- command: \`${commandLine()}\``)
  lines.push(`- date: ${startedAt.toISOString()}, ${((Date.now() - startedAt) / 1000).toFixed(0)} s in all`)
  lines.push(`- machine: ${info.cpuModel}, ${info.cores} cores, ${info.memGiB} GiB, Linux ${info.kernel}; Node ${info.node}; ${info.java}`)
  lines.push(`- load average (1, 5, 15 min): ${loadStart} at start, ${loadavg()} at end`)
  lines.push(`- placement: ${pinned() ? `brokers on CPU ${BROKER_CPU}, Kafka's tools on CPU ${TOOLS_CPU} (taskset)` : 'not pinned (BENCH_PIN=0 or no taskset)'}`)
  lines.push(`- ferrolog ${info.commit}: ${transfer ? '`--transfer zero-copy` and `--transfer copy`' : 'no `--transfer` option in this build: one consume row, "ferrolog (current)"'}`)
  lines.push(
    `- data: ${fmt(RECORDS)} records of ${RECORD_SIZE} B (${fmt(PAYLOAD_GIB, 2)} GiB of values) per topic, 1 partition, segment.bytes ${SEGMENT_BYTES}; ` +
      `ProducerPerformance --throughput -1 with the producer's defaults otherwise, after an unmeasured warm-up of ${fmt(WARMUP_RECORDS)} records to another topic; ` +
      `ConsumerPerformance from a warm page cache (files read, then ${WARMUP_RUNS} unmeasured runs), median of ${CONSUME_RUNS} measured runs; both brokers with group.initial.rebalance.delay.ms=0`,
  )
  lines.push(
    `- MB is the tools' MiB (2^20 B). Consume MB/s and records/s are the tool's fetch.MB.sec and fetch.nMsg.sec (without the group join); ` +
      `broker CPU-s is utime+stime of the broker process over the tool's run, per GiB of record values`,
  )
  for (const note of [...new Set(logNotes)]) lines.push(`- ${note}`)
  for (const system of [...new Set(rows.map((r) => r.system))]) {
    const perGiB = (prefix) => rows.filter((r) => r.system === system && !r.error && r.test.startsWith(prefix)).map((r) => r.cpu / PAYLOAD_GIB)
    const one = perGiB('produce, acks=1')
    const all = perGiB('produce, acks=-1')
    if (one.length === 0 || one.length !== all.length) continue
    lines.push(`- ${system}: broker CPU per GiB, acks=-1 / acks=1: ${one.map((c, i) => `${fmt(all[i] / c, 2)}x`).join(', ')}`)
  }
  lines.push('')
  lines.push('| test | system | MB/s | records/s | broker CPU-s | broker CPU-s per GiB | tool wall s | notes |')
  lines.push('|---|---|---:|---:|---:|---:|---:|---|')
  for (const r of rows) {
    if (r.error) lines.push(`| ${r.test} | ${r.system} | - | - | - | - | - | **failed**: ${r.error.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`)
    else lines.push(`| ${r.test} | ${r.system} | ${fmt(r.mbps, 2)} | ${fmt(r.rps)} | ${fmt(r.cpu, 2)} | ${fmt(r.cpu / PAYLOAD_GIB, 2)} | ${fmt(r.wall, 1)} | ${r.note} |`)
  }
  return lines.join('\n') + '\n'
}

async function main() {
  const startedAt = new Date()
  const loadStart = loadavg()
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} is missing: run npm install (or npm run build) first`)
  say(`temp dir ${tmp}; ${fmt(RECORDS)} records of ${RECORD_SIZE} B per topic`)
  say('Kafka jars: tools/kafka/fetch-jars.sh')
  jars = fetchJars()
  const info = machineInfo(mainJs)
  const transfer = transferSupported()
  say(transfer ? 'ferrolog lists --transfer: zero-copy and copy' : 'ferrolog has no --transfer option: running it as it is ("ferrolog (current)")')

  const fdir = path.join(tmp, 'ferrolog')
  fs.mkdirSync(fdir)
  const ferrologName = (mode) => (mode ? `ferrolog (${mode})` : 'ferrolog (current)')
  await benchSystem((mode) => startFerrolog(fdir, mode, ferrologName(mode)), transfer ? ['zero-copy', 'copy'] : [null], ferrologName)
  if (!SKIP_KAFKA && !isAborting())
    await benchSystem(
      () => startKafka(path.join(tmp, 'kafka')),
      [null],
      () => KAFKA_NAME,
    )

  if (isAborting()) return 130 // interrupted: no half table over the last complete one
  const md = report(info, startedAt, loadStart, transfer)
  fs.mkdirSync(outDir, { recursive: true })
  fs.writeFileSync(path.join(outDir, 'kafka-side-by-side.md'), md)
  process.stdout.write(md)
  return rows.some((r) => r.error) ? 1 : 0
}

// ---------------------------------------------------------------------------------------------
// cleanup: brokers and tools stopped, temp dir removed, on success, failure and signals

let cleaned = false
async function cleanup() {
  if (cleaned) return
  cleaned = true
  for (const child of children) child.kill('SIGTERM')
  for (const dir of kafkaDirs) {
    const pidFile = path.join(dir, 'broker.pid')
    const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8')) : 0
    if (pid && alive(pid)) process.kill(pid, 'SIGTERM')
  }
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline && ([...children].some((c) => !exited(c)) || [...kafkaDirs].some(kafkaAlive))) {
    await new Promise((r) => setTimeout(r, 200))
  }
  killAllNow()
  keepFailedLogs()
  if (!KEEP) fs.rmSync(tmp, { recursive: true, force: true })
  else say(`kept ${tmp}`)
}

function kafkaAlive(dir) {
  const pidFile = path.join(dir, 'broker.pid')
  return fs.existsSync(pidFile) && alive(Number(fs.readFileSync(pidFile, 'utf8')))
}

function killAllNow() {
  for (const child of children) if (!exited(child)) child.kill('SIGKILL')
  for (const dir of kafkaDirs) {
    const pidFile = path.join(dir, 'broker.pid')
    if (kafkaAlive(dir)) process.kill(Number(fs.readFileSync(pidFile, 'utf8')), 'SIGKILL')
  }
}

function keepFailedLogs() {
  for (const file of new Set(failedLogs)) {
    if (!fs.existsSync(file)) continue
    fs.mkdirSync(outDir, { recursive: true })
    const dest = path.join(outDir, `kafka-side-by-side.${path.basename(path.dirname(file)) === 'kafka' ? 'kafka-broker' : path.basename(file, '.log').replace(/\W+/g, '-').replace(/-$/, '')}.log`)
    fs.copyFileSync(file, dest)
    say(`broker log kept: ${path.relative(root, dest)}`)
  }
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
]) {
  process.on(signal, () => {
    say(`${signal}: stopping the brokers and tools`)
    abort()
    cleanup().finally(() => process.exit(code))
  })
}
process.on('exit', () => {
  killAllNow()
  if (!KEEP && !cleaned) fs.rmSync(tmp, { recursive: true, force: true })
})

main()
  .then((code) => (process.exitCode = code))
  .catch((err) => {
    say(`failed: ${err.stack ?? err.message}`)
    process.exitCode = 1
  })
  .finally(cleanup)
