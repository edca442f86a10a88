/**
 * A restart keeps the idempotence window, on ferrolog and on Apache Kafka 4.4 with the same
 * outcomes: a producer writes two batches, then ~37 MiB of other batches bury them (deeper than
 * the tail ferrolog scans; Kafka reads its `.snapshot`), a clean restart, and then the producer's
 * retries through raw Produce requests with its fixed producer id, epoch and sequences:
 *
 * - the retry of its last batch: NONE with the original base offset, nothing appended;
 * - the retry of the batch before: OUT_OF_ORDER_SEQUENCE_NUMBER (a snapshot holds a producer's
 *   last batch only, Kafka's too);
 * - a gap: OUT_OF_ORDER_SEQUENCE_NUMBER; the next batch: appended at the log end.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { listOffsetsCodec } from '../../ts/protocol/apis/list-offsets.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { createTopicOn } from '../helpers/broker-process.js'
import { kafkaBrokerPort, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'idem'
const FILLER = Array.from({ length: 1000 }, () => ({ value: Buffer.alloc(900, 'x') }))
const FILLER_BATCHES = 42

let broker: Broker | undefined
let kafkaDir: string | undefined
afterAll(async () => {
  await broker?.stop()
  if (kafkaDir) stopKafkaBroker(kafkaDir)
})

interface Outcome {
  retryLast: [number, bigint]
  retryEarlier: number
  gap: number
  next: [number, bigint]
  endBefore: bigint
  endAfter: bigint
}

async function produce(c: NetworkClient, batch: Buffer): Promise<[number, bigint]> {
  const r = await c.send(produceCodec, 9, { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: batch }] }] })
  const p = r.responses[0]!.partitionResponses[0]!
  return [p.errorCode, p.baseOffset]
}

async function logEnd(c: NetworkClient): Promise<bigint> {
  const r = await c.send(listOffsetsCodec, 7, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
  })
  return r.topics[0]!.partitions[0]!.offset
}

const idempotent = (seq: number, n: number) =>
  buildBatch(
    Array.from({ length: n }, (_, i) => ({ value: `p-${seq + i}` })),
    { producerId: 4242n, producerEpoch: 0, baseSequence: seq },
  )

async function scenario(port: number, restart: () => Promise<number>): Promise<Outcome> {
  await createTopicOn(port, TOPIC, 1, { 'segment.bytes': String(1024 * 1024) })
  let c = await NetworkClient.connect(`127.0.0.1:${port}`)
  expect(await produce(c, idempotent(0, 2))).toEqual([0, 0n])
  expect(await produce(c, idempotent(2, 3))).toEqual([0, 2n])
  for (let i = 0; i < FILLER_BATCHES; i++) expect((await produce(c, buildBatch(FILLER)))[0]).toBe(0)
  const endBefore = await logEnd(c)
  await c.close()
  c = await NetworkClient.connect(`127.0.0.1:${await restart()}`)
  try {
    const retryLast = await produce(c, idempotent(2, 3))
    const retryEarlier = (await produce(c, idempotent(0, 2)))[0]
    const gap = (await produce(c, idempotent(9, 1)))[0]
    const endAfter = await logEnd(c)
    const next = await produce(c, idempotent(5, 1))
    return { retryLast, retryEarlier, gap, next, endBefore, endAfter }
  } finally {
    await c.close()
  }
}

describe('a restart keeps the idempotence window', () => {
  const outcomes: Outcome[] = []

  it('ferrolog', async () => {
    const dataDir = tempDir()
    broker = await startBroker({ dataDir })
    outcomes.push(
      await scenario(broker.port, async () => {
        await broker!.stop()
        broker = await startBroker({ dataDir })
        return broker.port
      }),
    )
    await broker.stop()
    broker = undefined
  }, 300_000)

  it('Apache Kafka 4.4, with the same outcomes', async () => {
    const dir = tempDir('kafka-producer-state-')
    kafkaDir = dir
    const first = kafkaBrokerPort(await runKafkaBroker(dir))
    outcomes.push(
      await scenario(first, async () => {
        stopKafkaBroker(dir)
        return kafkaBrokerPort(await runKafkaBroker(dir, ['--port', String(first)]))
      }),
    )
    stopKafkaBroker(dir)
    kafkaDir = undefined
    const [ferrolog, kafka] = outcomes
    expect(kafka).toEqual({
      retryLast: [0, 2n],
      retryEarlier: 45, // OUT_OF_ORDER_SEQUENCE_NUMBER
      gap: 45,
      next: [0, kafka!.endBefore],
      endBefore: kafka!.endBefore,
      endAfter: kafka!.endBefore,
    })
    expect(ferrolog).toEqual(kafka)
  }, 300_000)
})
