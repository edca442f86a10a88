#!/usr/bin/env node
// CreateTopics of many partitions on a 3-broker ferrolog cluster next to a 3-node Apache Kafka
// 4.4 KRaft cluster, in one run, on the same machine, measured by the same client (issue #30:
// "CreateTopics of 1,000 partitions (RF=3, 3 brokers): faster than Kafka").
//
//   npm run bench:create-topics                    # after npm install; 1,000 partitions, 3 rounds
//   BENCH_PARTITIONS=2000 BENCH_ROUNDS=5 BENCH_SKIP_KAFKA=1 node bench/create-topics.mjs
//
// ferrolog runs from dist/ as npm install (or npm run build) left it: this script builds nothing.
// The clusters, each on 127.0.0.1 in a fresh temp dir, one after the other (ferrolog first):
//   ferrolog: one etcd member (Debian's etcd-server, `etcd` on the PATH, its default limits:
//     --max-txn-ops 128, --max-request-bytes 1.5 MiB) and three brokers
//     `ferrolog broker --cluster etcd://… --node-id 1..3`, each with its own port and data dir;
//   Apache Kafka: tools/kafka/run-cluster.sh, three combined broker+controller nodes.
// A round: one CreateTopics request (a new topic of BENCH_PARTITIONS partitions, replication
// factor 3) sent to the first broker, then, from that instant:
//   - answered: the CreateTopics response (without an error);
//   - served: every broker's own Metadata answer shows the topic with every partition having a
//     leader (asked of each broker every 50 ms);
//   - writable: a Produce of one record to every partition, acks=all, sent to each partition's
//     leader (one request per leader), every partition acknowledged (partitions answering an
//     error are sent again after 50 ms).
// Then the topic is deleted and the next round waits until no broker lists it and every broker
// has renamed its directories (`-delete`; their removal may still run). BENCH_ROUNDS
// rounds (default 3) per system: the median of each point, and ferrolog's median over Kafka's.
// Env: BENCH_PARTITIONS (1000), BENCH_ROUNDS (3), BENCH_SKIP_FERROLOG=1, BENCH_SKIP_KAFKA=1,
// BENCH_KEEP=1 (keep the temp dir), BENCH_CPU_PROF=1 (ferrolog's brokers run with --cpu-prof; the
// profiles land in bench/.out/create-topics-prof/), FERROLOG_LOG_LEVEL (default info).
// The table goes to stdout and to bench/.out/create-topics.md.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { root, children, abort, isAborting, run, startDaemon, exited, stopChild, alive, freePorts, waitForPort } from './lib/processes.mjs'
import { KAFKA_NAME, kafkaTools, fetchJars } from './lib/kafka-tools.mjs'
import { makeSay, fmt, loadavg, tail, lastLines, machineInfo, commandLine } from './lib/report.mjs'

const dist = path.join(root, 'dist', 'ts')
const mainJs = path.join(dist, 'cli', 'main.js')
const outDir = path.join(root, 'bench', '.out')

const num = (name, dflt, ok) => {
  const v = process.env[name] === undefined ? dflt : Number(process.env[name])
  if (!ok(v)) throw new Error(`${name} is not valid: ${process.env[name]}`)
  return v
}
const PARTITIONS = num('BENCH_PARTITIONS', 1000, (v) => Number.isInteger(v) && v > 0)
const ROUNDS = num('BENCH_ROUNDS', 3, (v) => Number.isInteger(v) && v > 0)
const SKIP_FERROLOG = process.env.BENCH_SKIP_FERROLOG === '1'
const SKIP_KAFKA = process.env.BENCH_SKIP_KAFKA === '1'
const KEEP = process.env.BENCH_KEEP === '1'
const CPU_PROF = process.env.BENCH_CPU_PROF === '1'
const BROKERS = 3
const REPLICATION_FACTOR = 3
const START_MS = 120_000
const ROUND_LIMIT_MS = 120_000
const POLL_MS = 50

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-create-topics-'))
const clusters = new Set()
let client // ferrolog's exports (dist/ts/index.js)
let codecs // { createTopics, deleteTopics, metadata, produce }

