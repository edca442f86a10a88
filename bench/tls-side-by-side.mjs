#!/usr/bin/env node
// Produce and consume over TLS, ferrolog next to Apache Kafka 4.4 over TLS and next to both in
// plaintext, in one run, with the same client (Kafka's ProducerPerformance and
// ConsumerPerformance, run as classes from the jars that tools/kafka/fetch-jars.sh copies) and the
// same PEM certificate: MB/s and the broker's CPU-seconds per GiB.
//
//   npm run bench:tls                         # BENCH_GB=0.5 by default
//   BENCH_GB=1 BENCH_CONSUME_RUNS=5 node bench/tls-side-by-side.mjs
//
// ferrolog runs from dist/ as npm install (or npm run build) left it: this script builds nothing.
// Steps:
//   0. a throw-away CA (ts/security/certificates.ts) and one broker certificate for localhost and
//      127.0.0.1, its key encrypted with PKCS#12's PBE-SHA1-3DES (Java 17 reads it, and so does
//      node:crypto); the PEM key and chain in keystore.pem, the CA in ca.pem;
//   1. per system (ferrolog, then Kafka), one broker on 127.0.0.1 with a PLAINTEXT and an SSL
//      listener, both given keystore.pem with ssl.keystore.type=PEM and ssl.key.password, their
//      other TLS settings (protocols, cipher suites) the defaults; ferrolog with its default
//      transfer (sendfile for PLAINTEXT where it runs, read-and-write through node:tls for SSL);
//   2. an unmeasured warm-up produce of 256 MiB over each listener (JIT, TLS code paths);
//   3. produce BENCH_GB GiB of 1 KiB records, acks=1, to a 1-partition topic per listener
//      (ProducerPerformance --throughput -1, the producer's defaults otherwise; over SSL its
//      client config is security.protocol=SSL with ca.pem as a PEM truststore);
//   4. consume each topic over its own listener with ConsumerPerformance: the segment files read
//      once into the page cache, BENCH_WARMUP_RUNS unmeasured rounds, then BENCH_CONSUME_RUNS
//      measured rounds, each round one run over PLAINTEXT and one over SSL (interleaved, so that
//      the machine's load moves both alike); medians.
// Broker CPU-seconds: utime+stime of the broker process (every thread) from /proc/<pid>/stat over
// the tool's run, per GiB of record values. The table and the ratios go to stdout and to
// bench/.out/tls-side-by-side.md.
//
// Placement (BENCH_PIN, default 1 where taskset exists and there are two CPUs or more): every
// thread of the broker runs on CPU 0 and the tools' JVMs on CPU 1.
// Env: BENCH_GB (default 0.5), BENCH_SKIP_KAFKA=1, BENCH_KEEP=1 (keep the temp dir), BENCH_PIN,
// BENCH_CONSUME_RUNS (default 3), BENCH_WARMUP_RUNS (default 2), FERROLOG_LOG_LEVEL (default info).
// Profiling: BENCH_NODE_ARGS (ferrolog's node flags, e.g. '--cpu-prof --cpu-prof-dir=DIR' or
// --perf-basic-prof), BENCH_PID_FILE (the broker's pid is written there, for perf record -p),
// BENCH_LISTENERS (default PLAINTEXT,SSL), BENCH_TESTS=produce (no consume rounds).
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
  freePorts,
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

