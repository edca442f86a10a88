#!/usr/bin/env node
// Consume over TLS next to plaintext, from one ferrolog broker with a PLAINTEXT and an SSL
// listener, in one run: MB/s and the broker's CPU-seconds per GiB sent.
//
//   node scripts/build.mjs ts && node bench/tls.bench.mjs
//   BENCH_MB=512 BENCH_RUNS=5 node bench/tls.bench.mjs
//   BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' node bench/tls.bench.mjs   # the broker's node flags
//
// Steps: a throw-away CA and broker certificate (ts/security/certificates.ts); one ferrolog
// broker in its own process (dist/, native storage, zero-copy transfer where it runs: sendfile
// serves the PLAINTEXT listener, the SSL listener reads each range into pooled buffers and
// writes them through node:tls); a 1-partition topic of BENCH_MB MiB of 1 KiB records
// (uncompressed, 16 KiB batches). Then each run, in a fresh process of its own, reads the whole
// partition from offset 0 with Fetch v12 (max 50 MiB a response, 8 MiB a partition: large
// responses, so the per-response work is small next to the bytes), over plaintext or TLS
// (TLS 1.3; node:tls client and server settle on TLS_AES_256_GCM_SHA384), counting the record bytes; the client
// does not decode records (the broker's cost is what is measured). The broker's CPU-seconds
// (utime+stime from /proc, every thread) over the run, per GiB read.
// Placement (BENCH_PIN, default 1 where taskset exists and there are two CPUs or more): the
// broker on CPU 0, the reader on CPU 1. A warm-up run of each (not counted), then BENCH_RUNS
// (default 3) rounds, plaintext and TLS interleaved; medians. Table to stdout.
// BENCH_BEFORE=DIR (another build's dist/ts, inside a checkout so that its imports resolve):
// a second broker from that build, read in the same rounds, for before/after in one run.
// BENCH_MODES=tls reads over TLS only; BENCH_PID_FILE names a file for the broker's pid (perf).
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import tls from 'node:tls'
import { fileURLToPath } from 'node:url'
import { TOOLS_CPU, cpuSeconds, pin, pinned } from './lib/processes.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = (p) => path.join(root, 'dist', 'ts', p)
const self = fileURLToPath(import.meta.url)
const MB = Number(process.env.BENCH_MB ?? 256)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const TOPIC = 'tls-bench'
// The most a Fetch response carries of the partition: 8 MiB by default; 1048576 is the Java consumer's max.partition.fetch.bytes.
const PARTITION_MAX_BYTES = Number(process.env.BENCH_PARTITION_MAX_BYTES ?? 8 << 20)
// Which reads each round makes (BENCH_MODES, default both): tls alone when profiling the broker.
const MODES = (process.env.BENCH_MODES ?? 'plaintext,tls').split(',')

