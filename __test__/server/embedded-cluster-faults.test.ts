/**
 * Faults in an in-process 3-broker cluster, with real clients over sockets: a partition's leader
 * moved (`moveLeader`) and another partition's leader killed (`killBroker`, a crash: sockets cut,
 * no controlled shutdown, registration gone when its session times out) while an idempotent
 * acks=all producer is sending, with ferrolog's Producer and with kafkajs. Every send is
 * acknowledged; a read_committed consumer then reads every record once, in the order sent per
 * partition; the killed broker comes back on its data dir (recovered as after a crash), catches
 * up and rejoins the ISR.
 */
import { existsSync } from 'node:fs'
import { Kafka, logLevel, type Producer as KafkaJsProducer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { Producer, type RecordMetadata } from '../../ts/client/producer.js'
import { startCluster, type EmbeddedCluster } from '../../ts/index.js'
import { readAll } from '../client/producer-scenarios.js'
import { until } from '../helpers/etcd-cluster.js'

const PARTITIONS = 3
const COUNT = 3000

let cluster: EmbeddedCluster | undefined

afterEach(async () => {
  await cluster?.stop()
  cluster = undefined
})

async function faultyCluster(topic: string): Promise<EmbeddedCluster> {
  const c = await startCluster({
    brokers: 3,
    // A killed broker's lease ends after 2 s; a follower that stops fetching leaves the ISR after 2 s.
    config: { 'broker.session.timeout.ms': '2000', 'replica.lag.time.max.ms': '2000', 'min.insync.replicas': '2' },
  })
  const admin = new Kafka({ clientId: 'faults-admin', brokers: c.bootstrapServers.split(','), logLevel: logLevel.NOTHING }).admin()
  await admin.connect()
  try {
    expect(await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 3 }], waitForLeaders: true })).toBe(true)
  } finally {
    await admin.disconnect()
  }
  for (let p = 0; p < PARTITIONS; p++) await until(`${topic}-${p} has a full ISR`, () => c.brokers.every((b) => b.metadataCache.partitionRegistration(topic, p)?.isr.length === 3))
  return c
}

/**
 * The faults, run while the producer sends: at a third of the records partition 0's leader moves
 * to another ISR member; at two thirds partition 1's leader is killed. Resolves to the killed broker.
 */
function faults(c: EmbeddedCluster, topic: string): { at: (i: number) => void; done: () => Promise<number> } {
  let moved: Promise<void> | null = null
  let killed: Promise<number> | null = null
  return {
    at(i) {
      if (i === Math.floor(COUNT / 3)) {
        const from = c.leaderOf(topic, 0)!
        const to = [1, 2, 3].find((b) => b !== from)!
        moved = (async () => {
          await c.moveLeader(topic, 0, to)
          expect(c.leaderOf(topic, 0)).toBe(to)
        })()
      }
      if (i === Math.floor((2 * COUNT) / 3)) {
        killed = (async () => {
          await moved
          const victim = c.leaderOf(topic, 1)!
          await c.killBroker(victim)
          return victim
        })()
      }
    },
    async done() {
      await moved
      return await killed!
    },
  }
}

