#!/usr/bin/env node
// A 3-broker ferrolog cluster next to a 3-node Apache Kafka cluster, in one run, on the same
// machine, measured by the same clients (issue #14's bench): Kafka's own ProducerPerformance and
// EndToEndLatency, run as classes from the jars that tools/kafka/fetch-jars.sh copies from Maven
// Central, and a leader-election probe on ferrolog's client (dist/ts/index.js).
//
//   npm run bench:cluster                     # after npm install; BENCH_GB=0.5 by default
//   BENCH_GB=0.1 BENCH_SKIP_KAFKA=1 node bench/cluster-side-by-side.mjs
//
// ferrolog runs from dist/ as npm install (or npm run build) left it: this script builds nothing.
// The clusters, each on 127.0.0.1 in a fresh temp dir, one after the other (ferrolog first):
//   ferrolog: one etcd member (Debian's etcd-server, `etcd` on the PATH) and three brokers
//     `ferrolog broker --cluster etcd://… --node-id 1..3`;
//   Apache Kafka: tools/kafka/run-cluster.sh, three combined broker+controller nodes (the
//     metadata quorum is the three brokers; ferrolog's is etcd, whose CPU is shown apart).
// Both with broker.session.timeout.ms 9000 (Kafka's default; ferrolog's broker lease TTL).
// Per cluster, on topics of BENCH_PARTITIONS partitions (default 3), replication factor 3,
// min.insync.replicas=2, created with Kafka's TopicCommand:
//   1. produce: an unmeasured warm-up (BENCH_WARMUP_MB MiB to another topic: Kafka's brokers
//      spent 90 CPU-s per GiB after a 256 MiB warm-up, 51 after 768 MiB), then BENCH_GB GiB of
//      1 KiB records with ProducerPerformance acks=all --throughput -1: MB/s as the tool prints
//      it, and the three brokers' CPU-seconds (utime+stime from /proc/<pid>/stat, every thread)
//      per GiB produced (each GiB is written on the three brokers: leader + 2 followers);
//      etcd's CPU-seconds beside, for ferrolog;
//   2. end-to-end latency: EndToEndLatency (one record at a time: produce acks=all, then poll
//      until the consumer has it; 1 KiB records), BENCH_E2E_RECORDS records (default 3000)
//      after an unmeasured run of 300: its avg, p50, p99 and p99.9 (whole milliseconds, as the
//      tool prints them; the tool's offset commit after its summary is not waited for past 5 s);
//   3. leader election: SIGKILL the broker that leads partition 0 of the produce topic, then a
//      probe (a client bootstrapped on the two survivors) asks for Metadata every 20 ms and, once
//      partition 0 has a leader other than the dead broker, sends it a Produce (acks=all, one
//      record) until one is acknowledged: the seconds from the SIGKILL to that Metadata answer
//      and to that acknowledgement. Whether the dead broker was also the active controller
//      (Kafka: the quorum leader, from MetadataQuorumCommand; ferrolog: etcd's `controller`
//      key) is noted: Kafka's quorum then elects a new leader first (ferrolog's `controller` key
//      is under the dead broker's lease and goes with it).
// The table goes to stdout and to bench/.out/cluster-side-by-side.md.
//
// Placement (BENCH_PIN, default 1 where taskset exists and there are two CPUs or more): every
// thread of the brokers (and of etcd) runs on CPU 0, the tools' JVMs on CPU 1, as in
// bench/kafka-side-by-side.mjs (a tool's JIT threads do not land on the brokers' CPU).
// Env: BENCH_GB (default 0.5), BENCH_PARTITIONS (3), BENCH_WARMUP_MB (768), BENCH_E2E_RECORDS
// (3000), BENCH_SKIP_FERROLOG=1, BENCH_SKIP_KAFKA=1, BENCH_KEEP=1 (keep the temp dir), BENCH_PIN,
// BENCH_CPU_PROF=1 (ferrolog's brokers run with --cpu-prof, whole lifetime; the profiles land in
// bench/.out/cluster-prof/; the broker the election step SIGKILLs writes none),
// FERROLOG_LOG_LEVEL (the brokers' log level, default info; logs are in the temp dir and are
// copied to bench/.out/ when a step fails).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import {
  root,
  children,
  abort,
  isAborting,
  run as runChild,
  startDaemon,
  exited,
  stopChild,
  alive,
  freePorts,
  waitForPort,
  cpuSeconds,
  cpuTimes,
  pinned,
  pin,
  BROKER_CPU,
  TOOLS_CPU,
} from './lib/processes.mjs'
import { KAFKA_NAME, kafkaTools, fetchJars, java as runJava, producerSummary } from './lib/kafka-tools.mjs'
import { makeSay, fmt, loadavg, tail, lastLines, logProblems, machineInfo, commandLine as benchCommandLine } from './lib/report.mjs'

