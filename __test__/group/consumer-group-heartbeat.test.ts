/**
 * KIP-848 consumer groups in the group coordinator (ts/group/consumer/consumer-group-manager.ts),
 * driven by ConsumerGroupHeartbeat as Kafka's GroupMetadataManagerTest drives it: joining, the
 * group and member epochs, a second member getting partitions only once the first revoked them,
 * epochs fenced, leaving, sessions and rebalance timeouts expiring, static members, commits
 * checked against the member epoch, and the boundary with classic groups.
 */
import { describe, expect, it } from 'vitest'
import type { Assignment } from '../../ts/group/consumer/assignment.js'
import type { ConsumerGroupHeartbeatParams, ConsumerGroupHeartbeatResult, TopicsImage } from '../../ts/group/consumer/consumer-group-manager.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, type Harness } from './harness.js'

const ORDERS = Buffer.from('0102030405060708090a0b0c0d0e0f10', 'hex')
const ORDERS_HEX = ORDERS.toString('hex')
const SESSION_MS = 45_000
const REBALANCE_MS = 30_000

function topicsImage(partitions: Map<string, number>): TopicsImage {
  const ids: Record<string, Buffer> = { orders: ORDERS, payments: Buffer.alloc(16, 7) }
  const image = (name: string) => (partitions.has(name) ? { name, topicId: ids[name]!, numPartitions: partitions.get(name)! } : undefined)
  return { byName: image, byId: (hex) => image(Object.keys(ids).find((n) => ids[n]!.toString('hex') === hex) ?? ''), names: () => partitions.keys() }
}

async function setup(partitions = 6): Promise<{ h: Harness; topics: Map<string, number> }> {
  const topics = new Map([['orders', partitions]])
  return { h: await harness({ topics: topicsImage(topics) }), topics }
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
    sessionTimeoutMs: SESSION_MS,
    heartbeatIntervalMs: 5000,
    ...p,
  })
}

const join = (h: Harness, memberId: string, extra: Partial<ConsumerGroupHeartbeatParams> = {}) =>
  heartbeat(h, { memberId, memberEpoch: 0, rebalanceTimeoutMs: REBALANCE_MS, subscribedTopicNames: ['orders'], topicPartitions: [], ...extra })

/** A heartbeat reporting the partitions the member owns. */
const beat = (h: Harness, memberId: string, memberEpoch: number, owned: number[] | null) =>
  heartbeat(h, { memberId, memberEpoch, topicPartitions: owned === null ? null : [{ topicId: ORDERS, partitions: owned }] })

const partitions = (a: Assignment | null): number[] | null => (a === null ? null : [...(a.get(ORDERS_HEX) ?? [])].sort((x, y) => x - y))

