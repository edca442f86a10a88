#!/usr/bin/env node
// SIGKILL of a whole ferrolog broker while its log cleaner compacts, many times. One data
// directory and port across every round:
//
//   1. a broker with a fast cleaner (log.cleaner.backoff.ms=10) serves a compacted topic with
//      small segments; a kafkajs producer (acks=all, one request in flight, no retries) sends
//      keyed values `<key>=<seq>` and records, per key, the highest seq acknowledged;
//   2. the broker is SIGKILLed after a random delay, mid-produce and mostly mid-round;
//   3. a broker is started on the same directory with the cleaner off (so what the directory
//      holds once it is up is what recovery left, not a new round's work) and checked: it
//      starts; no .cleaned/.swap/.deleted file is left; cleaner-offset-checkpoint lies within
//      the log; a consumer reading from the beginning sees offsets that only increase (no
//      offset twice) and, for every key, its latest acknowledged value or a later one. Then it
//      is SIGKILLed too (the next round starts with recovery again).
//
// Figures: kills, records acknowledged, cleaner rounds that ended (`log cleaned` lines),
// kills that landed inside a round (`cleaning log` without its end), and kills after which the
// directory held .cleaned/.swap/.deleted files for recovery to finish or undo.
// Uses dist/ (node scripts/build.mjs ts) and kafkajs.
//   node scripts/compaction-kill-soak.mjs [--kills N] [--backend native|js] [--seed S] [--keys K]
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { Kafka, logLevel } = require('kafkajs')
const CLI = new URL('../dist/ts/cli/main.js', import.meta.url).pathname
const TOPIC = 'kv'
const LEFTOVER = /\.(cleaned|swap|deleted)$/

export function prng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** A `ferrolog broker` on `dataDir` and `port` (0: any); resolves once it listens. */
function startBroker(dataDir, port, props, backend) {
  const config = join(dataDir, '..', 'server.properties')
  writeFileSync(
    config,
    Object.entries(props)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  )
  const args = [CLI, 'broker', '--data-dir', dataDir, '--listen', `127.0.0.1:${port}`, '--config', config]
  if (backend) args.push('--backend', backend)
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise((resolve) => child.once('close', resolve))
  const listening = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the broker did not listen in 60 s: ${err.slice(-2000)}`))
    }, 60_000)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the broker exited (${code ?? signal}) while starting: ${err.slice(-2000)}${out.slice(-2000)}`))
    })
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening on [^:]+:(\d+)/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
  })
  return listening.then((boundPort) => ({
    port: boundPort,
    child,
    output: () => out + err,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }))
}

const client = (port) =>
  new Kafka({ clientId: 'compaction-kill-soak', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, connectionTimeout: 3000, requestTimeout: 10_000, retry: { retries: 0 } })

/**
 * Sends batches of keyed values until the producer fails (the broker died) or `stopAt` passes;
 * `acked` gets each key's highest acknowledged seq. Returns how many records were acknowledged.
 */
async function produce(port, state, random, keys, stopAt) {
  const producer = client(port).producer({ allowAutoTopicCreation: false, retry: { retries: 0 }, maxInFlightRequests: 1 })
  let acked = 0
  try {
    await producer.connect()
    while (Date.now() < stopAt) {
      const messages = []
      for (let i = 0, n = 1 + Math.floor(random() * 40); i < n; i++) {
        const key = `k${Math.floor(random() * keys)}`
        messages.push({ key, value: `${key}=${state.seq++}=${'x'.repeat(Math.floor(random() * 64))}` })
      }
      try {
        await producer.send({ topic: TOPIC, acks: -1, messages })
      } catch {
        break
      }
      for (const m of messages) {
        const seq = Number(m.value.split('=')[1])
        if ((state.acked.get(m.key) ?? -1) < seq) state.acked.set(m.key, seq)
      }
      acked += messages.length
      // About 2000 records a second: a rate the cleaner keeps up with on small segments, so the
      // kills find logs compacted and rounds under way rather than one ever-growing round.
      await sleep(10)
    }
  } finally {
    await producer.disconnect().catch(() => undefined)
  }
  return acked
}

/** Every file under `dir` whose name ends .cleaned, .swap or .deleted. */
function leftovers(dir) {
  const found = []
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && LEFTOVER.test(entry.name)) found.push(join(entry.parentPath ?? entry.path, entry.name))
  }
  return found
}

/** The cleaner-offset-checkpoint entry of kv-0 (null: none). */
function cleanerCheckpoint(dataDir) {
  const file = join(dataDir, 'cleaner-offset-checkpoint')
  if (!existsSync(file)) return null
  const lines = readFileSync(file, 'utf8').trim().split('\n')
  for (const line of lines.slice(2)) {
    const [topic, partition, offset] = line.trim().split(/\s+/)
    if (topic === TOPIC && partition === '0') return BigInt(offset)
  }
  return null
}