const dist = path.join(root, 'dist', 'ts')
const mainJs = path.join(dist, 'cli', 'main.js')
const outDir = path.join(root, 'bench', '.out')

const num = (name, dflt, ok) => {
  const v = process.env[name] === undefined ? dflt : Number(process.env[name])
  if (!ok(v)) throw new Error(`${name} is not valid: ${process.env[name]}`)
  return v
}
const GB = num('BENCH_GB', 0.5, (v) => v > 0)
const PARTITIONS = num('BENCH_PARTITIONS', 3, (v) => Number.isInteger(v) && v > 0)
const WARMUP_MB = num('BENCH_WARMUP_MB', 768, (v) => Number.isInteger(v) && v >= 0)
const E2E_RECORDS = num('BENCH_E2E_RECORDS', 3000, (v) => Number.isInteger(v) && v > 0)
const E2E_WARMUP_RECORDS = 300
const SKIP_FERROLOG = process.env.BENCH_SKIP_FERROLOG === '1'
const SKIP_KAFKA = process.env.BENCH_SKIP_KAFKA === '1'
const KEEP = process.env.BENCH_KEEP === '1'
const CPU_PROF = process.env.BENCH_CPU_PROF === '1'
const profDir = path.join(outDir, 'cluster-prof')
const BROKERS = 3
const REPLICATION_FACTOR = 3
const MIN_INSYNC_REPLICAS = 2
const SESSION_TIMEOUT_MS = 9000
const RECORD_SIZE = 1024
const RECORDS = Math.max(1, Math.round((GB * 2 ** 30) / RECORD_SIZE))
const WARMUP_RECORDS = WARMUP_MB * 1024
const PAYLOAD_GIB = (RECORDS * RECORD_SIZE) / 2 ** 30
// Generous limits so that the script always ends: 20 minutes per GiB produced plus a minute.
const STEP_MS = 60_000 + Math.ceil(GB * 1_200_000)
const START_MS = 120_000
const ELECTION_LIMIT_MS = 90_000
const PROBE_INTERVAL_MS = 20
const GRACE_MS = 5000
const TOPIC = { warmup: 'perf-warmup', produce: 'perf', e2e: 'e2e' }

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-cluster-bench-'))
const clusters = new Set() // clusters started and not yet stopped
const failedLogs = [] // logs worth keeping after a failure
let client // ferrolog's exports (dist/ts/index.js), loaded in main()
let produceCodec // dist/ts/protocol/apis/produce.js's, for the probe's raw Produce requests

const say = makeSay('cluster-side-by-side')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// A child process is given STEP_MS unless the step says otherwise (bench/lib/processes.mjs).
const run = (cmd, args, opts) => runChild(cmd, args, { timeoutMs: STEP_MS, graceMs: GRACE_MS, ...opts })

// ---------------------------------------------------------------------------------------------
// the clusters
//
// A cluster: { name, brokers: [{ id, pid, address, logFile, logDir }], bootstrap, metaPid (etcd's pid,
// or null: Kafka's quorum is in the brokers), logFiles, kill(id), activeController(),
// deadReason(), stop() }.

let jars = ''

