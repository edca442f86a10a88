/**
 * The KIP-848 member's reconciliation, step by step (consumer-membership-manager.ts with the
 * heartbeat requests HeartbeatState builds): the first heartbeat joins with every field, later
 * ones carry only what changed; a new target assignment is reconciled at poll in Kafka's order
 * (revoke: commit and onPartitionsRevoked while the partitions are still owned, then assign:
 * onPartitionsAssigned, then the acknowledgement: the next heartbeat carries the partitions
 * owned, and not before); fencing loses the partitions and rejoins with epoch 0 and the same
 * member id; leaving sends epoch -1, or -2 for a static member.
 */
import { describe, expect, it } from 'vitest'
import { HeartbeatState } from '../../ts/client/consumer-heartbeat-request-manager.js'
import { ConsumerMembershipManager } from '../../ts/client/consumer-membership-manager.js'
import type { TopicPartition } from '../../ts/client/fetch-session-handler.js'
import { MemberState } from '../../ts/client/member-state.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { SubscriptionState } from '../../ts/client/subscription-state.js'
import type { ConsumerGroupHeartbeatResponse } from '../../ts/protocol/apis/consumer-group-heartbeat.js'
import type { MetadataResponse } from '../../ts/protocol/apis/metadata.js'

const ORDERS = Buffer.alloc(16, 1)
const AUDIT = Buffer.alloc(16, 2)

function setup(groupInstanceId: string | null = null) {
  // A client that never connects: its Metadata is filled in by hand and names the topic ids.
  const client = new NetworkClient({ bootstrapServers: '127.0.0.1:1' })
  const topic = (name: string, topicId: Buffer) => ({
    name,
    topicId,
    errorCode: 0,
    isInternal: false,
    partitions: [0, 1, 2, 3].map((p) => ({ partitionIndex: p, errorCode: 0, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] })),
  })
  client.metadata.update(
    { clusterId: 'c', controllerId: 1, brokers: [{ nodeId: 1, host: '127.0.0.1', port: 1, rack: null }], topics: [topic('orders', ORDERS), topic('audit', AUDIT)] } as unknown as MetadataResponse,
    true,
  )
  const subscriptions = new SubscriptionState('earliest')
  const steps: string[] = []
  const tps = (list: TopicPartition[]) => list.map((tp) => `${tp.topic}-${tp.partition}`).join(',')
  let membership!: ConsumerMembershipManager
  let heartbeat!: HeartbeatState
  // What the member tells the coordinator at each step: the partitions it says it owns.
  const ack = () => heartbeat.buildRequestData().topicPartitions
  membership = new ConsumerMembershipManager({ groupId: 'g', groupInstanceId, serverAssignor: 'range', rebalanceTimeoutMs: 30_000, rackId: 'r1' }, subscriptions, client, {
    onRevoke: async (list) => {
      steps.push(`revoke ${tps(list)} owned=${subscriptions.assignedPartitions.length} state=${membership.state} ack=${JSON.stringify(ack())}`)
    },
    onAssign: async (list) => {
      steps.push(`assign ${tps(list)} owned=${subscriptions.assignedPartitions.length} state=${membership.state}`)
    },
    onLost: async (list) => {
      steps.push(`lost ${tps(list)} epoch=${membership.memberEpoch}`)
    },
    onRejoinNeeded: () => steps.push('wake'),
  })
  heartbeat = new HeartbeatState(subscriptions, membership)
  const respond = (memberEpoch: number, assignment: Array<[Buffer, number[]]> | null): ConsumerGroupHeartbeatResponse => ({
    throttleTimeMs: 0,
    errorCode: 0,
    errorMessage: null,
    memberId: membership.memberId,
    memberEpoch,
    heartbeatIntervalMs: 500,
    assignment: assignment && { topicPartitions: assignment.map(([topicId, partitions]) => ({ topicId, partitions })) },
  })
  return { client, subscriptions, membership, heartbeat, steps, respond, ack }
}

