/**
 * READ_COMMITTED fetches of a partition holding transactions, ferrolog against Apache Kafka on
 * the same files: Kafka's own fixture partition (__test__/fixtures/kafka/fixture-0, written by
 * Kafka 4.4: a committed transaction at 260..263 + COMMIT 264, an aborted one at 265..267 +
 * ABORT 268) is put under a real Kafka broker (tools/kafka/run-broker.sh) and under a ferrolog
 * broker, and the same Fetch requests get the same answers: records bytes, high watermark, last
 * stable offset, aborted transactions. Then kafkajs, a READ_COMMITTED consumer, reads the
 * partition from ferrolog and sees exactly the committed records (it drops the aborted ones by
 * the fetch's abortedTransactions, and the markers).
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CompressionCodecs, CompressionTypes, Kafka, logLevel } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fetchCodec, type FetchResponse } from '../../ts/protocol/apis/fetch.js'
import { compress, decompress } from '../../ts/protocol/compression.js'
import type { CompressionType } from '../../ts/storage/types.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, kafkaBrokerPort, KafkaTool, kafkaToolOk, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { runProcess } from '../helpers/process.js'

const ROOT = join(__dirname, '../..')
const FIXTURE_DIR = join(ROOT, '__test__/fixtures/kafka/fixture-0')
const expected = JSON.parse(readFileSync(join(ROOT, '__test__/fixtures/kafka/expected.json'), 'utf8')) as {
  records: Array<{ offset: number; key: string | null; value: string | null; control: unknown; transaction: string | null }>
}
const TOPIC = 'fixture'
const FETCH_VERSION = 12
const END = 274n

let kafkaDir: string
let kafkaPort: number
let ferrolog: Broker | undefined
let ferrologDataDir: string

/**
 * Puts the fixture's segments, indexes, snapshots and epoch checkpoint in place of a fresh
 * topic's (its partition.metadata, the topic id the broker knows, stays), and says in the log
 * dir's checkpoints that everything is flushed and replicated.
 */
function installFixture(logDir: string): void {
  const dir = join(logDir, `${TOPIC}-0`)
  for (const name of readdirSync(dir)) if (name !== 'partition.metadata') rmSync(join(dir, name))
  for (const name of readdirSync(FIXTURE_DIR)) if (name !== 'partition.metadata') copyFileSync(join(FIXTURE_DIR, name), join(dir, name))
  for (const name of ['recovery-point-offset-checkpoint', 'replication-offset-checkpoint']) {
    writeFileSync(join(logDir, name), `0\n1\n${TOPIC} 0 ${END}\n`)
  }
}

async function startKafka(): Promise<void> {
  kafkaPort = kafkaBrokerPort(await runKafkaBroker(kafkaDir))
}

async function stopKafka(): Promise<void> {
  const out = await runProcess('bash', [join(ROOT, 'tools/kafka/stop-broker.sh'), kafkaDir], '', 90_000)
  if (out.status !== 0) throw new Error(`stop-broker.sh: ${out.stdout}\n${out.stderr}`)
}

/** kafkajs ships gzip only: the fixture's snappy, lz4 and zstd batches decode with ferrolog's codecs. */
function registerKafkajsCodecs(): void {
  const codecs: Array<[number, CompressionType]> = [
    [CompressionTypes.Snappy, 'snappy'],
    [CompressionTypes.LZ4, 'lz4'],
    [CompressionTypes.ZSTD, 'zstd'],
  ]
  for (const [id, type] of codecs) {
    CompressionCodecs[id] = () => ({
      compress: async (encoder: { buffer: Buffer }) => compress(type, encoder.buffer),
      decompress: async (data: Buffer) => decompress(type, data),
    })
  }
}

beforeAll(async () => {
  registerKafkajsCodecs()
  fetchKafkaJars()
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-read-committed-'))
  await startKafka()
  await kafkaToolOk(kafkaPort, KafkaTool.TOPICS, ['--create', '--topic', TOPIC, '--partitions', '1', '--replication-factor', '1', '--config', 'retention.ms=-1'])
  await stopKafka()
  installFixture(join(kafkaDir, 'kafka-logs'))
  await startKafka()

  // A directory of this file's own: it outlives the tests (tempDir's goes after the first).
  ferrologDataDir = mkdtempSync(join(tmpdir(), 'ferrolog-read-committed-'))
  const first = await startBroker({ dataDir: ferrologDataDir })
  await first.createTopic(TOPIC, 1, { 'retention.ms': '-1' })
  await first.stop()
  installFixture(ferrologDataDir)
  ferrolog = await startBroker({ dataDir: ferrologDataDir })
}, 300_000)

