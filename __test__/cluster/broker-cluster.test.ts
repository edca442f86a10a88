/**
 * Brokers in cluster mode (`cluster.metadata`) on a real etcd, in this process on real sockets,
 * driven by a real client (kafkajs): topics created, deleted, grown and reconfigured through any
 * broker reach every replica; acks=all produces land on every replica byte for byte; a stopped
 * leader hands its partitions over (controlled shutdown) and rejoins the ISR when it returns; a
 * broker whose lease lapsed refuses leader writes; consumer groups commit to a replicated
 * __consumer_offsets and resume on another coordinator; producer ids are never handed out twice.
 * Kills and pauses of broker processes are cluster-faults.test.ts's.
 */
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { EtcdBrokerCluster, TEST_SESSION_MS as SESSION_MS, until } from '../helpers/etcd-cluster.js'

let cluster: EtcdBrokerCluster
let brokers: Map<number, Broker>
const clients: Array<Admin | Producer | Consumer> = []

afterEach(async () => {
  for (const c of clients.splice(0)) await c.disconnect().catch(() => undefined)
  await cluster?.close()
})

/** Three brokers, min.insync.replicas 2, default replication factor 3. */
async function startCluster(): Promise<Broker[]> {
  cluster = await EtcdBrokerCluster.start([1, 2, 3], { 'min.insync.replicas': '2', 'default.replication.factor': '3' })
  brokers = cluster.brokers
  return [1, 2, 3].map((id) => cluster.broker(id))
}

const start = (id: number) => cluster.start(id)

function kafka(port: number): Kafka {
  return new Kafka({ clientId: 'cluster-test', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } })
}

async function admin(port: number): Promise<Admin> {
  const a = kafka(port).admin()
  clients.push(a)
  await a.connect()
  return a
}

const registration = (b: Broker, topic: string, p = 0) => b.metadataCache.partitionRegistration(topic, p)