async function startFerrologCluster() {
  const dir = path.join(tmp, 'ferrolog')
  fs.mkdirSync(dir)
  const [etcdClient, etcdPeer, ...ports] = await freePorts(2 + BROKERS)
  const etcdUrl = `http://127.0.0.1:${etcdClient}`
  const peerUrl = `http://127.0.0.1:${etcdPeer}`
  const etcdLog = path.join(dir, 'etcd.log')
  say(`ferrolog: starting etcd on ${etcdUrl}`)
  const etcd = startDaemon(
    'etcd',
    [
      '--name',
      'n0',
      '--data-dir',
      path.join(dir, 'etcd'),
      '--listen-client-urls',
      etcdUrl,
      '--advertise-client-urls',
      etcdUrl,
      '--listen-peer-urls',
      peerUrl,
      '--initial-advertise-peer-urls',
      peerUrl,
      '--initial-cluster',
      `n0=${peerUrl}`,
      '--initial-cluster-state',
      'new',
      '--logger',
      'zap',
      '--log-level',
      'warn',
    ],
    etcdLog,
  )
  const logFiles = [etcdLog]
  const procs = new Map() // broker id -> child
  const killed = new Set()
  const cluster = {
    name: 'ferrolog',
    brokers: [],
    bootstrap: ports.map((p) => `127.0.0.1:${p}`).join(','),
    metaPid: etcd.pid,
    logFiles,
    kill(id) {
      killed.add(id)
      procs.get(id).kill('SIGKILL')
    },
    /** The broker holding etcd's `/ferrolog/<cluster id>/controller` key (docs/cluster.md), through etcd's JSON gateway. */
    async activeController() {
      const b64 = (text) => Buffer.from(text).toString('base64')
      const res = await fetch(`${etcdUrl}/v3/kv/range`, {
        method: 'POST',
        body: JSON.stringify({ key: b64('/ferrolog/'), range_end: b64('/ferrolog0') }),
        signal: AbortSignal.timeout(5000),
      })
      const kv = ((await res.json()).kvs ?? []).find((x) => /^\/ferrolog\/[^/]+\/controller$/.test(Buffer.from(x.key, 'base64').toString()))
      return kv ? JSON.parse(Buffer.from(kv.value, 'base64').toString('utf8')).brokerId : null
    },
    deadReason() {
      if (exited(etcd)) return `etcd exited (${etcd.signalCode ?? `code ${etcd.exitCode}`}); its log ends: ${tail(etcdLog, 3)}`
      for (const [id, child] of procs) {
        if (!killed.has(id) && exited(child)) {
          return `broker ${id} exited (${child.signalCode ?? `code ${child.exitCode}`}); its log ends: ${tail(path.join(dir, `broker-${id}.log`), 3)}`
        }
      }
      return null
    },
    async stop() {
      await Promise.all([...procs].map(([id, child]) => stopChild(child, `ferrolog broker ${id}`, say)))
      await stopChild(etcd, 'etcd', say, 20_000)
      clusters.delete(cluster)
    },
  }
  clusters.add(cluster)
  await waitEtcdHealthy(etcdUrl, etcd, etcdLog)

  // Kafka's names; broker.session.timeout.ms is the broker lease's TTL (docs/cluster.md).
  const config = path.join(dir, 'broker.properties')
  fs.writeFileSync(
    config,
    [
      `default.replication.factor=${REPLICATION_FACTOR}`,
      `min.insync.replicas=${MIN_INSYNC_REPLICAS}`,
      `broker.session.timeout.ms=${SESSION_TIMEOUT_MS}`,
      'auto.create.topics.enable=false',
      'group.initial.rebalance.delay.ms=0',
      '',
    ].join('\n'),
  )
  if (CPU_PROF) fs.mkdirSync(profDir, { recursive: true })
  for (let i = 0; i < BROKERS; i++) {
    const id = i + 1
    const dataDir = path.join(dir, `broker-${id}`)
    const logFile = path.join(dir, `broker-${id}.log`)
    const prof = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-name', `broker-${id}-${Date.now()}.cpuprofile`] : []
    const args = [...prof, mainJs, 'broker', '--cluster', `etcd://127.0.0.1:${etcdClient}`, '--node-id', String(id), '--listen', `127.0.0.1:${ports[i]}`, '--data-dir', dataDir, '--config', config]
    say(`ferrolog: starting broker ${id}: node ${args.map((a) => (path.isAbsolute(a) ? path.relative(root, a) : a)).join(' ')}`)
    const child = startDaemon(process.execPath, args, logFile, { FERROLOG_LOG_LEVEL: process.env.FERROLOG_LOG_LEVEL ?? 'info' })
    procs.set(id, child)
    logFiles.push(logFile)
    cluster.brokers.push({ id, pid: child.pid, address: `127.0.0.1:${ports[i]}`, logFile, logDir: dataDir })
  }
  try {
    for (const b of cluster.brokers) await waitForPort(Number(b.address.split(':')[1]), START_MS, () => cluster.deadReason())
  } catch (err) {
    failedLogs.push(...logFiles)
    throw err
  }
  return cluster
}

async function waitEtcdHealthy(url, child, logFile) {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (exited(child)) throw new Error(`etcd exited during start-up; its log ends: ${tail(logFile, 5)}`)
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })
      if ((await res.json()).health === 'true') return
    } catch {}
    await sleep(100)
  }
  throw new Error(`etcd not healthy after 30 s; its log ends: ${tail(logFile, 5)}`)
}

