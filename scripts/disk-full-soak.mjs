#!/usr/bin/env node
// Disk-full soak: a real broker (`ferrolog broker`, built in dist/) with its data dir on a small
// tmpfs, acks=-1 kafkajs producers writing records with unique ids while a filler file grows
// until the disk is full and is then removed, for a number of rounds; then the broker is
// SIGKILLed and restarted, and every partition is read back from offset 0 with Fetch.
//
// The filler gives the space back a page at a time before it goes, and every batch gets an index
// entry (log.index.interval.bytes=0), so that appends often find room for some of their writes
// and not for others.
//
// Counted: acknowledged records not served at their acknowledged offset (lost), offsets served
// twice or going backwards (reused), records served that were refused (unacknowledged), and the
// produce errors by code. Lost, reused and unacknowledged must all be 0. Needs root (mount).
//
//   node scripts/disk-full-soak.mjs [--rounds N] [--backend native|js|both] [--disk-mib M]
//
// (the disk defaults to max(24, 2N) MiB: acknowledged records stay, about 1 MiB a round).
//
// Exits 1 if anything was lost, reused or unacknowledged. __test__/server/disk-full.test.ts runs
// `soak` with a few rounds (DISK_FULL_ROUNDS).
import { execFileSync, spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Kafka, logLevel } from 'kafkajs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const DIST = join(ROOT, 'dist', 'ts')
const CLI = join(DIST, 'cli', 'main.js')
const TOPIC = 'soak'
const PARTITIONS = 3
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts `ferrolog broker` on a free port; resolves when it listens. */
function startBroker(dataDir, backend, configFile) {
  const child = spawn(process.execPath, [CLI, 'broker', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--backend', backend, '--config', configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stderr.on('data', (d) => (err += d.toString()))
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, err })))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`broker did not start in 30 s: ${err}`))
    }, 30_000)
    child.stdout.on('data', (d) => {
      out += d.toString()
      const m = /listening on [^\s]+:(\d+),/.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve({ child, port: Number(m[1]), exited, stderr: () => err })
      }
    })
    child.on('close', () => {
      clearTimeout(timer)
      reject(new Error(`broker exited before listening: ${err}`))
    })
  })
}

/** The Kafka error type (kafkajs's name for the code) inside a kafkajs error, or null. */
function kafkaType(e) {
  for (let c = e; c; c = c.originalError ?? c.cause) if (c.type) return c.type
  return null
}

/** Grows a file on the disk until ENOSPC. */
function fillDisk(path) {
  const fd = openSync(path, 'a')
  const chunk = Buffer.alloc(256 * 1024, 0xff)
  let size = chunk.length
  try {
    while (size >= 512) {
      try {
        writeSync(fd, chunk, 0, size)
      } catch (e) {
        if (e.code !== 'ENOSPC') throw e
        size >>= 1
      }
    }
  } finally {
    closeSync(fd)
  }
}

/** Every record of a partition from offset 0 up to its high watermark, through Fetch. */
async function readPartition(client, codecs, partition) {
  const served = []
  let next = 0n
  for (let guard = 0; guard < 100_000; guard++) {
    const res = await client.send(codecs.fetchCodec, 12, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 4 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        { topic: TOPIC, topicId: codecs.ZERO_UUID, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: next, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 4 << 20 }] },
      ],
      forgottenTopicsData: [],
      rackId: '',
    })
    const p = res.responses[0].partitions[0]
    if (p.errorCode !== 0) throw new Error(`fetch ${TOPIC}-${partition} at ${next}: error ${p.errorCode}`)
    if (next >= p.highWatermark) break
    const batches = p.records === null ? [] : codecs.decodeBatches(p.records)
    if (batches.length === 0) throw new Error(`fetch ${TOPIC}-${partition} at ${next}: nothing below the high watermark ${p.highWatermark}`)
    for (const b of batches) {
      for (const r of b.records) served.push({ offset: r.offset, value: r.value?.toString() ?? '' })
      if (b.lastOffset + 1n > next) next = b.lastOffset + 1n
    }
  }
  return served
}

/**
 * One soak run for one backend: `rounds` fill/free cycles under acks=-1 producers, SIGKILL,
 * restart, read back. Returns the figures.
 */
