/**
 * Coordinators spread over a cluster of three broker processes on a real etcd, as Kafka spreads
 * them: `__consumer_offsets` and `__transaction_state` are made with 50 partitions (the first
 * FindCoordinator asks for them), led by all three brokers; 300 groups and 300 transactional ids
 * are each coordinated by the leader of Kafka's partition for them (ts/coordinator/partition-for.ts),
 * every broker by some, and a broker refuses the groups of partitions it does not lead
 * (NOT_COORDINATOR). A broker SIGKILLed moves only its share: every other key keeps its
 * coordinator, the moved groups keep their committed offsets and the moved ids their producer ids.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { TRANSACTION_STATE_TOPIC } from '../../ts/coordinator/transaction/transaction-log.js'
import { OFFSETS_TOPIC } from '../../ts/group/offsets-topic.js'
import { describeTransactionsCodec } from '../../ts/protocol/apis/describe-transactions.js'
import { CoordinatorType, findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { initProducerIdCodec } from '../../ts/protocol/apis/init-producer-id.js'
import { offsetCommitCodec } from '../../ts/protocol/apis/offset-commit.js'
import { offsetFetchCodec } from '../../ts/protocol/apis/offset-fetch.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { ClusterProcesses, type BrokerNode } from '../helpers/cluster-processes.js'

let cluster: ClusterProcesses | undefined
const clients = new Map<number, NetworkClient>()

afterEach(async () => {
  for (const c of clients.values()) await c.close().catch(() => undefined)
  clients.clear()
  if (cluster && cluster.unexpectedExits().length > 0) console.error(cluster.logTails())
  await cluster?.close()
  cluster = undefined
})

const TOPIC = 'jobs'
const GROUPS = Array.from({ length: 300 }, (_, i) => `orders-consumer-${i}`)
const TXN_IDS = Array.from({ length: 300 }, (_, i) => `payments-txn-${i}`)

async function clientOf(node: BrokerNode): Promise<NetworkClient> {
  let c = clients.get(node.nodeId)
  if (!c) {
    c = await NetworkClient.connect(node.address)
    clients.set(node.nodeId, c)
  }
  return c
}

/** Each key's coordinator as `via` answers FindCoordinator v4 (one batch); -1 while not available. */
async function coordinators(via: BrokerNode, keyType: number, keys: readonly string[]): Promise<Map<string, number>> {
  const r = await (await clientOf(via)).send(findCoordinatorCodec, 4, { key: '', keyType, coordinatorKeys: [...keys] })
  return new Map(r.coordinators.map((c) => [c.key, c.errorCode === ErrorCode.NONE ? c.nodeId : -1]))
}

/** The leader of each partition of an internal topic, as Metadata tells it. */
async function leaders(c: ClusterProcesses, topic: string): Promise<number[] | null> {
  const view = await c.topic(topic)
  return view ? view.partitions.map((p) => p.leaderId) : null
}

function commitRequest(group: string, offset: bigint) {
  return {
    groupId: group,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
  }
}

