/**
 * AlterPartitionReassignments and ListPartitionReassignments (ApiKeys 45 and 46) over real
 * sockets, on a standalone broker (a cluster of one: reassigning a partition to its only broker is
 * done and changes nothing, as Kafka does) and on an in-process cluster of three: Kafka's
 * per-partition errors and messages (ReplicationControlManager), nothing ever in progress to
 * list or cancel, and kafkajs's admin calls answered. Moving replicas between brokers is not
 * served yet: refused, and the partition keeps its replicas.
 */
import { Kafka, logLevel, type Admin } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBroker, startCluster, type EmbeddedCluster } from '../../ts/index.js'
import { alterPartitionReassignmentsCodec, type AlterPartitionReassignmentsRequest } from '../../ts/protocol/apis/alter-partition-reassignments.js'
import { listPartitionReassignmentsCodec } from '../../ts/protocol/apis/list-partition-reassignments.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'

type Topics = AlterPartitionReassignmentsRequest['topics']

async function alter(port: number, version: number, topics: Topics, allowReplicationFactorChange = true) {
  const wire = new KafkaWire(await connectTo(port), 'reassigner')
  try {
    const r = await wire.send(alterPartitionReassignmentsCodec, version, { timeoutMs: 10_000, allowReplicationFactorChange, topics })
    return { ...r, partitions: r.responses.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, ...p }))) }
  } finally {
    wire.close()
  }
}

async function list(port: number, topics: Array<{ name: string; partitionIndexes: number[] }> | null) {
  const wire = new KafkaWire(await connectTo(port), 'reassignment-lister')
  try {
    return await wire.send(listPartitionReassignmentsCodec, 0, { timeoutMs: 10_000, topics })
  } finally {
    wire.close()
  }
}

function admin(bootstrap: string): Admin {
  return new Kafka({ clientId: 'reassignments', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING }).admin()
}

describe('partition reassignments on a standalone broker', () => {
  let broker: Broker
  beforeAll(async () => {
    broker = await startBroker()
    await broker.createTopic('moved', 2, {})
  })
  afterAll(async () => {
    await broker?.stop()
  })

  it("answers each partition as Kafka's controller: to the only broker done, others refused with Kafka's errors and messages", async () => {
    const self = broker.config.nodeId
    for (const version of [0, 1]) {
      const r = await alter(broker.port, version, [
        {
          name: 'moved',
          partitions: [
            { partitionIndex: 0, replicas: [self] },
            { partitionIndex: 1, replicas: null },
            { partitionIndex: 0, replicas: [self, 7] },
            { partitionIndex: 0, replicas: [self, self] },
            { partitionIndex: 0, replicas: [] },
            { partitionIndex: 2, replicas: [self] },
          ],
        },
        { name: 'absent', partitions: [{ partitionIndex: 0, replicas: [self] }] },
      ])
      expect(r.errorCode).toBe(ErrorCode.NONE)
      expect(r.errorMessage).toBeNull()
      expect(r.partitions.map((p) => [p.topic, p.partitionIndex, p.errorCode, p.errorMessage])).toEqual([
        ['moved', 0, ErrorCode.NONE, null],
        ['moved', 1, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, 'No partition reassignment is in progress.'],
        ['moved', 0, ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes broker 7, but no such broker is registered.'],
        ['moved', 0, ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes the broker ${self} more than once.`],
        ['moved', 0, ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.'],
        ['moved', 2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'Unable to find partition moved:2.'],
        ['absent', 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'Unable to find a topic named absent.'],
      ])
    }
    // v1 echoes allowReplicationFactorChange.
    expect((await alter(broker.port, 1, [], false)).allowReplicationFactorChange).toBe(false)
    expect((await alter(broker.port, 1, [], true)).allowReplicationFactorChange).toBe(true)
  })

  it('lists no reassignment in progress, of every partition or of those named', async () => {
    expect(await list(broker.port, null)).toEqual({ throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, topics: [] })
    expect(
      (
        await list(broker.port, [
          { name: 'moved', partitionIndexes: [0, 1] },
          { name: 'absent', partitionIndexes: [0] },
        ])
      ).topics,
    ).toEqual([])
  })

  it("kafkajs's admin reassigns a partition to the only broker and lists none in progress", async () => {
    const a = admin(`127.0.0.1:${broker.port}`)
    await a.connect()
    try {
      await a.alterPartitionReassignments({ topics: [{ topic: 'moved', partitionAssignment: [{ partition: 0, replicas: [broker.config.nodeId] }] }] })
      expect(await a.listPartitionReassignments({})).toEqual({ topics: [] })
      // kafkajs gathers the partitions' errors into one error, each with Kafka's type.
      const refused = await a.alterPartitionReassignments({ topics: [{ topic: 'moved', partitionAssignment: [{ partition: 0, replicas: [9] }] }] }).catch((e: unknown) => e)
      expect((refused as { errors?: Array<{ type: string }> }).errors?.map((e) => e.type)).toEqual(['INVALID_REPLICA_ASSIGNMENT'])
    } finally {
      await a.disconnect()
    }
  })
})

describe('partition reassignments in a cluster', () => {
  let cluster: EmbeddedCluster
  beforeAll(async () => {
    cluster = await startCluster({ brokers: 3 })
    const a = admin(cluster.bootstrapServers)
    await a.connect()
    try {
      await a.createTopics({ topics: [{ topic: 'placed', replicaAssignment: [{ partition: 0, replicas: [1, 2] }] }], waitForLeaders: true })
    } finally {
      await a.disconnect()
    }
  }, 60_000)
  afterAll(async () => {
    await cluster?.stop()
  })

  it('keeps the replicas a partition has, checks targets against the registered brokers and the replication factor, and refuses to move replicas (not served yet)', async () => {
    const broker = cluster.broker(3)
    const before = broker.metadataCache.partitionRegistration('placed', 0)!
    expect(before.replicas).toEqual([1, 2])
    const r = await alter(broker.port, 1, [
      {
        name: 'placed',
        partitions: [
          { partitionIndex: 0, replicas: [1, 2] },
          { partitionIndex: 0, replicas: [1, 2, 4] },
          { partitionIndex: 0, replicas: [2, 3] },
          { partitionIndex: 0, replicas: null },
        ],
      },
    ])
    expect(r.partitions.map((p) => [p.errorCode, p.errorMessage])).toEqual([
      [ErrorCode.NONE, null],
      [ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes broker 4, but no such broker is registered.'],
      [ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'ferrolog does not move replicas yet: placed:0 keeps its replicas [1, 2] (asked: [2, 3]).'],
      [ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, 'No partition reassignment is in progress.'],
    ])
    const strict = await alter(broker.port, 1, [{ name: 'placed', partitions: [{ partitionIndex: 0, replicas: [1, 2, 3] }] }], false)
    expect(strict.partitions.map((p) => [p.errorCode, p.errorMessage])).toEqual([[ErrorCode.INVALID_REPLICATION_FACTOR, 'The replication factor is changed from 2 to 3']])
    expect(broker.metadataCache.partitionRegistration('placed', 0)).toEqual(before)
    expect((await list(broker.port, null)).topics).toEqual([])
  })
})
