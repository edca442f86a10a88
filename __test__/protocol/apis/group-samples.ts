/**
 * Sample messages of the consumer group APIs, one per version, shared by their codec tests and
 * mirrored field for field by __test__/protocol/fixtures/kafka-clients/GroupApis.java, which
 * writes the same messages with Kafka's own generated classes into group-apis.json.
 *
 * `request(v)` / `response(v)` set every field the version has and also every field Kafka marks
 * ignorable (which a version without it drops); `...Expected(v)` is what decoding gives back:
 * the fields the version lacks at their defaults.
 */
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../../../ts/protocol/apis/delete-groups.js'
import type { DescribeGroupsRequest, DescribeGroupsResponse } from '../../../ts/protocol/apis/describe-groups.js'
import { AUTHORIZED_OPERATIONS_OMITTED } from '../../../ts/protocol/apis/describe-groups.js'
import type { FindCoordinatorRequest, FindCoordinatorResponse } from '../../../ts/protocol/apis/find-coordinator.js'
import type { HeartbeatRequest, HeartbeatResponse } from '../../../ts/protocol/apis/heartbeat.js'
import type { JoinGroupRequest, JoinGroupResponse } from '../../../ts/protocol/apis/join-group.js'
import type { LeaveGroupRequest, LeaveGroupResponse } from '../../../ts/protocol/apis/leave-group.js'
import type { ListGroupsRequest, ListGroupsResponse } from '../../../ts/protocol/apis/list-groups.js'
import type { OffsetCommitRequest, OffsetCommitResponse } from '../../../ts/protocol/apis/offset-commit.js'
import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../../../ts/protocol/apis/offset-delete.js'
import type { OffsetFetchRequest, OffsetFetchResponse, OffsetFetchResponseTopic } from '../../../ts/protocol/apis/offset-fetch.js'
import type { SyncGroupRequest, SyncGroupResponse } from '../../../ts/protocol/apis/sync-group.js'
import type { ConsumerProtocolAssignment, ConsumerProtocolSubscription } from '../../../ts/protocol/consumer-protocol.js'

/** The topicId of OffsetCommit's and OffsetFetch's topics before v10 (names only): all zeroes. */
const NO_TOPIC_ID = Buffer.alloc(16)

export interface Samples<Req, Res> {
  request(v: number): Req
  requestExpected(v: number): Req
  response(v: number): Res
  responseExpected(v: number): Res
}

/** Opaque protocol metadata and assignments (the codecs do not look inside). */
export const METADATA = Buffer.from('000100000001', 'hex')
export const ASSIGNMENT = Buffer.from('00ff00ff', 'hex')
export const EMPTY = Buffer.alloc(0)
/** A group id whose UTF-8 is longer than its string (ü is two bytes). */
export const GROUP = 'grüppe'

export const findCoordinatorSamples: Samples<FindCoordinatorRequest, FindCoordinatorResponse> = {
  request: (v) => (v <= 3 ? { key: GROUP, keyType: v >= 1 ? 1 : 0, coordinatorKeys: [] } : { key: '', keyType: 1, coordinatorKeys: [GROUP, 'txn-b'] }),
  requestExpected: (v) => findCoordinatorSamples.request(v),
  response: (v) =>
    v <= 3
      ? {
          throttleTimeMs: 25,
          errorCode: 15,
          errorMessage: 'not yet',
          nodeId: 3,
          host: 'broker-3.local',
          port: 9093,
          coordinators: [],
        }
      : {
          throttleTimeMs: 25,
          errorCode: 0,
          errorMessage: 'dropped',
          nodeId: 0,
          host: '',
          port: 0,
          coordinators: [
            { key: GROUP, nodeId: 3, host: 'broker-3.local', port: 9093, errorCode: 0, errorMessage: null },
            { key: 'txn-b', nodeId: -1, host: '', port: -1, errorCode: 15, errorMessage: 'not yet' },
          ],
        },
  responseExpected: (v) => ({
    ...findCoordinatorSamples.response(v),
    throttleTimeMs: v >= 1 ? 25 : 0,
    errorMessage: v >= 1 && v <= 3 ? 'not yet' : '',
  }),
}

