/**
 * A live classic group upgraded to a consumer group and downgraded back in the group coordinator
 * (ts/group/consumer/classic-group-migration.ts), as Kafka's GroupMetadataManagerTest drives it:
 * the classic members keep their partitions at their generation as member epoch, learn of the new
 * member from REBALANCE_IN_PROGRESS, rejoin with JoinGroup (answered at once) and revoke before
 * the new member gets their partitions; a restart resumes the mixed group from its records; the
 * last consumer-protocol member leaving makes the group classic again, which rebalances; and
 * group.consumer.migration.policy=disabled refuses both ways with Kafka's errors.
 */
import { describe, expect, it } from 'vitest'
import type { Assignment } from '../../../ts/group/consumer/assignment.js'
import type { ConsumerGroupHeartbeatParams, ConsumerGroupHeartbeatResult, TopicsImage } from '../../../ts/group/consumer/consumer-group-manager.js'
import { decodeAssignment, encodeAssignment, encodeSubscription } from '../../../ts/protocol/consumer-protocol.js'
import { ErrorCode } from '../../../ts/protocol/error-codes.js'
import { GROUP, harness, REBALANCE_TIMEOUT_MS, SESSION_TIMEOUT_MS, type Harness, type HarnessOptions } from '../harness.js'

const ORDERS = Buffer.from('0102030405060708090a0b0c0d0e0f10', 'hex')
const ORDERS_HEX = ORDERS.toString('hex')
const ALL = [0, 1, 2, 3, 4, 5]

const topics: TopicsImage = {
  byName: (name) => (name === 'orders' ? { name, topicId: ORDERS, numPartitions: 6 } : undefined),
  byId: (hex) => (hex === ORDERS_HEX ? { name: 'orders', topicId: ORDERS, numPartitions: 6 } : undefined),
  names: () => ['orders'],
}

/** A classic member's protocols: range, its subscription to orders with the partitions it owns (v3). */
const protocols = (owned: number[] = []) => [
  {
    name: 'range',
    metadata: encodeSubscription({ topics: ['orders'], userData: null, ownedPartitions: owned.length > 0 ? [{ topic: 'orders', partitions: owned }] : [], generationId: -1, rackId: null }),
  },
]
const assignment = (partitions: number[]) => encodeAssignment({ assignedPartitions: [{ topic: 'orders', partitions }], userData: null })
const assigned = (bytes: Buffer) => decodeAssignment(bytes).value.assignedPartitions.flatMap((t) => t.partitions)
const partitions = (a: Assignment | null): number[] | null => (a === null ? null : [...(a.get(ORDERS_HEX) ?? [])].sort((x, y) => x - y))

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
const consumerJoin = (h: Harness, memberId: string) => heartbeat(h, { memberId, memberEpoch: 0, rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS, subscribedTopicNames: ['orders'], topicPartitions: [] })
const consumerBeat = (h: Harness, memberId: string, memberEpoch: number, owned: number[]) => heartbeat(h, { memberId, memberEpoch, topicPartitions: [{ topicId: ORDERS, partitions: owned }] })

/** A Stable classic group at generation 1: c1 owns 0-2, c2 owns 3-5. */
async function classicGroup(options: HarnessOptions = {}): Promise<{ h: Harness; c1: string; c2: string }> {
  const h = await harness({ topics, initialRebalanceDelayMs: 10, ...options })
  const a = await h.joinNew({ protocols: protocols() })
  const b = await h.joinNew({ protocols: protocols() })
  h.advance(10)
  h.advance(10)
  const [aJoin, bJoin] = await Promise.all([a.joined, b.joined])
  const [c1, c2] = [a.memberId, b.memberId]
  const leader = aJoin.members.length > 0 ? aJoin : bJoin
  const follower = leader === aJoin ? bJoin : aJoin
  const followerSync = h.sync(follower.memberId, follower.generationId)
  await h.sync(leader.memberId, leader.generationId, [
    { memberId: c1, assignment: assignment([0, 1, 2]) },
    { memberId: c2, assignment: assignment([3, 4, 5]) },
  ])
  await followerSync
  expect([h.coordinator.group(GROUP)!.state, h.coordinator.group(GROUP)!.generationId]).toEqual(['Stable', 1])
  return { h, c1, c2 }
}

