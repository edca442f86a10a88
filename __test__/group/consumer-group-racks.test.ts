/**
 * Racks in KIP-848 consumer groups, as Kafka 4.4's group coordinator has them: a member's rack
 * (ConsumerGroupHeartbeat's RackId) and each partition's racks (the broker.rack of the brokers
 * holding its replicas) reach the assignor, whose uniform and range assignors do not use them;
 * a change of a subscribed partition's racks bumps the group epoch (Kafka 4.4 hashes them into
 * the group's metadata hash), a change of a member's rack does not.
 */
import { describe, expect, it } from 'vitest'
import type { Assignment } from '../../ts/group/consumer/assignment.js'
import type { ConsumerGroupPartitionAssignor, GroupSpec, SubscribedTopicDescriber } from '../../ts/group/consumer/assignor/partition-assignor.js'
import { UniformAssignor } from '../../ts/group/consumer/assignor/uniform-assignor.js'
import { ConsumerGroup } from '../../ts/group/consumer/consumer-group.js'
import type { ConsumerGroupHeartbeatParams, ConsumerGroupHeartbeatResult, TopicsImage } from '../../ts/group/consumer/consumer-group-manager.js'
import { newMember, updateMember } from '../../ts/group/consumer/consumer-group-member.js'
import { buildTargetAssignment } from '../../ts/group/consumer/target-assignment-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, type Harness } from './harness.js'

const ORDERS = Buffer.alloc(16, 1)
const ORDERS_HEX = ORDERS.toString('hex')
const OTHER = Buffer.alloc(16, 2)

/** `orders` (6 partitions) and `other` (2), each partition's replicas' racks in `racks` (`topic-partition` → racks). */
function racksImage(racks: Map<string, string[]>): TopicsImage {
  const topics: Record<string, { topicId: Buffer; numPartitions: number }> = { orders: { topicId: ORDERS, numPartitions: 6 }, other: { topicId: OTHER, numPartitions: 2 } }
  const image = (name: string) => {
    const t = topics[name]
    return t && { name, ...t, partitionRacks: (p: number) => racks.get(`${name}-${p}`) ?? [] }
  }
  return { byName: image, byId: (hex) => image(Object.keys(topics).find((n) => topics[n]!.topicId.toString('hex') === hex) ?? ''), names: () => Object.keys(topics) }
}

function heartbeat(h: Harness, p: Partial<ConsumerGroupHeartbeatParams> & { memberId: string; memberEpoch: number }): ConsumerGroupHeartbeatResult {
  return h.coordinator.consumerGroupHeartbeat({
    groupId: GROUP,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    subscribedTopicNames: null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: null,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    apiVersion: 1,
    sessionTimeoutMs: 45_000,
    heartbeatIntervalMs: 5000,
    ...p,
  })
}

const join = (h: Harness, memberId: string, rackId: string | null, serverAssignor: string | null = null) =>
  heartbeat(h, { memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['orders'], topicPartitions: [], rackId, serverAssignor })

const beat = (h: Harness, memberId: string, memberEpoch: number, owned: number[], rackId: string | null = null) =>
  heartbeat(h, { memberId, memberEpoch, topicPartitions: [{ topicId: ORDERS, partitions: owned }], rackId })

const partitions = (a: Assignment | null | undefined): number[] | null => (a ? [...(a.get(ORDERS_HEX) ?? [])].sort((x, y) => x - y) : null)

/** Partition p of orders on rack r(p % 3): r0, r1, r2. */
const rotated = () => new Map(Array.from({ length: 6 }, (_, p) => [`orders-${p}`, [`r${p % 3}`]]))

