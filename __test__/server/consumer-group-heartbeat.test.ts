/**
 * ConsumerGroupHeartbeat and ConsumerGroupDescribe on the wire (KIP-848): the broker's
 * group.consumer.heartbeat.interval.ms answered to members, a group's own
 * consumer.heartbeat.interval.ms / consumer.session.timeout.ms (group configs) taking its place,
 * the assignment by topic id, and ConsumerGroupDescribe's view of the group (state, epochs,
 * assignor, each member's current and target assignment with topic names); an id that is not a
 * consumer group is GROUP_ID_NOT_FOUND; DescribeGroups (classic) on a consumer group answers as
 * Kafka 4.4 does.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { consumerGroupDescribeCodec } from '../../ts/protocol/apis/consumer-group-describe.js'
import { consumerGroupHeartbeatCodec, type ConsumerGroupHeartbeatRequest } from '../../ts/protocol/apis/consumer-group-heartbeat.js'
import { describeGroupsCodec } from '../../ts/protocol/apis/describe-groups.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'

let broker: Broker | undefined
let wire: KafkaWire | undefined
afterEach(async () => {
  wire?.close()
  wire = undefined
  await broker?.stop()
  broker = undefined
})

function joinRequest(groupId: string, memberId: string): ConsumerGroupHeartbeatRequest {
  return {
    groupId,
    memberId,
    memberEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: 30_000,
    subscribedTopicNames: ['orders'],
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: [],
  }
}

describe('ConsumerGroupHeartbeat and ConsumerGroupDescribe on the wire', () => {
  it('answers the heartbeat interval (broker key, else group config), the assignment by topic id, and describes the group', async () => {
    broker = await startBroker({ props: { 'group.consumer.min.heartbeat.interval.ms': '1000', 'group.consumer.heartbeat.interval.ms': '2500' } })
    const orders = (await broker.createTopic('orders', 3, {}))!
    await broker.groupConfigs.alter('tuned', { 'consumer.heartbeat.interval.ms': '7000', 'consumer.session.timeout.ms': '50000' }, false)
    wire = new KafkaWire(await connectTo(broker.port), 'kip848-test')

    const a = await wire.send(consumerGroupHeartbeatCodec, 1, joinRequest('plain', 'member-a'))
    expect(a).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'member-a', memberEpoch: 2, heartbeatIntervalMs: 2500 })
    expect(a.assignment!.topicPartitions).toEqual([{ topicId: orders.topicId, partitions: [0, 1, 2] }])
    const tuned = await wire.send(consumerGroupHeartbeatCodec, 1, joinRequest('tuned', 'member-t'))
    expect(tuned).toMatchObject({ errorCode: ErrorCode.NONE, heartbeatIntervalMs: 7000 })
    // v1: the consumer generates the member id.
    expect((await wire.send(consumerGroupHeartbeatCodec, 1, joinRequest('plain', ''))).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    // v0: the coordinator does.
    const v0 = await wire.send(consumerGroupHeartbeatCodec, 0, joinRequest('plain', ''))
    expect(v0.errorCode).toBe(ErrorCode.NONE)
    expect(v0.memberId).toMatch(/^[0-9a-f-]{36}$/)

    const described = await wire.send(consumerGroupDescribeCodec, 1, { groupIds: ['plain', 'nope'], includeAuthorizedOperations: false })
    const [plain, nope] = described.groups
    // The second member joined within group.consumer.assignment.interval.ms (1 s) of the first
    // target: the group waits for a heartbeat after it to compute the next (Assigning), as Kafka 4.4.
    expect(plain).toMatchObject({ errorCode: ErrorCode.NONE, groupId: 'plain', groupState: 'Assigning', groupEpoch: 3, assignmentEpoch: 2, assignorName: 'uniform' })
    const memberA = plain!.members.find((m) => m.memberId === 'member-a')!
    expect(memberA).toMatchObject({ memberEpoch: 2, clientId: 'kip848-test', subscribedTopicNames: ['orders'], memberType: 1 })
    expect(memberA.assignment.topicPartitions).toEqual([{ topicId: orders.topicId, topicName: 'orders', partitions: [0, 1, 2] }])
    expect(memberA.targetAssignment.topicPartitions[0]!.partitions).toEqual([0, 1, 2])
    expect(nope).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, groupId: 'nope' })
    // A group's consumer.assignment.interval.ms 0: every heartbeat may compute the target.
    await broker.groupConfigs.alter('eager', { 'consumer.assignment.interval.ms': '0' }, false)
    await wire.send(consumerGroupHeartbeatCodec, 1, joinRequest('eager', 'member-x'))
    await wire.send(consumerGroupHeartbeatCodec, 1, joinRequest('eager', 'member-y'))
    const eager = (await wire.send(consumerGroupDescribeCodec, 1, { groupIds: ['eager'], includeAuthorizedOperations: false })).groups[0]!
    expect(eager).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Reconciling', groupEpoch: 3, assignmentEpoch: 3 })
    expect(eager.members.find((m) => m.memberId === 'member-x')!.targetAssignment.topicPartitions[0]!.partitions.length).toBeLessThan(3)

    // DescribeGroups (the classic API) describes classic groups only, as Kafka 4.4: a consumer
    // group is Dead (before v6) or GROUP_ID_NOT_FOUND saying it is not a classic group.
    const classic = await wire.send(describeGroupsCodec, 6, { groups: ['plain', 'nope'], includeAuthorizedOperations: false })
    expect(classic.groups.map((g) => [g.groupId, g.errorCode, g.errorMessage, g.groupState, g.members.length])).toEqual([
      ['plain', ErrorCode.GROUP_ID_NOT_FOUND, 'Group plain is not a classic group.', 'Dead', 0],
      ['nope', ErrorCode.GROUP_ID_NOT_FOUND, 'Group nope not found.', 'Dead', 0],
    ])
    const v5 = await wire.send(describeGroupsCodec, 5, { groups: ['plain'], includeAuthorizedOperations: false })
    expect(v5.groups[0]).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Dead', protocolType: '', members: [] })
  })
})
