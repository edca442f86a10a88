/**
 * Log compaction on a cluster of real broker processes (issue #18): a compacted topic with three
 * replicas, every broker's cleaner running fast over 4 KiB segments, a kafkajs producer (acks=all)
 * recording what was acknowledged. Rounds of: the leader SIGKILLed; a consumer reading from the
 * beginning through the new leader sees every key's latest acknowledged value (or a later one),
 * each offset once; the killed broker restarted, rejoining as a follower (truncating what the new
 * leader does not have, on a diverging epoch, while its cleaner may be mid-round). At the end
 * every replica, read from its data directory after a last SIGKILL, holds the same log end, the
 * same latest value per key, increasing offsets, and no .cleaned/.swap/.deleted file; its
 * cleaner-offset-checkpoint lies within its log.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Kafka, logLevel, type Producer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { LogManager, silentLogger } from '../../ts/index.js'
import { CLEANER_OFFSET_CHECKPOINT_FILE } from '../../ts/storage/log-cleaner-manager.js'
import { readOffsetCheckpoint } from '../../ts/storage/checkpoint-file.js'
import { ClusterProcesses } from '../helpers/cluster-processes.js'
import { latestValues } from '../helpers/compacted-log.js'

const ROUNDS = 3
const TOPIC = 'kv'
const KEYS = 200
let cluster: ClusterProcesses | undefined

afterEach(async () => {
  await cluster?.close()
  cluster = undefined
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Acked {
  seq: number
  byKey: Map<string, number>
}

/** Sends batches of 50 (not while `paused`) `<key>=<seq>` until `stop()`; failed sends are not acknowledged (kafkajs retries through the leader change). */
async function produceUntil(producer: Producer, acked: Acked, stop: () => boolean, inFlight: { sending: boolean; paused: boolean }): Promise<void> {
  let i = 0
  while (!stop()) {
    if (inFlight.paused) {
      await sleep(20)
      continue
    }
    const messages = Array.from({ length: 50 }, () => {
      const key = `k${(i++ * 13) % KEYS}`
      return { key, value: `${key}=${acked.seq++}` }
    })
    try {
      inFlight.sending = true
      await producer.send({ topic: TOPIC, acks: -1, messages })
      inFlight.sending = false
      for (const m of messages) {
        const seq = Number(m.value.split('=')[1])
        if ((acked.byKey.get(m.key) ?? -1) < seq) acked.byKey.set(m.key, seq)
      }
    } catch {
      inFlight.sending = false
      await sleep(100)
    }
    await sleep(5)
  }
}

/**
 * Reads the topic from the beginning up to its high watermark now; each key's last seq, the
 * problems seen, and what was acknowledged before the high watermark was asked for (`expected`).
 */
async function readAll(kafka: Kafka, group: string, acked: Acked): Promise<{ last: Map<string, number>; problems: string[]; records: number; expected: Map<string, number> }> {
  const expected = new Map(acked.byKey)
  const admin = kafka.admin()
  await admin.connect()
  const [offsets] = await admin.fetchTopicOffsets(TOPIC)
  await admin.disconnect()
  const end = BigInt(offsets.high)
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 100 })
  const last = new Map<string, number>()
  const problems: string[] = []
  let previous = -1n
  let records = 0
  await consumer.connect()
  try {
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        const offset = BigInt(message.offset)
        if (offset <= previous) problems.push(`offset ${offset} after ${previous}`)
        previous = offset
        records++
        last.set(message.key!.toString(), Number(message.value!.toString().split('=')[1]))
      },
    })
    await cluster!.until(`${group} to read to ${end}`, async () => previous >= end - 1n, 60_000)
  } finally {
    await consumer.disconnect()
  }
  return { last, problems, records, expected }
}

function missing(expected: Map<string, number>, last: Map<string, number>): string[] {
  const out: string[] = []
  for (const [key, seq] of expected) {
    const seen = last.get(key)
    if (seen === undefined || seen < seq) out.push(`${key}: acknowledged ${seq}, read ${seen ?? 'nothing'}`)
  }
  return out
}

/** How many lines of each broker's log match `pattern`. */
function countInLogs(pattern: RegExp): number {
  return cluster!.nodes.reduce((sum, b) => sum + (readFileSync(b.logFile, 'utf8').match(pattern) ?? []).length, 0)
}