describe('racks in consumer groups (Kafka 4.4)', () => {
  it("a member's rack is kept and persisted; changing it rewrites its member record and bumps no epoch", async () => {
    let h = await harness({ topics: racksImage(rotated()) })
    const a = join(h, 'a', 'r1')
    expect(a).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 2 })
    expect(h.coordinator.consumerGroup(GROUP)!.member('a')!.rackId).toBe('r1')
    const moved = beat(h, 'a', 2, partitions(a.assignment)!, 'r2')
    expect(moved).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 2, assignment: null })
    const group = h.coordinator.consumerGroup(GROUP)!
    expect([group.groupEpoch, group.assignmentEpoch, group.member('a')!.rackId]).toEqual([2, 2, 'r2'])
    // A heartbeat without RackId keeps the rack.
    expect(beat(h, 'a', 2, partitions(a.assignment)!)).toMatchObject({ memberEpoch: 2 })
    expect(h.coordinator.consumerGroup(GROUP)!.member('a')!.rackId).toBe('r2')
    await h.coordinator.offsets.idle()
    h = await h.restart()
    expect(h.coordinator.consumerGroup(GROUP)!.member('a')!.rackId).toBe('r2')
  })

  it("a change of a subscribed partition's racks bumps the group epoch: a new target, the same partitions", async () => {
    const racks = rotated()
    const h = await harness({ topics: racksImage(racks) })
    const a = join(h, 'a', 'r0')
    const all = partitions(a.assignment)!
    expect(all).toEqual([0, 1, 2, 3, 4, 5])
    // A replica added on another rack: a new epoch; the same racks in another order: nothing.
    racks.set('orders-4', ['r1', 'r0'])
    expect(beat(h, 'a', 2, all)).toMatchObject({ memberEpoch: 3 })
    racks.set('orders-4', ['r0', 'r1'])
    expect(beat(h, 'a', 3, all)).toMatchObject({ memberEpoch: 3, assignment: null })
    // A topic the group does not subscribe to: nothing.
    racks.set('other-0', ['r2'])
    expect(beat(h, 'a', 3, all)).toMatchObject({ memberEpoch: 3, assignment: null })
    // A replica moved to a broker in another rack; a broker without a rack: each a new epoch.
    racks.set('orders-0', ['r2'])
    expect(beat(h, 'a', 3, all)).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 4, assignment: null })
    racks.set('orders-0', [])
    expect(beat(h, 'a', 4, all)).toMatchObject({ memberEpoch: 5, assignment: null })
    const group = h.coordinator.consumerGroup(GROUP)!
    expect([group.groupEpoch, group.assignmentEpoch, group.state()]).toEqual([5, 5, 'Stable'])
    expect(partitions(group.targetAssignmentOf('a'))).toEqual(all)
  })

  it('the metadata hash is written with the group epoch: a rack change while the coordinator was down bumps the epoch after the load', async () => {
    const racks = rotated()
    let h = await harness({ topics: racksImage(racks) })
    const all = partitions(join(h, 'a', 'r0').assignment)!
    await h.coordinator.offsets.idle()
    // Nothing changed: the same epoch after a restart.
    h = await h.restart()
    expect(beat(h, 'a', 2, all)).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 2, assignment: null })
    await h.coordinator.offsets.idle()
    racks.set('orders-5', ['r0'])
    h = await h.restart()
    expect(h.coordinator.consumerGroup(GROUP)!.groupEpoch).toBe(2)
    expect(beat(h, 'a', 2, all)).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 3 })
    expect(h.coordinator.consumerGroup(GROUP)!.groupEpoch).toBe(3)
  })

  for (const assignor of ['uniform', 'range']) {
    it(`${assignor}: members on racks get what they get without racks`, async () => {
      const run = async (withRacks: boolean) => {
        const h = await harness({ topics: racksImage(withRacks ? rotated() : new Map()) })
        const rack = (r: string) => (withRacks ? r : null)
        const first = join(h, 'm1', rack('r2'), assignor)
        join(h, 'm2', rack('r0'), assignor)
        join(h, 'm3', rack('r1'), assignor)
        // m1 revokes what is no longer its own; the others then get theirs.
        const group = h.coordinator.consumerGroup(GROUP)!
        beat(h, 'm1', first.memberEpoch, partitions(group.targetAssignmentOf('m1'))!)
        for (const m of ['m2', 'm3']) beat(h, m, group.member(m)!.memberEpoch, [])
        expect(group.state()).toBe('Stable')
        return Object.fromEntries(['m1', 'm2', 'm3'].map((m) => [m, partitions(group.member(m)!.assignedPartitions)]))
      }
      const without = await run(false)
      expect(await run(true)).toEqual(without)
      // Not what a rack-aware assignor would give: m1 is on r2, with partitions 2 and 5.
      expect(without.m1).not.toEqual([2, 5])
    })
  }

  it("the members' racks and the partitions' racks reach the assignor", () => {
    const group = new ConsumerGroup(GROUP)
    group.updateMember(updateMember(newMember('a'), { rackId: 'r1', subscribedTopicNames: ['orders'] }))
    group.updateMember(updateMember(newMember('b'), { subscribedTopicNames: ['orders'] }))
    const seen: Array<{ racks: Record<string, string | null>; partitions: string[][] }> = []
    const recording: ConsumerGroupPartitionAssignor = {
      name: 'recording',
      assign(spec: GroupSpec, topics: SubscribedTopicDescriber) {
        seen.push({
          racks: Object.fromEntries(spec.members.map((m) => [m.memberId, m.rackId])),
          partitions: [0, 1, 2].map((p) => [...topics.racksForPartition(ORDERS_HEX, p)].sort()),
        })
        return new UniformAssignor().assign(spec, topics)
      },
    }
    const metadata = new Map([['orders', { topicId: ORDERS_HEX, numPartitions: 2, partitionRacks: [['r0', 'r1'], []] }]])
    const target = buildTargetAssignment(group, recording, metadata, {})
    expect(seen).toEqual([{ racks: { a: 'r1', b: null }, partitions: [['r0', 'r1'], [], []] }])
    expect([...target.values()].map((t) => partitions(t)!.length)).toEqual([1, 1])
  })
})
