/**
 * The Consumer against ferrolog's in-process broker (startBroker, real sockets): a group of three
 * joining and leaving over 12 partitions reads every record exactly once with its offsets
 * committed to the log ends; seek (also with a prefetch in flight), pause/resume, and a pattern
 * subscription picking up a topic created later; the string deserializers (UTF-8, null kept,
 * plain and compressed batches); config names and errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { consumerConfigFrom } from '../../ts/client/consumer-config.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { produce } from '../../ts/client/produce.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import {
  createTopic,
  groupJoinLeaveScenario,
  pauseResumeScenario,
  pollTimeoutScenario,
  produceNumbered,
  regexScenario,
  seekScenario,
  staticMembershipScenario,
  unsubscribeScenario,
} from './consumer-scenarios.js'

let broker: Broker
let bootstrap: string

beforeAll(async () => {
  broker = await startBroker({ config: { 'group.min.session.timeout.ms': '1000' } })
  bootstrap = broker.bootstrapServers
})

afterAll(async () => {
  await broker?.stop()
})

describe('Consumer against ferrolog', () => {
  it('a group of 3 over 12 partitions, members joining and leaving: every record exactly once, commits at the log ends', async () => {
    const { rebalances, perMember } = await groupJoinLeaveScenario(bootstrap, 'group-join-leave', 24_000)
    // A joined alone, then B, then C, then A left: at least 4 generations seen by someone.
    expect(rebalances).toBeGreaterThanOrEqual(4)
    expect(perMember.every((n) => n > 0)).toBe(true)
  }, 120_000)

  it('the roundrobin assignor in a group works the same way', async () => {
    await groupJoinLeaveScenario(bootstrap, 'group-roundrobin', 12_000, { 'partition.assignment.strategy': 'roundrobin' })
  }, 120_000)

  it('seek: back, forward, and to an offset given to assign', async () => {
    await seekScenario(bootstrap, 'seek-topic')
  }, 60_000)

  it('pause returns nothing of a partition until resume', async () => {
    await pauseResumeScenario(bootstrap, 'pause-topic')
  }, 60_000)

  it('a RegExp subscription picks up a topic created later', async () => {
    await regexScenario(bootstrap, 'regex')
  }, 60_000)

  it('static membership: close without LeaveGroup, a restart gets its partitions back with no rebalance, a duplicate instance fences the first', async () => {
    await staticMembershipScenario(bootstrap, 'static-topic')
  }, 90_000)

  it('max.poll.interval.ms: a member stalled in eachBatch leaves the group, the other takes its partitions, its commit fails with ILLEGAL_GENERATION, its next poll rejoins; no record lost', async () => {
    await pollTimeoutScenario(bootstrap, 'poll-timeout')
  }, 150_000)

  it('unsubscribe sends LeaveGroup: the other member gets the partitions long before the session timeout', async () => {
    await unsubscribeScenario(bootstrap, 'unsubscribe-topic')
  }, 90_000)

  it('unsubscribe of a static member sends no LeaveGroup: it stays in the group', async () => {
    await unsubscribeScenario(bootstrap, 'unsubscribe-static', true)
  }, 90_000)

  it('auto.offset.reset latest reads only records produced after the assignment; none is OFFSET_OUT_OF_RANGE', async () => {
    await createTopic(bootstrap, 'reset-topic', 1)
    await produceNumbered(bootstrap, 'reset-topic', 'old', 5)
    const latest = new Consumer({ bootstrapServers: bootstrap, autoOffsetReset: 'latest', fetchMaxWaitMs: 100 })
    try {
      latest.assign([{ topic: 'reset-topic', partition: 0 }])
      expect(await latest.poll(300)).toEqual([])
      expect(latest.position('reset-topic', 0)).toBe(5n)
      await produceNumbered(bootstrap, 'reset-topic', 'new', 3)
      const got = []
      for (let i = 0; i < 50 && got.length < 3; i++) for (const b of await latest.poll(300)) got.push(...b.records)
      expect(got.map((r) => r.offset)).toEqual([5n, 6n, 7n])
    } finally {
      await latest.close()
    }
    const none = new Consumer({ bootstrapServers: bootstrap, 'auto.offset.reset': 'none', groupId: 'no-offsets' })
    try {
      none.assign([{ topic: 'reset-topic', partition: 0 }])
      const err = await none.poll(1000).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(KafkaClientError)
      expect((err as KafkaClientError).errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE)
    } finally {
      await none.close()
    }
  }, 60_000)

  it('manual commit, then a new member of the group starts from it; an AbortSignal ends the iteration', async () => {
    await createTopic(bootstrap, 'manual-topic', 1)
    await produceNumbered(bootstrap, 'manual-topic', 'm', 30)
    const c1 = new Consumer({ bootstrapServers: bootstrap, groupId: 'manual', enableAutoCommit: false, autoOffsetReset: 'earliest', maxPollRecords: 10 })
    c1.subscribe('manual-topic')
    for await (const b of c1) {
      expect(b.records[0].offset).toBe(0n)
      await c1.commit([{ topic: b.topic, partition: b.partition, offset: b.records[9].offset + 1n }])
      break
    }
    await c1.close()
    const ac = new AbortController()
    const c2 = new Consumer({ bootstrapServers: bootstrap, groupId: 'manual', autoOffsetReset: 'earliest', signal: ac.signal, 'heartbeat.interval.ms': 500 })
    c2.subscribe(['manual-topic'])
    const offsets: bigint[] = []
    for await (const b of c2) {
      offsets.push(...b.records.map((r) => r.offset))
      if (offsets.length >= 20) ac.abort()
    }
    expect(offsets[0]).toBe(10n)
    expect(offsets.at(-1)).toBe(29n)
    // Closed by the signal: positions (30) committed on the way out.
    const c3 = new Consumer({ bootstrapServers: bootstrap, groupId: 'manual' })
    expect((await c3.committed([{ topic: 'manual-topic', partition: 0 }])).get('manual-topic\u00000')).toBe(30n)
    await c3.close()
  }, 60_000)

  it('eachBatch: a batch whose handler throws is read again', async () => {
    await createTopic(bootstrap, 'each-batch', 1)
    await produceNumbered(bootstrap, 'each-batch', 'e', 10)
    const c = new Consumer({ bootstrapServers: bootstrap, autoOffsetReset: 'earliest', maxPollRecords: 5 })
    c.assign([{ topic: 'each-batch', partition: 0 }])
    let calls = 0
    const failure = await c
      .run({
        eachBatch: () => {
          calls++
          throw new Error('not now')
        },
      })
      .catch((e: unknown) => e)
    expect((failure as Error).message).toBe('not now')
    expect(calls).toBe(1)
    expect(c.position('each-batch', 0)).toBe(0n)
    const ac = new AbortController()
    const offsets: bigint[] = []
    await c.run({
      signal: ac.signal,
      eachBatch: (b) => {
        offsets.push(...b.records.map((r) => r.offset))
        if (offsets.length >= 10) ac.abort()
      },
    })
    expect(offsets).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i)))
    await c.close()
  }, 60_000)

  it('key.deserializer / value.deserializer string: keys and values as UTF-8 strings, null stays null', async () => {
    await createTopic(bootstrap, 'string-deserializers', 1)
    const sent = [
      { key: 'clé-1', value: '✓ ünïcode 日本語' },
      { key: null, value: 'no key' },
      { key: 'no value', value: null },
      { key: '', value: '' },
    ]
    const client = new NetworkClient({ bootstrapServers: bootstrap })
    try {
      // A plain batch (read in place from the response) and an lz4 one (from the decompressed arena).
      await produce(client, 'string-deserializers', sent, { compression: 'none' })
      await produce(client, 'string-deserializers', sent, { compression: 'lz4' })
    } finally {
      await client.close()
    }
    {
      const c = new Consumer<string, string>({
        bootstrapServers: bootstrap,
        autoOffsetReset: 'earliest',
        'key.deserializer': 'string',
        'value.deserializer': 'org.apache.kafka.common.serialization.StringDeserializer',
      })
      c.assign([{ topic: 'string-deserializers', partition: 0 }])
      const got: Array<{ key: string | null; value: string | null; offset: bigint }> = []
      for await (const b of c) {
        for (const r of b.records) got.push({ key: r.key, value: r.value, offset: r.offset })
        if (got.length >= 8) break
      }
      await c.close()
      expect(got).toEqual([...sent, ...sent].map((r, i) => ({ ...r, offset: BigInt(i) })))
    }
    // The default stays Buffers.
    const bytes = new Consumer({ bootstrapServers: bootstrap, autoOffsetReset: 'earliest' })
    bytes.assign([{ topic: 'string-deserializers', partition: 0 }])
    for await (const b of bytes) {
      expect(Buffer.isBuffer(b.records[0]!.key) && Buffer.isBuffer(b.records[0]!.value)).toBe(true)
      expect(b.records[0]!.value!.toString('utf8')).toBe(sent[0]!.value)
      break
    }
    await bytes.close()
  }, 60_000)

  it('takes Kafka config names and camelCase, refuses unknown ones with INVALID_CONFIG', () => {
    const a = consumerConfigFrom({ 'bootstrap.servers': 'x:1', 'fetch.min.bytes': '10', 'enable.auto.commit': 'false', 'isolation.level': 'read_committed', 'client.rack': 'r1' })
    expect([a.fetchMinBytes, a.enableAutoCommit, a.isolationLevel, a.clientRack]).toEqual([10, false, 'read_committed', 'r1'])
    const b = consumerConfigFrom({ bootstrapServers: 'x:1', fetchMaxWaitMs: 5, maxPollRecords: 7 })
    expect([b.fetchMaxWaitMs, b.maxPollRecords, b.autoOffsetReset, b.sessionTimeoutMs]).toEqual([5, 7, 'latest', 45_000])
    expect(() => consumerConfigFrom({ bootstrapServers: 'x:1', 'fetch.min.byte': 1 })).toThrow(/not a consumer config/)
    expect(() => consumerConfigFrom({ bootstrapServers: 'x:1', 'auto.offset.reset': 'first' })).toThrow(KafkaClientError)
    const d = consumerConfigFrom({ bootstrapServers: 'x:1', 'key.deserializer': 'org.apache.kafka.common.serialization.ByteArrayDeserializer', valueDeserializer: 'string' })
    expect([d.keyDeserializer, d.valueDeserializer]).toEqual(['buffer', 'string'])
    expect(() => consumerConfigFrom({ bootstrapServers: 'x:1', 'value.deserializer': 'json' })).toThrow(/value.deserializer/)
    expect(() => new Consumer({ bootstrapServers: 'x:1' }).subscribe('t')).toThrow(/group.id/)
  })
})