const say = makeSay('create-topics')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------------------------
// the clusters: { name, brokers: [address], deadReason(), stop() }

async function startFerrologCluster() {
  const dir = path.join(tmp, 'ferrolog')
  fs.mkdirSync(dir)
  const [etcdClient, etcdPeer, ...ports] = await freePorts(2 + BROKERS)
  const etcdUrl = `http://127.0.0.1:${etcdClient}`
  const peerUrl = `http://127.0.0.1:${etcdPeer}`
  const etcdLog = path.join(dir, 'etcd.log')
  say(`ferrolog: starting etcd on ${etcdUrl}`)
  // etcd's defaults: --max-txn-ops 128, --max-request-bytes 1572864 (docs/cluster.md).
  const etcdArgs = ['--name', 'n0', '--data-dir', path.join(dir, 'etcd'), '--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl]
  etcdArgs.push('--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl, '--initial-cluster', `n0=${peerUrl}`, '--initial-cluster-state', 'new')
  etcdArgs.push('--logger', 'zap', '--log-level', 'warn')
  const etcd = startDaemon('etcd', etcdArgs, etcdLog)
  const procs = new Map()
  const profDir = path.join(outDir, 'create-topics-prof')
  const cluster = {
    name: 'ferrolog',
    brokers: ports.map((p) => `127.0.0.1:${p}`),
    dataDirs: ports.map((_, i) => path.join(dir, `broker-${i + 1}`)),
    deadReason() {
      if (exited(etcd)) return `etcd exited; its log ends: ${tail(etcdLog, 3)}`
      for (const [id, child] of procs) if (exited(child)) return `broker ${id} exited; its log ends: ${tail(path.join(dir, `broker-${id}.log`), 3)}`
      return null
    },
    async stop() {
      await Promise.all([...procs].map(([id, child]) => stopChild(child, `ferrolog broker ${id}`, say)))
      await stopChild(etcd, 'etcd', say, 20_000)
      clusters.delete(cluster)
      if (CPU_PROF) say(`profiles in ${path.relative(root, profDir)}`)
    },
  }
  clusters.add(cluster)
  await waitEtcdHealthy(etcdUrl, etcd, etcdLog)
  const config = path.join(dir, 'broker.properties')
  fs.writeFileSync(config, [`default.replication.factor=${REPLICATION_FACTOR}`, 'auto.create.topics.enable=false', ''].join('\n'))
  if (CPU_PROF) fs.mkdirSync(profDir, { recursive: true })
  for (let i = 0; i < BROKERS; i++) {
    const id = i + 1
    const prof = CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-name', `broker-${id}-${Date.now()}.cpuprofile`] : []
    const args = [
      ...prof,
      mainJs,
      'broker',
      '--cluster',
      `etcd://127.0.0.1:${etcdClient}`,
      '--node-id',
      String(id),
      '--listen',
      cluster.brokers[i],
      '--data-dir',
      path.join(dir, `broker-${id}`),
      '--config',
      config,
    ]
    const logFile = path.join(dir, `broker-${id}.log`)
    say(`ferrolog: starting broker ${id}`)
    procs.set(id, startDaemon(process.execPath, args, logFile, { FERROLOG_LOG_LEVEL: process.env.FERROLOG_LOG_LEVEL ?? 'info' }))
  }
  for (const p of ports) await waitForPort(p, START_MS, () => cluster.deadReason())
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

async function startKafkaCluster(jars) {
  const dir = path.join(tmp, 'kafka')
  say(`${KAFKA_NAME}: tools/kafka/run-cluster.sh --data-dir ${dir} --nodes ${BROKERS}`)
  const pids = []
  const cluster = {
    name: KAFKA_NAME,
    brokers: [],
    dataDirs: [],
    deadReason: () => (pids.some((pid) => !alive(pid)) ? 'a Kafka node exited' : null),
    async stop() {
      await run(path.join(kafkaTools, 'stop-cluster.sh'), [dir, '--timeout', '60'], { timeoutMs: 120_000, label: 'stop-cluster.sh', evenIfAborting: true })
      clusters.delete(cluster)
    },
  }
  clusters.add(cluster)
  const r = await run(path.join(kafkaTools, 'run-cluster.sh'), ['--data-dir', dir, '--nodes', String(BROKERS), '--wait-secs', String(START_MS / 1000 - 10)], {
    timeoutMs: START_MS + 60_000,
    env: { KAFKA_JARS_DIR: jars },
    label: 'run-cluster.sh',
  })
  for (const m of r.stdout.matchAll(/^node=(\d+) pid=(\d+) bootstrap=(\S+) controller=\S+ log=(\S+)$/gm)) {
    pids.push(Number(m[2]))
    cluster.brokers.push(m[3])
    cluster.dataDirs.push(path.join(path.dirname(m[4]), 'kafka-logs'))
  }
  if (r.code !== 0 || cluster.brokers.length !== BROKERS) throw new Error(`run-cluster.sh exited ${r.code}: ${lastLines(r.stderr || r.stdout)}`)
  return cluster
}

// ---------------------------------------------------------------------------------------------
// one round

/** One client per broker, each speaking only to that broker (its bootstrap node -1). */
const perBroker = (cluster) => cluster.brokers.map((address) => new client.NetworkClient({ bootstrapServers: address, clientId: 'create-topics-bench', requestTimeoutMs: 60_000 }))

function metadataOf(nc, topic) {
  return nc.request(-1, codecs.metadata, {
    topics: [{ topicId: Buffer.alloc(16), name: topic }],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: false,
    includeTopicAuthorizedOperations: false,
  })
}

/** Every partition of `topic` in broker `nc`'s Metadata has a leader: its partitions (else null). */
async function served(nc, topic) {
  const md = await metadataOf(nc, topic)
  const t = md.topics.find((x) => x.name === topic)
  if (!t || t.errorCode !== 0 || t.partitions.length !== PARTITIONS || !t.partitions.every((p) => p.errorCode === 0 && p.leaderId >= 0)) return null
  return { brokers: md.brokers, topicId: t.topicId, partitions: t.partitions }
}

async function produceToEveryPartition(cluster, ncs, topic, md) {
  // A client that knows every broker by node id (from the Metadata answer).
  const nc = new client.NetworkClient({ bootstrapServers: cluster.brokers, clientId: 'create-topics-bench', requestTimeoutMs: 60_000 })
  try {
    await nc.refreshMetadata([topic])
    let pending = md.partitions.map((p) => ({ index: p.partitionIndex, leader: p.leaderId }))
    let attempts = 0
    const errors = new Map()
    while (pending.length > 0) {
      attempts++
      const byLeader = new Map()
      for (const p of pending) byLeader.set(p.leader, [...(byLeader.get(p.leader) ?? []), p])
      const failed = []
      await Promise.all(
        [...byLeader].map(async ([leader, ps]) => {
          const res = await nc.request(leader, codecs.produce, {
            transactionalId: null,
            acks: -1,
            timeoutMs: 30_000,
            topicData: [{ name: topic, topicId: md.topicId, partitionData: ps.map((p) => ({ index: p.index, records: client.buildBatch([{ key: null, value: Buffer.from('x') }]) })) }],
          })
          const answers = new Map(res.responses.flatMap((t) => t.partitionResponses.map((x) => [x.index, x.errorCode])))
          for (const p of ps) {
            const code = answers.get(p.index) ?? -1
            if (code !== 0) {
              failed.push(p)
              errors.set(code, (errors.get(code) ?? 0) + 1)
            }
          }
        }),
      )
      if (failed.length === 0) break
      await sleep(POLL_MS)
      // Leaders may have moved: ask again.
      const fresh = await nc.refreshMetadata([topic])
      pending = failed.map((p) => ({ index: p.index, leader: fresh.partition(topic, p.index)?.leaderId ?? p.leader }))
    }
    return { attempts, errors: [...errors].map(([code, n]) => `${n}x ${code === -1 ? 'no answer' : client.errorName(code)}`) }
  } finally {
    await nc.close()
  }
}

async function round(cluster, ncs, topic) {
  const started = performance.now()
  const deadline = Date.now() + ROUND_LIMIT_MS
  const res = await ncs[0].request(-1, codecs.createTopics, {
    topics: [{ name: topic, numPartitions: PARTITIONS, replicationFactor: REPLICATION_FACTOR, assignments: [], configs: [] }],
    timeoutMs: 60_000,
    validateOnly: false,
  })
  const answeredMs = performance.now() - started
  const t = res.topics[0]
  if (t.errorCode !== 0) throw new Error(`CreateTopics ${topic}: ${client.errorName(t.errorCode)} ${t.errorMessage ?? ''}`)
  // Every broker, each polled on its own until it serves the topic.
  const mds = await Promise.all(
    ncs.map(async (nc) => {
      for (;;) {
        const md = await served(nc, topic).catch(() => null)
        if (md) return md
        if (Date.now() > deadline) throw new Error(`a broker did not serve ${topic} within ${ROUND_LIMIT_MS / 1000} s`)
        const dead = cluster.deadReason()
        if (dead) throw new Error(dead)
        await sleep(POLL_MS)
      }
    }),
  )
  const servedMs = performance.now() - started
  const produce = await produceToEveryPartition(cluster, ncs, topic, mds[0])
  const writableMs = performance.now() - started
  return { answeredMs, servedMs, writableMs, produce }
}

/** DeleteTopics, then until no broker lists the topic and every broker has set its directories aside (renamed `-delete`). */
async function deleteTopic(cluster, ncs, topic) {
  await ncs[0].request(-1, codecs.deleteTopics, { topics: [{ name: topic, topicId: Buffer.alloc(16) }], topicNames: [topic], timeoutMs: 60_000 })
  const deadline = Date.now() + ROUND_LIMIT_MS
  for (const nc of ncs) {
    for (;;) {
      const md = await metadataOf(nc, topic)
      if (!md.topics.some((x) => x.name === topic && x.errorCode === 0)) break
      if (Date.now() > deadline) throw new Error(`${topic} still listed ${ROUND_LIMIT_MS / 1000} s after DeleteTopics`)
      await sleep(200)
    }
  }
  const live = new RegExp(`^${topic}-\\d+$`)
  for (const dir of cluster.dataDirs) {
    while (fs.readdirSync(dir).some((d) => live.test(d))) {
      if (Date.now() > deadline) throw new Error(`${dir} still holds directories of ${topic} ${ROUND_LIMIT_MS / 1000} s after DeleteTopics`)
      await sleep(200)
    }
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

async function benchCluster(name, start) {
  const result = { system: name, rounds: [], error: null }
  let cluster
  let ncs = []
  try {
    cluster = await start()
    ncs = perBroker(cluster)
    // Every broker knows the others (so that RF=3 is possible) before the first round.
    for (;;) {
      const md = await metadataOf(ncs[0], '__none__').catch(() => null)
      if (md?.brokers.length === BROKERS) break
      if (cluster.deadReason()) throw new Error(cluster.deadReason())
      await sleep(200)
    }
    for (let i = 0; i < ROUNDS && !isAborting(); i++) {
      const topic = `create-${i}`
      const r = await round(cluster, ncs, topic)
      say(
        `${name} round ${i + 1}: answered ${fmt(r.answeredMs)} ms, served by every broker ${fmt(r.servedMs)} ms, acks=all produce to every partition ${fmt(r.writableMs)} ms` +
          ` (${r.produce.attempts} produce pass(es)${r.produce.errors.length ? `; retried: ${r.produce.errors.join(', ')}` : ''})`,
      )
      result.rounds.push(r)
      await deleteTopic(cluster, ncs, topic)
    }
  } catch (err) {
    result.error = err.message
    say(`${name}: failed: ${err.message}`)
  } finally {
    await Promise.all(ncs.map((nc) => nc.close().catch(() => {})))
    if (cluster) await cluster.stop().catch((err) => say(`stopping ${name}: ${err.message}`))
  }
  return result
}

function report(results, info, startedAt, loadStart) {
  const cmd = commandLine(['BENCH_PARTITIONS', 'BENCH_ROUNDS', 'BENCH_SKIP_FERROLOG', 'BENCH_SKIP_KAFKA', 'BENCH_CPU_PROF'], 'bench:create-topics', 'bench/create-topics.mjs')
  const lines = [
    `## CreateTopics of ${fmt(PARTITIONS)} partitions, RF ${REPLICATION_FACTOR}, ${BROKERS} brokers (${startedAt.toISOString()})`,
    '',
    `\`${cmd}\`; ${info}; load average ${loadStart} at the start, ${loadavg()} at the end.`,
    `Milliseconds from the CreateTopics request sent; median of ${ROUNDS} round(s) (each round's figures in brackets).`,
    '',
    '| system | answered | every broker serves it | acks=all produce to every partition | notes |',
    '|---|---:|---:|---:|---|',
  ]
  const cell = (r, k) => (r.rounds.length ? `${fmt(median(r.rounds.map((x) => x[k])))} (${r.rounds.map((x) => fmt(x[k])).join(', ')})` : '-')
  for (const r of results) lines.push(`| ${r.system} | ${cell(r, 'answeredMs')} | ${cell(r, 'servedMs')} | ${cell(r, 'writableMs')} | ${r.error ? `**failed: ${r.error}**` : ''} |`)
  const [f, k] = [results.find((r) => r.system === 'ferrolog'), results.find((r) => r.system === KAFKA_NAME)]
  if (f?.rounds.length && k?.rounds.length) {
    const ratio = (key) => (median(f.rounds.map((x) => x[key])) / median(k.rounds.map((x) => x[key]))).toFixed(2)
    lines.push('', `ferrolog / Kafka (medians): answered ${ratio('answeredMs')}x, served ${ratio('servedMs')}x, writable ${ratio('writableMs')}x (below 1: ferrolog faster).`)
  }
  return lines.join('\n') + '\n'
}

async function main() {
  const startedAt = new Date()
  const loadStart = loadavg()
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} is missing: run npm install (or npm run build) first`)
  client = await import(pathToFileURL(path.join(dist, 'index.js')).href)
  const api = async (file, name) => (await import(pathToFileURL(path.join(dist, 'protocol', 'apis', file)).href))[name]
  codecs = {
    createTopics: await api('create-topics.js', 'createTopicsCodec'),
    deleteTopics: await api('delete-topics.js', 'deleteTopicsCodec'),
    metadata: await api('metadata.js', 'metadataCodec'),
    produce: await api('produce.js', 'produceCodec'),
  }
  say(`temp dir ${tmp}; ${ROUNDS} round(s) of ${PARTITIONS} partitions`)
  const jars = SKIP_KAFKA ? null : fetchJars()
  const m = machineInfo(mainJs, { etcd: true })
  const info = `${m.cpuModel}, ${m.cores} cores, ${m.memGiB} GiB, Node ${m.node}, ${m.java}, ${m.etcd}, commit ${m.commit}`
  const results = []
  if (!SKIP_FERROLOG) results.push(await benchCluster('ferrolog', startFerrologCluster))
  if (!SKIP_KAFKA && !isAborting()) results.push(await benchCluster(KAFKA_NAME, () => startKafkaCluster(jars)))
  if (isAborting()) return 130
  const md = report(results, info, startedAt, loadStart)
  fs.mkdirSync(outDir, { recursive: true })
  fs.writeFileSync(path.join(outDir, 'create-topics.md'), md)
  process.stdout.write(md)
  return results.some((r) => r.error) ? 1 : 0
}

let cleaning = null
const cleanup = () =>
  (cleaning ??= (async () => {
    for (const cluster of [...clusters]) await cluster.stop().catch((err) => say(`stopping ${cluster.name}: ${err.message}`))
    for (const child of children) child.kill('SIGKILL')
    if (KEEP) say(`kept ${tmp}`)
    else fs.rmSync(tmp, { recursive: true, force: true })
  })())

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (isAborting()) return
    abort()
    say(`${signal}: stopping`)
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