async function startKafkaCluster() {
  const dir = path.join(tmp, 'kafka')
  say(`${KAFKA_NAME}: tools/kafka/run-cluster.sh --data-dir ${dir} --nodes ${BROKERS}`)
  const cluster = {
    name: KAFKA_NAME,
    brokers: [],
    bootstrap: '',
    metaPid: null,
    logFiles: [],
    kill(id) {
      killed.add(id)
      process.kill(cluster.brokers.find((b) => b.id === id).pid, 'SIGKILL')
    },
    /** The quorum's leader (the active controller), as MetadataQuorumCommand tells. */
    async activeController() {
      const r = await java('org.apache.kafka.tools.MetadataQuorumCommand', ['--bootstrap-server', cluster.bootstrap, 'describe', '--status'], {
        timeoutMs: 60_000,
        label: 'kafka-metadata-quorum',
        echo: false,
      })
      const m = /^LeaderId:\s+(\d+)/m.exec(r.stdout)
      if (r.code !== 0 || !m) throw new Error(`MetadataQuorumCommand exited ${r.code}: ${lastLines(r.stderr || r.stdout)}`)
      return Number(m[1])
    },
    deadReason() {
      for (const b of cluster.brokers) if (!killed.has(b.id) && !alive(b.pid)) return `node ${b.id}'s JVM exited; its log ends: ${tail(b.logFile, 3)}`
      return null
    },
    async stop() {
      await run(path.join(kafkaTools, 'stop-cluster.sh'), [dir, '--timeout', '60'], { timeoutMs: 120_000, label: 'stop-cluster.sh', evenIfAborting: true })
      clusters.delete(cluster)
    },
  }
  const killed = new Set()
  clusters.add(cluster)
  const r = await run(
    path.join(kafkaTools, 'run-cluster.sh'),
    ['--data-dir', dir, '--nodes', String(BROKERS), '--wait-secs', String(START_MS / 1000 - 10), '--set', `broker.session.timeout.ms=${SESSION_TIMEOUT_MS}`],
    { timeoutMs: START_MS + 60_000, env: { KAFKA_JARS_DIR: jars }, label: 'run-cluster.sh' },
  )
  for (const m of r.stdout.matchAll(/^node=(\d+) pid=(\d+) bootstrap=(\S+) controller=\S+ log=(\S+)$/gm)) {
    cluster.brokers.push({ id: Number(m[1]), pid: Number(m[2]), address: m[3], logFile: m[4], logDir: path.join(path.dirname(m[4]), 'kafka-logs') })
    cluster.logFiles.push(m[4])
  }
  cluster.bootstrap = /^bootstrap=(\S+)$/m.exec(r.stdout)?.[1] ?? ''
  if (r.code !== 0 || cluster.brokers.length !== BROKERS || !cluster.bootstrap) {
    for (let id = 1; id <= BROKERS; id++) failedLogs.push(path.join(dir, `node-${id}`, 'broker.log'))
    throw new Error(`run-cluster.sh exited ${r.code}: ${lastLines(r.stderr || r.stdout)}`)
  }
  for (const b of cluster.brokers) {
    const comm = fs.readFileSync(`/proc/${b.pid}/comm`, 'utf8').trim()
    if (comm !== 'java') throw new Error(`pid ${b.pid} from run-cluster.sh is "${comm}", not the JVM: its CPU time would be wrong`)
  }
  return cluster
}

// ---------------------------------------------------------------------------------------------
// Kafka's tools

const java = (mainClass, args, opts) => runJava(jars, mainClass, args, { timeoutMs: STEP_MS, graceMs: GRACE_MS, ...opts })

async function createTopic(cluster, topic) {
  const r = await java(
    'org.apache.kafka.tools.TopicCommand',
    [
      '--bootstrap-server',
      cluster.bootstrap,
      '--create',
      '--topic',
      topic,
      '--partitions',
      String(PARTITIONS),
      '--replication-factor',
      String(REPLICATION_FACTOR),
      '--config',
      `min.insync.replicas=${MIN_INSYNC_REPLICAS}`,
    ],
    { timeoutMs: 90_000, label: 'kafka-topics', watch: () => cluster.deadReason() },
  )
  if (r.code !== 0) throw new Error(`kafka-topics --create ${topic} exited ${r.code}: ${lastLines(r.stderr || r.stdout)}`)
}

/** Metadata, from ferrolog's client, until every partition of `topic` has a leader and a full ISR. */
async function waitForTopic(cluster, topic) {
  const nc = new client.NetworkClient({ bootstrapServers: cluster.bootstrap, clientId: 'cluster-bench' })
  const deadline = Date.now() + 60_000
  let last
  try {
    for (;;) {
      try {
        const md = await nc.refreshMetadata([topic])
        const t = md.topic(topic)
        const ps = t?.partitions ?? []
        last = t ? ps.map((p) => `p${p.partition} leader ${p.leaderId} isr [${p.isr}]`).join(', ') : 'not in Metadata'
        if (md.nodes.length === BROKERS && ps.length === PARTITIONS && ps.every((p) => p.leaderId >= 0 && p.isr.length === REPLICATION_FACTOR)) return md
      } catch (err) {
        last = err.message
      }
      if (Date.now() > deadline) throw new Error(`topic ${topic} not ready after 60 s: ${last}`)
      const dead = cluster.deadReason()
      if (dead) throw new Error(dead)
      await sleep(200)
    }
  } finally {
    await nc.close()
  }
}