// ---- child: read the partition once ---------------------------------------------------------
async function child(mode, port, caFile) {
  const { fetchCodec } = await import(dist('protocol/apis/fetch.js'))
  const { writeRequestHeader, readResponseHeader } = await import(dist('protocol/header.js'))
  const { Writer } = await import(dist('protocol/writer.js'))
  const { Reader } = await import(dist('protocol/reader.js'))
  const socket = await new Promise((resolve, reject) => {
    const s =
      mode === 'tls' ? tls.connect({ host: '127.0.0.1', port, ca: fs.readFileSync(caFile, 'utf8'), servername: 'localhost' }, () => resolve(s)) : net.connect(port, '127.0.0.1', () => resolve(s))
    s.once('error', reject)
  })
  // The frame's chunks are kept as they come and joined once the whole frame is in (joining on
  // every chunk cost the reader O(n^2) copies of an 8 MiB response: TLS hands over 16 KiB records).
  let chunks = []
  let buffered = 0
  let need = -1 // the frame's size with its prefix, once the prefix is in
  let waiting = null
  const deliver = () => {
    if (need < 0 && buffered >= 4) {
      const head = chunks[0].length >= 4 ? chunks[0] : Buffer.concat(chunks)
      chunks = [head]
      need = 4 + head.readInt32BE(0)
    }
    if (!waiting || need < 0 || buffered < need) return
    const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, buffered)
    const frame = all.subarray(4, need)
    const rest = all.subarray(need)
    chunks = rest.length ? [rest] : []
    buffered = rest.length
    need = -1
    const w = waiting
    waiting = null
    w(frame)
  }
  socket.on('data', (d) => {
    chunks.push(d)
    buffered += d.length
    deliver()
  })
  const topicId = Buffer.from(process.env.TOPIC_ID, 'hex')
  let offset = 0n
  let bytes = 0
  const started = performance.now()
  for (let correlationId = 1; ; correlationId++) {
    const w = new Writer()
    w.int32(0)
    writeRequestHeader(w, { apiKey: fetchCodec.apiKey, apiVersion: 12, correlationId, clientId: 'tls-bench' }, true)
    fetchCodec.encodeRequest(w, 12, {
      clusterId: null,
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1n },
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 52_428_800,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic: TOPIC,
          topicId,
          partitions: [
            { partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: PARTITION_MAX_BYTES, replicaDirectoryId: Buffer.alloc(16) },
          ],
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    })
    const out = w.finish()
    out.writeInt32BE(out.length - 4, 0)
    const frame = await new Promise((resolve) => {
      waiting = resolve
      socket.write(out)
      deliver()
    })
    const r = new Reader(frame)
    readResponseHeader(r, true)
    const res = fetchCodec.decodeResponse(r, 12)
    const p = res.responses[0].partitions[0]
    const records = p.records
    if (!records || records.length === 0) {
      if (offset >= p.highWatermark) break
      continue
    }
    bytes += records.length
    // The next offset: after the last whole batch (baseOffset + lastOffsetDelta + 1).
    let pos = 0
    while (pos + 61 <= records.length) {
      const len = records.readInt32BE(pos + 8)
      if (pos + 12 + len > records.length) break
      offset = records.readBigInt64BE(pos) + BigInt(records.readInt32BE(pos + 23)) + 1n
      pos += 12 + len
    }
    if (offset >= p.highWatermark) break
  }
  const ms = performance.now() - started
  socket.destroy()
  process.stdout.write(JSON.stringify({ bytes, ms }) + '\n')
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]), process.argv[5])
  process.exit(0)
}

// ---- parent ------------------------------------------------------------------------------------
const { createCertificateAuthority } = await import(dist('security/certificates.js'))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-tls-bench-'))
const ca = createCertificateAuthority()
const cert = ca.issue({ subject: { CN: 'broker' } })
fs.writeFileSync(path.join(dir, 'broker.pem'), cert.keyPem + cert.chainPem)
fs.writeFileSync(path.join(dir, 'ca.pem'), ca.certificatePem)
// One broker per build: this checkout's dist/ts, and BENCH_BEFORE's (another build's dist/ts
// directory) when given, each with a data dir of its own and the same records.
const builds = [{ name: '', distTs: path.join(root, 'dist', 'ts') }]
if (process.env.BENCH_BEFORE) builds.unshift({ name: 'before ', distTs: path.resolve(process.env.BENCH_BEFORE) })
const brokers = []

async function startBrokerOf(build, i) {
  const config = {
    listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
    'log.dirs': path.join(dir, `data-${i}`),
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': path.join(dir, 'broker.pem'),
  }
  const script = `import(${JSON.stringify(path.join(build.distTs, 'index.js'))}).then(async (m) => { const b = await m.startBroker({ config: ${JSON.stringify(config)} }); process.stdout.write(JSON.stringify({ plain: b.listenerPort('PLAINTEXT'), ssl: b.listenerPort('SSL'), transfer: b.config.transfer }) + '\\n'); process.stdin.on('end', () => b.stop().then(() => process.exit(0))); process.stdin.resume() })`
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  const broker = { ...build, child, pid: child.pid }
  brokers.push(broker)
  broker.ports = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(JSON.parse(out.trim()))
    })
    child.on('exit', (code) => reject(new Error(`broker exited ${code}`)))
  })
  pin(child.pid)
  if (process.env.BENCH_PID_FILE) fs.writeFileSync(process.env.BENCH_PID_FILE, String(child.pid))
  return broker
}

