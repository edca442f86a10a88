/**
 * @platformatic/kafka 1.x (the real client, flexible versions only) against a ferrolog broker
 * started by the test: an idempotent producer sends records with keys, values, headers and
 * timestamps; a consumer in a group reads them all from the earliest offset and they compare
 * exactly; it commits an offset, and a second consumer of the same group resumes after it. The
 * request versions the client negotiated are recorded from the broker's request handler.
 */
import { Consumer, Producer, stringDeserializers, stringSerializers, type Message } from '@platformatic/kafka'
import { afterEach, describe, expect, it } from 'vitest'
import { ApiKey } from '../../ts/protocol/apis/api.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'

const TOPIC = 'platformatic-events'
const GROUP = 'platformatic-group'
const PROPS = { 'group.initial.rebalance.delay.ms': '0' }
const COUNT = 12
const COMMIT_AT = 6 // the first consumer commits after the record at this offset

type StringMessage = Message<string, string, string, string>

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

const apiNames = new Map<number, string>(Object.entries(ApiKey).map(([name, key]) => [key, name]))

/** Records the (api, version) pairs of every request the broker receives. */
function recordVersions(b: Broker): Map<string, Set<number>> {
  const seen = new Map<string, Set<number>>()
  const original = b.apis.handle.bind(b.apis)
  b.apis.handle = (frame, connection) => {
    if (frame.length >= 4) {
      const name = apiNames.get(frame.readInt16BE(0)) ?? `api${frame.readInt16BE(0)}`
      let versions = seen.get(name)
      if (!versions) seen.set(name, (versions = new Set()))
      versions.add(frame.readInt16BE(2))
    }
    return original(frame, connection)
  }
  return seen
}