const positive = (name, fallback, integer) => {
  const v = Number(process.env[name] ?? fallback)
  if (!(v >= 0 && (!integer || Number.isInteger(v)))) throw new Error(`${name} must be a ${integer ? 'whole ' : ''}number, not ${process.env[name]}`)
  return v
}
const GB = positive('BENCH_GB', 0.5, false)
if (GB === 0) throw new Error('BENCH_GB must be above 0')
const CONSUME_RUNS = Math.max(1, positive('BENCH_CONSUME_RUNS', 3, true))
const WARMUP_RUNS = positive('BENCH_WARMUP_RUNS', 2, true)
const SKIP_KAFKA = process.env.BENCH_SKIP_KAFKA === '1'
const KEEP = process.env.BENCH_KEEP === '1'
const RECORD_SIZE = 1024
const RECORDS = Math.max(1, Math.round((GB * 2 ** 30) / RECORD_SIZE))
const WARMUP_RECORDS = Math.min(RECORDS, 262_144) // 256 MiB
const PAYLOAD_GIB = (RECORDS * RECORD_SIZE) / 2 ** 30
const SEGMENT_BYTES = 1 << 30
// Per-step limits so that the script always ends: 10 minutes per GiB plus a minute.
const STEP_MS = 60_000 + Math.ceil(GB * 600_000)
const START_MS = 120_000
const LISTENERS = (process.env.BENCH_LISTENERS ?? 'PLAINTEXT,SSL').split(',')
if (LISTENERS.some((l) => l !== 'PLAINTEXT' && l !== 'SSL')) throw new Error(`BENCH_LISTENERS: PLAINTEXT and/or SSL, not ${process.env.BENCH_LISTENERS}`)
const CONSUME = (process.env.BENCH_TESTS ?? 'produce,consume').split(',').includes('consume')
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
const KEY_PASSWORD = 'tls-bench-key'

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-tls-bench-'))
const say = makeSay('tls-side-by-side')
const run = (cmd, args, opts) => runChild(cmd, args, { timeoutMs: STEP_MS, ...opts })
let jars = ''
const java = (mainClass, args, opts) => runJava(jars, mainClass, args, { timeoutMs: STEP_MS, ...opts })
let kafkaDir = null // the data dir of the Kafka broker while it may run

// ---------------------------------------------------------------------------------------------
// certificates and client configs

async function writeCertificates() {
  const { createCertificateAuthority } = await import(path.join(root, 'dist', 'ts', 'security', 'certificates.js'))
  const ca = createCertificateAuthority()
  const cert = ca.issue({ subject: { CN: 'broker' }, usage: 'server', keyPassword: KEY_PASSWORD, keyEncryption: 'pbe-sha1-3des' })
  const keystore = path.join(tmp, 'keystore.pem')
  const caFile = path.join(tmp, 'ca.pem')
  fs.writeFileSync(keystore, cert.keyPem + cert.chainPem)
  fs.writeFileSync(caFile, ca.certificatePem)
  const clientConfig = { PLAINTEXT: path.join(tmp, 'client-plaintext.properties'), SSL: path.join(tmp, 'client-ssl.properties') }
  fs.writeFileSync(clientConfig.PLAINTEXT, 'security.protocol=PLAINTEXT\n')
  fs.writeFileSync(clientConfig.SSL, `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${caFile}\n`)
  return { keystore, caFile, clientConfig }
}

// ---------------------------------------------------------------------------------------------
// brokers: { name, pid, bootstrap: { PLAINTEXT, SSL }, logFile, partitionDir(topic), deadReason(), stop() }

