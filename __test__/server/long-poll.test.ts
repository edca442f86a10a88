/**
 * The long poll over a socket (docs/fetch.md "Long polls"): fetches that find less than minBytes park in
 * the fetch purgatory and are answered when a produce brings enough bytes, or when maxWaitMs
 * passes. Every request is written by this test (header + codec, size-prefixed).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { fetchCodec, type FetchRequest, type FetchResponse, type FetchTopic } from '../../ts/protocol/apis/fetch.js'
import { produceCodec, type ProduceResponse } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { decodeBatches } from '../../ts/protocol/records.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

const TOPIC = 'long-poll'
const FETCH_VERSION = 12
const PRODUCE_VERSION = 9

/** One connection that sends fetch and produce requests and reads their responses in order. */
class Wire extends KafkaWire {
  static async open(port: number): Promise<Wire> {
    return new Wire(await connectTo(port), 'long-poll-test')
  }

  fetch(request: Partial<FetchRequest> & Pick<FetchRequest, 'topics'>): Promise<FetchResponse> {
    return this.send(fetchCodec, FETCH_VERSION, fetchRequest(request))
  }

  produce(partition: number, ...values: string[]): Promise<ProduceResponse> {
    return this.send(produceCodec, PRODUCE_VERSION, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: TOPIC, partitionData: [{ index: partition, records: buildBatch(values.map((value) => ({ value }))) }] }],
    })
  }
}

let broker: Broker | undefined
const wires: Wire[] = []
afterEach(async () => {
  for (const w of wires.splice(0)) w.close()
  await broker?.stop()
  broker = undefined
})

async function setup(partitions = 2): Promise<{ b: Broker; consumer: Wire; producer: Wire }> {
  broker = await startBroker()
  await broker.createTopic(TOPIC, partitions, {})
  const consumer = await Wire.open(broker.port)
  const producer = await Wire.open(broker.port)
  wires.push(consumer, producer)
  return { b: broker, consumer, producer }
}

function topics(partitions: Array<[number, bigint]>): FetchTopic[] {
  return [
    {
      topic: TOPIC,
      topicId: ZERO_UUID,
      partitions: partitions.map(([partition, fetchOffset]) => ({ partition, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1024 * 1024 })),
    },
  ]
}

/** [partition, errorCode, values] of every partition answered, in order. */
function summary(res: FetchResponse): Array<[number, number, string[]]> {
  return res.responses.flatMap((t) =>
    t.partitions.map((p): [number, number, string[]] => [
      p.partitionIndex,
      p.errorCode,
      p.records && p.records.length > 0 ? decodeBatches(p.records).flatMap((b) => b.records.map((r) => r.value!.toString())) : [],
    ]),
  )
}

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const parked = (b: Broker) => b.replicaManager.delayedFetchStats().parked

/** A fetch in flight, and whether it was answered yet. */
function inFlight(promise: Promise<FetchResponse>) {
  const state = { answered: false, at: 0 }
  const answer = promise.then((res) => {
    state.answered = true
    state.at = Date.now()
    return res
  })
  return { state, answer }
}