/** Reads kv-0 from the beginning to its end; the problems found against `acked`. */
async function verify(port, dataDir, acked, round) {
  const problems = []
  const kafka = client(port)
  const admin = kafka.admin()
  await admin.connect()
  let start
  let end
  try {
    const [offsets] = await admin.fetchTopicOffsets(TOPIC)
    end = BigInt(offsets.high)
    start = BigInt(offsets.low)
  } finally {
    await admin.disconnect()
  }
  const checkpoint = cleanerCheckpoint(dataDir)
  if (checkpoint !== null && (checkpoint > end || checkpoint < start)) problems.push(`cleaner-offset-checkpoint ${checkpoint} outside the log [${start}, ${end}]`)
  const last = new Map()
  let previous = -1n
  let records = 0
  if (end > start) {
    const consumer = kafka.consumer({ groupId: `verify-${round}-${Date.now()}`, maxWaitTimeInMs: 100, retry: { retries: 5 } })
    await consumer.connect()
    try {
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
      let top = -1n
      await consumer.run({
        eachMessage: async ({ message }) => {
          const offset = BigInt(message.offset)
          if (offset <= previous) problems.push(`offset ${offset} after ${previous}`)
          previous = offset
          if (offset > top) top = offset
          records++
          if (message.value === null) return
          const [key, seq] = message.value.toString().split('=')
          if (key !== message.key?.toString()) problems.push(`offset ${offset}: key ${message.key} holds a value of ${key}`)
          last.set(key, Number(seq))
        },
      })
      const deadline = Date.now() + 60_000
      while (top < end - 1n && Date.now() < deadline) await sleep(20)
      if (top < end - 1n) problems.push(`read up to ${top} of a log ending at ${end} in 60 s`)
    } finally {
      await consumer.disconnect()
    }
  }
  for (const [key, seq] of acked) {
    const seen = last.get(key)
    if (seen === undefined) problems.push(`key ${key}: acknowledged value ${seq} is gone`)
    else if (seen < seq) problems.push(`key ${key}: latest value ${seen}, ${seq} was acknowledged`)
  }
  return { problems, records, start, end, checkpoint }
}

/**
 * `kills` SIGKILLs of the broker on one data directory; the figures and every problem found.
 * The first problem stops the run (the directory is kept and named).
 */
export async function soak({ kills, seed = 1, keys = 300, backend, log = () => {} }) {
  const root = mkdtempSync(join(tmpdir(), 'compaction-kill-soak-'))
  const dataDir = join(root, 'data')
  const random = prng(seed)
  const base = { 'group.initial.rebalance.delay.ms': '0', 'log.cleaner.backoff.ms': '10', 'log.cleaner.dedupe.buffer.size': '1048576', 'log.retention.check.interval.ms': '1000' }
  const state = { seq: 0, acked: new Map() }
  const figures = { kills: 0, acknowledged: 0, cleanerRuns: 0, killedMidRound: 0, killsLeavingCleaningFiles: 0, lastRecords: 0, lastEnd: 0n, lastCheckpoint: null, problems: [] }
  let port = 0
  try {
    for (let round = 0; round < kills && figures.problems.length === 0; round++) {
      const broker = await startBroker(dataDir, port, base, backend)
      port = broker.port
      if (round === 0) {
        const admin = client(port).admin()
        await admin.connect()
        await admin.createTopics({
          topics: [
            {
              topic: TOPIC,
              numPartitions: 1,
              configEntries: [
                { name: 'cleanup.policy', value: 'compact' },
                { name: 'segment.bytes', value: '4096' },
                { name: 'min.cleanable.dirty.ratio', value: '0.01' },
              ],
            },
          ],
        })
        await admin.disconnect()
      }
      const killAfter = 150 + Math.floor(random() * 2500)
      const producing = produce(port, state, random, keys, Date.now() + 60_000)
      await sleep(killAfter)
      await broker.kill()
      figures.acknowledged += await producing
      figures.kills++
      const output = broker.output()
      if (process.env.SOAK_DUMP) writeFileSync(process.env.SOAK_DUMP, output)
      const started = (output.match(/"msg":"cleaning log"/g) ?? []).length
      const cleaned = (output.match(/"msg":"log cleaned"/g) ?? []).length
      figures.cleanerRuns += cleaned
      if (started > cleaned) figures.killedMidRound++

      if (leftovers(dataDir).length > 0) figures.killsLeavingCleaningFiles++
      // Recovery, with the cleaner off: what is on disk once it listens is recovery's doing.
      const checker = await startBroker(dataDir, port, { ...base, 'log.cleaner.enable': 'false' }, backend)
      try {
        const left = leftovers(dataDir)
        for (const f of left) figures.problems.push(`kill ${round}: left behind after recovery: ${f}`)
        const v = await verify(port, dataDir, state.acked, round)
        for (const p of v.problems) figures.problems.push(`kill ${round}: ${p}`)
        figures.lastRecords = v.records
        figures.lastEnd = v.end
        figures.lastCheckpoint = v.checkpoint
        log(
          `kill ${round + 1}/${kills} after ${killAfter} ms: ${figures.acknowledged} acknowledged, log [${v.start}, ${v.end}) read ${v.records} records, checkpoint ${v.checkpoint}, rounds ${figures.cleanerRuns}${v.problems.length > 0 ? `, PROBLEMS ${v.problems.length}` : ''}`,
        )
      } finally {
        await checker.kill()
      }
    }
  } finally {
    if (figures.problems.length === 0) rmSync(root, { recursive: true, force: true })
    else figures.dataDir = dataDir
  }
  figures.keys = state.acked.size
  return figures
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`)
    return i >= 0 ? process.argv[i + 1] : fallback
  }
  const started = Date.now()
  const figures = await soak({
    kills: Number(arg('kills', '100')),
    seed: Number(arg('seed', String(Date.now() % 100000))),
    keys: Number(arg('keys', '300')),
    backend: arg('backend', undefined),
    log: (line) => console.log(line),
  })
  console.log(JSON.stringify({ ...figures, lastEnd: String(figures.lastEnd), lastCheckpoint: String(figures.lastCheckpoint), seconds: Math.round((Date.now() - started) / 1000) }, null, 2))
  process.exit(figures.problems.length === 0 ? 0 : 1)
}
