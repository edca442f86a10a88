/**
 * Log compaction, ferrolog against Apache Kafka: the same records are produced, in the same
 * batches, to a compacted topic on a real Kafka broker (tools/kafka/run-broker.sh) and on a
 * ferrolog broker, each with its log cleaner set to run at once. Once each broker's
 * `cleaner-offset-checkpoint` says the partition is clean up to its active segment, the
 * partitions must hold the same (offset, key, value) set: the latest record of every key below
 * the active segment (tombstones kept, delete.retention.ms being a day), the active segment as
 * it was written. The segments must start at the same offsets too (a batch goes to a new
 * segment by the same rule on both, and cleaning keeps a group's base offset).
 *
 * A record without a key is refused by both, with INVALID_RECORD.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kafka, logLevel, type Message } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, kafkaBrokerPort, KafkaTool, kafkaToolOk, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'

const TOPIC = 'compacted'
const KEYS = 300
const RECORDS = 12_000
const PER_BATCH = 40
const TOPIC_CONFIGS: Record<string, string> = {
  'cleanup.policy': 'compact',
  'segment.bytes': String(1024 * 1024),
  'min.cleanable.dirty.ratio': '0.01',
  'delete.retention.ms': String(24 * 60 * 60 * 1000),
  'min.compaction.lag.ms': '0',
}
/** Both brokers look for a dirty log every 100 ms. */
const CLEANER_BACKOFF_MS = '100'

let kafkaDir: string
let kafkaPort: number
let ferrolog: Broker | undefined
let ferrologDataDir: string

/** The workload: record i has key k(i mod KEYS); every 23rd record is a tombstone. */
function batches(): Message[][] {
  const out: Message[][] = []
  for (let start = 0; start < RECORDS; start += PER_BATCH) {
    const batch: Message[] = []
    for (let i = start; i < Math.min(start + PER_BATCH, RECORDS); i++) {
      const key = `k${(i * 7919) % KEYS}`
      batch.push({ key, value: i % 23 === 0 ? null : `${key}:${i}:`.padEnd(200, 'v') })
    }
    out.push(batch)
  }
  return out
}

async function produceAll(port: number): Promise<void> {
  const kafka = new Kafka({ clientId: 'compaction-vs-kafka', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING })
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  try {
    // One send per batch, awaited: each becomes one record batch, in this order, on both brokers.
    for (const messages of batches()) await producer.send({ topic: TOPIC, acks: -1, messages })
  } finally {
    await producer.disconnect()
  }
}

/** The error a record without a key gets. */
async function keylessError(port: number): Promise<string> {
  const kafka = new Kafka({ clientId: 'compaction-vs-kafka', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 } })
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } })
  await producer.connect()
  try {
    await producer.send({ topic: TOPIC, acks: -1, messages: [{ value: 'no key' }] })
    return 'accepted'
  } catch (err) {
    const e = err as { type?: string; name: string }
    return e.type ?? e.name
  } finally {
    await producer.disconnect()
  }
}

interface Held {
  offset: string
  key: string | null
  value: string | null
}