/** Every record once, per key (so per partition) in the order sent; then the killed broker comes back and catches up. */
async function verify(c: EmbeddedCluster, topic: string, victim: number): Promise<void> {
  // The survivors elected new leaders and dropped the killed broker from the ISRs.
  for (let p = 0; p < PARTITIONS; p++) {
    await until(`${topic}-${p} led by a survivor without broker ${victim} in its ISR`, () => {
      const reg = c.brokers[0]!.metadataCache.partitionRegistration(topic, p)
      return reg !== undefined && reg.leader >= 0 && reg.leader !== victim && !reg.isr.includes(victim)
    })
  }
  const back = await readAll(c.bootstrapServers, topic, PARTITIONS, COUNT, 'read_committed')
  const values = back.map((r) => r.value!.toString())
  expect(new Set(values).size).toBe(values.length) // none duplicated
  expect(values.length).toBe(COUNT) // none lost
  const last = new Map<string, number>()
  for (const r of back) {
    const i = Number(r.value!.toString().slice(2))
    const key = r.key!.toString()
    expect(i).toBeGreaterThan(last.get(key) ?? -1)
    last.set(key, i)
  }

  // Back on its data dir: its logs recovered, it follows, catches up and rejoins every ISR.
  const restarted = await c.startBroker(victim)
  expect(restarted.logManager.hadCleanShutdown).toBe(false) // killed: its logs were recovered
  for (let p = 0; p < PARTITIONS; p++) {
    await until(
      `broker ${victim} caught up on ${topic}-${p}`,
      () => restarted.logManager.getLog(topic, p)?.logEndOffset() === c.broker(c.leaderOf(topic, p)!).logManager.getLog(topic, p)?.logEndOffset(),
    )
    await until(`broker ${victim} back in the ISR of ${topic}-${p}`, () => c.brokers[0]!.metadataCache.partitionRegistration(topic, p)?.isr.includes(victim))
  }

  const root = c.root
  await c.stop()
  cluster = undefined
  expect(existsSync(root)).toBe(false)
}

describe('in-process cluster faults mid-produce', () => {
  it("ferrolog's Producer (idempotent, acks=all): a leader moved and a leader killed; nothing lost, nothing duplicated, order kept", async () => {
    const topic = 'faults-ferrolog'
    const c = (cluster = await faultyCluster(topic))
    const producer = new Producer({
      bootstrapServers: c.bootstrapServers,
      acks: 'all',
      'enable.idempotence': true,
      'linger.ms': 2,
      'batch.size': 4096,
      'request.timeout.ms': 5000,
      'delivery.timeout.ms': 120_000,
    })
    const fault = faults(c, topic)
    const acks: Array<Promise<RecordMetadata>> = []
    try {
      for (let i = 0; i < COUNT; i++) {
        acks.push(producer.send({ topic, key: `key-${i % 30}`, value: `v-${i}` }))
        fault.at(i)
        if (i % 100 === 0) {
          await producer.waitForBufferSpace()
          await new Promise((resolve) => setTimeout(resolve, 2))
        }
      }
      const victim = await fault.done()
      expect((await Promise.all(acks)).length).toBe(COUNT)
      await producer.close()
      await verify(c, topic, victim)
    } finally {
      await producer.close()
    }
  }, 120_000)

  it('kafkajs (idempotent, acks=-1): a leader moved and a leader killed; nothing lost, nothing duplicated, order kept', async () => {
    const topic = 'faults-kafkajs'
    const c = (cluster = await faultyCluster(topic))
    const kafka = new Kafka({ clientId: 'faults-kafkajs', brokers: c.bootstrapServers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } })
    const producer: KafkaJsProducer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    const fault = faults(c, topic)
    try {
      for (let i = 0; i < COUNT; i += 30) {
        // One partition per send: kafkajs 2.2.4 retries a send only to the brokers that had not
        // answered it (sendMessages' responsePerBroker), so a partition whose leader moved to a
        // broker that already answered for another partition of the same send is never resent,
        // yet the send resolves (its records lost). Seen here with several partitions per send.
        for (let p = 0; p < PARTITIONS; p++) {
          const messages = Array.from({ length: 30 }, (_, j) => i + j)
            .filter((n) => (n % 30) % PARTITIONS === p)
            .map((n) => ({ key: `key-${n % 30}`, value: `v-${n}`, partition: p }))
          await producer.send({ topic, acks: -1, messages })
        }
        for (let j = i; j < i + 30; j++) fault.at(j)
      }
      const victim = await fault.done()
      await producer.disconnect()
      await verify(c, topic, victim)
    } finally {
      await producer.disconnect()
    }
  }, 120_000)
})
