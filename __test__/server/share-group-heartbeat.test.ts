/**
 * ShareGroupHeartbeat and ShareGroupDescribe on the wire (KIP-932) against a real broker over a
 * real socket: a member joins (epoch 2, nothing until the partitions' share state is initialized)
 * and gets every partition at epoch 3; a second member takes its share; a wrong epoch is fenced;
 * ShareGroupDescribe and ListGroups (type "share") show the group; the broker restarts on its data
 * dir and the group resumes (members and epochs replayed from `__consumer_offsets`); a member that
 * stops heartbeating is removed when its session (group.share.session.timeout.ms) expires; the
 * last member leaves and the group is Empty. A group's share.heartbeat.interval.ms takes the
 * place of the broker's group.share.heartbeat.interval.ms.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { listGroupsCodec } from '../../ts/protocol/apis/list-groups.js'
import { shareGroupDescribeCodec } from '../../ts/protocol/apis/share-group-describe.js'
import { shareGroupHeartbeatCodec, type ShareGroupHeartbeatResponse } from '../../ts/protocol/apis/share-group-heartbeat.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
let wire: KafkaWire | undefined
afterEach(async () => {
  wire?.close()
  wire = undefined
  await broker?.stop()
  broker = undefined
})

/** Short sessions so that an expiry happens within the test; heartbeats every 200 ms. */
const PROPS = {
  'group.share.min.session.timeout.ms': '1000',
  'group.share.session.timeout.ms': '3000',
  'group.share.min.heartbeat.interval.ms': '100',
  'group.share.heartbeat.interval.ms': '200',
  'group.share.assignment.interval.ms': '0',
}

const A = 'member-a-000000000000'
const B = 'member-b-000000000000'

async function beat(memberId: string, memberEpoch: number, topics: string[] | null = null, groupId = 'queue'): Promise<ShareGroupHeartbeatResponse> {
  return wire!.send(shareGroupHeartbeatCodec, 1, { groupId, memberId, memberEpoch, rackId: null, subscribedTopicNames: topics })
}

const partitions = (r: ShareGroupHeartbeatResponse): number[] | null => (r.assignment === null ? null : r.assignment.topicPartitions.flatMap((t) => t.partitions).sort((x, y) => x - y))

async function describeGroup(groupId = 'queue') {
  return (await wire!.send(shareGroupDescribeCodec, 1, { groupIds: [groupId], includeAuthorizedOperations: false })).groups[0]!
}

/** Heartbeats `memberId` until `done` holds of the answer (bounded); the last answer. */
async function beatUntil(memberId: string, epoch: number, done: (r: ShareGroupHeartbeatResponse) => boolean): Promise<ShareGroupHeartbeatResponse> {
  for (let i = 0; i < 200; i++) {
    const r = await beat(memberId, epoch)
    if (done(r)) return r
    if (r.errorCode === ErrorCode.NONE) epoch = r.memberEpoch
    await sleep(100)
  }
  throw new Error(`${memberId}: the condition did not hold after 200 heartbeats`)
}

