/**
 * KIP-392 end to end: Kafka's Java consumer with a client.rack reads from the in-sync follower in
 * its rack, in a cluster of ferrolog brokers (in this process, on a real etcd) with racks a, b, c
 * and Kafka's RackAwareReplicaSelector; and from the leader again once that follower is gone.
 * Which broker served the bytes: each broker's record bytes out to consumers
 * (BrokerTopicStats, ferrolog_bytes_out_total).
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { EtcdBrokerCluster, until } from '../helpers/etcd-cluster.js'
import { runJava } from '../helpers/java.js'

const KAFKA = join(__dirname, '../../tools/kafka')
const RACKS: Record<number, string> = { 1: 'a', 2: 'b', 3: 'c' }

let cluster: EtcdBrokerCluster | undefined
afterEach(async () => {
  await cluster?.close()
  cluster = undefined
})

beforeAll(() => {
  execFileSync('bash', [join(KAFKA, 'fetch-jars.sh')], { stdio: 'ignore' })
}, 300_000)

function rackConsumer(port: number, rack: string, count: number) {
  return runJava(join(__dirname, 'java/RackConsumer.java'), [`127.0.0.1:${port}`, 'racked', rack, String(count)])
}

describe('KIP-392: a consumer with client.rack', () => {
  it("Kafka's Java consumer reads from the follower in its rack, and from the leader once that follower is gone", async () => {
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

    const first = await rackConsumer(b1.port, 'c', 1000)
    expect(first.stderr).not.toMatch(/Exception/)
    expect(first.stdout.trim().split('\n')).toEqual(['1000', 'v0..v999'])
    // Every record byte came from broker 3 (rack c); the leader sent the consumer none (only its preferredReadReplica answer).
    expect(cluster.broker(3).brokerTopicStats.bytesOut).toBeGreaterThanOrEqual(size)
    expect(b1.brokerTopicStats.bytesOut).toBe(0)
    expect(cluster.broker(2).brokerTopicStats.bytesOut).toBe(0)

    // Rack c's follower goes away: the leader no longer names it, and serves the consumer itself.
    await cluster.stop(3)
    await until('broker 3 out of the ISR', () => !b1.metadataCache.partitionRegistration('racked', 0)!.isr.includes(3))
    const second = await rackConsumer(b1.port, 'c', 1000)
    expect(second.stdout.trim().split('\n')).toEqual(['1000', 'v0..v999'])
    expect(b1.brokerTopicStats.bytesOut).toBeGreaterThanOrEqual(size)
    expect(cluster.broker(2).brokerTopicStats.bytesOut).toBe(0)
  }, 180_000)
})