/** Every record of the partition, read from offset 0 to its end with kafkajs. */
async function readAll(port: number): Promise<Held[]> {
  const kafka = new Kafka({ clientId: 'compaction-vs-kafka', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  const [{ high }] = await admin.fetchTopicOffsets(TOPIC)
  await admin.disconnect()
  const end = BigInt(high)
  const consumer = kafka.consumer({ groupId: `compaction-read-${Date.now()}` })
  const held: Held[] = []
  await consumer.connect()
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${held.length} records, not to ${end}`)), 60_000)
    consumer
      .run({
        eachMessage: async ({ message }) => {
          held.push({ offset: message.offset, key: message.key?.toString() ?? null, value: message.value?.toString() ?? null })
          if (BigInt(message.offset) + 1n >= end) {
            clearTimeout(timer)
            resolve()
          }
        },
      })
      .catch(reject)
  })
  await consumer.disconnect()
  return held
}

/** The partition's segment base offsets, from its directory. */
function segmentBases(logDir: string): bigint[] {
  return readdirSync(join(logDir, `${TOPIC}-0`))
    .filter((f) => f.endsWith('.log'))
    .map((f) => BigInt(f.slice(0, -4)))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/** The partition's offset in the log dir's cleaner-offset-checkpoint, if there is one. */
function cleanerCheckpoint(logDir: string): bigint | null {
  const file = join(logDir, 'cleaner-offset-checkpoint')
  if (!existsSync(file)) return null
  for (const line of readFileSync(file, 'utf8').split('\n').slice(2)) {
    const [topic, partition, offset] = line.trim().split(' ')
    if (topic === TOPIC && partition === '0') return BigInt(offset)
  }
  return null
}

/** Waits until the cleaner has cleaned the partition up to its active segment. */
async function cleaned(logDir: string): Promise<void> {
  const deadline = Date.now() + 120_000
  for (;;) {
    const bases = segmentBases(logDir)
    const active = bases[bases.length - 1]
    const checkpoint = cleanerCheckpoint(logDir)
    if (checkpoint !== null && checkpoint >= active) return
    if (Date.now() > deadline) throw new Error(`not cleaned in 120 s: checkpoint ${checkpoint}, segments ${bases.join(',')}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** What the compacted partition must hold: the latest record per key below `active`, all from it. */
function expectedAfterCleaning(active: bigint): Held[] {
  const all = batches().flat()
  const latest = new Map<string, number>()
  for (let i = 0; i < Number(active); i++) latest.set(all[i].key as string, i)
  const out: Held[] = []
  for (let i = 0; i < all.length; i++) {
    if (i < Number(active) && latest.get(all[i].key as string) !== i) continue
    out.push({ offset: String(i), key: all[i].key as string, value: (all[i].value as string | null) ?? null })
  }
  return out
}

beforeAll(async () => {
  fetchKafkaJars()
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-compaction-'))
  kafkaPort = kafkaBrokerPort(await runKafkaBroker(kafkaDir, ['--set', `log.cleaner.backoff.ms=${CLEANER_BACKOFF_MS}`]))
  const configs = Object.entries(TOPIC_CONFIGS).flatMap(([k, v]) => ['--config', `${k}=${v}`])
  await kafkaToolOk(kafkaPort, KafkaTool.TOPICS, ['--create', '--topic', TOPIC, '--partitions', '1', '--replication-factor', '1', ...configs])

  ferrologDataDir = mkdtempSync(join(tmpdir(), 'ferrolog-compaction-'))
  ferrolog = await startBroker({ dataDir: ferrologDataDir, props: { 'log.cleaner.backoff.ms': CLEANER_BACKOFF_MS } })
  await kafkaToolOk(ferrolog.port, KafkaTool.TOPICS, ['--create', '--topic', TOPIC, '--partitions', '1', '--replication-factor', '1', ...configs])
}, 300_000)

afterAll(async () => {
  await ferrolog?.stop()
  if (ferrologDataDir) rmSync(ferrologDataDir, { recursive: true, force: true })
  if (kafkaDir) {
    stopKafkaBroker(kafkaDir)
    rmSync(kafkaDir, { recursive: true, force: true })
  }
}, 120_000)

describe('a compacted partition, ferrolog and Apache Kafka from the same records', () => {
  it('holds the same (offset, key, value) set and segments once cleaned to the active segment', async () => {
    await Promise.all([produceAll(kafkaPort), produceAll(ferrolog!.port)])
    const kafkaLogs = join(kafkaDir, 'kafka-logs')
    await Promise.all([cleaned(kafkaLogs), cleaned(ferrologDataDir)])

    const kafkaBases = segmentBases(kafkaLogs)
    expect(segmentBases(ferrologDataDir)).toEqual(kafkaBases)
    expect(kafkaBases.length).toBeGreaterThan(2)

    const [fromKafka, fromFerrolog] = await Promise.all([readAll(kafkaPort), readAll(ferrolog!.port)])
    const expected = expectedAfterCleaning(kafkaBases[kafkaBases.length - 1])
    expect(fromKafka).toEqual(expected)
    expect(fromFerrolog).toEqual(fromKafka)
    // Cleaning removed most of the records below the active segment.
    expect(fromFerrolog.length).toBeLessThan(RECORDS / 2)
  }, 300_000)

  it('refuses a record without a key, as Kafka does', async () => {
    const [kafka, ours] = await Promise.all([keylessError(kafkaPort), keylessError(ferrolog!.port)])
    expect(kafka).toBe('INVALID_RECORD')
    expect(ours).toBe(kafka)
  }, 60_000)
})
