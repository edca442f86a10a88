/**
 * Racks with ferrolog's Consumer, in a cluster of three ferrolog brokers (in this process, on a
 * real etcd) with broker.rack a, b, c.
 *
 * KIP-881: a group of three consumers with client.rack a, b, c over a topic whose partition p
 * lives on the broker of rack p % 3 gets a rack-aligned range assignment (each member reads only
 * partitions with a replica in its rack), where the plain range would hand out 0-1, 2-3, 4-5.
 *
 * KIP-848 (group.protocol=consumer): the group coordinator sees each member's client.rack and
 * each partition's racks (those of the brokers holding its replicas); the server-side assignor,
 * as Kafka 4.4's, does not use them (the members still share the partitions two each).
 *
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
import { FAST_GROUP } from './consumer-scenarios.js'

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

describe('KIP-881: rack-aware range assignment in a ferrolog cluster', () => {
  it('three consumers in racks a, b, c each get the partitions whose replica is in their rack, and read all records', async () => {
    cluster = await EtcdBrokerCluster.start([1, 2, 3], {}, (id) => ({ 'broker.rack': RACKS[id] }))
    const b1 = cluster.broker(1)
    // Partition p on broker p % 3 + 1: racks a, b, c, a, b, c.
    const assignments = Array.from({ length: 6 }, (_, p) => [(p % 3) + 1])
    await b1.createTopic('ranged', 6, {}, false, { replicationFactor: -1, assignments })
    for (let p = 0; p < 6; p++) {
      const leader = cluster.broker((p % 3) + 1)
      await until(`partition ${p} led by its broker`, () => leader.replicaManager.getPartition({ topic: 'ranged', partition: p })?.isLeader)
    }
    const seen = new Map<string, string>()
    const consumers = ['a', 'b', 'c'].map(
      (rack) => new Consumer({ bootstrapServers: `127.0.0.1:${b1.port}`, groupId: 'racked-group', clientRack: rack, ...FAST_GROUP, 'partition.assignment.strategy': 'range' }),
    )
    let stopped = false
    const loops = consumers.map(async (c, i) => {
      c.subscribe(['ranged'])
      while (!stopped) for (const b of await c.poll(100)) for (const r of b.records) seen.set(r.value!.toString(), ['a', 'b', 'c'][i])
    })
    try {
      await until('each member holds two partitions', () => consumers.every((c) => c.assignment().length === 2), 60_000)
      consumers.forEach((c, i) => {
        const partitions = c
          .assignment()
          .map((tp) => tp.partition)
          .sort()
        expect(partitions).toEqual([i, i + 3])
      })
      // Records written now are read by the member in their partition's rack.
      for (let p = 0; p < 6; p++) {
        const r = cluster!.broker((p % 3) + 1).replicaManager.appendRecords({ topic: 'ranged', partition: p }, buildBatch(Array.from({ length: 10 }, (_, j) => ({ value: `p${p}-${j}` }))), 1)
        expect((r as { errorCode: number }).errorCode).toBe(0)
      }
      await until('every record read', () => seen.size === 60, 60_000)
      for (const [value, rack] of seen) expect(RACKS[(Number(/^p(\d+)/.exec(value)![1]) % 3) + 1]).toBe(rack)
    } finally {
      stopped = true
      await Promise.all(loops)
      await Promise.all(consumers.map((c) => c.close()))
    }
  }, 180_000)
})

describe('KIP-848: racks reach the group coordinator in a ferrolog cluster', () => {
  it("members' client.rack and partitions' replica racks are the group's; the members share the partitions two each", async () => {
    cluster = await EtcdBrokerCluster.start([1, 2, 3], { 'offsets.topic.replication.factor': '1' }, (id) => ({ 'broker.rack': RACKS[id] }))
    const b1 = cluster.broker(1)
    // Partition p on brokers p % 3 + 1 and the next one: racks [a, b], [b, c], [c, a], ...
    const assignments = Array.from({ length: 6 }, (_, p) => [(p % 3) + 1, ((p + 1) % 3) + 1])
    await b1.createTopic('shared', 6, {}, false, { replicationFactor: -1, assignments })
    const consumers = ['a', 'b', 'c'].map(
      (rack) => new Consumer({ bootstrapServers: `127.0.0.1:${b1.port}`, groupId: 'kip848-racks', clientRack: rack, 'group.protocol': 'consumer', autoOffsetReset: 'earliest' }),
    )
    let stopped = false
    const loops = consumers.map(async (c) => {
      c.subscribe(['shared'])
      while (!stopped) await c.poll(100)
    })
    try {
      await until('each member holds two partitions', () => consumers.every((c) => c.assignment().length === 2), 90_000)
      const group = [...cluster.brokers.values()].map((b) => b.groupCoordinator.consumerGroup('kip848-racks')).find((g) => g !== undefined)!
      expect([...group.members.values()].map((m) => m.rackId).sort()).toEqual(['a', 'b', 'c'])
      expect(group.subscriptionMetadata.get('shared')!.partitionRacks).toEqual([
        ['a', 'b'],
        ['b', 'c'],
        ['a', 'c'],
        ['a', 'b'],
        ['b', 'c'],
        ['a', 'c'],
      ])
    } finally {
      stopped = true
      await Promise.all(loops)
      await Promise.all(consumers.map((c) => c.close()))
    }
  }, 180_000)
})