export const joinGroupSamples: Samples<JoinGroupRequest, JoinGroupResponse> = {
  request: (v) => ({
    groupId: GROUP,
    sessionTimeoutMs: 45000,
    rebalanceTimeoutMs: 300000,
    memberId: 'member-1',
    groupInstanceId: v >= 5 ? 'instance-1' : null,
    protocolType: 'consumer',
    protocols: [
      { name: 'range', metadata: METADATA },
      { name: 'roundrobin', metadata: EMPTY },
    ],
    reason: 'rebalance needed',
  }),
  requestExpected: (v) => ({
    ...joinGroupSamples.request(v),
    rebalanceTimeoutMs: v >= 1 ? 300000 : -1,
    reason: v >= 8 ? 'rebalance needed' : null,
  }),
  response: (v) => ({
    throttleTimeMs: 7,
    errorCode: 0,
    generationId: 12,
    protocolType: 'consumer',
    protocolName: 'range',
    leader: 'member-1',
    skipAssignment: v >= 9,
    memberId: 'member-2',
    members: [
      { memberId: 'member-1', groupInstanceId: 'instance-1', metadata: METADATA },
      { memberId: 'member-2', groupInstanceId: null, metadata: EMPTY },
    ],
  }),
  responseExpected: (v) => {
    const res = joinGroupSamples.response(v)
    return {
      ...res,
      throttleTimeMs: v >= 2 ? 7 : 0,
      protocolType: v >= 7 ? 'consumer' : null,
      members: res.members.map((m) => ({ ...m, groupInstanceId: v >= 5 ? m.groupInstanceId : null })),
    }
  },
}

export const syncGroupSamples: Samples<SyncGroupRequest, SyncGroupResponse> = {
  request: (v) => ({
    groupId: GROUP,
    generationId: 12,
    memberId: 'member-1',
    groupInstanceId: v >= 3 ? 'instance-1' : null,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [
      { memberId: 'member-1', assignment: ASSIGNMENT },
      { memberId: 'member-2', assignment: EMPTY },
    ],
  }),
  requestExpected: (v) => ({
    ...syncGroupSamples.request(v),
    protocolType: v >= 5 ? 'consumer' : null,
    protocolName: v >= 5 ? 'range' : null,
  }),
  response: () => ({
    throttleTimeMs: 7,
    errorCode: 0,
    protocolType: 'consumer',
    protocolName: 'range',
    assignment: ASSIGNMENT,
  }),
  responseExpected: (v) => ({
    ...syncGroupSamples.response(v),
    throttleTimeMs: v >= 1 ? 7 : 0,
    protocolType: v >= 5 ? 'consumer' : null,
    protocolName: v >= 5 ? 'range' : null,
  }),
}

export const heartbeatSamples: Samples<HeartbeatRequest, HeartbeatResponse> = {
  request: (v) => ({ groupId: GROUP, generationId: 12, memberId: 'member-1', groupInstanceId: v >= 3 ? 'instance-1' : null }),
  requestExpected: (v) => heartbeatSamples.request(v),
  response: () => ({ throttleTimeMs: 7, errorCode: 27 }),
  responseExpected: (v) => ({ throttleTimeMs: v >= 1 ? 7 : 0, errorCode: 27 }),
}

export const leaveGroupSamples: Samples<LeaveGroupRequest, LeaveGroupResponse> = {
  request: (v) =>
    v <= 2
      ? { groupId: GROUP, memberId: 'member-1', members: [] }
      : {
          groupId: GROUP,
          memberId: '',
          members: [
            { memberId: 'member-1', groupInstanceId: null, reason: 'shutting down' },
            { memberId: '', groupInstanceId: 'instance-2', reason: null },
          ],
        },
  requestExpected: (v) => {
    const req = leaveGroupSamples.request(v)
    return { ...req, members: req.members.map((m) => ({ ...m, reason: v >= 5 ? m.reason : null })) }
  },
  response: (v) => ({
    throttleTimeMs: 7,
    errorCode: 0,
    members:
      v >= 3
        ? [
            { memberId: 'member-1', groupInstanceId: null, errorCode: 0 },
            { memberId: '', groupInstanceId: 'instance-2', errorCode: 25 },
          ]
        : [],
  }),
  responseExpected: (v) => ({ ...leaveGroupSamples.response(v), throttleTimeMs: v >= 1 ? 7 : 0 }),
}