export async function soak({ backend, rounds, diskBytes = 24 << 20, holdFullMs = 300, freeMs = 300, pagesBackSlowly = 100 }) {
  const mnt = mkdtempSync(join(tmpdir(), 'ferrolog-soak-'))
  const conf = mkdtempSync(join(tmpdir(), 'ferrolog-soak-conf-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${diskBytes}`, 'tmpfs', mnt])
  const dataDir = join(mnt, 'data')
  const filler = join(mnt, 'filler')
  const configFile = join(conf, 'broker.properties')
  writeFileSync(configFile, 'log.segment.bytes=262144\nlog.index.interval.bytes=0\nnum.partitions=3\n')
  const figures = { backend, rounds, acknowledged: 0, lost: 0, reused: 0, unacknowledged: 0, served: 0, produceErrors: {} }
  let broker = null
  try {
    broker = await startBroker(dataDir, backend, configFile)
    const kafka = new Kafka({ clientId: 'soak', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 } })
    const admin = kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }] })
    await admin.disconnect()
    const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: false, retry: { retries: 0 }, maxInFlightRequests: 1 })
    await producer.connect()

    // What each partition acknowledged (offset -> id), and the ids refused or left in doubt.
    const acked = Array.from({ length: PARTITIONS }, () => new Map())
    const refused = new Set()
    const inDoubt = new Set()
    let stop = false
    let nextId = 0
    const loops = Array.from({ length: PARTITIONS }, async (_, partition) => {
      while (!stop) {
        const n = 1 + (nextId % 5)
        const ids = Array.from({ length: n }, () => `${backend}-${nextId++}-${'x'.repeat(nextId % 700)}`)
        try {
          const [meta] = await producer.send({ topic: TOPIC, acks: -1, timeout: 5000, messages: ids.map((value) => ({ partition, value })) })
          const base = BigInt(meta.baseOffset)
          ids.forEach((id, i) => acked[partition].set(base + BigInt(i), id))
        } catch (e) {
          const type = kafkaType(e)
          const name = type ?? e?.name ?? 'unknown'
          figures.produceErrors[name] = (figures.produceErrors[name] ?? 0) + 1
          // A Kafka error code in the answer: not written. Anything else (a timeout, a lost
          // connection): maybe written.
          for (const id of ids) (type !== null ? refused : inDoubt).add(id)
          await sleep(20)
        }
      }
    })

    for (let round = 0; round < rounds; round++) {
      await sleep(freeMs)
      fillDisk(filler)
      // Full: the appends fail; keep it full while they do.
      const until = Date.now() + holdFullMs
      while (Date.now() < until) {
        await sleep(50)
        fillDisk(filler)
      }
      // Give space back a page at a time first, so that appends find room for some of their
      // writes and not others (the .log but not an index entry, ...), then all of it.
      for (let page = 0; page < pagesBackSlowly; page++) {
        truncateSync(filler, Math.max(0, statSync(filler).size - 4096))
        await sleep(3)
      }
      unlinkSync(filler)
    }
    await sleep(freeMs)
    stop = true
    await Promise.all(loops)
    await producer.disconnect()

    // Crash and restart (a broker that died by itself meanwhile is a failure too).
    figures.brokerCrashed = broker.child.exitCode !== null || broker.child.signalCode !== null ? broker.stderr().slice(-500) : false
    broker.child.kill('SIGKILL')
    await broker.exited
    broker = await startBroker(dataDir, backend, configFile)
    const { NetworkClient } = await import(pathToFileURL(join(DIST, 'client', 'network-client.js')).href)
    const { fetchCodec, ZERO_UUID } = await import(pathToFileURL(join(DIST, 'protocol', 'apis', 'fetch.js')).href)
    const { decodeBatches } = await import(pathToFileURL(join(DIST, 'protocol', 'records.js')).href)
    const client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
    try {
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const served = await readPartition(client, { fetchCodec, ZERO_UUID, decodeBatches }, partition)
        figures.served += served.length
        figures.acknowledged += acked[partition].size
        const byOffset = new Map()
        let last = -1n
        for (const { offset, value } of served) {
          if (offset <= last || byOffset.has(offset)) figures.reused++
          last = offset > last ? offset : last
          byOffset.set(offset, value)
          if (refused.has(value)) figures.unacknowledged++
        }
        for (const [offset, value] of acked[partition]) if (byOffset.get(offset) !== value) figures.lost++
      }
    } finally {
      await client.close()
    }
    broker.child.kill('SIGTERM')
    const end = await broker.exited
    // A stop on a disk that acknowledged records filled up fails (no clean-shutdown marker: the
    // next start recovers); reported, not counted as a failure.
    figures.cleanStop = end.code === 0 ? true : `exit ${end.code}: ${end.err.trim().split('\n').pop()}`
    broker = null
    figures.inDoubt = inDoubt.size
  } finally {
    if (broker) {
      broker.child.kill('SIGKILL')
      await broker.exited
    }
    execFileSync('umount', ['-l', mnt])
    rmSync(mnt, { recursive: true, force: true })
    rmSync(conf, { recursive: true, force: true })
  }
  return figures
}

async function main() {
  const args = process.argv.slice(2)
  const opt = (name, dflt) => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1] : dflt
  }
  const rounds = Number(opt('--rounds', process.env.DISK_FULL_ROUNDS ?? '30'))
  const which = opt('--backend', 'both')
  // The acknowledged records stay (no retention), about 1 MiB a round: the disk grows with the rounds.
  const diskBytes = Number(opt('--disk-mib', String(Math.max(24, 2 * rounds)))) << 20
  let bad = false
  for (const backend of which === 'both' ? ['native', 'js'] : [which]) {
    const f = await soak({ backend, rounds, diskBytes })
    process.stdout.write(JSON.stringify(f) + '\n')
    if (f.lost || f.reused || f.unacknowledged || f.brokerCrashed) bad = true
  }
  process.exitCode = bad ? 1 : 0
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    process.stderr.write(`${e.stack ?? e}\n`)
    process.exitCode = 2
  })
}
