/**
 * producer.id.expiration.ms on ferrolog and on Apache Kafka 4.4, with the same outcomes: an
 * idempotent producer writes two batches and goes idle; once DescribeProducers no longer lists it
 * (expired by the periodic check, producer.id.expiration.check.interval.ms), its retries through
 * raw Produce requests with its fixed producer id, epoch and sequences:
 *
 * - the retry of its last batch: the producer is unknown, so the batch is accepted at its
 *   sequence (not 0) and appended again (KIP-360: no UNKNOWN_PRODUCER_ID, no duplicate check);
 * - the same retry again: now a duplicate of that append, answered with its offset;
 * - a gap: OUT_OF_ORDER_SEQUENCE_NUMBER; the next batch: appended.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { describeProducersCodec } from '../../ts/protocol/apis/describe-producers.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { createTopicOn } from '../helpers/broker-process.js'
import { kafkaBrokerPort, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'idem-expiry'
const EXPIRATION = { 'producer.id.expiration.ms': '2000', 'producer.id.expiration.check.interval.ms': '200' }

let broker: Broker | undefined
let kafkaDir: string | undefined
afterAll(async () => {
  await broker?.stop()
  if (kafkaDir) stopKafkaBroker(kafkaDir)
})

interface Outcome {
  describedBefore: Array<[bigint, number, number]>
  retryLast: [number, bigint]
  retryAgain: [number, bigint]
  gap: number
  next: [number, bigint]
}

async function produce(c: NetworkClient, batch: Buffer): Promise<[number, bigint]> {
  const r = await c.send(produceCodec, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: batch }] }] })
  const p = r.responses[0]!.partitionResponses[0]!
  return [p.errorCode, p.baseOffset]
}

async function producers(c: NetworkClient): Promise<Array<[bigint, number, number]>> {
  const r = await c.send(describeProducersCodec, 0, { topics: [{ name: TOPIC, partitionIndexes: [0] }] })
  const p = r.topics[0]!.partitions[0]!
  expect(p.errorCode).toBe(0)
  return p.activeProducers.map((s) => [s.producerId, s.producerEpoch, s.lastSequence])
}

const idempotent = (seq: number, n: number) =>
  buildBatch(
    Array.from({ length: n }, (_, i) => ({ value: `p-${seq + i}`, timestamp: Date.now() })),
    { producerId: 4243n, producerEpoch: 0, baseSequence: seq },
  )

async function scenario(port: number): Promise<Outcome> {
  await createTopicOn(port, TOPIC, 1, {})
  const c = await NetworkClient.connect(`127.0.0.1:${port}`)
  try {
    // Kafka elects the new partition's leader after CreateTopics answers: until then the first
    // produce gets NOT_LEADER_OR_FOLLOWER and appends nothing; it is sent again, as a client does.
    let first = await produce(c, idempotent(0, 2))
    for (let i = 0; i < 50 && first[0] === ErrorCode.NOT_LEADER_OR_FOLLOWER; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      first = await produce(c, idempotent(0, 2))
    }
    expect(first).toEqual([0, 0n])
    expect(await produce(c, idempotent(2, 3))).toEqual([0, 2n])
    const describedBefore = await producers(c)
    // Idle until the periodic check expires it (a condition, not a timed assertion).
    while ((await producers(c)).length > 0) await new Promise((r) => setTimeout(r, 100))
    const retryLast = await produce(c, idempotent(2, 3))
    const retryAgain = await produce(c, idempotent(2, 3))
    const gap = (await produce(c, idempotent(9, 1)))[0]
    const next = await produce(c, idempotent(5, 1))
    return { describedBefore, retryLast, retryAgain, gap, next }
  } finally {
    await c.close()
  }
}

describe('producer.id.expiration.ms forgets an idle producer', () => {
  const outcomes: Outcome[] = []

  it('ferrolog', async () => {
    broker = await startBroker({ props: EXPIRATION })
    outcomes.push(await scenario(broker.port))
    await broker.stop()
    broker = undefined
  }, 120_000)

  it('Apache Kafka 4.4, with the same outcomes', async () => {
    const dir = tempDir('kafka-producer-expiration-')
    kafkaDir = dir
    const port = kafkaBrokerPort(
      await runKafkaBroker(
        dir,
        Object.entries(EXPIRATION).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
      ),
    )
    outcomes.push(await scenario(port))
    stopKafkaBroker(dir)
    kafkaDir = undefined
    const [ferrolog, kafka] = outcomes
    expect(kafka).toEqual({
      describedBefore: [[4243n, 0, 4]],
      retryLast: [0, 5n],
      retryAgain: [0, 5n],
      gap: 45, // OUT_OF_ORDER_SEQUENCE_NUMBER
      next: [0, 8n],
    })
    expect(ferrolog).toEqual(kafka)
  }, 300_000)
})
