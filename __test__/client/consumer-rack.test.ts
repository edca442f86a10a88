/**
 * KIP-392 with ferrolog's Consumer: with client.rack it reads from the in-sync follower in its
 * rack that the leader names (preferredReadReplica), in a cluster of three ferrolog brokers (in
 * this process, on a real etcd) with racks a, b, c and Kafka's RackAwareReplicaSelector; and from
 * the leader again once that follower is gone (the preferred replica is dropped on its errors and
 * after metadata.max.age.ms). Which broker served the bytes: BrokerTopicStats.bytesOut.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { EtcdBrokerCluster, until } from '../helpers/etcd-cluster.js'

const RACKS: Record<number, string> = { 1: 'a', 2: 'b', 3: 'c' }

let cluster: EtcdBrokerCluster | undefined
afterEach(async () => {
  await cluster?.close()
  cluster = undefined
})

async function readAll(port: number, rack: string, count: number): Promise<string[]> {
  const c = new Consumer({ bootstrapServers: `127.0.0.1:${port}`, clientRack: rack, autoOffsetReset: 'earliest', metadataMaxAgeMs: 1000, fetchMaxWaitMs: 100, maxPartitionFetchBytes: 4096 })
  const values: string[] = []
  try {
    c.assign([{ topic: 'racked', partition: 0 }])
    for (let i = 0; i < 600 && values.length < count; i++) for (const b of await c.poll(100)) values.push(...b.records.map((r) => r.value!.toString()))
  } finally {
    await c.close()
  }
  return values
}

describe('KIP-392: ferrolog Consumer with client.rack', () => {
  it('reads from the follower in its rack, and from the leader once that follower is gone', async () => {
    cluster = await EtcdBrokerCluster.start([1, 2, 3], { 'replica.selector.class': 'org.apache.kafka.common.replica.RackAwareReplicaSelector' }, (id) => ({ 'broker.rack': RACKS[id] }))
    const b1 = cluster.broker(1)
    await b1.createTopic('racked', 1, {}, false, { replicationFactor: -1, assignments: [[1, 2, 3]] })
    const log = await until('the leader has its log', () => b1.replicaManager.getPartition({ topic: 'racked', partition: 0 })?.isLeader && b1.logManager.getLog('racked', 0))
    for (let i = 0; i < 20; i++) {
      const r = b1.replicaManager.appendRecords({ topic: 'racked', partition: 0 }, buildBatch(Array.from({ length: 50 }, (_, j) => ({ value: `v${i * 50 + j}` }))), 1)
      expect((r as { errorCode: number }).errorCode).toBe(0)
    }
    const size = log.segments().reduce((sum, s) => sum + s.size, 0)
    await until('the followers in sync at the end', () => [2, 3].every((id) => cluster!.broker(id).logManager.getLog('racked', 0)?.highWatermark() === 1000n))

    const expected = Array.from({ length: 1000 }, (_, i) => `v${i}`)
    expect(await readAll(b1.port, 'c', 1000)).toEqual(expected)
    // Every record byte came from broker 3 (rack c); the leader only named it.
    expect(cluster.broker(3).brokerTopicStats.bytesOut).toBeGreaterThanOrEqual(size)
    expect(b1.brokerTopicStats.bytesOut).toBe(0)
    expect(cluster.broker(2).brokerTopicStats.bytesOut).toBe(0)

    await cluster.stop(3)
    await until('broker 3 out of the ISR', () => !b1.metadataCache.partitionRegistration('racked', 0)!.isr.includes(3))
    expect(await readAll(b1.port, 'c', 1000)).toEqual(expected)
    expect(b1.brokerTopicStats.bytesOut).toBeGreaterThanOrEqual(size)
    expect(cluster.broker(2).brokerTopicStats.bytesOut).toBe(0)
  }, 180_000)
})