describe('ConsumerGroupHeartbeat in the group coordinator', () => {
  it('the first member joins at epoch 2 (a new group is at 1, as Kafka 4.4) with every partition; the group is Stable', async () => {
    const { h } = await setup()
    const r = join(h, 'a')
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'a', memberEpoch: 2, heartbeatIntervalMs: 5000 })
    expect(partitions(r.assignment)).toEqual([0, 1, 2, 3, 4, 5])
    const group = h.coordinator.consumerGroup(GROUP)!
    expect([group.state(), group.groupEpoch, group.assignmentEpoch]).toEqual(['Stable', 2, 2])
    // A heartbeat that changes nothing carries no assignment.
    expect(beat(h, 'a', 2, [0, 1, 2, 3, 4, 5])).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 2, assignment: null })
  })

  it('a second member gets its partitions only after the first revoked them; never both own one', async () => {
    const { h } = await setup()
    join(h, 'a')
    const b = join(h, 'b')
    // Group epoch 3; b's half is still a's: b is at epoch 3 with nothing yet (unreleased).
    expect(b).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 3 })
    expect(partitions(b.assignment)).toEqual([])
    const target = partitions(h.coordinator.consumerGroup(GROUP)!.targetAssignmentOf('b'))!
    expect(target).toHaveLength(3)
    const keep = [0, 1, 2, 3, 4, 5].filter((p) => !target.includes(p))
    // a is asked to revoke b's half, staying at epoch 2.
    const a1 = beat(h, 'a', 2, [0, 1, 2, 3, 4, 5])
    expect(a1.memberEpoch).toBe(2)
    expect(partitions(a1.assignment)).toEqual(keep)
    expect(h.coordinator.consumerGroup(GROUP)!.state()).toBe('Reconciling')
    // Until a reports them revoked, b gets none of them.
    expect(partitions(beat(h, 'b', 3, []).assignment)).toBeNull()
    expect(beat(h, 'a', 2, [0, 1, 2, 3, 4, 5])).toMatchObject({ memberEpoch: 2, assignment: null })
    expect(partitions(beat(h, 'b', 3, []).assignment)).toBeNull()
    // a revoked them: epoch 3; then b gets them.
    expect(beat(h, 'a', 2, keep)).toMatchObject({ memberEpoch: 3 })
    const b2 = beat(h, 'b', 3, [])
    expect(partitions(b2.assignment)).toEqual(target)
    expect(h.coordinator.consumerGroup(GROUP)!.state()).toBe('Stable')
  })

  it('group.consumer.assignment.interval.ms: a change within the interval of the last target waits for a heartbeat after it', async () => {
    const { h } = await setup()
    const INTERVAL_MS = 1000
    const withInterval = { assignmentIntervalMs: INTERVAL_MS }
    expect(partitions(join(h, 'a', withInterval).assignment)).toEqual([0, 1, 2, 3, 4, 5])
    // b joins at once: group epoch 3, but the target stays epoch 2's; b reconciles to it (nothing).
    const b = join(h, 'b', withInterval)
    expect(b).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 2 })
    expect(partitions(b.assignment)).toEqual([])
    const group = h.coordinator.consumerGroup(GROUP)!
    expect([group.groupEpoch, group.assignmentEpoch, group.state()]).toEqual([3, 2, 'Assigning'])
    // a reports owning none yet (Kafka's Java consumer does so while its assignment's topic ids
    // are not yet in its metadata, then takes them): its partitions stay its own, none moves to b.
    expect(heartbeat(h, { memberId: 'a', memberEpoch: 2, topicPartitions: [], ...withInterval })).toMatchObject({ memberEpoch: 2, assignment: null })
    expect(group.member('a')!.assignedPartitions.get(ORDERS_HEX)?.size).toBe(6)
    expect(partitions(heartbeat(h, { memberId: 'b', memberEpoch: 2, ...withInterval }).assignment)).toBeNull()
    // After the interval the next heartbeat computes the target: a revokes b's half first.
    h.advance(INTERVAL_MS)
    expect(heartbeat(h, { memberId: 'b', memberEpoch: 2, topicPartitions: [], ...withInterval })).toMatchObject({ memberEpoch: 3 })
    expect(group.assignmentEpoch).toBe(3)
    const target = partitions(group.targetAssignmentOf('b'))!
    expect(target).toHaveLength(3)
    const a = heartbeat(h, { memberId: 'a', memberEpoch: 2, topicPartitions: [{ topicId: ORDERS, partitions: [0, 1, 2, 3, 4, 5] }], ...withInterval })
    expect(a.memberEpoch).toBe(2)
    expect(partitions(a.assignment)).toEqual([0, 1, 2, 3, 4, 5].filter((p) => !target.includes(p)))
    expect(partitions(heartbeat(h, { memberId: 'b', memberEpoch: 3, ...withInterval }).assignment)).toBeNull()
  })

  it('a member leaving a topic has its partitions revoked at once, even before the next target (Kafka 4.4)', async () => {
    const h = await harness({
      topics: topicsImage(
        new Map([
          ['orders', 2],
          ['payments', 2],
        ]),
      ),
    })
    const PAYMENTS_HEX = Buffer.alloc(16, 7).toString('hex')
    const withInterval = { assignmentIntervalMs: 1000 }
    const joined = join(h, 'a', { subscribedTopicNames: ['orders', 'payments'], ...withInterval })
    expect(joined.assignment!.get(PAYMENTS_HEX)?.size).toBe(2)
    // Within the assignment interval, so the target still has payments: the change alone revokes it.
    const left = heartbeat(h, { memberId: 'a', memberEpoch: 2, subscribedTopicNames: ['orders'], ...withInterval })
    expect(left.memberEpoch).toBe(2)
    expect(partitions(left.assignment)).toEqual([0, 1])
    expect(left.assignment!.has(PAYMENTS_HEX)).toBe(false)
    const member = h.coordinator.consumerGroup(GROUP)!.member('a')!
    expect(member.state).toBe('unrevoked_partitions')
    expect([...member.partitionsPendingRevocation.get(PAYMENTS_HEX)!]).toEqual([0, 1])
    // Once it reports them gone, they are free; the next target (after the interval) has only orders.
    heartbeat(h, { memberId: 'a', memberEpoch: 2, topicPartitions: [{ topicId: ORDERS, partitions: [0, 1] }], ...withInterval })
    expect(h.coordinator.consumerGroup(GROUP)!.currentPartitionEpoch(PAYMENTS_HEX, 0)).toBe(-1)
    h.advance(1000)
    const next = heartbeat(h, { memberId: 'a', memberEpoch: 2, ...withInterval })
    expect(next.memberEpoch).toBe(3)
    expect(h.coordinator.consumerGroup(GROUP)!.targetAssignmentOf('a').has(PAYMENTS_HEX)).toBe(false)
  })

  it('fences a member with an epoch it does not have, and answers an unknown member UNKNOWN_MEMBER_ID', async () => {
    const { h } = await setup()
    join(h, 'a')
    expect(beat(h, 'a', 3, null).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH)
    expect(beat(h, 'nobody', 2, null).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    // The previous epoch is taken when its owned partitions are within the assignment (a lost answer).
    join(h, 'b')
    const keep = partitions(beat(h, 'a', 2, [0, 1, 2, 3, 4, 5]).assignment)!
    beat(h, 'a', 2, keep)
    expect(beat(h, 'a', 2, keep).errorCode).toBe(ErrorCode.NONE)
    expect(beat(h, 'a', 2, [0, 1, 2, 3, 4, 5]).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH)
  })

  it('a member leaving (epoch -1) frees its partitions; the other gets them all', async () => {
    const { h } = await setup()
    join(h, 'a')
    join(h, 'b')
    const keep = partitions(beat(h, 'a', 2, [0, 1, 2, 3, 4, 5]).assignment)!
    beat(h, 'a', 2, keep)
    const bParts = partitions(beat(h, 'b', 3, []).assignment)!
    expect(heartbeat(h, { memberId: 'b', memberEpoch: -1 })).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'b', memberEpoch: -1 })
    expect(h.coordinator.consumerGroup(GROUP)!.groupEpoch).toBe(4)
    const a = beat(h, 'a', 3, keep)
    expect(a.memberEpoch).toBe(4)
    expect(partitions(a.assignment)).toEqual([...keep, ...bParts].sort((x, y) => x - y))
    expect(heartbeat(h, { memberId: 'b', memberEpoch: -1 }).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
  })

  it('a member whose session expires is fenced; one that does not revoke within its rebalance timeout too', async () => {
    const { h } = await setup()
    join(h, 'a')
    join(h, 'b')
    h.advance(SESSION_MS - 1)
    beat(h, 'b', 3, [])
    h.advance(1)
    // a's session is over: b gets everything.
    expect(h.coordinator.consumerGroup(GROUP)!.member('a')).toBeUndefined()
    expect(partitions(beat(h, 'b', 3, []).assignment)).toEqual([0, 1, 2, 3, 4, 5])

    join(h, 'c')
    expect(partitions(beat(h, 'b', 4, [0, 1, 2, 3, 4, 5]).assignment)).toHaveLength(3)
    // b never reports the revocation: fenced after its rebalance timeout, though it heartbeats.
    h.advance(REBALANCE_MS - 1)
    expect(beat(h, 'b', 4, [0, 1, 2, 3, 4, 5]).errorCode).toBe(ErrorCode.NONE)
    h.advance(1)
    expect(beat(h, 'b', 4, [0, 1, 2, 3, 4, 5]).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    expect(partitions(beat(h, 'c', 5, []).assignment)).toEqual([0, 1, 2, 3, 4, 5])
  })

  it('new partitions of a subscribed topic bump the group epoch at the next heartbeat', async () => {
    const { h, topics } = await setup(2)
    join(h, 'a')
    topics.set('orders', 4)
    const r = beat(h, 'a', 2, [0, 1])
    expect(r.memberEpoch).toBe(3)
    expect(partitions(r.assignment)).toEqual([0, 1, 2, 3])
  })

  it('refuses invalid requests and unknown assignors; range when the members ask for it', async () => {
    const { h } = await setup()
    expect(heartbeat(h, { memberId: 'a', memberEpoch: 0, subscribedTopicNames: ['orders'], topicPartitions: [] }).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(heartbeat(h, { memberId: '', memberEpoch: 0, rebalanceTimeoutMs: 1, subscribedTopicNames: ['orders'], topicPartitions: [] }).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(heartbeat(h, { memberId: 'a', memberEpoch: -3 }).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(join(h, 'a', { serverAssignor: 'sticky' })).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_ASSIGNOR })
    expect(heartbeat(h, { memberId: 'a', memberEpoch: 2 }).errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND)
    join(h, 'a', { serverAssignor: 'range' })
    join(h, 'b', { serverAssignor: 'range' })
    // range: a (first by id) is given 0-2, b 3-5.
    expect(partitions(h.coordinator.consumerGroup(GROUP)!.targetAssignmentOf('a'))).toEqual([0, 1, 2])
    expect(h.coordinator.consumerGroupAssignorName(h.coordinator.consumerGroup(GROUP)!)).toBe('range')
    // The group's preferred assignor changing (both members now ask for uniform) bumps the group epoch.
    const group = h.coordinator.consumerGroup(GROUP)!
    const epoch = group.groupEpoch
    heartbeat(h, { memberId: 'a', memberEpoch: group.member('a')!.memberEpoch, serverAssignor: 'uniform' })
    expect(group.groupEpoch).toBe(epoch) // one each: the tie goes to the first by name, still range
    heartbeat(h, { memberId: 'b', memberEpoch: group.member('b')!.memberEpoch, serverAssignor: 'uniform' })
    expect(group.groupEpoch).toBe(epoch + 1)
    expect(h.coordinator.consumerGroupAssignorName(group)).toBe('uniform')
  })

  it('a static member leaving with -2 keeps its partitions; its instance rejoining takes them; a live one is UNRELEASED_INSTANCE_ID', async () => {
    const { h } = await setup()
    join(h, 'a', { instanceId: 'i1' })
    expect(join(h, 'a2', { instanceId: 'i1' }).errorCode).toBe(ErrorCode.UNRELEASED_INSTANCE_ID)
    expect(heartbeat(h, { memberId: 'a', memberEpoch: -2, instanceId: 'i1' })).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: -2 })
    expect(h.coordinator.consumerGroup(GROUP)!.groupEpoch).toBe(2)
    const r = join(h, 'a2', { instanceId: 'i1' })
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'a2', memberEpoch: 2 })
    expect(partitions(r.assignment)).toEqual([0, 1, 2, 3, 4, 5])
    expect(h.coordinator.consumerGroup(GROUP)!.member('a')).toBeUndefined()
    expect(beat(h, 'a', 2, null).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
  })

  it('commits of members are checked against their epoch (STALE_MEMBER_EPOCH) and OffsetCommit v9', async () => {
    const { h } = await setup()
    join(h, 'a')
    const entry = { topic: 'orders', partition: 0, offset: 42n, leaderEpoch: -1, metadata: null, commitTimestamp: 0n }
    expect(await h.coordinator.commitOffsets(GROUP, 'a', 3, [entry], null, 9)).toBe(ErrorCode.STALE_MEMBER_EPOCH)
    expect(await h.coordinator.commitOffsets(GROUP, 'a', 2, [entry], null, 8)).toBe(ErrorCode.UNSUPPORTED_VERSION)
    expect(await h.coordinator.commitOffsets(GROUP, 'x', 2, [entry], null, 9)).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    expect(h.coordinator.offsets.get(GROUP, 'orders', 0)).toBeUndefined()
    expect(await h.coordinator.commitOffsets(GROUP, 'a', 2, [entry], null, 9)).toBe(ErrorCode.NONE)
    expect(h.coordinator.offsets.get(GROUP, 'orders', 0)?.offset).toBe(42n)
    expect(h.coordinator.validateOffsetFetch(GROUP, 'a', 2)).toBe(ErrorCode.NONE)
    expect(h.coordinator.validateOffsetFetch(GROUP, 'a', 1)).toBe(ErrorCode.STALE_MEMBER_EPOCH)
    expect(h.coordinator.validateOffsetFetch(GROUP, null, -1)).toBe(ErrorCode.NONE)
    // The admin's commit (epoch -1) only once the group is Empty.
    expect(await h.coordinator.commitOffsets(GROUP, '', -1, [entry], null, 9)).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    heartbeat(h, { memberId: 'a', memberEpoch: -1 })
    expect(await h.coordinator.commitOffsets(GROUP, '', -1, [{ ...entry, offset: 7n }], null, 9)).toBe(ErrorCode.NONE)
    expect(h.coordinator.offsets.get(GROUP, 'orders', 0)?.offset).toBe(7n)
  })

  it('KIP-1251: a commit with an older member epoch is taken for partitions assigned at or before it, as Kafka 4.4', async () => {
    const { h } = await setup()
    join(h, 'a')
    join(h, 'b')
    const entry = (partition: number) => ({ topic: 'orders', partition, offset: 5n, leaderEpoch: -1, metadata: null, commitTimestamp: 0n })
    // a is at epoch 2, revoking b's half; it moves to epoch 3 once it reports them revoked.
    const keep = partitions(beat(h, 'a', 2, [0, 1, 2, 3, 4, 5]).assignment)!
    expect(beat(h, 'a', 2, keep).memberEpoch).toBe(3)
    // A commit still carrying epoch 2 (sent before the answer arrived): its kept partitions were assigned at epoch 2.
    expect(await h.coordinator.commitOffsets(GROUP, 'a', 2, [entry(keep[0]!)], null, 9)).toBe(ErrorCode.NONE)
    // Not a partition it owns, or a newer epoch than the member's: STALE_MEMBER_EPOCH.
    const given = [0, 1, 2, 3, 4, 5].find((p) => !keep.includes(p))!
    expect(await h.coordinator.commitOffsets(GROUP, 'a', 2, [entry(given)], null, 9)).toBe(ErrorCode.STALE_MEMBER_EPOCH)
    expect(await h.coordinator.commitOffsets(GROUP, 'a', 4, [entry(keep[0]!)], null, 9)).toBe(ErrorCode.STALE_MEMBER_EPOCH)
    // b got its partitions at epoch 3: a commit of them with epoch 2 is refused.
    const bParts = partitions(beat(h, 'b', 3, []).assignment)!
    expect(await h.coordinator.commitOffsets(GROUP, 'b', 3, [entry(bParts[0]!)], null, 9)).toBe(ErrorCode.NONE)
    expect(await h.coordinator.commitOffsets(GROUP, 'b', 2, [entry(bParts[0]!)], null, 9)).toBe(ErrorCode.STALE_MEMBER_EPOCH)
    // The epochs are persisted with the current assignment: the same answers after a restart.
    await h.coordinator.offsets.idle()
    const r = await h.restart()
    expect(await r.coordinator.commitOffsets(GROUP, 'a', 2, [entry(keep[0]!)], null, 9)).toBe(ErrorCode.NONE)
    expect(await r.coordinator.commitOffsets(GROUP, 'b', 2, [entry(bParts[0]!)], null, 9)).toBe(ErrorCode.STALE_MEMBER_EPOCH)
  })

  it('a group id is classic or consumer: Empty ones convert, live ones whose embedded protocol does not parse refuse the other protocol; DeleteGroups', async () => {
    const { h } = await setup()
    // A classic group with a member whose subscription is not Kafka's consumer protocol: it
    // cannot be upgraded, the consumer protocol's member is refused (live upgrades:
    // ./consumer/classic-group-migration.test.ts).
    const classic = await h.joinNew()
    const joined = await classic.joined
    await h.sync(classic.memberId, joined.generationId, [{ memberId: classic.memberId, assignment: Buffer.alloc(0) }])
    expect(join(h, 'a').errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND)
    h.coordinator.leaveGroup(GROUP, [{ memberId: classic.memberId, groupInstanceId: null }])
    // Empty now: it becomes a consumer group.
    expect(join(h, 'a').errorCode).toBe(ErrorCode.NONE)
    expect(h.coordinator.listGroups()).toEqual([{ groupId: GROUP, protocolType: 'consumer', state: 'Stable' }])
    const pending = await h.join({ memberId: '' })
    expect(pending.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED)
    expect((await h.join({ memberId: pending.memberId })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    expect(await h.coordinator.deleteGroups([GROUP])).toEqual([{ groupId: GROUP, errorCode: ErrorCode.NON_EMPTY_GROUP }])
    heartbeat(h, { memberId: 'a', memberEpoch: -1 })
    expect(h.coordinator.consumerGroup(GROUP)!.state()).toBe('Empty')
    expect(await h.coordinator.deleteGroups([GROUP])).toEqual([{ groupId: GROUP, errorCode: ErrorCode.NONE }])
    expect(h.coordinator.listGroups()).toEqual([])
  })

  it('is written as coordinator records: a restart resumes every group where it was, mid-rebalance too', async () => {
    const topics = new Map([['orders', 6]])
    let { h } = { h: await harness({ topics: topicsImage(topics) }) }
    join(h, 'a', { serverAssignor: 'range' })
    join(h, 'b', { instanceId: 'i-b' })
    const keep = partitions(beat(h, 'a', 2, [0, 1, 2, 3, 4, 5]).assignment)!
    // a is revoking b's half (UNREVOKED_PARTITIONS) when the coordinator restarts.
    join(h, 'gone')
    heartbeat(h, { memberId: 'gone', memberEpoch: -1 })
    await h.coordinator.offsets.idle()
    const before = h.coordinator.consumerGroup(GROUP)!
    const snapshot = {
      epochs: [before.groupEpoch, before.assignmentEpoch, before.state()],
      members: [...before.members.values()].sort((x, y) => (x.memberId < y.memberId ? -1 : 1)),
      target: new Map(before.targetAssignment),
    }
    h = await h.restart()
    const after = h.coordinator.consumerGroup(GROUP)!
    expect([after.groupEpoch, after.assignmentEpoch, after.state()]).toEqual(snapshot.epochs)
    expect([...after.members.values()].sort((x, y) => (x.memberId < y.memberId ? -1 : 1))).toEqual(snapshot.members)
    expect(after.targetAssignment).toEqual(snapshot.target)
    expect(after.member('gone')).toBeUndefined()
    expect(h.coordinator.listGroups()).toEqual([{ groupId: GROUP, protocolType: 'consumer', state: 'Assigning' }])
    // The members go on in their epochs: b still waits for a's revocation, then gets its half.
    expect(partitions(beat(h, 'b', after.member('b')!.memberEpoch, []).assignment)).toBeNull()
    expect(beat(h, 'a', 2, keep).errorCode).toBe(ErrorCode.NONE)
    const b = beat(h, 'b', after.member('b')!.memberEpoch, [])
    expect(partitions(b.assignment)).toEqual([0, 1, 2, 3, 4, 5].filter((p) => !keep.includes(p)))
    expect(h.coordinator.consumerGroup(GROUP)!.state()).toBe('Stable')
    // Sessions restart with the load: a member that never comes back expires.
    h.advance(SESSION_MS)
    expect(h.coordinator.consumerGroup(GROUP)!.members.size).toBe(0)
    // A deleted group stays deleted after a restart.
    expect(await h.coordinator.deleteGroups([GROUP])).toEqual([{ groupId: GROUP, errorCode: ErrorCode.NONE }])
    await h.coordinator.offsets.idle()
    h = await h.restart()
    expect(h.coordinator.consumerGroup(GROUP)).toBeUndefined()
    expect(h.coordinator.listGroups()).toEqual([])
  })
})
