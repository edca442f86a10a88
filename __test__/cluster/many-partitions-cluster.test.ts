/**
 * A topic of many partitions (MANY_PARTITIONS, default 300 so that CI stays short; the issue's
 * figure is 1,000: `MANY_PARTITIONS=1000 npx vitest run __test__/cluster/many-partitions-cluster.test.ts`,
 * 150-400 s on a loaded 2-core machine), replication factor 3, on three brokers in cluster mode on a real
 * etcd (issue #30's "partitions at scale"): CreateTopics writes its partitions to etcd in several
 * transactions (etcd allows 128 operations in one), every broker makes its replicas (logs,
 * fetchers), every partition has a leader and an ISR of all three; then each broker in turn stops
 * (a controlled shutdown moving its leaders away) and starts again on its data dir: it opens the
 * logs it had, sets nothing aside, and is back in every ISR.
 */
import { readdirSync } from 'node:fs'
import { Kafka, logLevel, type Admin } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { EtcdBrokerCluster, until } from '../helpers/etcd-cluster.js'

const TOPIC = 'wide'
const PARTITIONS = Number(process.env.MANY_PARTITIONS ?? 300)
const IDS = [1, 2, 3]
// A thousand partitions per broker take seconds to apply on a loaded machine: conditions are
// waited for, never timed.
const WAIT_MS = 240_000

let cluster: EtcdBrokerCluster | undefined
let admin: Admin | undefined

afterEach(async () => {
  await admin?.disconnect().catch(() => undefined)
  await cluster?.close()
  admin = undefined
  cluster = undefined
}, WAIT_MS)

/** Every partition of the topic, as broker `b`'s metadata has it, has a leader and an ISR of the three brokers. */
function allLedWithFullIsr(b: Broker): boolean {
  for (let p = 0; p < PARTITIONS; p++) {
    const r = b.metadataCache.partitionRegistration(TOPIC, p)
    if (!r || r.leader < 0 || r.isr.length !== IDS.length || [...r.isr].sort().join() !== IDS.join()) return false
  }
  return true
}

/** Broker `b` holds a replica of every partition: an open log of the topic's id, and a partition state at the registration's leader epoch. */
function holdsEveryReplica(b: Broker): boolean {
  const topicId = b.topics.get(TOPIC)?.topicId
  if (!topicId) return false
  for (let p = 0; p < PARTITIONS; p++) {
    const log = b.logManager.getLog(TOPIC, p)
    const reg = b.metadataCache.partitionRegistration(TOPIC, p)
    const partition = b.replicaManager.getPartition({ topic: TOPIC, partition: p })
    if (!log || !log.topicId?.equals(topicId) || !reg || !partition || partition.leaderEpoch !== reg.leaderEpoch) return false
  }
  return true
}

describe(`a topic of ${PARTITIONS} partitions on three brokers`, () => {
  it('is created with a leader and an ISR of three for every partition, and every broker restarts cleanly with it', async () => {
    // Kafka's default session timeout: the test is about scale, not lease timing.
    cluster = await EtcdBrokerCluster.start(IDS, { 'broker.session.timeout.ms': '9000', 'default.replication.factor': '3' })
    const c = cluster
    const kafka = new Kafka({ clientId: 'many-partitions', brokers: [`127.0.0.1:${c.broker(2).port}`], logLevel: logLevel.NOTHING, retry: { retries: 10 } })
    admin = kafka.admin()
    await admin.connect()
    expect(await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3 }] })).toBe(true)

    const brokers = () => IDS.map((id) => c.broker(id))
    await until(`every broker holds the ${PARTITIONS} replicas`, () => brokers().every(holdsEveryReplica), WAIT_MS)
    for (const b of brokers()) expect(allLedWithFullIsr(b)).toBe(true)
    // The leaders are spread as Kafka's placement spreads them: a third each.
    const led = new Map(IDS.map((id) => [id, 0]))
    for (let p = 0; p < PARTITIONS; p++) {
      const leader = c.broker(1).metadataCache.partitionRegistration(TOPIC, p)!.leader
      led.set(leader, led.get(leader)! + 1)
    }
    for (const id of IDS) expect(led.get(id)).toBeGreaterThanOrEqual(Math.floor(PARTITIONS / 3))
    const meta = await admin.fetchTopicMetadata({ topics: [TOPIC] })
    expect(meta.topics[0].partitions).toHaveLength(PARTITIONS)
    expect(meta.topics[0].partitions.every((p) => p.leader >= 0 && p.isr.length === 3)).toBe(true)

    for (const id of IDS) {
      const dataDir = c.broker(id).logManager.dataDir
      await c.stop(id)
      const restarted = await c.start(id, { 'broker.session.timeout.ms': '9000', 'default.replication.factor': '3' })
      // A clean stop: nothing to recover, and every directory it had served again (none set aside as stray).
      expect(restarted.logManager.hadCleanShutdown).toBe(true)
      expect(readdirSync(dataDir).filter((d) => d.endsWith('-stray'))).toEqual([])
      await until(`broker ${id} holds its ${PARTITIONS} replicas again`, () => holdsEveryReplica(restarted), WAIT_MS)
      await until(`broker ${id} back in every ISR`, () => brokers().every(allLedWithFullIsr), WAIT_MS)
    }
  }, 900_000)
})