const brokersCpu = (cluster) => cluster.brokers.reduce((sum, b) => sum + cpuSeconds(b.pid), 0)
const brokersSys = (cluster) => cluster.brokers.reduce((sum, b) => sum + cpuTimes(b.pid).sys, 0)

/** Bytes of the topic's segment files (.log) on all brokers: the replicas really written. */
function storedBytes(cluster, topic) {
  let bytes = 0
  for (const b of cluster.brokers) {
    for (let p = 0; p < PARTITIONS; p++) {
      const dir = path.join(b.logDir, `${topic}-${p}`)
      if (!fs.existsSync(dir)) continue
      for (const f of fs.readdirSync(dir)) if (f.endsWith('.log')) bytes += fs.statSync(path.join(dir, f)).size
    }
  }
  return bytes
}

async function producePerf(cluster, topic, records) {
  const before = brokersCpu(cluster)
  const sysBefore = brokersSys(cluster)
  const metaBefore = cluster.metaPid ? cpuSeconds(cluster.metaPid) : 0
  const started = Date.now()
  const r = await java(
    'org.apache.kafka.tools.ProducerPerformance',
    ['--topic', topic, '--num-records', String(records), '--record-size', String(RECORD_SIZE), '--throughput', '-1', '--producer-props', 'acks=all', `bootstrap.servers=${cluster.bootstrap}`],
    { label: 'producer-perf', watch: () => cluster.deadReason() },
  )
  const wall = (Date.now() - started) / 1000
  const cpu = brokersCpu(cluster) - before
  const sys = brokersSys(cluster) - sysBefore
  const metaCpu = cluster.metaPid ? cpuSeconds(cluster.metaPid) - metaBefore : null
  const p = producerSummary(r, records)
  // Followers may trail the last acknowledgement by a fetch: a moment for them, then the bytes.
  await sleep(2000)
  const stored = storedBytes(cluster, topic) / (records * RECORD_SIZE)
  return {
    mbps: p.mbps,
    rps: p.rps,
    cpu,
    metaCpu,
    wall,
    problems: p.problems,
    latency:
      `producer latency avg ${p.avgMs} ms, p99 ${p.p99Ms} ms; brokers' CPU ${((100 * sys) / cpu).toFixed(0)}% system time; ` + `segment files on the brokers ${stored.toFixed(2)}x the values produced`,
  }
}

// EndToEndLatency prints "Avg latency: 8.6519 ms" then "Percentiles: 50th = 5, 99th = 54,
// 99.9th = 197" once every record came back, then commits the consumer's offsets and closes.
const E2E_AVG = /^Avg latency: ([\d.]+) ms/m
const E2E_PERCENTILES = /^Percentiles: 50th = (\d+), 99th = (\d+), 99.9th = (\d+)/m

async function endToEnd(cluster, topic, records) {
  const r = await java(
    'org.apache.kafka.tools.EndToEndLatency',
    ['--bootstrap-server', cluster.bootstrap, '--topic', topic, '--num-records', String(records), '--producer-acks', 'all', '--record-size', String(RECORD_SIZE)],
    { label: 'e2e-latency', echo: false, watch: () => cluster.deadReason(), doneWhen: (out) => E2E_PERCENTILES.test(out) },
  )
  const avg = E2E_AVG.exec(r.stdout)
  const pct = E2E_PERCENTILES.exec(r.stdout)
  if (!avg || !pct) throw new Error(`EndToEndLatency exited ${r.code} without its summary: ${lastLines(r.stderr || r.stdout)}`)
  // The figures are complete before the commit; a tool that does not end after them is noted.
  const problems = []
  if (r.cutShort) problems.push(`EndToEndLatency had not ended ${GRACE_MS / 1000} s after its summary (its final offset commit), killed`)
  else if (r.code !== 0) problems.push(`EndToEndLatency exited ${r.code} after its summary: ${lastLines(r.stderr || r.stdout, 2)}`)
  return { avg: Number(avg[1]), p50: Number(pct[1]), p99: Number(pct[2]), p999: Number(pct[3]), problems }
}

// ---------------------------------------------------------------------------------------------
// leader election

/** One record to partition 0 through `nodeId`, acks=all; resolves with the error name or null. */
async function produceOne(nc, nodeId, topic) {
  const res = await nc.request(nodeId, produceCodec, {
    transactionalId: null,
    acks: -1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: client.buildBatch([{ key: null, value: Buffer.alloc(RECORD_SIZE, 0x61) }]) }] }],
  })
  const p = res.responses.find((t) => t.name === topic)?.partitionResponses.find((x) => x.index === 0)
  if (!p) return 'NO_PARTITION_IN_RESPONSE'
  return p.errorCode === 0 ? null : client.errorName(p.errorCode)
}

