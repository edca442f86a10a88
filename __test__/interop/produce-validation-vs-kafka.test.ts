/**
 * What a leader refuses of a producer's batch, ferrolog against Apache Kafka 4.4 in the same test
 * (tools/kafka/run-broker.sh), from the same bytes (issue #24 items 1 and 2):
 *
 * - max.message.bytes bounds a batch as it is sent, not the records inside it: a gzip batch of
 *   three records of 1 MiB of zeros (a few KiB) is appended by both, and read back by kafkajs,
 *   Kafka's Java consumer and ferrolog's own Consumer.
 * - Per-record errors (KIP-467): 100 records in one batch to a compacted topic, 10 without a key,
 *   are refused INVALID_RECORD with `record_errors` naming the 10 and Kafka's `error_message`
 *   (the raw Produce answer, equal on both); Kafka's Java producer then fails those 10 with
 *   InvalidRecordException and the other 90 as part of a batch with invalid records. Timestamps
 *   outside message.timestamp.before/after.max.ms are INVALID_TIMESTAMP naming each record.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Kafka, logLevel } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { produceCodec, type PartitionProduceResponse } from '../../ts/protocol/apis/produce.js'
import type { ProducerRecord } from '../../ts/protocol/record-types.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, kafkaBrokerPort, KafkaTool, kafkaToolOk, runKafkaBroker, runKafkaTool, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { runJava } from '../helpers/java.js'

const KAFKA = join(__dirname, '../../tools/kafka')
const PRODUCE_VERSION = 11
const LARGE = 'large-records'
const COMPACTED = 'compacted'
const TIMESTAMPS = 'timestamps'
const MIB = 1024 * 1024

let kafkaDir: string
let ferrologDir: string
let ferrolog: Broker | undefined
const ports: Record<'kafka' | 'ferrolog', number> = { kafka: 0, ferrolog: 0 }
const BROKERS = ['kafka', 'ferrolog'] as const

async function createTopic(port: number, name: string, configs: Record<string, string> = {}): Promise<void> {
  const args = Object.entries(configs).flatMap(([k, v]) => ['--config', `${k}=${v}`])
  await kafkaToolOk(port, KafkaTool.TOPICS, ['--create', '--topic', name, '--partitions', '1', '--replication-factor', '1', ...args])
}

/** UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER: a topic just created whose leader is not known yet. */
const NOT_READY = new Set([3, 6])

/**
 * One raw Produce (v11, acks=-1) of `records` to partition 0 of `topic`: the partition's answer,
 * asked again (as a client would) while the topic just created has no leader yet.
 */
async function produce(port: number, topic: string, records: Buffer): Promise<PartitionProduceResponse> {
  const wire = new KafkaWire(await connectTo(port), 'produce-validation')
  try {
    for (let attempt = 0; ; attempt++) {
      const res = await wire.send(produceCodec, PRODUCE_VERSION, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] })
      const answer = res.responses[0].partitionResponses[0]
      if (!NOT_READY.has(answer.errorCode) || attempt === 100) return answer
      await sleep(100)
    }
  } finally {
    wire.close()
  }
}

beforeAll(async () => {
  fetchKafkaJars()
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-produce-validation-'))
  ports.kafka = kafkaBrokerPort(await runKafkaBroker(kafkaDir))
  // Its own directory: the helpers' tempDir is removed after each test.
  ferrologDir = mkdtempSync(join(tmpdir(), 'ferrolog-produce-validation-'))
  ferrolog = await startBroker({ dataDir: ferrologDir })
  ports.ferrolog = ferrolog.port
  for (const b of BROKERS) {
    await createTopic(ports[b], LARGE)
    await createTopic(ports[b], COMPACTED, { 'cleanup.policy': 'compact' })
    await createTopic(ports[b], TIMESTAMPS, { 'message.timestamp.before.max.ms': '60000', 'message.timestamp.after.max.ms': '60000' })
  }
}, 300_000)

afterAll(async () => {
  try {
    await ferrolog?.stop()
  } finally {
    if (ferrologDir) rmSync(ferrologDir, { recursive: true, force: true })
    if (kafkaDir) {
      stopKafkaBroker(kafkaDir)
      rmSync(kafkaDir, { recursive: true, force: true })
    }
  }
}, 120_000)