/** A classic member's JoinGroup to the consumer group, reporting what it owns. */
const classicJoin = (h: Harness, memberId: string, owned: number[]) => h.join({ memberId, protocols: protocols(owned) })
const classicSync = (h: Harness, memberId: string, generationId: number) =>
  h.coordinator.syncGroup({ groupId: GROUP, generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] })

describe('the migration of a live group between the classic and the consumer protocols', () => {
  it('a ConsumerGroupHeartbeat upgrades a live classic group; its classic members rejoin and revoke before the new member gets partitions', async () => {
    const { h, c1, c2 } = await classicGroup()
    const k = consumerJoin(h, 'k')
    expect(k).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'k', memberEpoch: 2 })
    // Nothing for k yet: its partitions are the classic members' until they revoke them.
    expect(partitions(k.assignment)).toEqual([])
    const group = h.coordinator.consumerGroup(GROUP)!
    expect(h.coordinator.group(GROUP)).toBeUndefined()
    expect(h.coordinator.listGroups()).toEqual([{ groupId: GROUP, protocolType: 'consumer', state: 'Reconciling' }])
    // The classic members came over at their generation, owning their partitions, with their session and protocols.
    expect([group.groupEpoch, group.assignmentEpoch]).toEqual([2, 2])
    for (const [id, owned] of [
      [c1, [0, 1, 2]],
      [c2, [3, 4, 5]],
    ] as const) {
      const m = group.member(id)!
      expect([m.memberEpoch, m.state, partitions(m.assignedPartitions), m.subscribedTopicNames, m.classicMemberMetadata?.sessionTimeoutMs]).toEqual([
        1,
        'stable',
        owned,
        ['orders'],
        SESSION_TIMEOUT_MS,
      ])
    }
    const target = (id: string) => partitions(group.targetAssignmentOf(id))!
    expect([...target(c1), ...target(c2), ...target('k')].sort()).toEqual(ALL)

    // A classic member's heartbeat at its generation: rejoin. Its commits still go through at that generation.
    expect(h.coordinator.heartbeat(GROUP, c1, 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
    expect(h.coordinator.heartbeat(GROUP, c1, 2)).toBe(ErrorCode.ILLEGAL_GENERATION)
    expect(await h.coordinator.commitOffsets(GROUP, c1, 1, [{ topic: 'orders', partition: 0, offset: 5n, leaderEpoch: -1, metadata: '', commitTimestamp: 0n, expireTimestamp: null }], null, 8)).toBe(
      ErrorCode.NONE,
    )
    // SyncGroup before rejoining: REBALANCE_IN_PROGRESS.
    expect((await classicSync(h, c1, 1)).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS)

    // c1 rejoins still owning its partitions (a cooperative member): answered at once, at its
    // epoch while it revokes; SyncGroup gives what it keeps.
    const j1 = await classicJoin(h, c1, [0, 1, 2])
    expect(j1).toMatchObject({ errorCode: ErrorCode.NONE, memberId: c1, generationId: 1, protocolType: 'consumer', protocolName: 'range', leader: '', members: [] })
    const s1 = await classicSync(h, c1, 1)
    expect(s1.errorCode).toBe(ErrorCode.NONE)
    expect(assigned(s1.assignment)).toEqual(target(c1))
    // Revoked: it rejoins with what it keeps, and is at epoch 2.
    expect(h.coordinator.heartbeat(GROUP, c1, 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
    expect(await classicJoin(h, c1, target(c1))).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 2 })
    expect(assigned((await classicSync(h, c1, 2)).assignment)).toEqual(target(c1))
    expect(h.coordinator.heartbeat(GROUP, c1, 2)).toBe(ErrorCode.NONE)

    // c2 rejoins having revoked everything (an eager member): it gets its share back at once.
    expect((await classicJoin(h, c2, [])).generationId).toBe(2)
    expect(assigned((await classicSync(h, c2, 2)).assignment)).toEqual(target(c2))
    // k now gets its partitions: none was ever owned twice (the group throws if one were).
    expect(partitions(consumerBeat(h, 'k', 2, []).assignment)).toEqual(target('k'))
    expect(h.coordinator.consumerGroup(GROUP)!.state()).toBe('Stable')
  })

  it('a restart resumes the upgraded group from its records, classic members included', async () => {
    const { h, c1, c2 } = await classicGroup()
    consumerJoin(h, 'k')
    await h.coordinator.offsets.idle()
    const before = h.coordinator.consumerGroup(GROUP)!
    const members = [...before.members.values()].sort((x, y) => (x.memberId < y.memberId ? -1 : 1))
    const r = await h.restart()
    const after = r.coordinator.consumerGroup(GROUP)!
    expect([after.groupEpoch, after.assignmentEpoch]).toEqual([before.groupEpoch, before.assignmentEpoch])
    expect([...after.members.values()].sort((x, y) => (x.memberId < y.memberId ? -1 : 1))).toEqual(members)
    // The classic members go on where they were.
    expect(r.coordinator.heartbeat(GROUP, c1, 1)).toBe(ErrorCode.REBALANCE_IN_PROGRESS)
    expect((await classicJoin(r, c2, [])).errorCode).toBe(ErrorCode.NONE)
    // Their sessions restart with the load (their own session timeout): c1, silent, expires.
    r.advance(SESSION_TIMEOUT_MS)
    expect(r.coordinator.consumerGroup(GROUP)!.member(c1)).toBeUndefined()
  })

  it('the last consumer-protocol member leaving downgrades the group to a classic group, which rebalances', async () => {
    const { h, c1, c2 } = await classicGroup()
    consumerJoin(h, 'k')
    const group = h.coordinator.consumerGroup(GROUP)!
    const epoch = group.groupEpoch
    const targets = new Map([c1, c2].map((id) => [id, partitions(group.targetAssignmentOf(id))!]))
    expect(heartbeat(h, { memberId: 'k', memberEpoch: -1 }).errorCode).toBe(ErrorCode.NONE)
    expect(h.coordinator.consumerGroup(GROUP)).toBeUndefined()
    const classic = h.coordinator.group(GROUP)!
    expect([classic.state, classic.generationId, classic.protocolType, classic.protocolName]).toEqual(['PreparingRebalance', epoch, 'consumer', 'range'])
    // Each member holds its target assignment of the consumer group (k's went with it).
    for (const [id, target] of targets) expect(assigned(classic.get(id)!.assignment)).toEqual(target)
    expect(h.coordinator.listGroups()).toEqual([{ groupId: GROUP, protocolType: 'consumer', state: 'PreparingRebalance' }])
    // Both rejoin; the next generation is a classic one, its leader gets both subscriptions.
    const [j1, j2] = await Promise.all([h.join({ memberId: c1, protocols: protocols() }), h.join({ memberId: c2, protocols: protocols() })])
    expect([j1.generationId, j2.generationId]).toEqual([epoch + 1, epoch + 1])
    expect([j1, j2].find((j) => j.members.length === 2)).toBeDefined()
    // The consumer group is gone from the log too: a restart does not bring it back.
    await h.coordinator.offsets.idle()
    const r = await h.restart()
    expect(r.coordinator.consumerGroup(GROUP)).toBeUndefined()
  })

  it('group.consumer.migration.policy=disabled: no upgrade (GROUP_ID_NOT_FOUND), no classic member in a consumer group (INCONSISTENT_GROUP_PROTOCOL), no downgrade', async () => {
    const { h, c1, c2 } = await classicGroup({ consumerGroupMigrationPolicy: 'disabled' })
    expect(consumerJoin(h, 'k')).toMatchObject({
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      errorMessage: `Cannot upgrade classic group ${GROUP} to consumer group because online upgrade is disabled.`,
    })
    expect(h.coordinator.group(GROUP)!.state).toBe('Stable')
    // Empty groups convert whatever the policy.
    h.coordinator.leaveGroup(GROUP, [
      { memberId: c1, groupInstanceId: null },
      { memberId: c2, groupInstanceId: null },
    ])
    expect(consumerJoin(h, 'k').errorCode).toBe(ErrorCode.NONE)
    expect((await h.join({ memberId: '', protocols: protocols() })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    expect(h.coordinator.consumerGroup(GROUP)!.members.size).toBe(1)
  })

  it('group.consumer.migration.policy=upgrade: the last consumer-protocol member leaving leaves a consumer group of classic members', async () => {
    const { h, c1, c2 } = await classicGroup({ consumerGroupMigrationPolicy: 'upgrade' })
    consumerJoin(h, 'k')
    heartbeat(h, { memberId: 'k', memberEpoch: -1 })
    const group = h.coordinator.consumerGroup(GROUP)!
    expect([...group.members.keys()].sort()).toEqual([c1, c2].sort())
    expect(group.member(c1)!.classicMemberMetadata).not.toBeNull()
    expect(h.coordinator.group(GROUP)).toBeUndefined()
  })
})