async function election(cluster, topic) {
  const all = new client.NetworkClient({ bootstrapServers: cluster.bootstrap, clientId: 'election-probe', requestTimeoutMs: 15_000 })
  let victim
  let probe
  try {
    const before = (await all.refreshMetadata([topic])).partition(topic, 0)
    victim = cluster.brokers.find((b) => b.id === before.leaderId)
    if (!victim) throw new Error(`partition 0 of ${topic} has leader ${before.leaderId}, not one of the brokers`)
    const controller = await cluster.activeController()
    // Baseline: the probe's produce works before the kill.
    const baseline = []
    for (let i = 0; i < 5; i++) {
      const s = performance.now()
      const err = await produceOne(all, victim.id, topic)
      if (err) throw new Error(`before the kill, a produce to partition 0's leader failed: ${err}`)
      baseline.push(performance.now() - s)
    }
    // The probe knows only the survivors: no request of it waits out the dead broker's
    // reconnect backoff (it still asks Metadata of any broker the answers list, the dead one
    // first refused at once).
    const survivors = cluster.brokers.filter((b) => b !== victim)
    probe = new client.NetworkClient({ bootstrapServers: survivors.map((b) => b.address), clientId: 'election-probe', requestTimeoutMs: 15_000 })
    await probe.refreshMetadata([topic])
    for (const b of survivors) await probe.ready(b.id)

    say(`${cluster.name}: SIGKILL broker ${victim.id} (pid ${victim.pid}), leader of ${topic}-0 at epoch ${before.leaderEpoch}; active controller: ${controller}`)
    const killedAt = performance.now()
    cluster.kill(victim.id)
    let metadataMs = null
    let produceMs = null
    let newLeader = null
    let attempts = 0
    const errors = new Map() // error -> count, from Metadata and Produce after the kill
    const seen = (e) => errors.set(e, (errors.get(e) ?? 0) + 1)
    while (performance.now() - killedAt < ELECTION_LIMIT_MS && !isAborting()) {
      try {
        const p = (await probe.refreshMetadata([topic])).partition(topic, 0)
        if (p && p.leaderId >= 0 && p.leaderId !== victim.id) {
          metadataMs ??= performance.now() - killedAt
          newLeader = p.leaderId
          attempts++
          const err = await produceOne(probe, p.leaderId, topic)
          if (!err) {
            produceMs = performance.now() - killedAt
            break
          }
          seen(`Produce ${err}`)
        }
      } catch (err) {
        seen(err.code ?? err.message)
      }
      const dead = cluster.deadReason()
      if (dead) throw new Error(`during the election: ${dead}`)
      await sleep(PROBE_INTERVAL_MS)
    }
    const after = probe.metadata.partition(topic, 0)
    return {
      victim: victim.id,
      wasController: controller === victim.id,
      controller,
      metadataS: metadataMs === null ? null : metadataMs / 1000,
      produceS: produceMs === null ? null : produceMs / 1000,
      newLeader,
      note:
        `broker ${victim.id} killed (${controller === victim.id ? 'the active controller' : `controller ${controller}`}); ` +
        (produceMs === null ? `**no acknowledged produce within ${ELECTION_LIMIT_MS / 1000} s**; ` : '') +
        `new leader ${newLeader ?? '-'}, epoch ${before.leaderEpoch} -> ${after?.leaderEpoch ?? '-'}, isr [${after?.isr ?? ''}]; ` +
        `${attempts} produce attempt(s) to it; baseline produce ${Math.min(...baseline).toFixed(1)}-${Math.max(...baseline).toFixed(1)} ms` +
        (errors.size ? `; seen: ${[...errors].map(([e, n]) => `${e} x${n}`).join(', ')}` : ''),
    }
  } finally {
    await all.close()
    await probe?.close()
  }
}

// ---------------------------------------------------------------------------------------------
// the run

const results = [] // per system: { system, produce, e2e, election, errors: [] }
const logNotes = []