describe('a producer batch judged by ferrolog as by Apache Kafka', () => {
  it('appends a gzip batch of three 1 MiB records of zeros, which kafkajs, the Java consumer and ferrolog read back', async () => {
    const batch = buildBatch(
      Array.from({ length: 3 }, (_, i) => ({ key: `k${i}`, value: Buffer.alloc(MIB) })),
      { compression: 'gzip' },
    )
    expect(batch.length).toBeLessThan(16 * 1024)
    for (const b of BROKERS) {
      const r = await produce(ports[b], LARGE, batch)
      expect({ broker: b, errorCode: r.errorCode, baseOffset: r.baseOffset }).toEqual({ broker: b, errorCode: 0, baseOffset: 0n })
    }
    for (const b of BROKERS) {
      // kafkajs
      const kafka = new Kafka({ clientId: 'large-records', brokers: [`127.0.0.1:${ports[b]}`], logLevel: logLevel.NOTHING })
      const consumer = kafka.consumer({ groupId: `large-${b}`, maxWaitTimeInMs: 200 })
      await consumer.connect()
      const sizes: number[] = []
      try {
        await consumer.subscribe({ topic: LARGE, fromBeginning: true })
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`kafkajs read ${sizes.length} records from ${b}`)), 30_000)
          void consumer.run({
            eachMessage: async ({ message }) => {
              sizes.push(message.value!.length)
              if (sizes.length === 3) {
                clearTimeout(timer)
                resolve()
              }
            },
          })
        })
      } finally {
        await consumer.disconnect()
      }
      expect(sizes, `kafkajs from ${b}`).toEqual([MIB, MIB, MIB])
      // Kafka's Java consumer (kafka-console-consumer), the keys only.
      const java = await runKafkaTool(ports[b], 'org.apache.kafka.tools.consumer.ConsoleConsumer', [
        '--topic',
        LARGE,
        '--from-beginning',
        '--max-messages',
        '3',
        '--timeout-ms',
        '30000',
        '--formatter-property',
        'print.key=true',
        '--formatter-property',
        'print.value=false',
      ])
      expect(java.stdout.trim().split('\n'), `the Java consumer from ${b}: ${java.stderr}`).toEqual(['k0', 'k1', 'k2'])
      // ferrolog's own Consumer.
      const ours = new Consumer({ bootstrapServers: `127.0.0.1:${ports[b]}`, clientId: 'large-records' })
      try {
        ours.assign([{ topic: LARGE, partition: 0, offset: 0n }])
        const got: number[] = []
        for (let i = 0; i < 50 && got.length < 3; i++) for (const batch of await ours.poll(1000)) for (const r of batch.records) got.push(r.value!.length)
        expect(got, `ferrolog's Consumer from ${b}`).toEqual([MIB, MIB, MIB])
      } finally {
        await ours.close()
      }
    }
  }, 180_000)

  it('refuses 10 keyless records of 100 to a compacted topic naming each (record_errors, error_message), the same bytes answered alike', async () => {
    const records: ProducerRecord[] = Array.from({ length: 100 }, (_, i) => ({ key: i % 10 === 3 ? null : `k${i}`, value: `v${i}` }))
    const answers: Record<string, PartitionProduceResponse> = {}
    for (const compression of ['none', 'lz4'] as const) {
      const batch = buildBatch(records, { compression })
      for (const b of BROKERS) answers[b] = await produce(ports[b], COMPACTED, batch)
      const kafka = answers.kafka
      expect(kafka.errorCode).toBe(87) // INVALID_RECORD
      expect(kafka.recordErrors.map((e) => e.batchIndex)).toEqual([3, 13, 23, 33, 43, 53, 63, 73, 83, 93])
      expect(kafka.recordErrors[0].batchIndexErrorMessage).toBe(`Compacted topic cannot accept message without key in topic partition ${COMPACTED}-0`)
      expect(kafka.errorMessage).toMatch(/^One or more records have been rejected due to 10 record errors in total/)
      const pick = (r: PartitionProduceResponse) => ({ errorCode: r.errorCode, baseOffset: r.baseOffset, recordErrors: r.recordErrors, errorMessage: r.errorMessage })
      expect(pick(answers.ferrolog), compression).toEqual(pick(kafka))
    }
  }, 60_000)

  it("Kafka's Java producer fails the 10 keyless records with InvalidRecordException and the other 90 as part of the batch, on both", async () => {
    const outcomes: Record<string, string[]> = {}
    for (const b of BROKERS) {
      const r = await runJava(join(KAFKA, 'RecordErrorsProducer.java'), [`127.0.0.1:${ports[b]}`, COMPACTED])
      expect(r.status, r.stderr).toBe(0)
      outcomes[b] = r.stdout.trim().split('\n')
    }
    const kafka = outcomes.kafka
    expect(kafka).toHaveLength(100)
    const invalid = kafka.filter((l) => / InvalidRecordException /.test(l))
    expect(invalid.map((l) => Number(l.split(' ')[0]))).toEqual([3, 13, 23, 33, 43, 53, 63, 73, 83, 93])
    expect(kafka.filter((l) => / KafkaException Failed to append record because it was part of a batch which had one more more invalid records/.test(l))).toHaveLength(90)
    expect(outcomes.ferrolog).toEqual(kafka)
  }, 300_000)

  it('refuses records whose timestamps are outside message.timestamp.before/after.max.ms with INVALID_TIMESTAMP naming each', async () => {
    const now = Date.now()
    const batch = buildBatch(
      [now, now - 3_600_000, now + 3_600_000, now - 1000, -1].map((timestamp, i) => ({ key: `k${i}`, value: 'v', timestamp })),
      { nowMs: now },
    )
    const answers: Record<string, PartitionProduceResponse> = {}
    for (const b of BROKERS) answers[b] = await produce(ports[b], TIMESTAMPS, batch)
    // The window's bounds are each broker's clock: compared without them.
    const pick = (r: PartitionProduceResponse) => ({
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      recordErrors: r.recordErrors.map((e) => ({ batchIndex: e.batchIndex, message: e.batchIndexErrorMessage?.replace(/\[\d+, \d+\]/, '[LOW, HIGH]') })),
    })
    expect(pick(answers.kafka)).toEqual({
      errorCode: 32, // INVALID_TIMESTAMP
      errorMessage: 'One or more records have been rejected due to invalid timestamp',
      recordErrors: [
        { batchIndex: 1, message: `Timestamp ${now - 3_600_000} of message with offset 1 is out of range. The timestamp should be within [LOW, HIGH]` },
        { batchIndex: 2, message: `Timestamp ${now + 3_600_000} of message with offset 2 is out of range. The timestamp should be within [LOW, HIGH]` },
      ],
    })
    expect(pick(answers.ferrolog)).toEqual(pick(answers.kafka))
    // The records within the window (and -1) are appended on both.
    const ok = buildBatch([
      { key: 'k', value: 'v', timestamp: Date.now() - 1000 },
      { key: 'k', value: 'v', timestamp: -1 },
    ])
    for (const b of BROKERS) expect((await produce(ports[b], TIMESTAMPS, ok)).errorCode, b).toBe(0)
  }, 60_000)
})