describe('brokers in cluster mode on a real etcd', () => {
  it('replicates a topic created through a follower: acks=all lands on every replica byte for byte, and every broker answers the same Metadata', async () => {
    const [b1, b2, b3] = await startCluster()
    const a = await admin(b2.port)
    expect(await a.createTopics({ topics: [{ topic: 'orders', numPartitions: 3, replicationFactor: 3 }] })).toBe(true)
    for (const b of [b1, b2, b3]) expect(b.topics.get('orders')?.partitions).toBe(3)
    const producer = kafka(b3.port).producer({ idempotent: true, maxInFlightRequests: 1 })
    clients.push(producer)
    await producer.connect()
    for (let i = 0; i < 30; i++) {
      await producer.send({ topic: 'orders', acks: -1, messages: Array.from({ length: 20 }, (_, j) => ({ key: `k${j}`, value: `v${i}-${j}` })) })
    }
    const meta = await a.fetchTopicMetadata({ topics: ['orders'] })
    for (const p of meta.topics[0].partitions) {
      expect(p.replicas.sort()).toEqual([1, 2, 3])
      expect(p.isr.sort()).toEqual([1, 2, 3])
      expect([b1, b2, b3].map((b) => registration(b, 'orders', p.partitionId)?.leader)).toEqual([p.leader, p.leader, p.leader])
    }
    // Each replica's log holds the same bytes up to the high watermark, which covers all 600.
    let total = 0n
    for (let p = 0; p < 3; p++) {
      const leader = brokers.get(registration(b1, 'orders', p)!.leader)!
      const hw = leader.logManager.getLog('orders', p)!.highWatermark()
      total += hw
      await until(`every replica of orders-${p} at ${hw}`, () => [b1, b2, b3].every((b) => b.logManager.getLog('orders', p)!.highWatermark() === hw))
      const files = [b1, b2, b3].map((b) => readFileSync(join(b.logManager.getLog('orders', p)!.dir, '00000000000000000000.log')))
      expect(files[1].equals(files[0]) && files[2].equals(files[0])).toBe(true)
    }
    expect(total).toBe(600n)
  }, 60_000)

  it('DeleteTopics, CreatePartitions and AlterConfigs through any broker reach every replica', async () => {
    const [b1, b2, b3] = await startCluster()
    const a = await admin(b1.port)
    await a.createTopics({
      topics: [
        { topic: 'grow', numPartitions: 1, replicationFactor: 3 },
        { topic: 'gone', numPartitions: 2, replicationFactor: 2 },
      ],
    })
    await until('logs of grow-0 everywhere', () => [b1, b2, b3].every((b) => b.logManager.getLog('grow', 0)))
    const goneLogs = () => [b1, b2, b3].flatMap((b) => [0, 1].map((p) => b.logManager.getLog('gone', p)?.dir).filter((d): d is string => d !== undefined))
    // Two partitions of two replicas each: four logs, on the brokers the placement chose.
    const goneDirs = await until('the four logs of gone', () => goneLogs().length === 4 && goneLogs())

    const a3 = await admin(b3.port)
    await a3.createPartitions({ topicPartitions: [{ topic: 'grow', count: 3 }] })
    await until('grow-2 on every broker', () => [b1, b2, b3].every((b) => b.logManager.getLog('grow', 2)))
    await a3.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: 'grow', configEntries: [{ name: 'retention.ms', value: '123456' }] }] })
    await until('retention.ms on every replica', () => [b1, b2, b3].every((b) => [0, 1, 2].every((p) => b.logManager.getLog('grow', p)!.config.retentionMs === 123456)))

    const a2 = await admin(b2.port)
    await a2.deleteTopics({ topics: ['gone'] })
    await until('gone deleted everywhere', () => [b1, b2, b3].every((b) => !b.topics.get('gone') && !b.logManager.getLog('gone', 0) && !b.logManager.getLog('gone', 1)))
    await until('the deleted directories removed', () => goneDirs.every((d) => !existsSync(d)))
    expect((await a.listTopics()).sort()).toEqual(['grow'])
  }, 60_000)

  it('a stopped leader hands its partitions over first (controlled shutdown) and rejoins the ISR when it returns', async () => {
    const [b1, b2] = await startCluster()
    const a = await admin(b2.port)
    await a.createTopics({ topics: [{ topic: 'handover', numPartitions: 1, replicationFactor: 3 }] })
    const leaderId = registration(b1, 'handover')!.leader
    const producer = kafka(b2.port === brokers.get(leaderId)!.port ? b1.port : b2.port).producer({ idempotent: true, maxInFlightRequests: 1 })
    clients.push(producer)
    await producer.connect()
    await producer.send({ topic: 'handover', acks: -1, messages: [{ value: 'before' }] })
    const epoch = registration(b1, 'handover')!.leaderEpoch

    await cluster.stop(leaderId)
    const other = [...brokers.values()][0]
    const after = registration(other, 'handover')!
    // Moved while the old leader still served: by the time stop() returned, not after its lease ran out.
    expect(after.leader).not.toBe(leaderId)
    expect(after.leaderEpoch).toBe(epoch + 1)
    expect(after.isr).not.toContain(leaderId)
    await producer.send({ topic: 'handover', acks: -1, messages: [{ value: 'after' }] })

    await start(leaderId)
    await until('the returned broker back in the ISR', () => registration(other, 'handover')!.isr.includes(leaderId))
    const log = brokers.get(leaderId)!.logManager.getLog('handover', 0)!
    await until('it caught up', () => log.logEndOffset() === 2n)
    expect(log.readRecords(0n).map((r) => r.value?.toString())).toEqual(['before', 'after'])
  }, 60_000)

  it('a broker whose lease lapsed (its process stalled past the session timeout) refuses leader writes at once, and takes them again once registered', async () => {
    const [b1] = await startCluster()
    const a = await admin(b1.port)
    await a.createTopics({ topics: [{ topic: 'stall', numPartitions: 1, replicationFactor: 3 }] })
    const leader = brokers.get(registration(b1, 'stall')!.leader)!
    await until('the leader has its partition', () => leader.replicaManager.getPartition({ topic: 'stall', partition: 0 })?.isLeader)
    const append = () => leader.replicaManager.appendRecords({ topic: 'stall', partition: 0 }, buildBatch([{ value: 'x' }]), 1) as { errorCode: number }
    expect(append().errorCode).toBe(ErrorCode.NONE)
    // The whole process stalls (as a SIGSTOP or a long GC would) past the lease: no timer ran.
    const stallUntil = Date.now() + SESSION_MS * 2.5
    while (Date.now() < stallUntil) {
      /* stalled */
    }
    // Before any timer or etcd answer: the lease's end is known to be past.
    expect(append().errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    // It registers again, learns what the controller did meanwhile, and serves as whatever it now is.
    await until('registered again', () => !leader.cluster!.registration.fenced && leader.cluster!.registration.leaseValid)
    await until('the metadata applied', () => leader.replicaManager.getPartition({ topic: 'stall', partition: 0 })?.leaderEpoch === registration(leader, 'stall')!.leaderEpoch)
    const expected = registration(leader, 'stall')!.leader === leader.config.nodeId ? ErrorCode.NONE : ErrorCode.NOT_LEADER_OR_FOLLOWER
    expect(append().errorCode).toBe(expected)
  }, 60_000)

  it("consumer groups: __consumer_offsets is created replicated on the first FindCoordinator, and committed offsets survive the coordinator's broker stopping", async () => {
    const [b1] = await startCluster()
    const a = await admin(b1.port)
    await a.createTopics({ topics: [{ topic: 'jobs', numPartitions: 2, replicationFactor: 3 }] })
    const producer = kafka(b1.port).producer({ idempotent: true, maxInFlightRequests: 1 })
    clients.push(producer)
    await producer.connect()
    await producer.send({ topic: 'jobs', acks: -1, messages: Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) })

    const seen: string[] = []
    const consumer = kafka(b1.port).consumer({ groupId: 'workers', sessionTimeout: 6000, heartbeatInterval: 200, maxWaitTimeInMs: 100 })
    clients.push(consumer)
    await consumer.connect()
    await consumer.subscribe({ topic: 'jobs', fromBeginning: true })
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) })
    await until('all 40 consumed', () => seen.length >= 40, 30_000)
    await consumer.disconnect()
    // The group's partition of the 50 (Kafka's Utils.abs("workers".hashCode()) % 50).
    const partition = partitionFor('workers', 50)
    const offsets = registration(b1, '__consumer_offsets', partition)!
    expect([...offsets.replicas].sort()).toEqual([1, 2, 3])
    expect(b1.metadataCache.partitionRegistration('__consumer_offsets', partition)!.isr.length).toBe(3)
    const committed = async (port: number) => (await (await admin(port)).fetchOffsets({ groupId: 'workers', topics: ['jobs'] }))[0].partitions.map((p) => Number(p.offset)).reduce((x, y) => x + y, 0)
    expect(await committed(b1.port)).toBe(40)

    // The coordinator's broker stops: another replica of the group's partition leads and serves the commits.
    await cluster.stop(offsets.leader)
    const other = [...brokers.values()][0]
    await until('a new coordinator', () => {
      const r = registration(other, '__consumer_offsets', partition)!
      return r.leader !== offsets.leader && r.leader !== -1
    })
    await until('the new coordinator loaded', () => brokers.get(registration(other, '__consumer_offsets', partition)!.leader)!.groupCoordinator.statusError('workers') === 0)
    expect(await committed(other.port)).toBe(40)
    await producer.send({ topic: 'jobs', acks: -1, messages: [{ key: 'late', value: 'late' }] })
    const resumed: string[] = []
    const again = kafka(other.port).consumer({ groupId: 'workers', sessionTimeout: 6000, heartbeatInterval: 200, maxWaitTimeInMs: 100 })
    clients.push(again)
    await again.connect()
    await again.subscribe({ topic: 'jobs', fromBeginning: true })
    await again.run({ eachMessage: async ({ message }) => void resumed.push(message.value!.toString()) })
    await until('the late record', () => resumed.includes('late'), 30_000)
    // It resumed from the commits: nothing consumed twice.
    expect(resumed).toEqual(['late'])
  }, 90_000)

  it('hands producer ids out from etcd blocks: no id twice across brokers and restarts', async () => {
    const [b1, b2, b3] = await startCluster()
    const ids: bigint[] = []
    for (const b of [b1, b2, b3, b1, b2]) ids.push(await b.producerIds.generateProducerId())
    await cluster.stop(1)
    const again = await start(1)
    ids.push(await again.producerIds.generateProducerId())
    expect(new Set(ids).size).toBe(ids.length)
  }, 60_000)
})
