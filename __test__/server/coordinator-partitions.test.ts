/**
 * A standalone broker's coordinators over the partitions of `__consumer_offsets` and
 * `__transaction_state` (ts/group/group-coordinator-service.ts,
 * ts/coordinator/transaction/transaction-state-manager.ts): 50 of each by default, every group's
 * commits and every transactional id's state in the partition of Kafka's `partitionFor`, all of
 * them loaded again by a restart; and a data dir made with one partition of each (the layout of
 * ferrolog before offsets.topic.num.partitions) keeps one partition under the default of 50,
 * every group and id in it, as Kafka never changes the count of an existing internal topic.
 */
import { readdirSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { decodeTxnLogKey, TRANSACTION_STATE_TOPIC } from '../../ts/coordinator/transaction/transaction-log.js'
import { decodeOffsetKey, OFFSETS_TOPIC } from '../../ts/group/offsets-topic.js'
import { describeTransactionsCodec } from '../../ts/protocol/apis/describe-transactions.js'
import { CoordinatorType, findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { initProducerIdCodec } from '../../ts/protocol/apis/init-producer-id.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { offsetCommitCodec } from '../../ts/protocol/apis/offset-commit.js'
import { offsetFetchCodec } from '../../ts/protocol/apis/offset-fetch.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
let client: NetworkClient | undefined

afterEach(async () => {
  await client?.close()
  await broker?.stop()
  client = broker = undefined
})

async function open(dataDir: string, props: Record<string, string> = {}): Promise<NetworkClient> {
  await client?.close()
  await broker?.stop()
  broker = await startBroker({ dataDir, props })
  if (!broker.topics.get('t')) await broker.createTopic('t', 4, {})
  client = await NetworkClient.connect(`127.0.0.1:${broker.port}`)
  return client
}

const GROUPS = Array.from({ length: 120 }, (_, i) => `group-${i}`)
const TXN_IDS = Array.from({ length: 120 }, (_, i) => `txn-${i}`)

async function commit(c: NetworkClient, group: string, offset: bigint): Promise<void> {
  const r = await c.send(offsetCommitCodec, 8, {
    groupId: group,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [{ name: 't', partitions: [{ partitionIndex: 1, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
  })
  expect(r.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE)
}

async function fetched(c: NetworkClient, groups: readonly string[]): Promise<Map<string, bigint>> {
  const r = await c.send(offsetFetchCodec, 8, {
    groupId: '',
    topics: [],
    groups: groups.map((groupId) => ({ groupId, memberId: null, memberEpoch: -1, topics: [{ name: 't', partitionIndexes: [1] }] })),
    requireStable: false,
  })
  return new Map(
    r.groups.map((g) => {
      expect(g.errorCode).toBe(ErrorCode.NONE)
      return [g.groupId, g.topics[0]!.partitions[0]!.committedOffset]
    }),
  )
}

async function initProducerId(c: NetworkClient, id: string): Promise<bigint> {
  const r = await c.send(initProducerIdCodec, 4, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })
  expect(r.errorCode).toBe(ErrorCode.NONE)
  return r.producerId
}

async function described(c: NetworkClient, ids: readonly string[]): Promise<Map<string, bigint>> {
  const r = await c.send(describeTransactionsCodec, 0, { transactionalIds: [...ids] })
  return new Map(
    r.transactionStates.map((s) => {
      expect(s.errorCode).toBe(ErrorCode.NONE)
      return [s.transactionalId, s.producerId]
    }),
  )
}

/** The partition each key of an internal topic's logs was written to, by key. */
function partitionsOfKeys(b: Broker, topic: string, keyOf: (key: Buffer) => string): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>()
  for (const log of b.logManager.allLogs()) {
    if (log.topic !== topic) continue
    for (const r of log.readRecords(log.logStartOffset(), { maxBytes: 1 << 24, isolation: 'LOG_END' })) {
      const key = keyOf(r.key!)
      let set = out.get(key)
      if (!set) out.set(key, (set = new Set()))
      set.add(log.partition)
    }
  }
  return out
}

function partitionDirs(dataDir: string, topic: string): number[] {
  return readdirSync(dataDir)
    .filter((d) => d.startsWith(`${topic}-`))
    .map((d) => Number(d.slice(topic.length + 1)))
    .sort((a, b) => a - b)
}

async function internalPartitionCounts(c: NetworkClient): Promise<Record<string, number>> {
  const r = await c.send(metadataCodec, 12, {
    topics: [OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC].map((name) => ({ name, topicId: Buffer.alloc(16) })),
    allowAutoTopicCreation: false,
    includeTopicAuthorizedOperations: false,
    includeClusterAuthorizedOperations: false,
  })
  return Object.fromEntries(r.topics.map((t) => [t.name, t.partitions.length]))
}

async function findCoordinators(c: NetworkClient, keyType: number, keys: readonly string[]) {
  return (await c.send(findCoordinatorCodec, 4, { key: '', keyType, coordinatorKeys: [...keys] })).coordinators
}

describe('coordinator partitions of a standalone broker', () => {
  it('hashes 120 groups and 120 transactional ids over 50 partitions as Kafka, and a restart loads every partition again', async () => {
    const dataDir = tempDir('ferrolog-coord-partitions-')
    let c = await open(dataDir)
    expect(partitionDirs(dataDir, OFFSETS_TOPIC)).toEqual([...Array(50).keys()])
    expect(partitionDirs(dataDir, TRANSACTION_STATE_TOPIC)).toEqual([...Array(50).keys()])
    expect(await internalPartitionCounts(c)).toEqual({ [OFFSETS_TOPIC]: 50, [TRANSACTION_STATE_TOPIC]: 50 })
    expect(broker!.groupCoordinator.activePartitions()).toEqual([...Array(50).keys()])
    expect(broker!.transactionCoordinator.stateManager.loadedPartitions()).toEqual([...Array(50).keys()])

    for (const [i, g] of GROUPS.entries()) await commit(c, g, BigInt(1000 + i))
    const producerIds = new Map<string, bigint>()
    for (const id of TXN_IDS) producerIds.set(id, await initProducerId(c, id))

    // Each key's records are in the partition of Utils.abs(key.hashCode()) % 50, and only there.
    const groupPartitions = partitionsOfKeys(broker!, OFFSETS_TOPIC, (k) => decodeOffsetKey(k).group)
    const txnPartitions = partitionsOfKeys(broker!, TRANSACTION_STATE_TOPIC, decodeTxnLogKey)
    for (const g of GROUPS) expect([...groupPartitions.get(g)!]).toEqual([partitionFor(g, 50)])
    for (const id of TXN_IDS) expect([...txnPartitions.get(id)!]).toEqual([partitionFor(id, 50)])
    // The keys spread: most partitions hold some.
    expect(new Set(GROUPS.map((g) => partitionFor(g, 50))).size).toBeGreaterThan(35)

    // The broker coordinates every key (v4 batched and v3 single).
    for (const co of await findCoordinators(c, CoordinatorType.GROUP, GROUPS)) expect(co).toMatchObject({ errorCode: 0, nodeId: broker!.config.nodeId, port: broker!.port })
    for (const co of await findCoordinators(c, CoordinatorType.TRANSACTION, TXN_IDS)) expect(co).toMatchObject({ errorCode: 0, nodeId: broker!.config.nodeId })
    expect(await c.send(findCoordinatorCodec, 3, { key: 'group-7', keyType: CoordinatorType.GROUP, coordinatorKeys: [] })).toMatchObject({ errorCode: 0, nodeId: broker!.config.nodeId })

    // A restart: every partition is loaded again, every commit and producer id comes back.
    c = await open(dataDir)
    expect(await internalPartitionCounts(c)).toEqual({ [OFFSETS_TOPIC]: 50, [TRANSACTION_STATE_TOPIC]: 50 })
    expect(broker!.groupCoordinator.activePartitions()).toEqual([...Array(50).keys()])
    const offsets = await fetched(c, GROUPS)
    for (const [i, g] of GROUPS.entries()) expect(offsets.get(g)).toBe(BigInt(1000 + i))
    expect(await described(c, TXN_IDS)).toEqual(producerIds)
  })

  it('keeps one partition of each internal topic for a data dir made with one, under the default of 50', async () => {
    const dataDir = tempDir('ferrolog-coord-partitions-old-')
    // The layout of ferrolog before the setting: __consumer_offsets-0 and __transaction_state-0 only.
    const one = { 'offsets.topic.num.partitions': '1', 'transaction.state.log.num.partitions': '1' }
    let c = await open(dataDir, one)
    for (const [i, g] of GROUPS.slice(0, 40).entries()) await commit(c, g, BigInt(i))
    const producerIds = new Map<string, bigint>()
    for (const id of TXN_IDS.slice(0, 40)) producerIds.set(id, await initProducerId(c, id))

    // Started again with the defaults (50): the topics keep their one partition.
    c = await open(dataDir)
    expect(partitionDirs(dataDir, OFFSETS_TOPIC)).toEqual([0])
    expect(partitionDirs(dataDir, TRANSACTION_STATE_TOPIC)).toEqual([0])
    expect(await internalPartitionCounts(c)).toEqual({ [OFFSETS_TOPIC]: 1, [TRANSACTION_STATE_TOPIC]: 1 })
    expect(broker!.groupCoordinator.numPartitions).toBe(1)
    const offsets = await fetched(c, GROUPS.slice(0, 40))
    for (const [i, g] of GROUPS.slice(0, 40).entries()) expect(offsets.get(g)).toBe(BigInt(i))
    expect(await described(c, TXN_IDS.slice(0, 40))).toEqual(producerIds)
    for (const co of await findCoordinators(c, CoordinatorType.GROUP, GROUPS)) expect(co).toMatchObject({ errorCode: 0, nodeId: broker!.config.nodeId })

    // New groups and ids go to partition 0 too, and a later bump of an old id works.
    for (const g of GROUPS.slice(40)) await commit(c, g, 7n)
    for (const id of TXN_IDS.slice(40, 60)) await initProducerId(c, id)
    expect(await initProducerId(c, TXN_IDS[0]!)).toBe(producerIds.get(TXN_IDS[0]!))
    for (const set of partitionsOfKeys(broker!, OFFSETS_TOPIC, (k) => decodeOffsetKey(k).group).values()) expect([...set]).toEqual([0])
    for (const set of partitionsOfKeys(broker!, TRANSACTION_STATE_TOPIC, decodeTxnLogKey).values()) expect([...set]).toEqual([0])
  })
})