async function benchCluster(name, start) {
  const res = { system: name, errors: [] }
  results.push(res)
  let cluster
  const step = async (what, fn) => {
    if (isAborting()) return undefined
    say(`${name}: ${what}`)
    try {
      return await fn()
    } catch (err) {
      res.errors.push(`${what}: ${err.message}`)
      say(`${name}: ${what} FAILED: ${err.message}`)
      if (cluster) failedLogs.push(...cluster.logFiles)
      return undefined
    }
  }
  try {
    cluster = await step('cluster start', start)
    if (!cluster) return
    for (const b of cluster.brokers) pin(b.pid)
    if (cluster.metaPid) pin(cluster.metaPid)
    const ok = await step('topics', async () => {
      for (const t of Object.values(TOPIC)) {
        await createTopic(cluster, t)
        await waitForTopic(cluster, t)
      }
      return true
    })
    if (!ok) return
    if (WARMUP_RECORDS > 0) {
      const warm = await step(`warm-up produce, ${fmt(WARMUP_RECORDS)} records (not measured)`, () => producePerf(cluster, TOPIC.warmup, WARMUP_RECORDS))
      if (warm) say(`${name}: warm-up: ${warm.mbps} MB/s, brokers ${warm.cpu.toFixed(1)} CPU-s`)
    }
    res.produce = await step(`produce ${fmt(RECORDS)} records, acks=all`, () => producePerf(cluster, TOPIC.produce, RECORDS))
    if (res.produce) say(`${name}: produce: ${res.produce.mbps} MB/s, brokers ${res.produce.cpu.toFixed(1)} CPU-s (${(res.produce.cpu / PAYLOAD_GIB).toFixed(2)} per GiB)`)
    await step(`end-to-end latency warm-up, ${E2E_WARMUP_RECORDS} records (not measured)`, () => endToEnd(cluster, TOPIC.e2e, E2E_WARMUP_RECORDS))
    res.e2e = await step(`end-to-end latency, ${fmt(E2E_RECORDS)} records`, () => endToEnd(cluster, TOPIC.e2e, E2E_RECORDS))
    if (res.e2e) say(`${name}: end-to-end latency: avg ${res.e2e.avg} ms, p50 ${res.e2e.p50} ms, p99 ${res.e2e.p99} ms, p99.9 ${res.e2e.p999} ms`)
    res.election = await step('leader election after SIGKILL', () => election(cluster, TOPIC.produce))
    if (res.election) say(`${name}: election: Metadata ${res.election.metadataS?.toFixed(2)} s, produce ${res.election.produceS?.toFixed(2)} s (${res.election.note})`)
  } finally {
    if (cluster) {
      await step('stop', () => cluster.stop())
      for (const f of cluster.logFiles) logNotes.push(`${path.relative(tmp, f)}: ${logProblems(f, { examples: 2, width: 240, escapePipes: true })}`)
    }
  }
}

function commandLine() {
  return benchCommandLine(
    ['BENCH_GB', 'BENCH_PARTITIONS', 'BENCH_WARMUP_MB', 'BENCH_E2E_RECORDS', 'BENCH_SKIP_FERROLOG', 'BENCH_SKIP_KAFKA', 'BENCH_KEEP', 'BENCH_PIN', 'BENCH_CPU_PROF', 'FERROLOG_LOG_LEVEL'],
    'bench:cluster',
    'bench/cluster-side-by-side.mjs',
  )
}