async function startFerrolog(certs) {
  const [plain, ssl] = await freePorts(2)
  const dataDir = path.join(tmp, 'ferrolog')
  const config = path.join(tmp, 'ferrolog.properties')
  fs.writeFileSync(
    config,
    [
      `listeners=PLAINTEXT://127.0.0.1:${plain},SSL://127.0.0.1:${ssl}`,
      'ssl.keystore.type=PEM',
      `ssl.keystore.location=${certs.keystore}`,
      `ssl.key.password=${KEY_PASSWORD}`,
      // As tools/kafka/run-broker.sh gives Kafka: no 3 s wait for more members of a new group.
      'group.initial.rebalance.delay.ms=0',
      '',
    ].join('\n'),
  )
  const args = [...NODE_ARGS, mainJs, 'broker', '--data-dir', dataDir, '--config', config]
  const logFile = path.join(tmp, 'ferrolog.log')
  say(`starting ferrolog: node ${args.map((a) => path.relative(root, a) || a).join(' ')}`)
  const child = startDaemon(process.execPath, args, logFile, { FERROLOG_LOG_LEVEL: process.env.FERROLOG_LOG_LEVEL ?? 'info' })
  try {
    for (const port of [plain, ssl]) await waitForPort(port, START_MS, () => (exited(child) ? `the broker exited during start-up; its log ends: ${tail(logFile, 5)}` : null))
  } catch (err) {
    child.kill('SIGKILL')
    await waitForExit(child, 5_000)
    throw err
  }
  return {
    name: 'ferrolog',
    pid: child.pid,
    bootstrap: { PLAINTEXT: `127.0.0.1:${plain}`, SSL: `127.0.0.1:${ssl}` },
    logFile,
    partitionDir: (topic) => path.join(dataDir, `${topic}-0`),
    deadReason: () => (!exited(child) ? null : `the broker exited (${child.signalCode ?? `code ${child.exitCode}`}); its log ends: ${tail(logFile, 3)}`),
    stop: () => stopChild(child, 'ferrolog', say),
  }
}