// A fetch that waits for its 30 s expiry instead of being woken fails on time, not after 30 s.
describe('long poll (DelayedFetch) over the wire', { timeout: 10_000 }, () => {
  it('a fetch waiting 30 s on an empty partition is answered right after a produce', async () => {
    const { b, consumer, producer } = await setup()
    const start = Date.now()
    const fetch = inFlight(consumer.fetch({ maxWaitMs: 30_000, minBytes: 1, topics: topics([[0, 0n]]) }))
    await until(() => parked(b) === 1, 'the fetch to park')
    expect(fetch.state.answered).toBe(false)

    const produced = await producer.produce(0, 'a')
    expect(produced.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.NONE)
    const res = await fetch.answer
    expect(Date.now() - start).toBeLessThan(5000)
    expect(summary(res)).toEqual([[0, 0, ['a']]])
    expect(b.replicaManager.delayedFetchStats()).toMatchObject({ parked: 0, parkedTotal: 1, completed: 1, expired: 0 })
  })

  it('a produce to another partition does not wake it', async () => {
    const { b, consumer, producer } = await setup()
    const start = Date.now()
    const fetch = inFlight(consumer.fetch({ maxWaitMs: 30_000, minBytes: 1, topics: topics([[0, 0n]]) }))
    await until(() => parked(b) === 1, 'the fetch to park')
    await producer.produce(1, 'elsewhere')
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(fetch.state.answered).toBe(false)
    await producer.produce(0, 'here')
    expect(summary(await fetch.answer)).toEqual([[0, 0, ['here']]])
    expect(Date.now() - start).toBeLessThan(5000)
  })

  it('with minBytes above one produce it waits for the second', async () => {
    const { b, consumer, producer } = await setup()
    const oneBatch = buildBatch([{ value: 'first' }]).length
    const start = Date.now()
    const fetch = inFlight(consumer.fetch({ maxWaitMs: 30_000, minBytes: oneBatch + 1, topics: topics([[0, 0n]]) }))
    await until(() => parked(b) === 1, 'the fetch to park')
    await producer.produce(0, 'first')
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(fetch.state.answered).toBe(false)
    expect(parked(b)).toBe(1)
    await producer.produce(0, 'second')
    const res = await fetch.answer
    expect(summary(res)).toEqual([[0, 0, ['first', 'second']]])
    expect(Date.now() - start).toBeLessThan(5000)
  })

  it('with no produce it expires after maxWaitMs (500) with empty records', async () => {
    const { b, consumer } = await setup()
    const start = Date.now()
    const res = await consumer.fetch({
      maxWaitMs: 500,
      minBytes: 1,
      topics: topics([
        [0, 0n],
        [1, 0n],
      ]),
    })
    const elapsed = Date.now() - start
    expect(elapsed).toBeGreaterThanOrEqual(450)
    expect(elapsed).toBeLessThan(3000)
    expect(summary(res)).toEqual([
      [0, 0, []],
      [1, 0, []],
    ])
    expect(b.replicaManager.delayedFetchStats()).toMatchObject({ parked: 0, expired: 1, consumerExpired: 1, completed: 0 })
  })

  it('is answered at once when data is there, when maxWaitMs is 0, or when a partition errs', async () => {
    const { consumer, producer } = await setup()
    await producer.produce(0, 'a')
    const t0 = Date.now()
    expect(summary(await consumer.fetch({ maxWaitMs: 30_000, minBytes: 1, topics: topics([[0, 0n]]) }))).toEqual([[0, 0, ['a']]])
    expect(summary(await consumer.fetch({ maxWaitMs: 0, minBytes: 1, topics: topics([[1, 0n]]) }))).toEqual([[1, 0, []]])
    const unknown = await consumer.fetch({ maxWaitMs: 30_000, minBytes: 1, topics: [...topics([[1, 0n]]), { ...topics([[0, 0n]])[0], topic: 'nope' }] })
    expect(summary(unknown)).toEqual([
      [1, 0, []],
      [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []],
    ])
    const outOfRange = await consumer.fetch({ maxWaitMs: 30_000, minBytes: 1, topics: topics([[0, 9n]]) })
    expect(summary(outOfRange)).toEqual([[0, ErrorCode.OFFSET_OUT_OF_RANGE, []]])
    expect(Date.now() - t0).toBeLessThan(2000)
  })

  it('a client that disconnects while parked: its fetch is dropped and the broker goes on', async () => {
    const { b, consumer, producer } = await setup()
    void consumer
      .fetch({
        maxWaitMs: 30_000,
        minBytes: 1,
        topics: topics([
          [0, 0n],
          [1, 0n],
        ]),
      })
      .catch(() => {})
    await until(() => parked(b) === 1, 'the fetch to park')
    consumer.close()
    await until(() => parked(b) === 0, 'the fetch to be dropped')
    expect(b.replicaManager.delayedFetchStats()).toMatchObject({ parked: 0, dropped: 1, completed: 0, expired: 0 })
    expect(b.replicaManager.delayedFetchPurgatory.watched()).toBe(0)

    await producer.produce(0, 'after')
    const again = await Wire.open(b.port)
    wires.push(again)
    expect(summary(await again.fetch({ maxWaitMs: 30_000, minBytes: 1, topics: topics([[0, 0n]]) }))).toEqual([[0, 0, ['after']]])
    expect(b.replicaManager.delayedFetchStats().completed).toBe(0)
  })

  it('session fetches (epoch > 0) park and answer only what changed', async () => {
    const { b, consumer, producer } = await setup()
    const open = await consumer.fetch({
      sessionEpoch: 0,
      topics: topics([
        [0, 0n],
        [1, 0n],
      ]),
    })
    expect(open.sessionId).toBeGreaterThan(0)
    const sessionId = open.sessionId

    const fetch = inFlight(consumer.fetch({ sessionId, sessionEpoch: 1, maxWaitMs: 30_000, minBytes: 1, topics: [] }))
    await until(() => parked(b) === 1, 'the session fetch to park')
    await producer.produce(1, 'b')
    const res = await fetch.answer
    expect(res).toMatchObject({ errorCode: ErrorCode.NONE, sessionId })
    expect(summary(res)).toEqual([[1, 0, ['b']]])

    // The session goes on at the next epoch, with partition 1's new offset.
    const next = inFlight(consumer.fetch({ sessionId, sessionEpoch: 2, maxWaitMs: 30_000, minBytes: 1, topics: topics([[1, 1n]]) }))
    await until(() => parked(b) === 1, 'the next session fetch to park')
    await producer.produce(0, 'a')
    expect(summary(await next.answer)).toEqual([[0, 0, ['a']]])
  })

  it('a parked session fetch whose session moved on meanwhile answers INVALID_FETCH_SESSION_EPOCH', async () => {
    const { b, consumer, producer } = await setup()
    const { sessionId } = await consumer.fetch({ sessionEpoch: 0, topics: topics([[0, 0n]]) })
    const start = Date.now()
    const stale = inFlight(consumer.fetch({ sessionId, sessionEpoch: 1, maxWaitMs: 30_000, minBytes: 1, topics: [] }))
    await until(() => parked(b) === 1, 'the session fetch to park')
    // Another connection uses the session at its next epoch (answered at once).
    const other = await Wire.open(b.port)
    wires.push(other)
    expect((await other.fetch({ sessionId, sessionEpoch: 2, topics: [] })).errorCode).toBe(ErrorCode.NONE)
    await producer.produce(0, 'a')
    expect(await stale.answer).toMatchObject({ errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: 0, responses: [] })
    expect(Date.now() - start).toBeLessThan(5000)
  })

  it('DeleteRecords past a parked fetch offset wakes it with OFFSET_OUT_OF_RANGE', async () => {
    const { b, consumer, producer } = await setup()
    await producer.produce(0, 'a', 'b')
    const fetch = inFlight(consumer.fetch({ maxWaitMs: 30_000, minBytes: 1 << 20, topics: topics([[0, 1n]]) }))
    await until(() => parked(b) === 1, 'the fetch to park')
    expect(b.replicaManager.deleteRecords({ topic: TOPIC, partition: 0 }, 2n).errorCode).toBe(ErrorCode.NONE)
    expect(summary(await fetch.answer)).toEqual([[0, ErrorCode.OFFSET_OUT_OF_RANGE, []]])
  })

  it('a fetch offset inside a batch gets the whole batch, from its first record', async () => {
    const { consumer, producer } = await setup(1)
    await producer.produce(0, 'a', 'b', 'c', 'd', 'e')
    const res = await consumer.fetch({ maxWaitMs: 30_000, minBytes: 1, topics: topics([[0, 3n]]) })
    const records = res.responses[0].partitions[0].records!
    const [batch] = decodeBatches(records)
    expect(batch.baseOffset).toBe(0n)
    expect(batch.records.map((r) => [r.offset, r.value!.toString()])).toEqual([
      [0n, 'a'],
      [1n, 'b'],
      [2n, 'c'],
      [3n, 'd'],
      [4n, 'e'],
    ])
  })

  it('one batch larger than maxBytes and partitionMaxBytes still comes back whole (KIP-74)', async () => {
    const { consumer, producer } = await setup(2)
    const big = 'x'.repeat(20_000)
    await producer.produce(0, big)
    await producer.produce(1, 'small')
    const res = await consumer.fetch({
      maxWaitMs: 30_000,
      minBytes: 1,
      maxBytes: 1000,
      topics: [
        {
          ...topics([
            [0, 0n],
            [1, 0n],
          ])[0],
          partitions: topics([
            [0, 0n],
            [1, 0n],
          ])[0].partitions.map((p) => ({ ...p, partitionMaxBytes: 1000 })),
        },
      ],
    })
    const [first, second] = res.responses[0].partitions
    expect(decodeBatches(first.records!).flatMap((b) => b.records.map((r) => r.value!.toString()))).toEqual([big])
    // The response limit is used up by the first partition: the second returns nothing this time.
    expect(second.records === null || second.records.length === 0).toBe(true)
  })
})
