/**
 * KIP-932 share groups in the group coordinator (ts/group/share/share-group-manager.ts), driven
 * by ShareGroupHeartbeat with the answers Kafka 4.4 gives (seen on a reference broker: see
 * __test__/interop/share-group-protocol.test.ts): the first member joins at epoch 2 with no
 * partitions and gets them at epoch 3 once their share state is initialized; a second member
 * gets its share after the assignment interval; epochs fenced; leaving; sessions expiring; the
 * boundary with consumer and classic groups; a restart resuming the group from its records.
 */
import { describe, expect, it } from 'vitest'
import type { Assignment } from '../../ts/group/consumer/assignment.js'
import type { TopicsImage } from '../../ts/group/consumer/consumer-group-manager.js'
import type { ShareGroupHeartbeatParams, ShareGroupHeartbeatResult } from '../../ts/group/share/share-group-manager.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { GROUP, harness, type Harness } from './harness.js'

const ORDERS = Buffer.from('0102030405060708090a0b0c0d0e0f10', 'hex')
const ORDERS_HEX = ORDERS.toString('hex')
const SESSION_MS = 45_000
const INTERVAL_MS = 1000

function topicsImage(partitions: Map<string, number>): TopicsImage {
  const image = (name: string) => (partitions.has(name) ? { name, topicId: ORDERS, numPartitions: partitions.get(name)! } : undefined)
  return { byName: image, byId: (hex) => (hex === ORDERS_HEX ? image('orders') : undefined), names: () => partitions.keys() }
}

async function setup(partitions = 3): Promise<Harness> {
  return harness({ topics: topicsImage(new Map([['orders', partitions]])) })
}

function heartbeat(h: Harness, p: Partial<ShareGroupHeartbeatParams> & { memberId: string; memberEpoch: number }): ShareGroupHeartbeatResult {
  return h.coordinator.shareGroupHeartbeat({
    groupId: GROUP,
    rackId: null,
    subscribedTopicNames: null,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    sessionTimeoutMs: SESSION_MS,
    heartbeatIntervalMs: 5000,
    assignmentIntervalMs: INTERVAL_MS,
    ...p,
  })
}

const join = (h: Harness, memberId: string) => heartbeat(h, { memberId, memberEpoch: 0, subscribedTopicNames: ['orders'] })
const partitions = (a: Assignment | null): number[] | null => (a === null ? null : [...(a.get(ORDERS_HEX) ?? [])].sort((x, y) => x - y))

