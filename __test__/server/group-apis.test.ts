/**
 * The group APIs through the broker's request dispatcher, in the shape of each version asked:
 * FindCoordinator single key (v0-3) and batched (v4+), JoinGroup's MEMBER_ID_REQUIRED from v4,
 * LeaveGroup single (v0-2) and batched (v3+), OffsetCommit/OffsetFetch one group (v1-7) and
 * several (v8+), DescribeGroups and ListGroups, DeleteGroups (v3+ with messages) and OffsetDelete;
 * and the internal offsets topic hidden from clients.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { Connection } from '../../ts/network/connection.js'
import type { ApiCodec } from '../../ts/protocol/apis/api.js'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { deleteGroupsCodec } from '../../ts/protocol/apis/delete-groups.js'
import { describeGroupsCodec } from '../../ts/protocol/apis/describe-groups.js'
import { findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { heartbeatCodec } from '../../ts/protocol/apis/heartbeat.js'
import { joinGroupCodec, type JoinGroupRequest } from '../../ts/protocol/apis/join-group.js'
import { leaveGroupCodec } from '../../ts/protocol/apis/leave-group.js'
import { listGroupsCodec } from '../../ts/protocol/apis/list-groups.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { offsetCommitCodec } from '../../ts/protocol/apis/offset-commit.js'
import { offsetDeleteCodec } from '../../ts/protocol/apis/offset-delete.js'
import { offsetFetchCodec } from '../../ts/protocol/apis/offset-fetch.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { syncGroupCodec } from '../../ts/protocol/apis/sync-group.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { readResponseHeader, writeRequestHeader } from '../../ts/protocol/header.js'
import { Reader } from '../../ts/protocol/reader.js'
import { Writer } from '../../ts/protocol/writer.js'
import { TopicError, type Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

const connection = { id: 'test', listenerName: 'PLAINTEXT', socket: { remoteAddress: '127.0.0.1' }, close: () => undefined } as unknown as Connection

async function call<Req, Res>(codec: ApiCodec<Req, Res>, version: number, request: Req): Promise<Res> {
  const flexible = version >= codec.flexibleFrom
  const w = new Writer()
  writeRequestHeader(w, { apiKey: codec.apiKey, apiVersion: version, correlationId: 1, clientId: 'test-client' }, flexible)
  codec.encodeRequest(w, version, request)
  const out = await broker!.apis.handle(Buffer.from(w.finish()), connection)
  const r = new Reader(out!)
  readResponseHeader(r, flexible)
  return codec.decodeResponse(r, version)
}

const joinRequest = (memberId: string): JoinGroupRequest => ({
  groupId: 'g',
  sessionTimeoutMs: 10_000,
  rebalanceTimeoutMs: 10_000,
  memberId,
  groupInstanceId: null,
  protocolType: 'consumer',
  protocols: [{ name: 'range', metadata: Buffer.from('sub') }],
  reason: null,
})

const start = () => startBroker({ props: { 'group.initial.rebalance.delay.ms': '0' } })

describe('group APIs on the wire', () => {
  it('FindCoordinator names this broker: one key up to v3, a batch of keys from v4', async () => {
    broker = await start()
    const v0 = await call(findCoordinatorCodec, 0, { key: 'g', keyType: 0, coordinatorKeys: [] })
    expect(v0).toMatchObject({ errorCode: 0, nodeId: broker.config.nodeId, host: '127.0.0.1', port: broker.port })
    const v4 = await call(findCoordinatorCodec, 4, { key: '', keyType: 0, coordinatorKeys: ['a', 'b'] })
    expect(v4.coordinators.map((c) => [c.key, c.nodeId, c.port, c.errorCode])).toEqual([
      ['a', broker.config.nodeId, broker.port, 0],
      ['b', broker.config.nodeId, broker.port, 0],
    ])
  })

  it('JoinGroup v4+ asks for a member id first; v3 joins at once; SyncGroup, Heartbeat, DescribeGroups, ListGroups follow', async () => {
    broker = await start()
    const first = await call(joinGroupCodec, 5, joinRequest(''))
    expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED)
    expect(first.memberId).toMatch(/^test-client-/)
    const joined = await call(joinGroupCodec, 5, joinRequest(first.memberId))
    expect(joined).toMatchObject({ errorCode: 0, generationId: 1, leader: first.memberId, protocolName: 'range' })
    const synced = await call(syncGroupCodec, 3, {
      groupId: 'g',
      generationId: 1,
      memberId: first.memberId,
      groupInstanceId: null,
      protocolType: null,
      protocolName: null,
      assignments: [{ memberId: first.memberId, assignment: Buffer.from('mine') }],
    })
    expect(synced.assignment.toString()).toBe('mine')
    expect((await call(heartbeatCodec, 4, { groupId: 'g', generationId: 1, memberId: first.memberId, groupInstanceId: null })).errorCode).toBe(0)
    const described = await call(describeGroupsCodec, 5, { groups: ['g', 'none'], includeAuthorizedOperations: false })
    expect(described.groups[0]).toMatchObject({ groupId: 'g', groupState: 'Stable', protocolType: 'consumer', protocolData: 'range' })
    expect(described.groups[0].members[0]).toMatchObject({ memberId: first.memberId, clientId: 'test-client', clientHost: '/127.0.0.1' })
    expect(described.groups[0].members[0].memberAssignment.toString()).toBe('mine')
    expect(described.groups[1]).toMatchObject({ groupId: 'none', groupState: 'Dead', errorCode: 0 })
    const v6 = await call(describeGroupsCodec, 6, { groups: ['none'], includeAuthorizedOperations: false })
    expect(v6.groups[0]).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group none not found.' })
    const listed = await call(listGroupsCodec, 4, { statesFilter: ['stable'], typesFilter: [] })
    expect(listed.groups).toEqual([{ groupId: 'g', protocolType: 'consumer', groupState: 'Stable', groupType: '' }])
    expect((await call(listGroupsCodec, 0, { statesFilter: [], typesFilter: [] })).groups.map((g) => g.groupId)).toEqual(['g'])
    const old = await call(joinGroupCodec, 3, { ...joinRequest(''), groupId: 'h' })
    expect(old).toMatchObject({ errorCode: 0, generationId: 1 })
  })

  it('LeaveGroup answers at the top level up to v2 and per member from v3', async () => {
    broker = await start()
    const a = await call(joinGroupCodec, 3, joinRequest(''))
    const v1 = await call(leaveGroupCodec, 1, { groupId: 'g', memberId: 'stranger', members: [] })
    expect(v1.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID)
    const v3 = await call(leaveGroupCodec, 3, {
      groupId: 'g',
      memberId: '',
      members: [
        { memberId: a.memberId, groupInstanceId: null, reason: null },
        { memberId: 'x', groupInstanceId: null, reason: null },
      ],
    })
    expect(v3.errorCode).toBe(0)
    expect(v3.members.map((m) => m.errorCode)).toEqual([0, ErrorCode.UNKNOWN_MEMBER_ID])
  })

  it('OffsetCommit stores, OffsetFetch returns (-1 for unknown partitions), in the v1-7 and v8+ shapes', async () => {
    broker = await start()
    await broker.createTopic('t', 2, {})
    const commit = await call(offsetCommitCodec, 2, {
      groupId: 'g',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [
        { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: 'meta' }] },
        { name: 'missing', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] },
      ],
    })
    expect(commit.topics.map((t) => t.partitions[0].errorCode)).toEqual([0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION])
    const v1 = await call(offsetFetchCodec, 1, { groupId: 'g', topics: [{ name: 't', partitionIndexes: [0, 1] }], groups: [], requireStable: false })
    expect(v1.topics[0].partitions.map((p) => [p.partitionIndex, p.committedOffset, p.metadata])).toEqual([
      [0, 42n, 'meta'],
      [1, -1n, ''],
    ])
    const v8 = await call(offsetFetchCodec, 8, {
      groupId: '',
      topics: [],
      groups: [
        { groupId: 'g', memberId: null, memberEpoch: -1, topics: null },
        { groupId: 'other', memberId: null, memberEpoch: -1, topics: [{ name: 't', partitionIndexes: [0] }] },
      ],
      requireStable: false,
    })
    expect(v8.groups.map((g) => [g.groupId, g.errorCode, g.topics.map((t) => [t.name, t.partitions.map((p) => p.committedOffset)])])).toEqual([
      ['g', 0, [['t', [42n]]]],
      ['other', 0, [['t', [-1n]]]],
    ])
  })

  it('DeleteGroups deletes Empty groups only, one answer per group, with a message from v3; ApiVersions names it and OffsetDelete', async () => {
    broker = await start()
    await broker.createTopic('t', 1, {})
    const versions = await call(apiVersionsCodec, 2, { clientSoftwareName: '', clientSoftwareVersion: '' })
    expect(versions.apiKeys.filter((k) => k.apiKey === 42 || k.apiKey === 47)).toEqual([
      { apiKey: 42, minVersion: 0, maxVersion: 3 },
      { apiKey: 47, minVersion: 0, maxVersion: 0 },
    ])
    const simpleCommit = (groupId: string) =>
      call(offsetCommitCodec, 8, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      })
    await simpleCommit('empty-a')
    await simpleCommit('empty-b')
    const first = await call(joinGroupCodec, 3, joinRequest(''))
    expect(first.errorCode).toBe(0)

    const v0 = await call(deleteGroupsCodec, 0, { groupsNames: ['empty-a', 'g'] })
    expect(v0.results).toEqual([
      { groupId: 'empty-a', errorCode: 0, errorMessage: null },
      { groupId: 'g', errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: null },
    ])
    const v3 = await call(deleteGroupsCodec, 3, { groupsNames: ['empty-b', 'empty-a', 'g'] })
    expect(v3.results).toEqual([
      { groupId: 'empty-b', errorCode: 0, errorMessage: null },
      { groupId: 'empty-a', errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group empty-a not found.' },
      { groupId: 'g', errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: 'Group g is not empty: it has members.' },
    ])
    const fetched = await call(offsetFetchCodec, 8, { groupId: '', topics: [], groups: [{ groupId: 'empty-b', memberId: null, memberEpoch: -1, topics: null }], requireStable: false })
    expect(fetched.groups[0].topics).toEqual([])
    expect((await call(listGroupsCodec, 4, { statesFilter: [], typesFilter: [] })).groups.map((g) => g.groupId)).toEqual(['g'])
  })

  it('OffsetDelete: UNKNOWN_TOPIC_OR_PARTITION for unknown topics and partitions, the coordinator for the rest, a group-level error alone', async () => {
    broker = await start()
    await broker.createTopic('t', 2, {})
    await call(offsetCommitCodec, 8, {
      groupId: 'simple',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [{ name: 't', partitions: [0, 1].map((partitionIndex) => ({ partitionIndex, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: null })) }],
    })
    const deleted = await call(offsetDeleteCodec, 0, {
      groupId: 'simple',
      topics: [
        { name: 't', partitions: [{ partitionIndex: 1 }, { partitionIndex: 2 }] },
        { name: 'missing', partitions: [{ partitionIndex: 0 }] },
      ],
    })
    expect(deleted).toEqual({
      errorCode: 0,
      throttleTimeMs: 0,
      topics: [
        {
          name: 't',
          partitions: [
            { partitionIndex: 1, errorCode: 0 },
            { partitionIndex: 2, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION },
          ],
        },
        { name: 'missing', partitions: [{ partitionIndex: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION }] },
      ],
    })
    const fetched = await call(offsetFetchCodec, 1, { groupId: 'simple', topics: [{ name: 't', partitionIndexes: [0, 1] }], groups: [], requireStable: false })
    expect(fetched.topics[0].partitions.map((p) => p.committedOffset)).toEqual([3n, -1n])
    expect(await call(offsetDeleteCodec, 0, { groupId: 'nope', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] })).toEqual({
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      throttleTimeMs: 0,
      topics: [],
    })
  })

  it("a broker that does not coordinate a group's partition answers every group API NOT_COORDINATOR, and COORDINATOR_LOAD_IN_PROGRESS while it loads it", async () => {
    broker = await start()
    await broker.createTopic('t', 1, {})
    const commitRequest = {
      groupId: 'g',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    }
    expect((await call(offsetCommitCodec, 8, commitRequest)).topics[0].partitions[0].errorCode).toBe(0)
    // As when another broker became the leader of the group's partition of __consumer_offsets.
    const partition = broker.groupCoordinator.partitionFor('g')
    expect(partition).toBe(3) // "g".hashCode() = 103, % 50
    broker.groupCoordinator.onResignation(partition, 1)
    const answers = async () => ({
      join: (await call(joinGroupCodec, 5, joinRequest(''))).errorCode,
      commit: (await call(offsetCommitCodec, 8, commitRequest)).topics[0].partitions[0].errorCode,
      fetchV1: (await call(offsetFetchCodec, 1, { groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }], groups: [], requireStable: false })).topics[0].partitions[0],
      fetchV5: await call(offsetFetchCodec, 5, { groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }], groups: [], requireStable: false }),
      fetchV8: (await call(offsetFetchCodec, 8, { groupId: '', topics: [], groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: null }], requireStable: false })).groups[0],
      describe: (await call(describeGroupsCodec, 5, { groups: ['g'], includeAuthorizedOperations: false })).groups[0],
      list: await call(listGroupsCodec, 4, { statesFilter: [], typesFilter: [] }),
      deleteGroups: (await call(deleteGroupsCodec, 3, { groupsNames: ['g'] })).results[0].errorCode,
      offsetDelete: (await call(offsetDeleteCodec, 0, { groupId: 'g', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] })).errorCode,
      heartbeat: (await call(heartbeatCodec, 4, { groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null })).errorCode,
      leave: (await call(leaveGroupCodec, 1, { groupId: 'g', memberId: 'm', members: [] })).errorCode,
    })
    const not = await answers()
    const E = ErrorCode.NOT_COORDINATOR
    expect(not).toMatchObject({ join: E, commit: E, deleteGroups: E, offsetDelete: E, heartbeat: E, leave: E })
    expect(not.fetchV1).toMatchObject({ committedOffset: -1n, errorCode: E })
    expect(not.fetchV5).toMatchObject({ errorCode: E, topics: [] })
    expect(not.fetchV8).toMatchObject({ errorCode: E, topics: [] })
    expect(not.describe).toMatchObject({ errorCode: E, groupState: 'Dead', members: [] })
    expect(not.list).toMatchObject({ errorCode: 0, groups: [] })

    // Elected again: until the log is loaded (the answers below run before the load's first turn).
    const loaded = broker.groupCoordinator.onElection(partition, 2)
    const loading = await answers()
    const L = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    expect(loading).toMatchObject({ join: L, commit: L, deleteGroups: L, offsetDelete: L, heartbeat: 0, leave: L })
    expect(loading.fetchV1.errorCode).toBe(L)
    expect(loading.fetchV8.errorCode).toBe(L)
    expect(loading.describe).toMatchObject({ errorCode: L, groupState: 'Dead' })
    expect(loading.list).toMatchObject({ errorCode: L, groups: [] })
    await loaded
    expect((await call(offsetFetchCodec, 1, { groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }], groups: [], requireStable: false })).topics[0].partitions[0]).toMatchObject({
      committedOffset: 5n,
      errorCode: 0,
    })
  })

  it('keeps __consumer_offsets to itself: listed as internal in Metadata (as Kafka lists it), not creatable, not producible', async () => {
    broker = await start()
    expect(broker.logManager.getLog('__consumer_offsets', 0)).toBeDefined()
    const metadata = await call(metadataCodec, 1, { topics: null, allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false })
    expect(metadata.topics.map((t) => [t.name, t.isInternal])).toContainEqual(['__consumer_offsets', true])
    await expect(broker.createTopic('__consumer_offsets', 1, {})).rejects.toBeInstanceOf(TopicError)
    const forged = buildBatch([{ key: 'forged', value: 'commit' }], { nowMs: 1 })
    const endBefore = broker.logManager.getLog('__consumer_offsets', 0)!.logEndOffset()
    const produced = await call(produceCodec, 9, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: '__consumer_offsets', partitionData: [{ index: 0, records: forged }] }],
    })
    expect(produced.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION)
    expect(broker.logManager.getLog('__consumer_offsets', 0)!.logEndOffset()).toBe(endBefore)
  })
})