describe('ConsumerMembershipManager', () => {
  it('joins with every field, then sends only what changed', async () => {
    const { client, subscriptions, membership, heartbeat, steps, respond } = setup()
    subscriptions.subscribe(['orders'])
    membership.onSubscriptionUpdated()
    expect(membership.state).toBe(MemberState.UNSUBSCRIBED)
    await membership.poll()
    expect(membership.state).toBe(MemberState.JOINING)
    expect(membership.memberId).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(heartbeat.buildRequestData()).toEqual({
      groupId: 'g',
      memberId: membership.memberId,
      memberEpoch: 0,
      instanceId: null,
      rackId: 'r1',
      rebalanceTimeoutMs: 30_000,
      subscribedTopicNames: ['orders'],
      subscribedTopicRegex: null,
      serverAssignor: 'range',
      topicPartitions: [],
    })
    membership.onHeartbeatRequestGenerated()
    // An answer without an assignment leaves the member JOINING (and sending everything).
    membership.onHeartbeatSuccess(respond(1, null))
    expect(membership.state).toBe(MemberState.JOINING)
    expect(heartbeat.buildRequestData()).toMatchObject({ memberEpoch: 1, subscribedTopicNames: ['orders'], topicPartitions: [] })
    membership.onHeartbeatRequestGenerated()
    // An empty assignment is reconciled (onPartitionsAssigned with none, as Java) and acknowledged.
    membership.onHeartbeatSuccess(respond(1, []))
    await membership.poll()
    expect(steps).toEqual(['wake', 'assign  owned=0 state=RECONCILING'])
    expect(heartbeat.buildRequestData()).toMatchObject({ memberEpoch: 1, topicPartitions: [] })
    membership.onHeartbeatRequestGenerated()
    expect(membership.state).toBe(MemberState.STABLE)
    // Nothing changed: only the identity and the epoch.
    expect(heartbeat.buildRequestData()).toMatchObject({ memberEpoch: 1, rackId: null, rebalanceTimeoutMs: -1, subscribedTopicNames: null, serverAssignor: null, topicPartitions: null })
    subscriptions.subscribe(['audit', 'orders'])
    expect(heartbeat.buildRequestData()).toMatchObject({ subscribedTopicNames: ['audit', 'orders'], topicPartitions: null })
    // After an error everything is sent again.
    heartbeat.reset()
    expect(heartbeat.buildRequestData()).toMatchObject({ rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['audit', 'orders'], serverAssignor: 'range', topicPartitions: [] })
    await client.close()
  })

  it('reconciles in order: revoke (still owned, not acknowledged), then assign, then acknowledge; fenced: lost, rejoin with epoch 0', async () => {
    const { client, subscriptions, membership, heartbeat, steps, respond, ack } = setup()
    subscriptions.subscribe(['audit', 'orders'])
    membership.onSubscriptionUpdated()
    await membership.poll()
    heartbeat.buildRequestData()
    membership.onHeartbeatRequestGenerated()
    membership.onHeartbeatSuccess(
      respond(1, [
        [ORDERS, [2, 0, 1]],
        [AUDIT, [3]],
      ]),
    )
    expect(membership.state).toBe(MemberState.RECONCILING)
    // Received but not reconciled: the member still says it owns nothing new.
    expect(ack()).toBeNull()
    await membership.poll()
    expect(membership.state).toBe(MemberState.ACKNOWLEDGING)
    expect(ack()).toEqual([
      { topicId: ORDERS, partitions: [0, 1, 2] },
      { topicId: AUDIT, partitions: [3] },
    ])
    membership.onHeartbeatRequestGenerated()
    expect(membership.state).toBe(MemberState.STABLE)

    // The coordinator moves orders-0 and audit-3 away and gives orders-3.
    steps.length = 0
    membership.onHeartbeatSuccess(respond(2, [[ORDERS, [1, 2, 3]]]))
    expect(membership.memberEpoch).toBe(2)
    await membership.poll()
    expect(steps).toEqual(['wake', 'revoke audit-3,orders-0 owned=4 state=RECONCILING ack=null', 'assign orders-3 owned=3 state=RECONCILING'])
    expect(
      subscriptions.assignedPartitions
        .map((s) => `${s.topic}-${s.partition}`)
        .sort()
        .join(','),
    ).toBe('orders-1,orders-2,orders-3')
    expect(membership.state).toBe(MemberState.ACKNOWLEDGING)
    expect(ack()).toEqual([{ topicId: ORDERS, partitions: [1, 2, 3] }])
    membership.onHeartbeatRequestGenerated()

    // The same assignment again: nothing to reconcile, no callback.
    steps.length = 0
    membership.onHeartbeatSuccess(respond(2, [[ORDERS, [1, 2, 3]]]))
    await membership.poll()
    expect(steps).toEqual([])
    expect(membership.state).toBe(MemberState.STABLE)

    // Fenced: the partitions are lost at the next poll (no commit), then the member rejoins
    // with epoch 0, its id unchanged, and sends everything.
    const memberId = membership.memberId
    membership.transitionToFenced()
    expect(membership.state).toBe(MemberState.FENCED)
    expect(membership.shouldSkipHeartbeat).toBe(true)
    await membership.poll()
    expect(steps).toEqual(['wake', 'lost orders-1,orders-2,orders-3 epoch=0'])
    expect(membership.state).toBe(MemberState.JOINING)
    expect(subscriptions.assignedPartitions).toEqual([])
    expect(heartbeat.buildRequestData()).toMatchObject({ memberId, memberEpoch: 0, subscribedTopicNames: ['audit', 'orders'], topicPartitions: [] })
    await client.close()
  })

  it('leaving revokes what is owned, then the leave heartbeat carries epoch -1 (-2 for a static member)', async () => {
    for (const [instance, epoch] of [
      [null, -1],
      ['i1', -2],
    ] as const) {
      const { client, subscriptions, membership, heartbeat, steps, respond } = setup(instance)
      subscriptions.subscribe(['orders'])
      membership.onSubscriptionUpdated()
      await membership.poll()
      heartbeat.buildRequestData()
      membership.onHeartbeatRequestGenerated()
      membership.onHeartbeatSuccess(respond(3, [[ORDERS, [0, 1]]]))
      await membership.poll()
      expect(heartbeat.buildRequestData().topicPartitions).toEqual([{ topicId: ORDERS, partitions: [0, 1] }])
      membership.onHeartbeatRequestGenerated()
      steps.length = 0
      const left = membership.leaveGroup()
      await new Promise((resolve) => setImmediate(resolve))
      expect(steps).toEqual(['revoke orders-0,orders-1 owned=2 state=PREPARE_LEAVING ack=null'])
      expect(membership.state).toBe(MemberState.LEAVING)
      expect(heartbeat.buildRequestData()).toMatchObject({ memberEpoch: epoch, instanceId: instance })
      membership.onHeartbeatRequestGenerated()
      expect(membership.state).toBe(MemberState.UNSUBSCRIBED)
      membership.onHeartbeatSuccess(respond(epoch, null))
      await left
      expect(subscriptions.assignedPartitions).toEqual([])
      await client.close()
    }
  })
})
