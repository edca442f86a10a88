/**
 * Log compaction in cluster mode (issue #18), three brokers in this process on a real etcd: a
 * compacted topic's configs created and altered through any broker (the etcd path,
 * cluster-topics.ts) are checked as a standalone broker checks them, against the broker's own
 * log.cleaner.* defaults; a compacted topic with three replicas is cleaned by every replica on
 * its own (each broker's cleaner, its own cleaner-offset-checkpoint), and a kafkajs consumer
 * reading from the beginning sees every key's latest value. Kills of the leader and the
 * truncation of a restarted replica are compaction-kill-cluster.test.ts's (real processes).
 */
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import type { Log } from '../../ts/storage/log.js'
import { EtcdBrokerCluster, until } from '../helpers/etcd-cluster.js'

let cluster: EtcdBrokerCluster | undefined
const clients: Array<Admin | Producer | Consumer> = []

afterEach(async () => {
  for (const c of clients.splice(0)) await c.disconnect().catch(() => undefined)
  await cluster?.close()
  cluster = undefined
})

const PROPS = {
  'min.insync.replicas': '2',
  'default.replication.factor': '3',
  'group.initial.rebalance.delay.ms': '0',
  'log.cleaner.backoff.ms': '20',
  'log.cleaner.dedupe.buffer.size': '1048576',
  // The broker's own default, which a topic's min.compaction.lag.ms may not exceed.
  'log.cleaner.max.compaction.lag.ms': '60000',
}

function kafka(brokers: Broker[]): Kafka {
  return new Kafka({
    clientId: 'compaction-cluster',
    brokers: brokers.map((b) => `127.0.0.1:${b.port}`),
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 },
  })
}

/** A log's records from its start to its end: offsets must only increase; the last value of each key. */
function latestOnDisk(log: Log): { latest: Map<string, string | null>; records: number } {
  const latest = new Map<string, string | null>()
  let previous = -1n
  let records = 0
  for (let offset = log.logStartOffset(); offset < log.logEndOffset();) {
    const batch = log.readRecords(offset, { isolation: 'LOG_END', maxBytes: 1 << 20 })
    if (batch.length === 0) break
    for (const r of batch) {
      if (r.offset <= previous) throw new Error(`${log.topic}-${log.partition}: offset ${r.offset} after ${previous}`)
      previous = r.offset
      records++
      latest.set(r.key!.toString(), r.value === null ? null : r.value.toString())
    }
    offset = previous + 1n
  }
  return { latest, records }
}

