#!/usr/bin/env node
// A group of ferrolog Consumers in separate processes, members joining, leaving and SIGKILLed,
// reading a produced set of records (issue 16's 1M-record check; too long for the test suite).
//
//   node scripts/build.mjs ts && node scripts/consumer-group-stress.mjs            # ferrolog broker
//   STRESS_KAFKA=1 node scripts/consumer-group-stress.mjs                          # Apache Kafka (tools/kafka/run-broker.sh)
//
// Steps: a broker (ferrolog from dist/ in a child process, or Apache Kafka), a 12-partition topic,
// STRESS_RECORDS (default 1,000,000) records of 100 B with ids as values; consumers A, B, C start
// one after the other; while they read, A is SIGKILLed (its uncommitted records are read again by
// the others: at least once), D starts, B leaves with SIGTERM (close: commit, LeaveGroup), E starts.
// Each consumer appends the ids of every batch it has processed to its own file before asking for
// the next, then works STRESS_WORK_MS (default 20) on it. At the end: every id processed at least once (the check), how many more than once
// (only the killed member's uncommitted work may repeat), the rebalances, the time.
import { spawn, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = path.join(root, 'dist', 'ts', 'index.js')
const self = fileURLToPath(import.meta.url)
const TOPIC = 'stress'
const WORK_MS = Number(process.env.STRESS_WORK_MS ?? 20)

if (process.argv[2] === '--member') {
  const [, , , bootstrap, out] = process.argv
  const { Consumer } = await import(dist)
  const c = new Consumer({ bootstrapServers: bootstrap, groupId: 'stress-group', 'auto.offset.reset': 'earliest', 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500, 'max.poll.records': 1000 })
  process.on('SIGTERM', () => void c.close())
  c.subscribe([TOPIC])
  const fd = fs.openSync(out, 'a')
  for await (const batch of c) {
    fs.writeSync(fd, batch.records.map((r) => r.value.toString('latin1', 0, 8)).join('\n') + '\n')
    // The application's work on the batch (so that members change while there is work left).
    await new Promise((resolve) => setTimeout(resolve, WORK_MS))
  }
  fs.closeSync(fd)
  process.exit(0)
}

const N = Number(process.env.STRESS_RECORDS ?? 1_000_000)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferrolog-stress-'))
let bootstrap
let stopBroker
if (process.env.STRESS_KAFKA === '1') {
  const out = execFileSync('bash', [path.join(root, 'tools/kafka/run-broker.sh'), '--data-dir', path.join(dir, 'kafka')], { encoding: 'utf8' })
  bootstrap = /bootstrap=(\S+)/.exec(out)[1]
  stopBroker = () => execFileSync('bash', [path.join(root, 'tools/kafka/stop-broker.sh'), path.join(dir, 'kafka')], { stdio: 'ignore' })
} else {
  const script = `import(${JSON.stringify(dist)}).then(async (m) => { const b = await m.startBroker({ config: { 'group.min.session.timeout.ms': '1000' } }); process.stdout.write(b.bootstrapServers + '\\n'); process.stdin.on('end', () => b.stop().then(() => process.exit(0))); process.stdin.resume() })`
  const p = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  bootstrap = await new Promise((resolve) => p.stdout.once('data', (d) => resolve(String(d).trim())))
  stopBroker = () => p.stdin.end()
}

const { NetworkClient, produce } = await import(dist)
const client = new NetworkClient({ bootstrapServers: bootstrap })
await client.refreshMetadata(null)
const { createTopicsCodec } = await import(path.join(root, 'dist', 'ts', 'protocol', 'apis', 'create-topics.js'))
await client.request(client.candidateNodes()[0], createTopicsCodec, {
  topics: [{ name: TOPIC, numPartitions: 12, replicationFactor: 1, assignments: [], configs: [] }],
  timeoutMs: 30_000,
  validateOnly: false,
})
const t0 = Date.now()
for (let from = 0; from < N; from += 20_000) {
  const records = []
  for (let i = from; i < Math.min(N, from + 20_000); i++) records.push({ key: String(i), value: String(i).padStart(8, '0').padEnd(100, '.') })
  await produce(client, TOPIC, records, { compression: 'lz4' })
}
await client.close()
console.log(`produced ${N} records in ${((Date.now() - t0) / 1000).toFixed(1)} s`)

const members = new Map()
const files = []
const start = (name) => {
  const out = path.join(dir, `${name}.ids`)
  files.push(out)
  members.set(name, spawn(process.execPath, [self, '--member', bootstrap, out], { stdio: 'inherit' }))
}
const processed = () => files.reduce((n, f) => n + (fs.existsSync(f) ? fs.readFileSync(f, 'latin1').split('\n').length - 1 : 0), 0)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const waitFor = async (count, what) => {
  for (let i = 0; i < 3000 && processed() < count; i++) await sleep(100)
  console.log(`${what}: ${processed()} processed after ${((Date.now() - t1) / 1000).toFixed(1)} s`)
}

const t1 = Date.now()
start('A')
await waitFor(N * 0.1, 'A alone')
start('B')
await waitFor(N * 0.2, 'B joined')
start('C')
await waitFor(N * 0.35, 'C joined')
members.get('A').kill('SIGKILL')
console.log('A SIGKILLed')
start('D')
await waitFor(N * 0.55, 'D joined')
members.get('B').kill('SIGTERM')
console.log('B left (SIGTERM: close)')
start('E')
const seen = new Uint8Array(N)
let done = false
for (let i = 0; i < 3000 && !done; i++) {
  await sleep(200)
  seen.fill(0)
  for (const f of files) if (fs.existsSync(f)) for (const id of fs.readFileSync(f, 'latin1').split('\n')) if (id) seen[Number(id)] = Math.min(255, seen[Number(id)] + 1)
  done = seen.every((n) => n > 0)
}
const elapsed = (Date.now() - t1) / 1000
for (const [name, p] of members) if (p.exitCode === null && p.signalCode === null && name !== 'A') p.kill('SIGTERM')
await sleep(2000)
stopBroker()
let missing = 0
let repeated = 0
for (const n of seen) {
  if (n === 0) missing++
  if (n > 1) repeated += n - 1
}
console.log(
  `${N} records, 5 members (A killed, B left): missing ${missing}, processed more than once ${repeated} (${((repeated / N) * 100).toFixed(2)}%), ${elapsed.toFixed(1)} s, ${Math.round(N / elapsed).toLocaleString('en-US')} records/s`,
)
fs.rmSync(dir, { recursive: true, force: true })
process.exit(missing === 0 ? 0 : 1)
