/**
 * kafkajs 2 and @platformatic/kafka 1.x as idempotent producers against the embedded broker with
 * injected faults (ts/server/fault-injector.ts): Produce answered NOT_LEADER_OR_FOLLOWER and
 * REQUEST_TIMED_OUT, a connection closed before a Produce is handled, and one closed after it is
 * handled (the record appended, the answer lost: the retry is a duplicate the broker drops by
 * sequence). Each client retries through all of them, and the partition holds every record once,
 * in order, in batches of one producer id with consecutive sequences. Their consumers read
 * every record once, in order, through Fetch answered NOT_LEADER_OR_FOLLOWER and
 * REQUEST_TIMED_OUT and a fetch's connection closed. ferrolog's own clients
 * through the same faults: __test__/server/fault-injection.test.ts.
 */
import { Consumer as PlatformaticConsumer, Producer as PlatformaticProducer, stringDeserializers, stringSerializers } from '@platformatic/kafka'
import { Kafka, logLevel, Partitioners } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import type { FaultHandle } from '../../ts/server/fault-injector.js'
import { partitionBatches, partitionValues, values } from '../helpers/fault-injection.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

/** The four faults, each on the next Produce requests to `topic` from `clientId`. */
function injectProduceFaults(b: Broker, topic: string, clientId: string): FaultHandle[] {
  return [
    b.inject({ name: 'not-leader', apiKey: 'Produce', topic, clientId, error: 'NOT_LEADER_OR_FOLLOWER', times: 2 }),
    b.inject({ name: 'timed-out', apiKey: 'Produce', topic, clientId, error: 'REQUEST_TIMED_OUT', times: 2 }),
    b.inject({ name: 'closed', apiKey: 'Produce', topic, clientId, close: 'before-handling', times: 1 }),
    b.inject({ name: 'answer-lost', apiKey: 'Produce', topic, clientId, close: 'after-handling', times: 1 }),
  ]
}

/** Fetch faults for a consumer: two NOT_LEADER_OR_FOLLOWER, two REQUEST_TIMED_OUT, one closed connection. */
function fetchFaults(b: Broker, topic: string, clientId: string): FaultHandle[] {
  return [
    b.inject({ name: 'fetch-not-leader', apiKey: 'Fetch', topic, clientId, error: 'NOT_LEADER_OR_FOLLOWER', times: 2 }),
    b.inject({ name: 'fetch-timed-out', apiKey: 'Fetch', topic, clientId, error: 'REQUEST_TIMED_OUT', times: 2 }),
    b.inject({ name: 'fetch-closed', apiKey: 'Fetch', topic, clientId, close: true, times: 1 }),
  ]
}

function expectOnceInOrder(b: Broker, topic: string, sent: string[]): void {
  expect(partitionValues(b, topic)).toEqual(sent)
  const batches = partitionBatches(b, topic)
  expect(new Set(batches.map((x) => x.producerId)).size).toBe(1)
  let next = 0
  for (const batch of batches) {
    expect(batch.baseSequence).toBe(next)
    next += batch.count
  }
  expect(next).toBe(sent.length)
}

