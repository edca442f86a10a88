/**
 * kafkajs 2 (the real client) against a ferrolog broker started by the test: a producer, a
 * consumer group of two members that share the partitions and rebalance when one leaves, and a
 * broker restart after which a new member of the group resumes from the committed offsets; the
 * broker's default initial rebalance delay; a member removed when its session expires.
 */
import { Kafka, logLevel, Partitioners, type Consumer, type Producer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'events'
const GROUP = 'kafkajs-group'
const PARTITIONS = 4
/** A new group starts at once in tests; the broker's own default is Kafka's 3000 ms. */
const PROPS = { 'group.initial.rebalance.delay.ms': '0' }

let broker: Broker | undefined
const clients: Array<Producer | Consumer> = []

afterEach(async () => {
  for (const client of clients.splice(0)) await client.disconnect().catch(() => undefined)
  await broker?.stop()
  broker = undefined
})

function client(port: number): Kafka {
  return new Kafka({ clientId: 'ferrolog-test', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 1000 } })
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

interface Received {
  member: string
  partition: number
  offset: string
  value: string
}

async function startConsumer(kafka: Kafka, name: string, received: Received[], joins: string[]): Promise<Consumer> {
  const consumer = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000, rebalanceTimeout: 10_000, heartbeatInterval: 300, maxWaitTimeInMs: 100 })
  clients.push(consumer)
  consumer.on(consumer.events.GROUP_JOIN, () => joins.push(name))
  await consumer.connect()
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      received.push({ member: name, partition, offset: message.offset, value: message.value!.toString() })
    },
  })
  return consumer
}

async function produce(producer: Producer, from: number, count: number): Promise<void> {
  const messages = Array.from({ length: count }, (_, i) => ({ key: `k${from + i}`, value: `m${from + i}` }))
  for (let i = 0; i < messages.length; i += 25) await producer.send({ topic: TOPIC, messages: messages.slice(i, i + 25) })
}

const values = (received: Received[]) => received.map((r) => r.value).sort()
const expected = (from: number, count: number) => Array.from({ length: count }, (_, i) => `m${from + i}`).sort()

describe('kafkajs', () => {
  it('shares partitions in a group, rebalances when a member leaves, and resumes from committed offsets after a restart', async () => {
    const dataDir = tempDir('ferrolog-kafkajs-')
    broker = await startBroker({ dataDir, props: PROPS })
    await broker.createTopic(TOPIC, PARTITIONS, {})
    let kafka = client(broker.port)
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
    clients.push(producer)
    await producer.connect()

    // Two members share the partitions.
    const received: Received[] = []
    const joins: string[] = []
    const a = await startConsumer(kafka, 'a', received, joins)
    const b = await startConsumer(kafka, 'b', received, joins)
    await waitFor('both members in one generation', () => {
      const group = broker!.groupCoordinator.describeGroup(GROUP)
      return group?.state === 'Stable' && group.members.length === 2
    })
    await produce(producer, 0, 200)
    await waitFor('the first 200 messages', () => received.length >= 200)
    expect(new Set(received.map((r) => r.member))).toEqual(new Set(['a', 'b']))

    // b leaves: a takes every partition and consumes what follows.
    await b.disconnect()
    await waitFor('a alone in the group', () => {
      const group = broker!.groupCoordinator.describeGroup(GROUP)
      return group?.state === 'Stable' && group.members.length === 1
    })
    await produce(producer, 200, 100)
    await waitFor('300 messages', () => received.length >= 300)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(values(received)).toEqual(expected(0, 300)) // each exactly once
    expect(received.slice(200).every((r) => r.member === 'a')).toBe(true)
    expect(joins.filter((j) => j === 'a').length).toBeGreaterThanOrEqual(2) // a rejoined
    await a.disconnect()
    expect(broker.groupCoordinator.describeGroup(GROUP)?.state).toBe('Empty')

    // Messages produced while nobody consumes, then a restart on the same data dir.
    await produce(producer, 300, 50)
    await producer.disconnect()
    await broker.stop()
    broker = await startBroker({ dataDir, props: PROPS })
    let committed = 0n
    for (let p = 0; p < PARTITIONS; p++) committed += broker.groupCoordinator.offsets.get(GROUP, TOPIC, p)?.offset ?? 0n
    expect(committed).toBe(300n)

    // A new member of the group resumes where the group left off: only the 50 new messages.
    kafka = client(broker.port)
    const resumed: Received[] = []
    await startConsumer(kafka, 'c', resumed, [])
    await waitFor('the 50 uncommitted messages', () => resumed.length >= 50)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(values(resumed)).toEqual(expected(300, 50))
  })

  it("joins a new group with the broker's default group.initial.rebalance.delay.ms (Kafka's 3000 ms)", async () => {
    broker = await startBroker()
    expect(broker.config.groupInitialRebalanceDelayMs).toBe(3000)
    await broker.createTopic(TOPIC, 1, {})
    const kafka = client(broker.port)
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
    clients.push(producer)
    await producer.connect()
    await produce(producer, 0, 10)
    const received: Received[] = []
    const started = Date.now()
    await startConsumer(kafka, 'a', received, [])
    await waitFor('10 messages', () => received.length >= 10)
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900)
    expect(values(received)).toEqual(expected(0, 10))
  })

  it('removes a member whose session expires (it stops heartbeating) and gives its partitions to the others', async () => {
    broker = await startBroker({ props: { ...PROPS, 'group.min.session.timeout.ms': '1000' } })
    await broker.createTopic('slow', 2, {})
    const kafka = client(broker.port)
    const consumer = (name: string, onMessage: (value: string) => Promise<void>) => {
      const c = kafka.consumer({ groupId: 'session-group', sessionTimeout: 2000, rebalanceTimeout: 5000, heartbeatInterval: 200, maxWaitTimeInMs: 100 })
      clients.push(c)
      return (async () => {
        await c.connect()
        await c.subscribe({ topic: 'slow', fromBeginning: true })
        await c.run({ eachMessage: async ({ message }) => onMessage(message.value!.toString()) })
        return c
      })()
    }
    const fromA = new Set<string>()
    let release = () => {}
    const stuck = new Promise<void>((resolve) => (release = resolve))
    await consumer('a', async (v) => void fromA.add(v))
    await consumer('b', () => stuck) // b never finishes its first message, so it never heartbeats again
    await waitFor('both members in one generation', () => {
      const group = broker!.groupCoordinator.describeGroup('session-group')
      return group?.state === 'Stable' && group.members.length === 2
    })
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
    clients.push(producer)
    await producer.connect()
    await producer.send({ topic: 'slow', messages: Array.from({ length: 20 }, (_, i) => ({ partition: i % 2, value: `s${i}` })) })
    try {
      await waitFor('a to consume both partitions after b expired', () => fromA.size === 20, 30_000)
      const group = broker.groupCoordinator.describeGroup('session-group')!
      expect(group.members.map((m) => m.memberId)).toHaveLength(1)
    } finally {
      release()
    }
  })
})