describe('log compaction in cluster mode (etcd)', () => {
  it('compaction configs through the cluster path: checked against the broker defaults on create and alter, applied on every replica', async () => {
    cluster = await EtcdBrokerCluster.start([1, 2, 3], PROPS)
    const [b1, b2, b3] = [1, 2, 3].map((id) => cluster!.broker(id))
    // Each bad value, through a broker that is not the controller as well as the first.
    const bad: Array<[Record<string, string>, RegExp]> = [
      [{ 'cleanup.policy': 'shred' }, /Invalid value shred for configuration cleanup.policy/],
      [{ 'min.cleanable.dirty.ratio': '1.5' }, /between 0 and 1/],
      [{ 'delete.retention.ms': '-1' }, /delete.retention.ms must be an integer >= 0/],
      [{ 'max.compaction.lag.ms': '0' }, /max.compaction.lag.ms must be an integer >= 1/],
      [{ 'min.compaction.lag.ms': '10000', 'max.compaction.lag.ms': '5000' }, /conflict topic config setting min.compaction.lag.ms \(10000\) > max.compaction.lag.ms \(5000\)/],
      // Valid against Kafka's default max.compaction.lag.ms (Long.MAX_VALUE), not against this broker's 60000.
      [{ 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '120000' }, /conflict topic config setting min.compaction.lag.ms \(120000\) > max.compaction.lag.ms \(60000\)/],
    ]
    for (const [configs, message] of bad) {
      for (const b of [b1, b3]) {
        await expect(b.createTopic('bad', 1, configs, false, { replicationFactor: 3 }), JSON.stringify(configs)).rejects.toMatchObject({ errorCode: 40, message: expect.stringMatching(message) })
      }
    }
    expect(b2.topics.get('bad')).toBeUndefined()
    // kafkajs sees INVALID_CONFIG (40) for the conflict with the broker default too.
    const admin = kafka([b2]).admin()
    clients.push(admin)
    await admin.connect()
    const refused = await admin
      .createTopics({ topics: [{ topic: 'bad', numPartitions: 1, replicationFactor: 3, configEntries: [{ name: 'min.compaction.lag.ms', value: '120000' }] }] })
      .catch((e) => e)
    expect(refused.errors?.[0]).toMatchObject({ code: 40 })

    expect(
      await admin.createTopics({
        topics: [
          {
            topic: 'table',
            numPartitions: 1,
            replicationFactor: 3,
            configEntries: [
              { name: 'cleanup.policy', value: 'compact' },
              { name: 'min.compaction.lag.ms', value: '30000' },
            ],
          },
        ],
      }),
    ).toBe(true)
    for (const b of [b1, b2, b3]) {
      await until(`table-0 on broker ${b.config.nodeId}`, () => b.logManager.getLog('table', 0))
      expect(b.logManager.getLog('table', 0)!.config).toMatchObject({ cleanupPolicy: ['compact'], minCompactionLagMs: 30_000, maxCompactionLagMs: 60_000 })
    }
    // Alter: over the broker's max.compaction.lag.ms is refused, and the topic keeps its configs.
    await expect(b3.alterTopicConfigs('table', { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '70000' }, false)).rejects.toMatchObject({
      errorCode: 40,
      message: expect.stringMatching(/min.compaction.lag.ms \(70000\) > max.compaction.lag.ms \(60000\)/),
    })
    await expect(b3.alterTopicConfigs('table', { 'min.cleanable.dirty.ratio': '-0.1' }, true)).rejects.toMatchObject({ errorCode: 40 })
    expect(b1.topics.get('table')!.configs).toEqual({ 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '30000' })
    // With its own max.compaction.lag.ms the topic may go past the broker's; applied on every replica.
    await b3.alterTopicConfigs('table', { 'cleanup.policy': 'compact,delete', 'min.compaction.lag.ms': '70000', 'max.compaction.lag.ms': '80000', 'min.cleanable.dirty.ratio': '0.2' }, false)
    for (const b of [b1, b2, b3]) {
      await until(`the altered configs on broker ${b.config.nodeId}`, () => b.logManager.getLog('table', 0)!.config.maxCompactionLagMs === 80_000)
      expect(b.logManager.getLog('table', 0)!.config).toMatchObject({ cleanupPolicy: ['compact', 'delete'], minCompactionLagMs: 70_000, maxCompactionLagMs: 80_000, minCleanableDirtyRatio: 0.2 })
    }
  }, 120_000)

  it('a compacted topic with three replicas: every replica cleans its own log, a consumer from the beginning sees every key’s latest value', async () => {
    cluster = await EtcdBrokerCluster.start([1, 2, 3], PROPS)
    const brokers = [1, 2, 3].map((id) => cluster!.broker(id))
    const client = kafka(brokers)
    const admin = client.admin()
    clients.push(admin)
    await admin.connect()
    const topic = 'changelog'
    expect(
      await admin.createTopics({
        topics: [
          {
            topic,
            numPartitions: 1,
            replicationFactor: 3,
            configEntries: [
              { name: 'cleanup.policy', value: 'compact' },
              { name: 'segment.bytes', value: '2048' },
              { name: 'min.cleanable.dirty.ratio', value: '0.01' },
            ],
          },
        ],
      }),
    ).toBe(true)
    const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 })
    clients.push(producer)
    await producer.connect()
    const latest = new Map<string, string>()
    let produced = 0
    for (let i = 0; i < 60; i++) {
      const messages = Array.from({ length: 20 }, (_, j) => ({ key: `k${(i * 7 + j) % 50}`, value: `v${i}-${j}` }))
      await producer.send({ topic, acks: -1, messages })
      for (const m of messages) latest.set(m.key, m.value)
      produced += messages.length
    }
    // Every broker's cleaner cleans its own replica: its own checkpoint, fewer records on disk.
    for (const b of brokers) {
      const log = await until(`${topic}-0 on broker ${b.config.nodeId}`, () => b.logManager.getLog(topic, 0))
      await until(
        `broker ${b.config.nodeId} cleaned its replica`,
        () => (b.logManager.cleaner!.manager.allCleanerCheckpoints().get(`${topic}-0`) ?? 0n) > 0n && log.logEndOffset() === BigInt(produced),
        60_000,
      )
      expect(b.logManager.cleaner!.stats.runs).toBeGreaterThan(0)
      const onDisk = await until(
        `broker ${b.config.nodeId}'s replica compacted`,
        () => {
          const d = latestOnDisk(log)
          return d.records < produced ? d : null
        },
        60_000,
      )
      expect(onDisk.latest).toEqual(latest)
    }

    const consumer = client.consumer({ groupId: 'reader', maxWaitTimeInMs: 100 })
    clients.push(consumer)
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    const seen = new Map<string, string>()
    let last = -1n
    const offsets: bigint[] = []
    await consumer.run({
      eachMessage: async ({ message }) => {
        offsets.push(BigInt(message.offset))
        last = BigInt(message.offset)
        seen.set(message.key!.toString(), message.value!.toString())
      },
    })
    await until('the consumer read to the end', () => last >= BigInt(produced) - 1n, 60_000)
    expect(seen).toEqual(latest)
    expect(offsets.length).toBeLessThan(produced)
    expect(new Set(offsets).size).toBe(offsets.length)
  }, 180_000)
})