async function fill(broker) {
  const { NetworkClient, produce } = await import(dist('index.js'))
  const client = new NetworkClient({ bootstrapServers: `127.0.0.1:${broker.ports.plain}` })
  const count = MB * 1024
  const value = Buffer.alloc(1024, 'x')
  for (let from = 0; from < count; from += 4096) {
    const records = []
    for (let i = from; i < Math.min(count, from + 4096); i++) records.push({ key: null, value })
    await produce(client, TOPIC, records, { partition: 0, batchBytes: 16_384, acks: 1 })
  }
  const metadata = await client.refreshMetadata([TOPIC])
  const topicId = metadata.topic(TOPIC)?.topicId
  await client.close()
  if (!topicId) throw new Error('no topic id')
  broker.topicId = Buffer.from(topicId).toString('hex')
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
try {
  for (const [i, build] of builds.entries()) await fill(await startBrokerOf(build, i))
  const runOnce = (broker, mode) => {
    const args = [self, '--child', mode, String(mode === 'tls' ? broker.ports.ssl : broker.ports.plain), path.join(dir, 'ca.pem')]
    const [cmd, argv] = pinned() ? ['taskset', ['-c', TOOLS_CPU, process.execPath, ...args]] : [process.execPath, args]
    const cpu0 = cpuSeconds(broker.pid, 'broker')
    const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 600_000, env: { ...process.env, TOPIC_ID: broker.topicId } })
    const cpu = cpuSeconds(broker.pid, 'broker') - cpu0
    if (r.status !== 0) throw new Error(`${mode}: ${r.stderr.slice(-800)}`)
    const { bytes, ms } = JSON.parse(r.stdout.trim().split('\n').pop())
    if (bytes < MB * 1024 * 1024) throw new Error(`${mode} read ${bytes} bytes of ${MB} MiB`)
    return { mbps: bytes / 1048576 / (ms / 1000), cpuPerGiB: cpu / (bytes / 2 ** 30) }
  }
  const cases = brokers.flatMap((broker) => MODES.map((mode) => ({ broker, mode, label: `${broker.name}${mode}`, runs: [] })))
  for (let round = 0; round <= RUNS; round++) {
    for (const c of cases) {
      const r = runOnce(c.broker, c.mode)
      if (round > 0) c.runs.push(r)
    }
  }
  const lines = [
    `TLS vs plaintext consume, ${MB} MiB of 1 KiB records, 1 partition, ${PARTITION_MAX_BYTES} B a partition per Fetch, ${RUNS} runs (medians), transfer ${brokers[0].ports.transfer}, pinned ${pinned()}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(2)}` +
      (process.env.BENCH_BEFORE ? `; "before": the build in ${process.env.BENCH_BEFORE}` : ''),
    '| listener | MB/s | broker CPU-s per GiB | runs MB/s | runs CPU-s per GiB |',
    '|---|---:|---:|---|---|',
  ]
  for (const { label, runs: rs } of cases) {
    lines.push(
      `| ${label} | ${median(rs.map((r) => r.mbps)).toFixed(0)} | ${median(rs.map((r) => r.cpuPerGiB)).toFixed(2)} | ${rs.map((r) => r.mbps.toFixed(0)).join(', ')} | ${rs.map((r) => r.cpuPerGiB.toFixed(2)).join(', ')} |`,
    )
  }
  process.stdout.write(lines.join('\n') + '\n')
} finally {
  for (const { child } of brokers) {
    child.stdin.end()
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)))
  }
  fs.rmSync(dir, { recursive: true, force: true })
}