export const offsetCommitSamples: Samples<OffsetCommitRequest, OffsetCommitResponse> = {
  request: (v) => ({
    groupId: GROUP,
    generationIdOrMemberEpoch: 12,
    memberId: 'member-1',
    groupInstanceId: v >= 7 ? 'instance-1' : null,
    retentionTimeMs: 86400000n,
    topics: [
      {
        name: 'orders',
        topicId: NO_TOPIC_ID,
        partitions: [
          { partitionIndex: 0, committedOffset: 1234567890123n, committedLeaderEpoch: 5, committedMetadata: 'm' },
          { partitionIndex: 2, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: null },
        ],
      },
      { name: 'payments', topicId: NO_TOPIC_ID, partitions: [] },
    ],
  }),
  requestExpected: (v) => {
    const req = offsetCommitSamples.request(v)
    return {
      ...req,
      retentionTimeMs: v <= 4 ? 86400000n : -1n,
      topics: req.topics.map((t) => ({
        ...t,
        partitions: t.partitions.map((p) => ({ ...p, committedLeaderEpoch: v >= 6 ? p.committedLeaderEpoch : -1 })),
      })),
    }
  },
  response: () => ({
    throttleTimeMs: 7,
    topics: [
      {
        name: 'orders',
        topicId: NO_TOPIC_ID,
        partitions: [
          { partitionIndex: 0, errorCode: 0 },
          { partitionIndex: 2, errorCode: 28 },
        ],
      },
    ],
  }),
  responseExpected: (v) => ({ ...offsetCommitSamples.response(v), throttleTimeMs: v >= 3 ? 7 : 0 }),
}

function offsetFetchTopic(leaderEpoch: boolean): OffsetFetchResponseTopic {
  return {
    name: 'orders',
    partitions: [
      { partitionIndex: 0, committedOffset: 1234567890123n, committedLeaderEpoch: leaderEpoch ? 5 : -1, metadata: 'm', errorCode: 0 },
      { partitionIndex: 2, committedOffset: -1n, committedLeaderEpoch: -1, metadata: null, errorCode: 0 },
    ],
  }
}

export const offsetFetchSamples: Samples<OffsetFetchRequest, OffsetFetchResponse> = {
  request: (v) =>
    v <= 7
      ? {
          groupId: GROUP,
          // v3 and v6 ask for all topics (null), the others for two.
          topics:
            v === 3 || v === 6
              ? null
              : [
                  { name: 'orders', partitionIndexes: [0, 2] },
                  { name: 'payments', partitionIndexes: [] },
                ],
          groups: [],
          requireStable: v >= 7,
        }
      : {
          groupId: '',
          topics: [],
          groups: [
            { groupId: GROUP, memberId: 'member-1', memberEpoch: 12, topics: [{ name: 'orders', topicId: NO_TOPIC_ID, partitionIndexes: [0, 2] }] },
            { groupId: 'other', memberId: null, memberEpoch: -1, topics: null },
          ],
          requireStable: true,
        },
  requestExpected: (v) => {
    const req = offsetFetchSamples.request(v)
    return {
      ...req,
      groups: req.groups.map((g) => (v >= 9 ? g : { ...g, memberId: null, memberEpoch: -1 })),
    }
  },
  response: (v) =>
    v <= 7
      ? { throttleTimeMs: 7, topics: [offsetFetchTopic(true)], errorCode: 14, groups: [] }
      : {
          throttleTimeMs: 7,
          topics: [],
          errorCode: 14,
          groups: [
            { groupId: GROUP, topics: [{ ...offsetFetchTopic(true), topicId: NO_TOPIC_ID }], errorCode: 0 },
            { groupId: 'other', topics: [], errorCode: 16 },
          ],
        },
  responseExpected: (v) => ({
    ...offsetFetchSamples.response(v),
    throttleTimeMs: v >= 3 ? 7 : 0,
    topics: v <= 7 ? [offsetFetchTopic(v >= 5)] : [],
    errorCode: v >= 2 && v <= 7 ? 14 : 0,
  }),
}