afterAll(async () => {
  await ferrolog?.stop()
  if (ferrologDataDir) rmSync(ferrologDataDir, { recursive: true, force: true })
  if (kafkaDir) {
    stopKafkaBroker(kafkaDir)
    rmSync(kafkaDir, { recursive: true, force: true })
  }
}, 120_000)

async function topicId(wire: KafkaWire): Promise<Buffer> {
  const { metadataCodec } = await import('../../ts/protocol/apis/metadata.js')
  const md = await wire.send(metadataCodec, 12, { topics: [{ topicId: Buffer.alloc(16), name: TOPIC }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false })
  return md.topics[0].topicId
}

/** One READ_COMMITTED (or READ_UNCOMMITTED) fetch of the partition from `offset`. */
async function fetchAt(port: number, offset: bigint, isolationLevel: number, maxBytes = 1024 * 1024): Promise<FetchResponse['responses'][number]['partitions'][number]> {
  const wire = new KafkaWire(await connectTo(port), 'read-committed-test')
  try {
    const id = await topicId(wire)
    const response = await wire.send(
      fetchCodec,
      FETCH_VERSION,
      fetchRequest({
        isolationLevel,
        topics: [{ topic: TOPIC, topicId: id, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: maxBytes }] }],
      }),
    )
    expect(response.errorCode).toBe(0)
    return response.responses[0].partitions[0]
  } finally {
    wire.close()
  }
}

function view(p: Awaited<ReturnType<typeof fetchAt>>) {
  return {
    errorCode: p.errorCode,
    highWatermark: p.highWatermark,
    lastStableOffset: p.lastStableOffset,
    logStartOffset: p.logStartOffset,
    abortedTransactions: p.abortedTransactions?.map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset })) ?? null,
    records: Buffer.from(p.records ?? Buffer.alloc(0)).toString('hex'),
  }
}

describe('READ_COMMITTED on the Kafka fixture: ferrolog answers as Apache Kafka does', () => {
  it.each([0n, 100n, 213n, 260n, 264n, 265n, 268n, 269n, END])('fetch from offset %s', { timeout: 60_000 }, async (offset) => {
    const kafka = view(await fetchAt(kafkaPort, offset, 1))
    const ours = view(await fetchAt(ferrolog!.port, offset, 1))
    expect(ours).toEqual(kafka)
    expect(ours.lastStableOffset).toBe(END)
    if (offset >= 264n && offset <= 268n) expect(ours.abortedTransactions).toEqual([{ producerId: 5n, firstOffset: 265n }])
  })

  it('a small READ_COMMITTED fetch bounds its aborted transactions by the offset index, as Kafka does', { timeout: 60_000 }, async () => {
    for (const maxBytes of [100, 1100, 2000]) {
      expect(view(await fetchAt(ferrolog!.port, 213n, 1, maxBytes))).toEqual(view(await fetchAt(kafkaPort, 213n, 1, maxBytes)))
    }
  })

  it('READ_UNCOMMITTED answers no aborted transactions, as Kafka does', { timeout: 60_000 }, async () => {
    const kafka = view(await fetchAt(kafkaPort, 264n, 0))
    const ours = view(await fetchAt(ferrolog!.port, 264n, 0))
    expect(ours).toEqual(kafka)
    expect(ours.abortedTransactions).toBeNull()
  })

  it('kafkajs (READ_COMMITTED) reads exactly the committed records from ferrolog', { timeout: 60_000 }, async () => {
    const want = expected.records.filter((r) => r.control === null && r.transaction !== 'aborted')
    expect(want).toHaveLength(272 - 3)
    const kafka = new Kafka({ clientId: 'read-committed', brokers: [`127.0.0.1:${ferrolog!.port}`], logLevel: logLevel.NOTHING })
    const consumer = kafka.consumer({ groupId: 'read-committed-group', readUncommitted: false })
    const seen: Array<{ offset: number; key: string | null; value: string | null }> = []
    await consumer.connect()
    try {
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
      let resolve!: () => void
      const done = new Promise<void>((r) => (resolve = r))
      await consumer.run({
        eachMessage: async ({ message }) => {
          seen.push({ offset: Number(message.offset), key: message.key?.toString('utf8') ?? null, value: message.value?.toString('utf8') ?? null })
          if (Number(message.offset) === 273) resolve()
        },
      })
      await done
    } finally {
      await consumer.disconnect()
    }
    expect(seen.map((r) => r.offset)).toEqual(want.map((r) => r.offset))
    expect(seen.map((r) => r.key)).toEqual(want.map((r) => r.key))
  })
})