function report(info, startedAt, loadStart) {
  const lines = []
  lines.push('## 3-broker ferrolog cluster vs 3-node Apache Kafka cluster', '')
  lines.push(`- command: \`${commandLine()}\``)
  lines.push(`- date: ${startedAt.toISOString()}, ${((Date.now() - startedAt) / 1000).toFixed(0)} s in all`)
  lines.push(`- machine: ${info.cpuModel}, ${info.cores} cores, ${info.memGiB} GiB, Linux ${info.kernel}; Node ${info.node}; ${info.java}; ${info.etcd}`)
  lines.push(`- load average (1, 5, 15 min): ${loadStart} at start, ${loadavg()} at end`)
  lines.push(`- placement: ${pinned() ? `brokers${SKIP_FERROLOG ? '' : ' and etcd'} on CPU ${BROKER_CPU}, Kafka's tools on CPU ${TOOLS_CPU} (taskset)` : 'not pinned (BENCH_PIN=0 or no taskset)'}`)
  lines.push(
    `- ferrolog ${info.commit}: 3 brokers \`--cluster etcd://…\`, one etcd member; Apache Kafka: tools/kafka/run-cluster.sh, 3 combined broker+controller nodes (KRaft quorum of 3); broker.session.timeout.ms ${SESSION_TIMEOUT_MS} on both`,
  )
  lines.push(`- topics: ${PARTITIONS} partitions, replication factor ${REPLICATION_FACTOR}, min.insync.replicas=${MIN_INSYNC_REPLICAS} (Kafka's TopicCommand)`)
  lines.push(
    `- produce: ProducerPerformance acks=all --throughput -1, ${fmt(RECORDS)} records of ${RECORD_SIZE} B (${fmt(PAYLOAD_GIB, 2)} GiB) after an unmeasured ${fmt(WARMUP_RECORDS)} to another topic; MB is the tool's MiB; ` +
      `brokers' CPU-s per GiB = utime+stime of the 3 broker processes over the run / GiB produced (each GiB stored on 3 brokers)`,
  )
  lines.push(`- end-to-end: EndToEndLatency, ${fmt(E2E_RECORDS)} records of ${RECORD_SIZE} B, acks=all, one at a time (after ${E2E_WARMUP_RECORDS} unmeasured); whole ms as the tool prints them`)
  lines.push(
    `- election: SIGKILL of partition 0's leader; seconds until a survivor's Metadata names a new leader, and until a Produce (acks=all) to it is acknowledged (probe every ${PROBE_INTERVAL_MS} ms)`,
  )
  for (const note of logNotes) lines.push(`- log ${note}`)
  lines.push('')
  lines.push(
    '| system | produce MB/s | records/s | brokers CPU-s per GiB | etcd CPU-s per GiB | e2e p50 ms | e2e p99 ms | e2e avg ms | new leader in Metadata, s | acks=all produce to it, s | notes |',
  )
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|')
  for (const r of results) {
    const p = r.produce
    const e = r.e2e
    const l = r.election
    const notes = [
      p && `${p.latency}; ${fmt(p.wall, 1)} s`,
      ...(p?.problems ?? []).map((x) => `**${x}**`),
      e && `e2e p99.9 ${e.p999} ms`,
      ...(e?.problems ?? []).map((x) => `**${x}**`),
      l?.note,
      ...r.errors.map((x) => `**failed: ${x}**`),
    ]
      .filter(Boolean)
      .join('; ')
      .replace(/\|/g, '\\|')
      .replace(/\n/g, ' ')
    lines.push(
      `| ${r.system} | ${p ? fmt(p.mbps, 2) : '-'} | ${p ? fmt(p.rps) : '-'} | ${p ? fmt(p.cpu / PAYLOAD_GIB, 2) : '-'} | ` +
        `${p && p.metaCpu !== null ? fmt(p.metaCpu / PAYLOAD_GIB, 2) : p ? 'in the brokers' : '-'} | ${e ? e.p50 : '-'} | ${e ? e.p99 : '-'} | ${e ? fmt(e.avg, 2) : '-'} | ` +
        `${l?.metadataS != null ? fmt(l.metadataS, 2) : '-'} | ${l?.produceS != null ? fmt(l.produceS, 2) : '-'} | ${notes} |`,
    )
  }
  return lines.join('\n') + '\n'
}

async function main() {
  const startedAt = new Date()
  const loadStart = loadavg()
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} is missing: run npm install (or npm run build) first`)
  client = await import(pathToFileURL(path.join(dist, 'index.js')).href)
  ;({ produceCodec } = await import(pathToFileURL(path.join(dist, 'protocol', 'apis', 'produce.js')).href))
  say(`temp dir ${tmp}; ${fmt(RECORDS)} records of ${RECORD_SIZE} B per produce run, ${PARTITIONS} partitions`)
  jars = fetchJars()
  const info = machineInfo(mainJs, { etcd: true })

  if (!SKIP_FERROLOG) await benchCluster('ferrolog', startFerrologCluster)
  if (!SKIP_KAFKA && !isAborting()) await benchCluster(KAFKA_NAME, startKafkaCluster)

  if (isAborting()) return 130 // interrupted: no half table
  const md = report(info, startedAt, loadStart)
  fs.mkdirSync(outDir, { recursive: true })
  fs.writeFileSync(path.join(outDir, 'cluster-side-by-side.md'), md)
  process.stdout.write(md)
  return results.some((r) => r.errors.length) ? 1 : 0
}

// ---------------------------------------------------------------------------------------------
// cleanup: clusters and tools stopped, temp dir removed, on success, failure and signals

// One cleanup, however often asked: after SIGINT main() ends too and must wait for the same one
// (returning at once, it exited the process while the brokers were still being stopped).
let cleaning = null
const cleanup = () => (cleaning ??= cleanUpOnce())
async function cleanUpOnce() {
  for (const cluster of [...clusters]) await cluster.stop().catch((err) => say(`stopping ${cluster.name}: ${err.message}`))
  for (const child of children) child.kill('SIGKILL')
  if (failedLogs.length) {
    fs.mkdirSync(outDir, { recursive: true })
    for (const f of new Set(failedLogs)) {
      const rel = path.relative(tmp, f).replace(/[\\/]/g, '-')
      try {
        fs.copyFileSync(f, path.join(outDir, `cluster-${rel}`))
        say(`kept ${path.join('bench', '.out', `cluster-${rel}`)}`)
      } catch {}
    }
  }
  if (KEEP) say(`kept ${tmp}`)
  else fs.rmSync(tmp, { recursive: true, force: true })
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (isAborting()) return
    abort()
    say(`${signal}: stopping`)
    for (const child of children) child.kill('SIGTERM')
    cleanup().finally(() => process.exit(130))
  })
}

main().then(
  async (code) => {
    await cleanup()
    process.exit(code)
  },
  async (err) => {
    say(`failed: ${err.stack ?? err.message}`)
    await cleanup()
    process.exit(1)
  },
)