function withTimeout<T>(what: string, promise: Promise<T>, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

function consumer(port: number): Consumer<string, string, string, string> {
  return new Consumer({
    clientId: 'ferrolog-platformatic-consumer',
    groupId: GROUP,
    bootstrapBrokers: [`127.0.0.1:${port}`],
    deserializers: stringDeserializers,
    sessionTimeout: 10_000,
    rebalanceTimeout: 10_000,
    heartbeatInterval: 500,
    maxWaitTime: 200,
    timeout: 10_000,
    retries: 3,
  })
}

/** Leaves the group and closes, even with streams open (the typings pick the callback overload). */
async function closeForced(c: Consumer<string, string, string, string>): Promise<void> {
  await (c.close(true) as unknown as Promise<void>).catch(() => undefined)
}

/** Reads `count` messages from a stream of the consumer, then closes the stream. */
async function read(c: Consumer<string, string, string, string>, mode: 'earliest' | 'committed', count: number): Promise<StringMessage[]> {
  const stream = await withTimeout('consume', c.consume({ topics: [TOPIC], mode, fallbackMode: 'earliest', autocommit: false }))
  const messages: StringMessage[] = []
  try {
    await withTimeout(
      `${count} messages`,
      (async () => {
        for await (const message of stream) {
          messages.push(message as StringMessage)
          if (messages.length >= count) break
        }
      })(),
    )
  } finally {
    await stream.close().catch(() => undefined)
  }
  return messages
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const shape = (m: StringMessage) => ({
  key: m.key,
  value: m.value,
  headers: Object.fromEntries(m.headers),
  partition: m.partition,
  offset: m.offset,
  timestamp: m.timestamp,
})

describe('@platformatic/kafka', () => {
  it('produces idempotently, consumes in a group from the earliest offset, and resumes after a commit', async () => {
    broker = await startBroker({ props: PROPS })
    const versions = recordVersions(broker)
    await broker.createTopic(TOPIC, 1, {})
    const bootstrap = [`127.0.0.1:${broker.port}`]

    const base = BigInt(Date.now()) - 60_000n
    const sent = Array.from({ length: COUNT }, (_, i) => ({
      topic: TOPIC,
      partition: 0,
      key: `key-${i}`,
      value: `value-${i} ${'x'.repeat(i * 7)}`,
      headers: { 'h-index': String(i), 'h-kind': i % 2 === 0 ? 'even' : 'odd' },
      timestamp: base + BigInt(i * 1000),
    }))

    const producer = new Producer({
      clientId: 'ferrolog-platformatic-producer',
      bootstrapBrokers: bootstrap,
      serializers: stringSerializers,
      idempotent: true,
      acks: -1,
      timeout: 10_000,
      retries: 3,
    })
    try {
      // Two sends: the second batch continues the idempotent sequence.
      const first = await withTimeout('send', producer.send({ messages: sent.slice(0, 5) }))
      const second = await withTimeout('send', producer.send({ messages: sent.slice(5) }))
      expect(first.offsets).toEqual([{ topic: TOPIC, partition: 0, offset: 0n }])
      expect(second.offsets).toEqual([{ topic: TOPIC, partition: 0, offset: 5n }])
      expect(producer.producerId).toBeGreaterThanOrEqual(0n) // idempotence is on: the broker gave an id
    } finally {
      await producer.close().catch(() => undefined)
    }

    const expected = sent.map((m, i) => ({ key: m.key, value: m.value, headers: m.headers, partition: 0, offset: BigInt(i), timestamp: m.timestamp }))

    // First member: everything from the earliest offset; commits through offset COMMIT_AT.
    const a = consumer(broker.port)
    try {
      const received = await read(a, 'earliest', COUNT)
      expect(received.map(shape)).toEqual(expected)
      await withTimeout('commit', Promise.resolve(received[COMMIT_AT].commit()))
      expect(broker.groupCoordinator.offsets.get(GROUP, TOPIC, 0)?.offset).toBe(BigInt(COMMIT_AT + 1))
    } finally {
      await closeForced(a)
    }

    // Second member of the same group: resumes after the commit.
    const b = consumer(broker.port)
    try {
      const resumed = await read(b, 'committed', COUNT - COMMIT_AT - 1)
      expect(resumed.map(shape)).toEqual(expected.slice(COMMIT_AT + 1))
      // Stay in the group past a few heartbeat intervals.
      await new Promise((resolve) => setTimeout(resolve, 1_200))
      expect(broker.groupCoordinator.describeGroup(GROUP)?.state).toBe('Stable')
    } finally {
      await closeForced(b)
    }

    const negotiated = Object.fromEntries([...versions].map(([api, v]) => [api, [...v].sort((x, y) => x - y)]))
    console.log('@platformatic/kafka request versions:', JSON.stringify(negotiated))
    // Flexible versions only, as the client requires.
    expect(Math.min(...negotiated.Fetch)).toBeGreaterThanOrEqual(12)
    expect(Math.min(...negotiated.Produce)).toBeGreaterThanOrEqual(9)
    expect(Math.min(...negotiated.Metadata)).toBeGreaterThanOrEqual(9)
    expect(negotiated.InitProducerId).toBeDefined()
    expect(negotiated.Heartbeat).toBeDefined()
  }, 60_000)

  it('shares partitions between two members and hands them over, exactly once, when one leaves', async () => {
    broker = await startBroker({ props: PROPS })
    await broker.createTopic(TOPIC, 4, {})
    const bootstrap = [`127.0.0.1:${broker.port}`]
    const group = 'platformatic-shared'
    const received: Array<{ member: string; value: string }> = []
    const member = (name: string) =>
      new Consumer({
        clientId: name,
        groupId: group,
        bootstrapBrokers: bootstrap,
        deserializers: stringDeserializers,
        sessionTimeout: 6_000,
        rebalanceTimeout: 6_000,
        heartbeatInterval: 300,
        maxWaitTime: 200,
        timeout: 10_000,
        retries: 3,
      })
    const producer = new Producer({ clientId: 'p', bootstrapBrokers: bootstrap, serializers: stringSerializers, idempotent: true, timeout: 10_000, retries: 3 })
    const a = member('a')
    const b = member('b')
    const produce = async (from: number, count: number) => {
      for (let i = from; i < from + count; i += 10) {
        const messages = Array.from({ length: 10 }, (_, j) => ({ topic: TOPIC, key: `k${i + j}`, value: `v${i + j}` }))
        await withTimeout('send', producer.send({ messages }))
      }
    }
    const stable = (members: number) => () => {
      const g = broker!.groupCoordinator.describeGroup(group)
      return g?.state === 'Stable' && g.members.length === members
    }
    try {
      // 'committed' (falling back to earliest): a member that takes over partitions resumes from
      // the group's commits. With mode 'earliest' the client re-reads from the start on every
      // assignment, by design.
      const options = { topics: [TOPIC], mode: 'committed' as const, fallbackMode: 'earliest' as const, autocommit: 100 }
      const streamA = await withTimeout('consume a', a.consume(options))
      streamA.on('data', (m) => received.push({ member: 'a', value: m.value }))
      const streamB = await withTimeout('consume b', b.consume(options))
      streamB.on('data', (m) => received.push({ member: 'b', value: m.value }))
      await waitFor('two members', stable(2))

      await produce(0, 100)
      await waitFor('100 messages', () => received.length >= 100)
      expect(new Set(received.map((r) => r.member))).toEqual(new Set(['a', 'b']))

      // The autocommits cover all 100 before b leaves: a record b got after its last commit
      // could be re-read by a, as an at-least-once client allows (one CI run in many saw 3 such
      // duplicates); a then takes b's partitions and resumes after b's commits.
      const committed = () => broker!.groupCoordinator.offsets.all(group).reduce((n, e) => n + Number(e.offset), 0)
      await waitFor('100 committed', () => committed() === 100)
      // a rejoins when b leaves, then reloads its positions from the group's commits. A fetch of
      // its old assignment still in flight then can hand it records past those commits, which
      // it reads again from the commits (at least once; one CI run saw 3 of the 40 twice). Two
      // fetches after the join: the reload is done and no fetch from before it is in flight.
      const rejoined = new Promise<void>((resolve) => a.once('consumer:group:join', () => resolve()))
      await streamB.close()
      await closeForced(b)
      await waitFor('a alone', stable(1))
      await withTimeout('a rejoined', rejoined)
      await withTimeout(
        'two fetches after the join',
        new Promise<void>((resolve) => {
          let fetches = 0
          const onFetch = () => {
            if (++fetches < 2) return
            streamA.off('fetch', onFetch)
            resolve()
          }
          streamA.on('fetch', onFetch)
        }),
      )
      await produce(100, 40)
      await waitFor('140 messages', () => received.length >= 140)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(received.map((r) => r.value).sort()).toEqual(Array.from({ length: 140 }, (_, i) => `v${i}`).sort()) // each exactly once
      expect(received.slice(100).every((r) => r.member === 'a')).toBe(true)
      await streamA.close()
    } finally {
      await producer.close().catch(() => undefined)
      await closeForced(a)
      await closeForced(b)
    }
  }, 60_000)
})