describe('ShareGroupHeartbeat and ShareGroupDescribe on the wire', () => {
  it('join, assignment, a second member, fencing, describe, restart resuming the group, session expiry, leave', async () => {
    const dataDir = tempDir()
    broker = await startBroker({ dataDir, props: PROPS })
    const orders = (await broker.createTopic('orders', 3, {}))!
    wire = new KafkaWire(await connectTo(broker.port), 'share-test')

    const joined = await beat(A, 0, ['orders'])
    expect(joined).toMatchObject({ errorCode: ErrorCode.NONE, memberId: A, memberEpoch: 2, heartbeatIntervalMs: 200 })
    expect(partitions(joined)).toEqual([])
    const assigned = await beat(A, 2)
    expect(assigned).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 3 })
    expect(assigned.assignment!.topicPartitions).toEqual([{ topicId: orders.topicId, partitions: [0, 1, 2] }])

    const b = await beat(B, 0, ['orders'])
    expect(b).toMatchObject({ errorCode: ErrorCode.NONE, memberEpoch: 4 })
    const a = await beat(A, 3)
    expect(a.memberEpoch).toBe(4)
    expect([...partitions(a)!, ...partitions(b)!].sort()).toEqual([0, 1, 2])

    expect(await beat(A, 9)).toMatchObject({ errorCode: ErrorCode.FENCED_MEMBER_EPOCH, memberId: null })
    expect(await beat('stranger-000000000000', 4)).toMatchObject({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID })

    const described = await describeGroup()
    expect(described).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Stable', groupEpoch: 4, assignmentEpoch: 4, assignorName: 'simple' })
    const memberA = described.members.find((m) => m.memberId === A)!
    expect(memberA).toMatchObject({ memberEpoch: 4, clientId: 'share-test', clientHost: '/127.0.0.1', subscribedTopicNames: ['orders'], rackId: null })
    expect(memberA.assignment.topicPartitions).toEqual([{ topicId: orders.topicId, topicName: 'orders', partitions: partitions(a) }])
    const listed = await wire.send(listGroupsCodec, 5, { statesFilter: [], typesFilter: ['share'] })
    expect(listed.groups).toEqual([{ groupId: 'queue', protocolType: 'share', groupState: 'Stable', groupType: 'share' }])

    // Restart on the same data dir: the group comes back from its records.
    wire.close()
    await broker.stop()
    broker = await startBroker({ dataDir, props: PROPS })
    wire = new KafkaWire(await connectTo(broker.port), 'share-test')
    let resumed = await beat(A, 4)
    for (let i = 0; i < 100 && resumed.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS; i++) {
      await sleep(50)
      resumed = await beat(A, 4)
    }
    expect(resumed).toMatchObject({ errorCode: ErrorCode.NONE, memberId: A, memberEpoch: 4, assignment: null })
    const afterRestart = await describeGroup()
    expect(afterRestart).toMatchObject({ groupState: 'Stable', groupEpoch: 4, assignmentEpoch: 4 })
    expect(afterRestart.members.map((m) => [m.memberId, m.memberEpoch]).sort()).toEqual([
      [A, 4],
      [B, 4],
    ])

    // B stops heartbeating: its session expires while A heartbeats, and A gets every partition.
    const alone = await beatUntil(A, 4, (r) => r.errorCode === ErrorCode.NONE && partitions(r)?.length === 3)
    expect(alone.memberEpoch).toBe(5)
    expect((await describeGroup()).members.map((m) => m.memberId)).toEqual([A])
    expect(await beat(B, 4)).toMatchObject({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID })

    expect(await beat(A, -1)).toMatchObject({ errorCode: ErrorCode.NONE, memberId: A, memberEpoch: -1, heartbeatIntervalMs: 0 })
    expect(await describeGroup()).toMatchObject({ groupState: 'Empty', members: [] })
    const empty = await wire.send(listGroupsCodec, 5, { statesFilter: ['Empty'], typesFilter: [] })
    expect(empty.groups).toEqual([{ groupId: 'queue', protocolType: 'share', groupState: 'Empty', groupType: 'share' }])
  })

  it("a group's share.heartbeat.interval.ms replaces the broker's; ids of other kinds of groups are refused as Kafka 4.4", async () => {
    broker = await startBroker({ props: PROPS })
    await broker.createTopic('orders', 1, {})
    await broker.groupConfigs.alter('tuned', { 'share.heartbeat.interval.ms': '7000', 'share.session.timeout.ms': '50000' }, false)
    wire = new KafkaWire(await connectTo(broker.port), 'share-test')
    expect(await beat(A, 0, ['orders'], 'tuned')).toMatchObject({ errorCode: ErrorCode.NONE, heartbeatIntervalMs: 7000 })
    expect(await describeGroup('nope')).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group nope not found.' })
    expect(await beat(A, 0, null, 'queue')).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'SubscribedTopicNames must be set in first request.' })
  })
})