describe('coordinators spread over a cluster', () => {
  it('places 300 groups and 300 transactional ids on all three brokers as Kafka does; a SIGKILL moves only its share, committed offsets intact', async () => {
    const c = (cluster = await ClusterProcesses.start({ brokers: 3, props: { 'transaction.state.log.replication.factor': '3' } }))
    await c.createTopic(TOPIC, { partitions: 1, replicationFactor: 3 })
    const first = c.node(1)
    // The first look-ups make both topics (50 partitions each); until led, COORDINATOR_NOT_AVAILABLE.
    const groupsAt = await c.until('every group has a coordinator', async () => {
      const m = await coordinators(first, CoordinatorType.GROUP, GROUPS)
      return [...m.values()].every((id) => id > 0) && m
    })
    const txnsAt = await c.until('every transactional id has a coordinator', async () => {
      const m = await coordinators(first, CoordinatorType.TRANSACTION, TXN_IDS)
      return [...m.values()].every((id) => id > 0) && m
    })
    const offsetsView = await c.waitForFullIsr(OFFSETS_TOPIC)
    const txnView = await c.waitForFullIsr(TRANSACTION_STATE_TOPIC)
    expect(offsetsView.partitions).toHaveLength(50)
    expect(txnView.partitions).toHaveLength(50)
    const offsetsLeaders = offsetsView.partitions.map((p) => p.leaderId)
    const txnLeaders = txnView.partitions.map((p) => p.leaderId)
    // Each key's coordinator is the leader of Kafka's partition for it; all three brokers have some.
    for (const g of GROUPS) expect(groupsAt.get(g)).toBe(offsetsLeaders[partitionFor(g, 50)])
    for (const id of TXN_IDS) expect(txnsAt.get(id)).toBe(txnLeaders[partitionFor(id, 50)])
    const share = (m: Map<string, number>) => [1, 2, 3].map((id) => [...m.values()].filter((n) => n === id).length).join('/')
    console.log(`coordinators of brokers 1/2/3: ${share(groupsAt)} of ${GROUPS.length} groups, ${share(txnsAt)} of ${TXN_IDS.length} transactional ids`)
    expect(new Set(groupsAt.values())).toEqual(new Set([1, 2, 3]))
    expect(new Set(txnsAt.values())).toEqual(new Set([1, 2, 3]))
    // Any broker answers the same.
    expect(await coordinators(c.node(3), CoordinatorType.GROUP, GROUPS)).toEqual(groupsAt)

    // Commits to each group's coordinator, InitProducerId to each id's.
    for (const [i, g] of GROUPS.entries()) {
      await c.until(`commit of ${g}`, async () => {
        const r = await (await clientOf(c.node(groupsAt.get(g)!))).send(offsetCommitCodec, 8, commitRequest(g, BigInt(10_000 + i)))
        return r.topics[0]!.partitions[0]!.errorCode === ErrorCode.NONE
      })
    }
    const producerIds = new Map<string, bigint>()
    for (const id of TXN_IDS) {
      const { producerId } = await c.until(`InitProducerId of ${id}`, async () => {
        const r = await (await clientOf(c.node(txnsAt.get(id)!))).send(initProducerIdCodec, 4, { transactionalId: id, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })
        return r.errorCode === ErrorCode.NONE && r
      })
      producerIds.set(id, producerId)
    }
    // A broker that does not lead a group's partition refuses it.
    const elsewhere = GROUPS.find((g) => groupsAt.get(g) !== 1)!
    const refused = await (await clientOf(first)).send(offsetCommitCodec, 8, commitRequest(elsewhere, 1n))
    expect(refused.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR)

    // SIGKILL broker 2: its partitions get new leaders among 1 and 3; no other key moves.
    const victim = 2
    await c.node(victim).kill()
    clients
      .get(victim)
      ?.close()
      .catch(() => undefined)
    clients.delete(victim)
    await c.until(
      'the partitions of the killed broker led elsewhere',
      async () => {
        const [o, t] = [await leaders(c, OFFSETS_TOPIC), await leaders(c, TRANSACTION_STATE_TOPIC)]
        return o && t && [...o, ...t].every((l) => l > 0 && l !== victim)
      },
      60_000,
    )
    const groupsAfter = await c.until('every group has a live coordinator', async () => {
      const m = await coordinators(first, CoordinatorType.GROUP, GROUPS)
      return [...m.values()].every((id) => id > 0 && id !== victim) && m
    })
    const txnsAfter = await c.until('every transactional id has a live coordinator', async () => {
      const m = await coordinators(first, CoordinatorType.TRANSACTION, TXN_IDS)
      return [...m.values()].every((id) => id > 0 && id !== victim) && m
    })
    const moved = GROUPS.filter((g) => groupsAt.get(g) === victim)
    console.log(`after SIGKILL of broker ${victim}: ${moved.length} groups moved, ${GROUPS.length - moved.length} kept their coordinator; brokers 1/2/3: ${share(groupsAfter)}`)
    expect(moved.length).toBeGreaterThan(0)
    for (const g of GROUPS) if (groupsAt.get(g) !== victim) expect(groupsAfter.get(g)).toBe(groupsAt.get(g))
    for (const id of TXN_IDS) if (txnsAt.get(id) !== victim) expect(txnsAfter.get(id)).toBe(txnsAt.get(id))
    const offsetsLeadersAfter = (await leaders(c, OFFSETS_TOPIC))!
    for (const g of GROUPS) expect(groupsAfter.get(g)).toBe(offsetsLeadersAfter[partitionFor(g, 50)])

    // Every group's committed offset, at its coordinator now (the moved ones loaded by their new leader).
    for (const [i, g] of GROUPS.entries()) {
      const offset = await c.until(`offsets of ${g}`, async () => {
        const r = await (
          await clientOf(c.node(groupsAfter.get(g)!))
        ).send(offsetFetchCodec, 8, {
          groupId: '',
          topics: [],
          groups: [{ groupId: g, memberId: null, memberEpoch: -1, topics: [{ name: TOPIC, partitionIndexes: [0] }] }],
          requireStable: false,
        })
        return r.groups[0]!.errorCode === ErrorCode.NONE && r.groups[0]!.topics[0]!.partitions[0]!
      })
      expect(offset.committedOffset, g).toBe(BigInt(10_000 + i))
    }
    // Every transactional id's producer id, at its coordinator now.
    for (const node of [c.node(1), c.node(3)]) {
      const ids = TXN_IDS.filter((id) => txnsAfter.get(id) === node.nodeId)
      const states = await c.until(`transactions at ${node.nodeId}`, async () => {
        const r = await (await clientOf(node)).send(describeTransactionsCodec, 0, { transactionalIds: ids })
        return r.transactionStates.every((s) => s.errorCode === ErrorCode.NONE) && r.transactionStates
      })
      for (const s of states) expect(s.producerId, s.transactionalId).toBe(producerIds.get(s.transactionalId))
    }
    expect(c.unexpectedExits()).toEqual([])
  }, 240_000)
})