describe('log compaction on a cluster of broker processes', () => {
  it(`SIGKILL of the leader (${ROUNDS} rounds) while every replica cleans: the new leader serves every acknowledged latest value, the restarted replica truncates and converges`, async () => {
    cluster = await ClusterProcesses.start({ props: { 'log.cleaner.backoff.ms': '20', 'log.cleaner.dedupe.buffer.size': '1048576', 'replica.fetch.wait.max.ms': '100' } })
    await cluster.createTopic(TOPIC, {
      partitions: 1,
      replicationFactor: 3,
      configs: { 'cleanup.policy': 'compact', 'segment.bytes': '4096', 'min.cleanable.dirty.ratio': '0.01' },
    })
    await cluster.waitForFullIsr(TOPIC)
    const kafka = new Kafka({
      clientId: 'compaction-kill-cluster',
      brokers: cluster.nodes.map((b) => b.address),
      logLevel: logLevel.NOTHING,
      retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 },
    })
    const producer = kafka.producer({ allowAutoTopicCreation: false, maxInFlightRequests: 1 })
    await producer.connect()
    const acked: Acked = { seq: 0, byKey: new Map() }
    let stop = false
    const inFlight = { sending: false, paused: false }
    const producing = produceUntil(producer, acked, () => stop, inFlight)
    try {
      // A first read while all three live: __consumer_offsets (three replicas) is created now.
      await cluster.until('some records acknowledged', async () => acked.byKey.size > 0)
      const first = await readAll(kafka, 'reader-start', acked)
      expect(first.problems).toEqual([])
      expect(missing(first.expected, first.last)).toEqual([])
      for (let round = 0; round < ROUNDS; round++) {
        // Let every replica's cleaner work on what came since the last round.
        const cleanedBefore = countInLogs(/"msg":"log cleaned"/g)
        await cluster.until('more cleaning rounds', async () => countInLogs(/"msg":"log cleaned"/g) >= cleanedBefore + 3, 60_000)
        const view = (await cluster.topic(TOPIC))!
        const leader = cluster.node(view.partitions[0].leaderId)
        // Its followers paused, the leader takes records they never fetch (acks=1, not counted as
        // acknowledged) and is killed: once restarted it truncates them on the new leader's
        // diverging epoch, while its cleaner (restarted too) works on the same log.
        const followers = cluster.nodes.filter((b) => b !== leader)
        const divergent = new Kafka({ clientId: 'divergent', brokers: [leader.address], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer({
          allowAutoTopicCreation: false,
          retry: { retries: 0 },
        })
        await divergent.connect()
        await divergent.send({ topic: TOPIC, acks: 1, messages: [{ key: 'probe', value: 'probe=0' }] }).catch(() => undefined)
        for (const f of followers) f.pause()
        try {
          // Fetches parked before the pause are answered (empty, after replica.fetch.wait.max.ms)
          // before these records exist. Their seqs come after every acknowledged one so far: if
          // one did reach a follower anyway, it is a later value, not a lost one.
          await sleep(500)
          await divergent.send({ topic: TOPIC, acks: 1, messages: Array.from({ length: 30 }, (_, j) => ({ key: `k${j}`, value: `k${j}=${acked.seq++}` })) })
        } finally {
          await leader.kill()
          for (const f of followers) f.resume()
          await divergent.disconnect().catch(() => undefined)
        }
        await cluster.until('a new leader', async () => {
          const v = await cluster!.topic(TOPIC)
          const id = v?.partitions[0].leaderId ?? -1
          return id >= 0 && id !== leader.nodeId
        })
        const read = await readAll(kafka, `reader-${round}`, acked)
        expect(read.problems).toEqual([])
        expect(missing(read.expected, read.last)).toEqual([])
        // Writes pause while the restarted broker catches up and rejoins the ISR (on a loaded
        // machine an unpaced producer can keep it behind for long).
        inFlight.paused = true
        await leader.start()
        await cluster.waitForFullIsr(TOPIC, 120_000)
        inFlight.paused = false
      }
    } finally {
      stop = true
      await producing
    }
    // A last record acknowledged by the full ISR: every replica ends at the same offset.
    await cluster.waitForFullIsr(TOPIC, 120_000)
    await producer.send({ topic: TOPIC, acks: -1, messages: [{ key: 'k0', value: `k0=${acked.seq}` }] })
    acked.byKey.set('k0', acked.seq++)
    await producer.disconnect()
    const read = await readAll(kafka, 'reader-final', acked)
    expect(read.problems).toEqual([])
    expect(missing(read.expected, read.last)).toEqual([])
    expect(read.records).toBeLessThan(acked.seq)
    const figures = {
      acknowledged: acked.seq,
      cleaned: countInLogs(/"msg":"log cleaned"/g),
      aborted: countInLogs(/"msg":"log cleaning aborted"/g),
      truncations: countInLogs(/"msg":"truncating[^"]*"/g),
    }
    console.log('compaction on a killed cluster:', JSON.stringify(figures))
    // Restarted leaders truncated what only they held (each round should; one at least must).
    expect(figures.truncations).toBeGreaterThan(0)
    expect(cluster.unexpectedExits()).toEqual([])

    // Every replica from its data directory, after a SIGKILL of all (so recovery runs on open).
    await Promise.all(cluster.nodes.map((b) => b.kill()))
    const replicas: Array<{ id: number; end: bigint; latest: Map<string, string> }> = []
    for (const b of cluster.nodes) {
      const manager = await LogManager.open({ dataDir: b.dataDir, logger: silentLogger, retentionCheckIntervalMs: 0 })
      try {
        const log = manager.getLog(TOPIC, 0)!
        const latest = latestValues(log, `broker ${b.nodeId}`)
        replicas.push({ id: b.nodeId, end: log.logEndOffset(), latest })
        const left = readdirSync(log.dir).filter((f) => /\.(cleaned|swap|deleted)$/.test(f))
        expect(left, `broker ${b.nodeId}`).toEqual([])
        const checkpoint = (await readOffsetCheckpoint(join(b.dataDir, CLEANER_OFFSET_CHECKPOINT_FILE))).get(`${TOPIC}-0`)
        expect(checkpoint, `broker ${b.nodeId} cleaned`).toBeDefined()
        expect(checkpoint!).toBeLessThanOrEqual(log.logEndOffset())
      } finally {
        await manager.close()
      }
    }
    for (const r of replicas.slice(1)) {
      expect(r.end, `broker ${r.id}'s log end`).toBe(replicas[0].end)
      expect(r.latest, `broker ${r.id}'s latest values`).toEqual(replicas[0].latest)
    }
    expect(missing(acked.byKey, new Map([...replicas[0].latest].map(([k, v]) => [k, Number(v.split('=')[1])])))).toEqual([])
  }, 300_000)
})