async function startKafka(certs) {
  const dataDir = path.join(tmp, 'kafka')
  kafkaDir = dataDir
  say(`starting ${KAFKA_NAME}: tools/kafka/run-broker.sh --data-dir ${dataDir} --secure-listener SSL`)
  const r = await run(
    path.join(kafkaTools, 'run-broker.sh'),
    ['--data-dir', dataDir, '--wait-secs', String(START_MS / 1000 - 10), '--secure-listener', 'SSL', '--ssl-keystore', certs.keystore, '--ssl-key-password', KEY_PASSWORD],
    { timeoutMs: START_MS + 30_000, env: { KAFKA_JARS_DIR: jars }, label: 'run-broker.sh' },
  )
  if (r.code !== 0) throw new Error(`run-broker.sh exited ${r.code}: ${lastLines(r.stderr, 5)}`)
  const pid = Number(/^pid=(\d+)$/m.exec(r.stdout)?.[1])
  const plain = /^bootstrap=(\S+)$/m.exec(r.stdout)?.[1]
  const ssl = /^secure=(\S+)$/m.exec(r.stdout)?.[1]
  if (!pid || !plain || !ssl) throw new Error(`run-broker.sh printed no pid/bootstrap/secure: ${r.stdout}`)
  const comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  if (comm !== 'java') throw new Error(`pid ${pid} from run-broker.sh is "${comm}", not the JVM: its CPU time would be wrong`)
  const logFile = path.join(dataDir, 'broker.log')
  return {
    name: KAFKA_NAME,
    pid,
    bootstrap: { PLAINTEXT: plain, SSL: ssl },
    logFile,
    partitionDir: (topic) => path.join(dataDir, 'kafka-logs', `${topic}-0`),
    deadReason: () => (alive(pid) ? null : `the broker's JVM exited; its log ends: ${tail(logFile, 3)}`),
    async stop() {
      await run(path.join(kafkaTools, 'stop-broker.sh'), [dataDir, '--timeout', '60'], { timeoutMs: 90_000, label: 'stop-broker.sh' })
      kafkaDir = null
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Kafka's tools, the same for both brokers

async function createTopic(broker, topic) {
  const r = await java(
    'org.apache.kafka.tools.TopicCommand',
    ['--bootstrap-server', broker.bootstrap.PLAINTEXT, '--create', '--topic', topic, '--partitions', '1', '--replication-factor', '1', '--config', `segment.bytes=${SEGMENT_BYTES}`],
    { timeoutMs: 90_000, label: 'kafka-topics' },
  )
  if (r.code !== 0) throw new Error(`kafka-topics --create ${topic} exited ${r.code}: ${lastLines(r.stderr)}`)
}

async function produce(broker, certs, listener, topic, records) {
  const before = cpuSeconds(broker.pid, 'broker pid')
  const r = await java(
    'org.apache.kafka.tools.ProducerPerformance',
    [
      '--topic',
      topic,
      '--num-records',
      String(records),
      '--record-size',
      String(RECORD_SIZE),
      '--throughput',
      '-1',
      '--command-config',
      certs.clientConfig[listener],
      '--command-property',
      'acks=1',
      `bootstrap.servers=${broker.bootstrap[listener]}`,
    ],
    { label: `producer-perf ${listener}`, watch: broker.deadReason },
  )
  const cpu = cpuSeconds(broker.pid, 'broker pid') - before
  const p = producerSummary(r, records)
  if (p.problems.length) throw new Error(`ProducerPerformance: ${p.problems.join('; ')}`)
  return { mbps: p.mbps, cpuPerGiB: cpu / ((records * RECORD_SIZE) / 2 ** 30), note: `latency avg ${p.avgMs} ms, p99 ${p.p99Ms} ms` }
}

let groupSeq = 0
async function consumeOnce(broker, certs, listener, topic) {
  const before = cpuSeconds(broker.pid, 'broker pid')
  const r = await java(
    'org.apache.kafka.tools.ConsumerPerformance',
    [
      '--bootstrap-server',
      broker.bootstrap[listener],
      '--topic',
      topic,
      '--num-records',
      String(RECORDS),
      '--timeout',
      '30000',
      '--group',
      `tls-bench-${++groupSeq}`,
      '--command-config',
      certs.clientConfig[listener],
    ],
    { label: `consumer-perf ${listener}`, watch: broker.deadReason },
  )
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
  if (get('data.consumed.in.nMsg') !== RECORDS) throw new Error(`ConsumerPerformance consumed ${get('data.consumed.in.nMsg')} records, ${RECORDS} wanted`)
  return { mbps: get('fetch.MB.sec'), cpuPerGiB: cpu / PAYLOAD_GIB }
}

async function warmFiles(dir) {
  for (const f of fs.readdirSync(dir)) {
    const p = path.join(dir, f)
    if (fs.statSync(p).isFile()) await fs.promises.readFile(p)
  }
}

// ---------------------------------------------------------------------------------------------
// the run

const rows = [] // { system, test, listener, mbps, cpuPerGiB, note } or { system, test, listener, error }
const logNotes = []

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

async function benchSystem(start, certs) {
  let broker
  try {
    broker = await start(certs)
    pin(broker.pid)
    if (process.env.BENCH_PID_FILE) fs.writeFileSync(process.env.BENCH_PID_FILE, `${broker.pid}\n`)
  } catch (err) {
    rows.push({ system: '-', test: 'broker start', listener: '-', error: err.message })
    say(`broker start failed: ${err.message}`)
    return
  }
  const system = broker.name
  const fail = (test, listener, err) => {
    rows.push({ system, test, listener, error: err.message })
    say(`${system}: ${test} over ${listener} FAILED: ${err.message}`)
  }
  try {
    const topic = (l) => `perf-${l.toLowerCase()}`
    for (const l of LISTENERS) {
      await createTopic(broker, `warmup-${l.toLowerCase()}`)
      await createTopic(broker, topic(l))
    }
    for (const l of LISTENERS) {
      say(`${system}: warm-up produce over ${l}, ${fmt(WARMUP_RECORDS)} records (not measured)`)
      await produce(broker, certs, l, `warmup-${l.toLowerCase()}`, WARMUP_RECORDS)
    }
    const produced = new Set()
    for (const l of LISTENERS) {
      say(`${system}: produce over ${l}`)
      try {
        const r = await produce(broker, certs, l, topic(l), RECORDS)
        rows.push({ system, test: 'produce', listener: l, ...r })
        produced.add(l)
        say(`${system}: produce over ${l}: ${fmt(r.mbps, 1)} MB/s, ${fmt(r.cpuPerGiB, 2)} CPU-s/GiB`)
      } catch (err) {
        fail('produce', l, err)
      }
    }
    if (!CONSUME) produced.clear()
    for (const l of produced) await warmFiles(broker.partitionDir(topic(l)))
    const runs = Object.fromEntries(LISTENERS.map((l) => [l, []]))
    const failed = new Set()
    for (let round = 0; round < WARMUP_RUNS + CONSUME_RUNS; round++) {
      const measured = round >= WARMUP_RUNS
      for (const l of produced) {
        if (failed.has(l)) continue
        try {
          const r = await consumeOnce(broker, certs, l, topic(l))
          say(`${system}: ${measured ? 'measured' : 'warm-up'} consume over ${l}: ${fmt(r.mbps, 1)} MB/s, ${fmt(r.cpuPerGiB, 2)} CPU-s/GiB`)
          if (measured) runs[l].push(r)
        } catch (err) {
          failed.add(l)
          fail('consume', l, err)
        }
      }
    }
    for (const l of produced) {
      const rs = runs[l]
      if (failed.has(l) || rs.length === 0) continue
      rows.push({
        system,
        test: 'consume',
        listener: l,
        mbps: median(rs.map((r) => r.mbps)),
        cpuPerGiB: median(rs.map((r) => r.cpuPerGiB)),
        note: `median of ${rs.length}: ${rs.map((r) => `${fmt(r.mbps, 0)} MB/s ${fmt(r.cpuPerGiB, 2)}`).join(', ')}`,
      })
    }
  } catch (err) {
    fail('-', '-', err)
  } finally {
    await broker.stop()
    logNotes.push(`${system}: ${logProblems(broker.logFile, { suffix: " in the broker's log" })}`)
  }
}

function commandLine() {
  return benchCommandLine(
    ['BENCH_GB', 'BENCH_SKIP_KAFKA', 'BENCH_KEEP', 'BENCH_CONSUME_RUNS', 'BENCH_WARMUP_RUNS', 'BENCH_PIN', 'BENCH_LISTENERS', 'BENCH_TESTS', 'BENCH_NODE_ARGS', 'FERROLOG_LOG_LEVEL'],
    'bench:tls',
    'bench/tls-side-by-side.mjs',
  )
}

function report(info, startedAt, loadStart) {
  const lines = [`## Produce and consume over TLS: ferrolog next to Apache Kafka, and next to plaintext`, '']
  lines.push(`- command: \`${commandLine()}\``)
  lines.push(`- date: ${startedAt.toISOString()}, ${((Date.now() - startedAt) / 1000).toFixed(0)} s in all`)
  lines.push(`- machine: ${info.cpuModel}, ${info.cores} cores, ${info.memGiB} GiB, Linux ${info.kernel}; Node ${info.node} (OpenSSL ${process.versions.openssl}); ${info.java}`)
  lines.push(`- load average (1, 5, 15 min): ${loadStart} at start, ${loadavg()} at end`)
  lines.push(`- placement: ${pinned() ? `brokers on CPU ${BROKER_CPU}, Kafka's tools on CPU ${TOOLS_CPU} (taskset)` : 'not pinned (BENCH_PIN=0 or no taskset)'}`)
  lines.push(`- ferrolog ${info.commit}`)
  lines.push(
    `- data: ${fmt(RECORDS)} records of ${RECORD_SIZE} B (${fmt(PAYLOAD_GIB, 2)} GiB of values) per topic, 1 partition; ProducerPerformance acks=1 --throughput -1 after an unmeasured ` +
      `warm-up of ${fmt(WARMUP_RECORDS)} records per listener; ConsumerPerformance from a warm page cache, ${WARMUP_RUNS} unmeasured rounds, then the median of ${CONSUME_RUNS} ` +
      `(each round PLAINTEXT then SSL); the same PEM keystore for both brokers, TLS settings otherwise their defaults`,
  )
  lines.push(`- MB is the tools' MiB (2^20 B); consume MB/s is fetch.MB.sec (without the group join); CPU-s/GiB: utime+stime of the broker process over the tool's run, per GiB of record values`)
  for (const note of logNotes) lines.push(`- ${note}`)
  lines.push('', '| test | system | listener | MB/s | broker CPU-s per GiB | notes |', '|---|---|---|---:|---:|---|')
  for (const r of rows) {
    if (r.error) lines.push(`| ${r.test} | ${r.system} | ${r.listener} | - | - | **failed**: ${r.error.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`)
    else lines.push(`| ${r.test} | ${r.system} | ${r.listener} | ${fmt(r.mbps, 1)} | ${fmt(r.cpuPerGiB, 2)} | ${r.note} |`)
  }
  const row = (system, test, listener) => rows.find((r) => r.system === system && r.test === test && r.listener === listener && !r.error)
  const ratios = []
  for (const test of ['produce', 'consume']) {
    const fTls = row('ferrolog', test, 'SSL')
    const fPlain = row('ferrolog', test, 'PLAINTEXT')
    const kTls = row(KAFKA_NAME, test, 'SSL')
    const kPlain = row(KAFKA_NAME, test, 'PLAINTEXT')
    const ratio = (a, b, k) => (a && b ? `${fmt(a[k] / b[k], 2)}x` : '-')
    ratios.push(
      `| ${test} | ${ratio(fTls, kTls, 'cpuPerGiB')} | ${ratio(fTls, kTls, 'mbps')} | ${ratio(fTls, fPlain, 'cpuPerGiB')} | ${ratio(fTls, fPlain, 'mbps')} | ${ratio(kTls, kPlain, 'cpuPerGiB')} | ${ratio(kTls, kPlain, 'mbps')} |`,
    )
  }
  lines.push(
    '',
    'Ratios (target: ferrolog TLS broker CPU per GiB at most 0.5x Kafka TLS):',
    '',
    '| test | ferrolog TLS / Kafka TLS, CPU per GiB | ferrolog TLS / Kafka TLS, MB/s | ferrolog TLS / plaintext, CPU per GiB | ferrolog TLS / plaintext, MB/s | Kafka TLS / plaintext, CPU per GiB | Kafka TLS / plaintext, MB/s |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...ratios,
  )
  return lines.join('\n') + '\n'
}

async function main() {
  const startedAt = new Date()
  const loadStart = loadavg()
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} is missing: run npm install (or npm run build) first`)
  say(`temp dir ${tmp}; ${fmt(RECORDS)} records of ${RECORD_SIZE} B per topic`)
  jars = fetchJars()
  const info = machineInfo(mainJs)
  const certs = await writeCertificates()
  await benchSystem(startFerrolog, certs)
  if (!SKIP_KAFKA && !isAborting()) await benchSystem(startKafka, certs)
  if (isAborting()) return 130
  const md = report(info, startedAt, loadStart)
  fs.mkdirSync(outDir, { recursive: true })
  fs.writeFileSync(path.join(outDir, 'tls-side-by-side.md'), md)
  process.stdout.write(md)
  return rows.some((r) => r.error) ? 1 : 0
}

// ---------------------------------------------------------------------------------------------
// cleanup: brokers and tools stopped, temp dir removed, on success, failure and signals

function kafkaPid() {
  const pidFile = kafkaDir && path.join(kafkaDir, 'broker.pid')
  const pid = pidFile && fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8')) : 0
  return pid && alive(pid) ? pid : 0
}

let cleaned = false
async function cleanup() {
  if (cleaned) return
  cleaned = true
  for (const child of children) child.kill('SIGTERM')
  if (kafkaPid()) process.kill(kafkaPid(), 'SIGTERM')
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline && ([...children].some((c) => !exited(c)) || kafkaPid())) await new Promise((r) => setTimeout(r, 200))
  killAllNow()
  if (!KEEP) fs.rmSync(tmp, { recursive: true, force: true })
  else say(`kept ${tmp}`)
}

function killAllNow() {
  for (const child of children) if (!exited(child)) child.kill('SIGKILL')
  if (kafkaPid()) process.kill(kafkaPid(), 'SIGKILL')
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
