/**
 * DeleteRecords past an idempotent producer's last batch, on ferrolog and on Apache Kafka 4.4,
 * with the same outcomes. Kafka's ProducerStateManager deletes the snapshots below the new log
 * start offset but keeps the producers in memory (KIP-360: only producer.id.expiration.ms
 * forgets an idle producer), so after the deletion:
 *
 * - DescribeProducers still lists the producer;
 * - the retry of its last batch is a duplicate, answered with its original (now deleted) offset;
 * - a gap: OUT_OF_ORDER_SEQUENCE_NUMBER; the next batch: appended at the log end.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { deleteRecordsCodec } from '../../ts/protocol/apis/delete-records.js'
import { describeProducersCodec } from '../../ts/protocol/apis/describe-producers.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { createTopicOn } from '../helpers/broker-process.js'
import { kafkaBrokerPort, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'idem-delete-records'

let broker: Broker | undefined
let kafkaDir: string | undefined
afterAll(async () => {
  await broker?.stop()
  if (kafkaDir) stopKafkaBroker(kafkaDir)
})

interface Outcome {
  lowWatermark: [number, bigint]
  described: Array<[bigint, number, number]>
  retryLast: [number, bigint]
  gap: number
  next: [number, bigint]
}

async function produce(c: NetworkClient, batch: Buffer): Promise<[number, bigint]> {
  const r = await c.send(produceCodec, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: batch }] }] })
  const p = r.responses[0]!.partitionResponses[0]!
  return [p.errorCode, p.baseOffset]
}

const idempotent = (producerId: bigint, seq: number, n: number) =>
  buildBatch(
    Array.from({ length: n }, (_, i) => ({ value: `p-${seq + i}` })),
    { producerId, producerEpoch: 0, baseSequence: seq },
  )

async function scenario(port: number): Promise<Outcome> {
  await createTopicOn(port, TOPIC, 1, {})
  const c = await NetworkClient.connect(`127.0.0.1:${port}`)
  try {
    // The new partition's leader may not serve yet (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION): nothing was appended then.
    let first = await produce(c, idempotent(4244n, 0, 2))
    while (first[0] === 6 || first[0] === 3) {
      await new Promise((r) => setTimeout(r, 100))
      first = await produce(c, idempotent(4244n, 0, 2))
    }
    expect(first).toEqual([0, 0n])
    expect(await produce(c, idempotent(4244n, 2, 3))).toEqual([0, 2n])
    // Another producer's batch after it, so that the deletion can pass the first one's last batch.
    expect(await produce(c, idempotent(4245n, 0, 1))).toEqual([0, 5n])
    const deleted = await c.send(deleteRecordsCodec, 2, { timeoutMs: 30_000, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset: 6n }] }] })
    const d = deleted.topics[0]!.partitions[0]!
    const described = await c.send(describeProducersCodec, 0, { topics: [{ name: TOPIC, partitionIndexes: [0] }] })
    const retryLast = await produce(c, idempotent(4244n, 2, 3))
    const gap = (await produce(c, idempotent(4244n, 9, 1)))[0]
    const next = await produce(c, idempotent(4244n, 5, 1))
    return {
      lowWatermark: [d.errorCode, d.lowWatermark],
      described: described.topics[0]!.partitions[0]!.activeProducers.map((s) => [s.producerId, s.producerEpoch, s.lastSequence] as [bigint, number, number]).sort((a, b) => (a[0] < b[0] ? -1 : 1)),
      retryLast,
      gap,
      next,
    }
  } finally {
    await c.close()
  }
}

describe('DeleteRecords keeps the producers, as Kafka', () => {
  const outcomes: Outcome[] = []

  it('ferrolog', async () => {
    broker = await startBroker({})
    outcomes.push(await scenario(broker.port))
    await broker.stop()
    broker = undefined
  }, 120_000)

  it('Apache Kafka 4.4, with the same outcomes', async () => {
    const dir = tempDir('kafka-producer-delete-records-')
    kafkaDir = dir
    const port = kafkaBrokerPort(await runKafkaBroker(dir))
    outcomes.push(await scenario(port))
    stopKafkaBroker(dir)
    kafkaDir = undefined
    const [ferrolog, kafka] = outcomes
    expect(kafka).toEqual({
      lowWatermark: [0, 6n],
      described: [
        [4244n, 0, 4],
        [4245n, 0, 0],
      ],
      retryLast: [0, 2n],
      gap: 45, // OUT_OF_ORDER_SEQUENCE_NUMBER
      next: [0, 6n],
    })
    expect(ferrolog).toEqual(kafka)
  }, 300_000)
})