describe('ShareGroupHeartbeat in the group coordinator', () => {
  it('the first member joins at epoch 2 with nothing, and gets every partition at epoch 3 (share state initialized)', async () => {
    const h = await setup()
    const joined = join(h, 'A')
    expect(joined).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'A', memberEpoch: 2, heartbeatIntervalMs: 5000 })
    expect(partitions(joined.assignment)).toEqual([])
    const group = h.coordinator.shareGroup(GROUP)!
    expect(group.state()).toBe('Stable')
    expect(group.groupEpoch).toBe(3)
    // Within the assignment interval the target stays.
    expect(heartbeat(h, { memberId: 'A', memberEpoch: 2 })).toMatchObject({ memberEpoch: 2, assignment: null })
    h.advance(INTERVAL_MS)
    const assigned = heartbeat(h, { memberId: 'A', memberEpoch: 2 })
    expect(assigned.memberEpoch).toBe(3)
    expect(partitions(assigned.assignment)).toEqual([0, 1, 2])
    expect(heartbeat(h, { memberId: 'A', memberEpoch: 3 })).toMatchObject({ memberEpoch: 3, assignment: null })
  })

  it('a second member joins at the current assignment epoch with nothing, then both share the partitions', async () => {
    const h = await setup()
    join(h, 'A')
    h.advance(INTERVAL_MS)
    heartbeat(h, { memberId: 'A', memberEpoch: 2 })
    const b = join(h, 'B')
    expect(b.memberEpoch).toBe(3)
    expect(partitions(b.assignment)).toEqual([])
    h.advance(INTERVAL_MS)
    const b2 = heartbeat(h, { memberId: 'B', memberEpoch: 3 })
    const a2 = heartbeat(h, { memberId: 'A', memberEpoch: 3 })
    expect(b2.memberEpoch).toBe(4)
    expect(a2.memberEpoch).toBe(4)
    const all = [...partitions(a2.assignment)!, ...partitions(b2.assignment)!].sort()
    expect(all).toEqual([0, 1, 2])
    expect([partitions(a2.assignment)!.length, partitions(b2.assignment)!.length].sort()).toEqual([1, 2])
  })

  it('more members than partitions: members share a partition', async () => {
    const h = await setup(1)
    join(h, 'A')
    join(h, 'B')
    h.advance(INTERVAL_MS)
    const a = heartbeat(h, { memberId: 'A', memberEpoch: 2 })
    const b = heartbeat(h, { memberId: 'B', memberEpoch: 2 })
    expect(partitions(a.assignment)).toEqual([0])
    expect(partitions(b.assignment)).toEqual([0])
  })

  it('fences a wrong epoch with Kafka 4.4 messages, accepts the previous epoch', async () => {
    const h = await setup()
    join(h, 'A')
    h.advance(INTERVAL_MS)
    heartbeat(h, { memberId: 'A', memberEpoch: 2 })
    expect(heartbeat(h, { memberId: 'A', memberEpoch: 9 })).toMatchObject({
      errorCode: ErrorCode.FENCED_MEMBER_EPOCH,
      errorMessage: 'The share group member has a greater member epoch (9) than the one known by the group coordinator (3). The member must abandon all its partitions and rejoin.',
    })
    expect(heartbeat(h, { memberId: 'A', memberEpoch: 1 })).toMatchObject({
      errorCode: ErrorCode.FENCED_MEMBER_EPOCH,
      errorMessage:
        'The share group member has a smaller member epoch (1) than the one known by the group coordinator (3), and it does not match the previous member epoch (2). The member must abandon all its partitions and rejoin.',
    })
    expect(heartbeat(h, { memberId: 'A', memberEpoch: 2 })).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 3 })
    expect(heartbeat(h, { memberId: 'X', memberEpoch: 3 })).toMatchObject({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, errorMessage: `Member X is not a member of group ${GROUP}.` })
  })

  it('refuses invalid requests as Kafka 4.4', async () => {
    const h = await setup()
    expect(heartbeat(h, { groupId: '', memberId: 'A', memberEpoch: 0, subscribedTopicNames: ['orders'] })).toMatchObject({
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: "GroupId can't be empty.",
    })
    expect(heartbeat(h, { memberId: '', memberEpoch: 0, subscribedTopicNames: ['orders'] })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: null })
    expect(heartbeat(h, { memberId: 'A', memberEpoch: 0 })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'SubscribedTopicNames must be set in first request.' })
    expect(heartbeat(h, { memberId: 'A', memberEpoch: -2 })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'MemberEpoch is invalid.' })
    expect(heartbeat(h, { groupId: 'none', memberId: 'A', memberEpoch: -1 })).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group none not found.' })
  })

  it('leaving and a session that expires remove the member and bump the group epoch; the last one leaves the group Empty', async () => {
    const h = await setup()
    join(h, 'A')
    join(h, 'B')
    const group = h.coordinator.shareGroup(GROUP)!
    const epoch = group.groupEpoch
    expect(heartbeat(h, { memberId: 'A', memberEpoch: -1 })).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'A', memberEpoch: -1, heartbeatIntervalMs: 0 })
    expect(group.groupEpoch).toBe(epoch + 1)
    expect([...group.members.keys()]).toEqual(['B'])
    h.advance(SESSION_MS - 1)
    expect(group.members.has('B')).toBe(true)
    h.advance(1)
    expect(group.members.size).toBe(0)
    expect(group.state()).toBe('Empty')
    expect(group.groupEpoch).toBe(epoch + 2)
  })

  it('a share group id is no consumer or classic group, and the other way round (Kafka 4.4 errors)', async () => {
    const h = await setup()
    join(h, 'A')
    const consumer = h.coordinator.consumerGroupHeartbeat({
      groupId: GROUP,
      memberId: 'C',
      memberEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: ['orders'],
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: [],
      clientId: 'client',
      clientHost: '/127.0.0.1',
      apiVersion: 1,
      sessionTimeoutMs: SESSION_MS,
      heartbeatIntervalMs: 5000,
    })
    expect(consumer).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${GROUP} is not a consumer group.` })
    expect((await h.join({ memberId: '' })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    const other = await harness({ topics: topicsImage(new Map([['orders', 3]])) })
    const classic = await other.joinNew()
    await classic.joined
    expect(heartbeat(other, { memberId: 'A', memberEpoch: 0, subscribedTopicNames: ['orders'] })).toMatchObject({
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      errorMessage: `Group ${GROUP} is not a share group.`,
    })
  })

  it('group.share.max.size refuses a member past it', async () => {
    const h = await harness({ topics: topicsImage(new Map([['orders', 3]])) })
    for (let i = 0; i < 200; i++) expect(join(h, `m${i}`).errorCode).toBe(ErrorCode.NONE)
    expect(join(h, 'one-more')).toMatchObject({ errorCode: ErrorCode.GROUP_MAX_SIZE_REACHED, errorMessage: 'The share group has reached its maximum capacity of 200 members.' })
  })

  it('DeleteGroups: a share group with members is NON_EMPTY_GROUP; an Empty one goes, and stays gone after a restart', async () => {
    const h = await setup()
    join(h, 'A')
    expect(await h.coordinator.deleteGroups([GROUP])).toEqual([{ groupId: GROUP, errorCode: ErrorCode.NON_EMPTY_GROUP }])
    heartbeat(h, { memberId: 'A', memberEpoch: -1 })
    expect(await h.coordinator.deleteGroups([GROUP])).toEqual([{ groupId: GROUP, errorCode: ErrorCode.NONE }])
    expect(h.coordinator.shareGroup(GROUP)).toBeUndefined()
    await h.coordinator.offsets.idle()
    const r = await h.restart()
    expect(r.coordinator.shareGroup(GROUP)).toBeUndefined()
    expect(r.coordinator.listGroups()).toEqual([])
  })

  it('a restart replays the share group records: members, epochs, target and initialized partitions come back', async () => {
    const h = await setup()
    join(h, 'A')
    h.advance(INTERVAL_MS)
    heartbeat(h, { memberId: 'A', memberEpoch: 2 })
    join(h, 'B')
    h.advance(INTERVAL_MS)
    const b = heartbeat(h, { memberId: 'B', memberEpoch: 3 })
    const before = h.coordinator.shareGroup(GROUP)!
    const snapshot = { groupEpoch: before.groupEpoch, assignmentEpoch: before.assignmentEpoch, b: partitions(b.assignment) }
    await h.coordinator.offsets.idle()
    const r = await h.restart()
    const after = r.coordinator.shareGroup(GROUP)!
    expect({ groupEpoch: after.groupEpoch, assignmentEpoch: after.assignmentEpoch }).toEqual({ groupEpoch: snapshot.groupEpoch, assignmentEpoch: snapshot.assignmentEpoch })
    expect([...after.members.keys()].sort()).toEqual(['A', 'B'])
    expect(after.members.get('B')!.memberEpoch).toBe(4)
    expect(partitions(after.members.get('B')!.assignedPartitions)).toEqual(snapshot.b)
    expect(after.isInitialized(ORDERS_HEX, 2)).toBe(true)
    // Members resume with their epochs; A catches up to the target.
    expect(heartbeat(r, { memberId: 'B', memberEpoch: 4 })).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 4 })
    const a = heartbeat(r, { memberId: 'A', memberEpoch: 3 })
    expect(a.memberEpoch).toBe(4)
    expect([...partitions(a.assignment)!, ...snapshot.b!].sort()).toEqual([0, 1, 2])
    // A member that is gone for good after the restart still expires.
    r.advance(SESSION_MS)
    expect(after.members.size).toBe(0)
  })
})
