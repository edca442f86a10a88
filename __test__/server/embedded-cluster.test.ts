/**
 * In-process clusters (`startCluster` from 'ferrolog'): three brokers in this process on the
 * in-memory metadata store, replicating over real sockets. A topic with replication factor 3 takes
 * acks=all produces on every replica; the leader stopped, the others elect a leader and take
 * acks=all produces; the stopped broker comes back on its port and data dir and catches up; a
 * consumer group reads every record once. A process that runs a cluster exits by itself once it
 * stops it, and the data dirs are gone.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { startCluster, type EmbeddedCluster } from '../../ts/index.js'
import { until } from '../helpers/etcd-cluster.js'
import { freePorts } from '../helpers/etcd.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { deleteRecordsCodec } from '../../ts/protocol/apis/delete-records.js'
import { listOffsetsCodec } from '../../ts/protocol/apis/list-offsets.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'

let cluster: EmbeddedCluster | undefined
const clients: Array<Admin | Producer | Consumer> = []

afterEach(async () => {
  for (const c of clients.splice(0)) await c.disconnect().catch(() => undefined)
  await cluster?.stop()
  cluster = undefined
})

function kafka(bootstrap: string[]): Kafka {
  return new Kafka({ clientId: 'embedded-cluster', brokers: bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } })
}

describe('startCluster', () => {
  it('three brokers: RF=3 acks=all lands on every replica; the leader stopped, the others elect one; it comes back and catches up; every record consumed once', async () => {
    cluster = await startCluster({ brokers: 3 })
    const c = cluster
    expect(c.brokers.map((b) => b.config.nodeId)).toEqual([1, 2, 3])
    expect(new Set(c.brokers.map((b) => b.port)).size).toBe(3)
    expect(new Set(c.brokers.map((b) => b.config.dataDir)).size).toBe(3)
    const bootstrap = c.bootstrapServers.split(',')
    const client = kafka(bootstrap)
    const admin = client.admin()
    clients.push(admin)
    await admin.connect()
    expect(await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1, replicationFactor: 3 }], waitForLeaders: true })).toBe(true)

    const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 })
    clients.push(producer)
    await producer.connect()
    const send = async (from: number, to: number) => {
      for (let i = from; i < to; i += 10) {
        await producer.send({ topic: 'orders', acks: -1, messages: Array.from({ length: 10 }, (_, j) => ({ key: `k${i + j}`, value: `v${i + j}` })) })
      }
    }
    await send(0, 100)
    // acks=all: every replica holds the 100 records, the ISR is all three.
    const first = c.leaderOf('orders', 0)!
    expect([1, 2, 3]).toContain(first)
    for (const b of c.brokers) {
      expect(b.metadataCache.partitionRegistration('orders', 0)?.isr.slice().sort()).toEqual([1, 2, 3])
      await until(`broker ${b.config.nodeId} holds 100 records`, () => b.logManager.getLog('orders', 0)?.highWatermark() === 100n)
    }

    await c.stopBroker(first)
    expect(c.brokers.map((b) => b.config.nodeId)).not.toContain(first)
    const second = await until('the others elect a leader', () => {
      const leaders = c.brokers.map((b) => b.metadataCache.partitionRegistration('orders', 0)?.leader)
      return leaders.every((l) => l === leaders[0] && l !== undefined && l >= 0 && l !== first) ? leaders[0] : undefined
    })
    expect(c.leaderOf('orders', 0)).toBe(second)
    await send(100, 200)

    // Back on its port and its data dir: it follows and catches up.
    const restarted = await c.startBroker(first)
    expect(`127.0.0.1:${restarted.port}`).toBe(bootstrap[first - 1])
    await until('the restarted broker caught up', () => restarted.logManager.getLog('orders', 0)?.highWatermark() === 200n)
    await until('it is back in the ISR', () => restarted.metadataCache.partitionRegistration('orders', 0)?.isr.includes(first))

    const consumer = client.consumer({ groupId: 'orders-readers' })
    clients.push(consumer)
    await consumer.connect()
    await consumer.subscribe({ topic: 'orders', fromBeginning: true })
    const seen: string[] = []
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message.value!.toString())
      },
    })
    await until('every record consumed', () => seen.length >= 200, 30_000)
    expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => `v${i}`))

    // Clients first, as an application stops: a kafkajs consumer still running when every broker
    // of the process goes away retries without ever yielding to the event loop (its fetch fails
    // at once on the closed connections), and the brokers in the same process never get to run.
    for (const client of clients.splice(0)) await client.disconnect()
    const root = c.root
    await c.stop()
    cluster = undefined
    expect(existsSync(root)).toBe(false)
  }, 90_000)

  it('brokers on the listeners and ids a client suite expects (firstBrokerId 0, fixed ports), kept across a restart', async () => {
    const ports = await freePorts(2)
    cluster = await startCluster({ brokers: 2, firstBrokerId: 0, listeners: (id) => `PLAINTEXT://127.0.0.1:${ports[id]}` })
    const c = cluster
    expect(c.brokers.map((b) => [b.config.nodeId, b.port])).toEqual([
      [0, ports[0]],
      [1, ports[1]],
    ])
    const admin = kafka([`127.0.0.1:${ports[0]}`]).admin()
    clients.push(admin)
    await admin.connect()
    const described = await admin.describeCluster()
    expect(described.brokers.map((b) => [b.nodeId, b.port]).sort()).toEqual([
      [0, ports[0]],
      [1, ports[1]],
    ])
    // Replicas named by id, as kafkajs's own suite names its brokers 0 and 1.
    expect(await admin.createTopics({ topics: [{ topic: 'assigned', replicaAssignment: [{ partition: 0, replicas: [0, 1] }] }], waitForLeaders: true })).toBe(true)
    await c.stopBroker(0)
    await c.startBroker(0)
    expect(c.broker(0).port).toBe(ports[0])
  }, 60_000)

  it("a broker holding no replica of a partition answers NOT_LEADER_OR_FOLLOWER (the client finds the leader), UNKNOWN_TOPIC_OR_PARTITION only for one the cluster lacks, as Kafka's getPartitionOrError", async () => {
    cluster = await startCluster({ brokers: 3 })
    const c = cluster
    const admin = kafka(c.bootstrapServers.split(',')).admin()
    clients.push(admin)
    await admin.connect()
    await admin.createTopics({ topics: [{ topic: 'single', replicaAssignment: [{ partition: 0, replicas: [1] }] }], waitForLeaders: true })
    // Broker 3 knows the partition from the metadata, and holds no log of it.
    await until('broker 3 knows single-0', () => c.broker(3).metadataCache.partitionRegistration('single', 0)?.leader === 1)
    expect(c.broker(3).logManager.getLog('single', 0)).toBeUndefined()
    const socket = await connectTo(c.broker(3).port)
    try {
      const wire = new KafkaWire(socket, 'non-replica')
      const deleteRecords = async (topic: string) =>
        (await wire.send(deleteRecordsCodec, 2, { topics: [{ name: topic, partitions: [{ partitionIndex: 0, offset: 0n }] }], timeoutMs: 1000 })).topics[0].partitions[0].errorCode
      const listOffsets = async (topic: string) =>
        (
          await wire.send(listOffsetsCodec, 7, {
            replicaId: -1,
            isolationLevel: 0,
            topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
          })
        ).topics[0].partitions[0].errorCode
      expect(await deleteRecords('single')).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
      expect(await listOffsets('single')).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
      expect(await deleteRecords('nowhere')).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
      expect(await listOffsets('nowhere')).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    } finally {
      socket.destroy()
    }
  }, 60_000)

  it("a leader takes produces and ListOffsets as soon as its own Metadata names it, while it still makes the new topic's logs (kafkajs's produce and admin specs, which do not retry NOT_LEADER_OR_FOLLOWER)", async () => {
    cluster = await startCluster({ brokers: 3 })
    const c = cluster
    const k = new Kafka({ clientId: 'right-after-create', brokers: c.bootstrapServers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 0 } })
    const admin = k.admin()
    const producer = k.producer({ retry: { retries: 0 } })
    clients.push(admin, producer)
    await admin.connect()
    await producer.connect()
    // Many partitions per broker: their logs are made in batches, after the metadata names the leaders.
    const partitions = 96
    expect(await admin.createTopics({ topics: [{ topic: 'fresh', numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true })).toBe(true)
    const sent = await producer.send({ topic: 'fresh', acks: 1, messages: Array.from({ length: partitions }, (_, partition) => ({ partition, value: `v${partition}` })) })
    expect(sent.map((r) => r.errorCode)).toEqual(new Array(sent.length).fill(0))
    expect(sent.length).toBe(partitions)
    // The same for ListOffsets (kafkajs's fetchTopicOffsets right after createTopics).
    expect(await admin.createTopics({ topics: [{ topic: 'fresh-offsets', numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true })).toBe(true)
    const offsets = await admin.fetchTopicOffsets('fresh-offsets')
    expect(offsets.map((o) => [o.partition, o.offset, o.high, o.low]).sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual(Array.from({ length: partitions }, (_, p) => [p, '0', '0', '0']))
  }, 60_000)

  it('leaves nothing behind: a process that runs a cluster exits by itself once it stops it', async () => {
    const child = spawn(process.execPath, [join(__dirname, '../helpers/embedded-cluster-child.mjs')], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise<{ code: number | null }>((resolve) => child.on('exit', (code) => resolve({ code })))
    try {
      const { code } = await exited
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      expect(stdout).toContain('produced\n')
      // Exited on its own; once the cluster stopped no timer, server or socket was left to keep it.
      const left = JSON.parse(/stopped resources=(.*)\n/.exec(stdout)![1]!) as string[]
      expect(left.filter((kind) => !['PipeWrap', 'TTYWrap', 'FSReqCallback', 'FSReqPromise'].includes(kind))).toEqual([])
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    const root = /root=(.*)\n/.exec(stdout)![1]!
    expect(existsSync(root)).toBe(false)
  }, 60_000)
})