describe('fault injection: other clients retry through it', () => {
  it('kafkajs idempotent producer: nothing lost or duplicated through NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT and closed connections', { timeout: 60_000 }, async () => {
    broker = await startBroker({ faultInjection: true })
    await broker.createTopic('kafkajs-faults', 1, {})
    const kafka = new Kafka({ clientId: 'kafkajs-faulty', brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING, retry: { initialRetryTime: 20, maxRetryTime: 200, retries: 15 } })
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    const sent = values('kafkajs', 8)
    let faults: FaultHandle[] = []
    try {
      await producer.send({ topic: 'kafkajs-faults', messages: [{ value: sent[0]!, partition: 0 }] })
      faults = injectProduceFaults(broker, 'kafkajs-faults', 'kafkajs-faulty')
      for (const value of sent.slice(1)) await producer.send({ topic: 'kafkajs-faults', messages: [{ value, partition: 0 }] })
    } finally {
      await producer.disconnect()
    }
    expect(faults.map((f) => f.hits)).toEqual([2, 2, 1, 1])
    expectOnceInOrder(broker, 'kafkajs-faults', sent)
  })

  it('@platformatic/kafka idempotent producer: nothing lost or duplicated through the same faults', { timeout: 60_000 }, async () => {
    broker = await startBroker({ faultInjection: true })
    await broker.createTopic('platformatic-faults', 1, {})
    const producer = new PlatformaticProducer({
      clientId: 'platformatic-faulty',
      bootstrapBrokers: [broker.bootstrapServers],
      serializers: stringSerializers,
      idempotent: true,
      acks: -1,
      timeout: 5_000,
      retries: 15,
      retryDelay: 20,
    })
    const sent = values('platformatic', 8)
    let faults: FaultHandle[] = []
    try {
      await producer.send({ messages: [{ topic: 'platformatic-faults', value: sent[0]!, partition: 0 }] })
      faults = injectProduceFaults(broker, 'platformatic-faults', 'platformatic-faulty')
      for (const value of sent.slice(1)) await producer.send({ messages: [{ topic: 'platformatic-faults', value, partition: 0 }] })
    } finally {
      await producer.close().catch(() => undefined)
    }
    expect(faults.map((f) => f.hits)).toEqual([2, 2, 1, 1])
    expectOnceInOrder(broker, 'platformatic-faults', sent)
  })

  it('kafkajs: a held answer goes out when released, and latency shows in the send', { timeout: 60_000 }, async () => {
    broker = await startBroker({ faultInjection: true })
    await broker.createTopic('kafkajs-held', 1, {})
    const kafka = new Kafka({ clientId: 'kafkajs-held', brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING })
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    try {
      await producer.send({ topic: 'kafkajs-held', messages: [{ value: 'a', partition: 0 }] })
      const hold = broker.inject({ apiKey: 'Produce', hold: true, times: 1 })
      let done = false
      const pending = producer.send({ topic: 'kafkajs-held', messages: [{ value: 'b', partition: 0 }] }).finally(() => (done = true))
      await hold.whenHit()
      await expect.poll(() => partitionValues(broker!, 'kafkajs-held')).toEqual(['a', 'b'])
      expect(done).toBe(false)
      hold.release()
      expect((await pending)[0]?.baseOffset).toBe('1')

      broker.inject({ apiKey: 'Produce', latencyMs: 300, times: 1 })
      const started = performance.now()
      await producer.send({ topic: 'kafkajs-held', messages: [{ value: 'c', partition: 0 }] })
      expect(performance.now() - started).toBeGreaterThanOrEqual(300)
    } finally {
      await producer.disconnect()
    }
    expectOnceInOrder(broker, 'kafkajs-held', ['a', 'b', 'c'])
  })

  it('kafkajs consumer: every record once, in order, through Fetch errors and a closed fetch', { timeout: 60_000 }, async () => {
    broker = await startBroker({ faultInjection: true })
    await broker.createTopic('kafkajs-read', 1, {})
    const sent = values('read', 20)
    const kafka = new Kafka({ clientId: 'kafkajs-reader', brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING, retry: { initialRetryTime: 20, maxRetryTime: 200, retries: 15 } })
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    await producer.send({ topic: 'kafkajs-read', messages: sent.map((value) => ({ value, partition: 0 })) })
    await producer.disconnect()
    const faults = fetchFaults(broker, 'kafkajs-read', 'kafkajs-reader')
    const consumer = kafka.consumer({ groupId: 'kafkajs-read-group', maxWaitTimeInMs: 100, retry: { initialRetryTime: 20, maxRetryTime: 200, retries: 15 } })
    const read: string[] = []
    try {
      await consumer.connect()
      await consumer.subscribe({ topic: 'kafkajs-read', fromBeginning: true })
      const all = new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            read.push(message.value!.toString())
            if (read.length === sent.length) resolve()
          },
        })
      })
      await all
    } finally {
      await consumer.disconnect()
    }
    expect(read).toEqual(sent)
    expect(faults.map((f) => f.hits)).toEqual([2, 2, 1])
  })

  it('@platformatic/kafka consumer: every record once, in order, through Fetch errors and a closed fetch', { timeout: 60_000 }, async () => {
    broker = await startBroker({ faultInjection: true })
    await broker.createTopic('platformatic-read', 1, {})
    const sent = values('read', 20)
    const producer = new PlatformaticProducer({ clientId: 'platformatic-writer', bootstrapBrokers: [broker.bootstrapServers], serializers: stringSerializers, idempotent: true, acks: -1 })
    try {
      await producer.send({ messages: sent.map((value) => ({ topic: 'platformatic-read', value, partition: 0 })) })
    } finally {
      await producer.close().catch(() => undefined)
    }
    const faults = fetchFaults(broker, 'platformatic-read', 'platformatic-reader')
    const consumer = new PlatformaticConsumer({
      clientId: 'platformatic-reader',
      groupId: 'platformatic-read-group',
      bootstrapBrokers: [broker.bootstrapServers],
      deserializers: stringDeserializers,
      maxWaitTime: 100,
      timeout: 5_000,
      retries: 15,
      retryDelay: 20,
    })
    const read: string[] = []
    try {
      const stream = await consumer.consume({ topics: ['platformatic-read'], mode: 'earliest', autocommit: false })
      try {
        for await (const message of stream) {
          read.push(String(message.value))
          if (read.length >= sent.length) break
        }
      } finally {
        await stream.close().catch(() => undefined)
      }
    } finally {
      await (consumer.close(true) as unknown as Promise<void>).catch(() => undefined)
    }
    expect(read).toEqual(sent)
    expect(faults.map((f) => f.hits)).toEqual([2, 2, 1])
  })
})