export const describeGroupsSamples: Samples<DescribeGroupsRequest, DescribeGroupsResponse> = {
  request: (v) => ({ groups: [GROUP, 'other'], includeAuthorizedOperations: v >= 3 }),
  requestExpected: (v) => describeGroupsSamples.request(v),
  response: (v) => ({
    throttleTimeMs: 7,
    groups: [
      {
        errorCode: 0,
        errorMessage: null,
        groupId: GROUP,
        groupState: 'Stable',
        protocolType: 'consumer',
        protocolData: 'range',
        members: [
          {
            memberId: 'member-1',
            groupInstanceId: 'instance-1',
            clientId: 'client-a',
            clientHost: '/127.0.0.1',
            memberMetadata: METADATA,
            memberAssignment: ASSIGNMENT,
          },
        ],
        authorizedOperations: v >= 3 ? 0x1f8 : AUTHORIZED_OPERATIONS_OMITTED,
      },
      {
        errorCode: v >= 6 ? 69 : 0,
        errorMessage: v >= 6 ? 'Group other not found.' : null,
        groupId: 'other',
        groupState: 'Dead',
        protocolType: '',
        protocolData: '',
        members: [],
        authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      },
    ],
  }),
  responseExpected: (v) => {
    const res = describeGroupsSamples.response(v)
    return {
      throttleTimeMs: v >= 1 ? 7 : 0,
      groups: res.groups.map((g) => ({
        ...g,
        members: g.members.map((m) => ({ ...m, groupInstanceId: v >= 4 ? m.groupInstanceId : null })),
      })),
    }
  },
}

export const listGroupsSamples: Samples<ListGroupsRequest, ListGroupsResponse> = {
  request: (v) => ({ statesFilter: v >= 4 ? ['Stable', 'Empty'] : [], typesFilter: v >= 5 ? ['classic'] : [] }),
  requestExpected: (v) => listGroupsSamples.request(v),
  response: () => ({
    throttleTimeMs: 7,
    errorCode: 0,
    groups: [
      { groupId: GROUP, protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' },
      { groupId: 'connect-x', protocolType: 'connect', groupState: 'Empty', groupType: 'classic' },
    ],
  }),
  responseExpected: (v) => {
    const res = listGroupsSamples.response(v)
    return {
      ...res,
      throttleTimeMs: v >= 1 ? 7 : 0,
      groups: res.groups.map((g) => ({
        ...g,
        groupState: v >= 4 ? g.groupState : '',
        groupType: v >= 5 ? g.groupType : '',
      })),
    }
  },
}

export const deleteGroupsSamples: Samples<DeleteGroupsRequest, DeleteGroupsResponse> = {
  request: () => ({ groupsNames: [GROUP, 'live', 'nope'] }),
  requestExpected: (v) => deleteGroupsSamples.request(v),
  response: () => ({
    throttleTimeMs: 7,
    results: [
      { groupId: GROUP, errorCode: 0, errorMessage: null },
      { groupId: 'live', errorCode: 68, errorMessage: 'The group is not empty.' },
      { groupId: 'nope', errorCode: 69, errorMessage: 'Group nope not found.' },
    ],
  }),
  responseExpected: (v) => {
    const res = deleteGroupsSamples.response(v)
    return { ...res, results: res.results.map((g) => ({ ...g, errorMessage: v >= 3 ? g.errorMessage : null })) }
  },
}

export const offsetDeleteSamples: Samples<OffsetDeleteRequest, OffsetDeleteResponse> = {
  request: () => ({
    groupId: GROUP,
    topics: [
      { name: 'orders', partitions: [{ partitionIndex: 0 }, { partitionIndex: 2 }] },
      { name: 'payments', partitions: [] },
    ],
  }),
  requestExpected: (v) => offsetDeleteSamples.request(v),
  response: () => ({
    errorCode: 0,
    throttleTimeMs: 7,
    topics: [
      {
        name: 'orders',
        partitions: [
          { partitionIndex: 0, errorCode: 0 },
          { partitionIndex: 2, errorCode: 86 },
        ],
      },
    ],
  }),
  responseExpected: (v) => offsetDeleteSamples.response(v),
}

export const subscriptionSample: ConsumerProtocolSubscription = {
  topics: ['orders', 'payments'],
  userData: Buffer.from('cafe', 'hex'),
  ownedPartitions: [{ topic: 'orders', partitions: [0, 2] }],
  generationId: 12,
  rackId: 'rack-1',
}

export function subscriptionExpected(v: number): ConsumerProtocolSubscription {
  return {
    ...subscriptionSample,
    ownedPartitions: v >= 1 ? subscriptionSample.ownedPartitions : [],
    generationId: v >= 2 ? subscriptionSample.generationId : -1,
    rackId: v >= 3 ? subscriptionSample.rackId : null,
  }
}

export const assignmentSample: ConsumerProtocolAssignment = {
  assignedPartitions: [
    { topic: 'orders', partitions: [0, 2] },
    { topic: 'payments', partitions: [1] },
  ],
  userData: null,
}
