/**
 * OffsetFetch: committed offsets of a group, -1 (no leader epoch, metadata "") for partitions
 * without one; topics null asks for every committed partition. v1-7 ask for one group, v8+ for
 * several, each answered in its own entry. While this broker does not coordinate the group's
 * `__consumer_offsets` partition (NOT_COORDINATOR) or loads it (COORDINATOR_LOAD_IN_PROGRESS) that error answers the group,
 * with no topics (v2+), or every partition asked (v0-1, which have no group-level error), as
 * Kafka's OffsetFetchRequest.getErrorResponse. With requireStable (v7+, a read_committed
 * consumer), a partition whose offset an undecided transaction commits is answered
 * UNSTABLE_OFFSET_COMMIT (retriable), as Kafka does.
 */
import type { OffsetFetchRequest, OffsetFetchRequestTopic, OffsetFetchResponse, OffsetFetchResponseTopic } from '../../protocol/apis/offset-fetch.js'
import { ZERO_UUID } from '../../protocol/apis/common.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function offsetFetchHandler(broker: BrokerContext): ApiHandler<OffsetFetchRequest, OffsetFetchResponse> {
  const store = () => broker.groupCoordinator.offsets

  /** `describable`: the topics the principal may DESCRIBE (Kafka hides the others' offsets). */
  const fetch = (groupId: string, topics: OffsetFetchRequestTopic[] | null, withEpoch: boolean, requireStable: boolean, describable: (topic: string) => boolean): OffsetFetchResponseTopic[] => {
    if (topics === null) {
      const byTopic = new Map<string, OffsetFetchResponseTopic>()
      for (const e of store().all(groupId)) {
        if (!describable(e.topic)) continue
        let topic = byTopic.get(e.topic)
        if (!topic) byTopic.set(e.topic, (topic = { name: e.topic, partitions: [] }))
        topic.partitions.push({ partitionIndex: e.partition, committedOffset: e.offset, committedLeaderEpoch: withEpoch ? e.leaderEpoch : -1, metadata: e.metadata ?? '', errorCode: ErrorCode.NONE })
      }
      return [...byTopic.values()]
    }
    return topics.map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((partitionIndex) => {
        if (!describable(t.name)) return { partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED }
        if (requireStable && store().hasPendingTransactionalOffsets(groupId, t.name, partitionIndex)) {
          return { partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT }
        }
        const c = store().get(groupId, t.name, partitionIndex)
        return c
          ? { partitionIndex, committedOffset: c.offset, committedLeaderEpoch: withEpoch ? c.leaderEpoch : -1, metadata: c.metadata ?? '', errorCode: ErrorCode.NONE }
          : { partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE }
      }),
    }))
  }

  return (request, context) => {
    const v = context.header.apiVersion
    const status = (groupId: string) => broker.groupCoordinator.statusError(groupId)
    // Kafka's: DESCRIBE on the group, then on each topic.
    const groupDenied = (groupId: string) => !broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)
    const describable = (topic: string) => broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic)
    if (v >= 8) {
      return {
        throttleTimeMs: 0,
        topics: [],
        errorCode: 0,
        groups: request.groups.map((g) => {
          let errorCode = groupDenied(g.groupId) ? ErrorCode.GROUP_AUTHORIZATION_FAILED : g.groupId === '' ? ErrorCode.INVALID_GROUP_ID : status(g.groupId)
          // v9+: a consumer group member fetches in its current epoch (Kafka's validateOffsetFetch).
          if (errorCode === ErrorCode.NONE && v >= 9) errorCode = broker.groupCoordinator.validateOffsetFetch(g.groupId, g.memberId, g.memberEpoch)
          // Names only: topic ids replace them in v10, which is not served.
          const topics = errorCode === ErrorCode.NONE ? fetch(g.groupId, g.topics, true, request.requireStable, describable).map((t) => ({ ...t, topicId: ZERO_UUID })) : []
          return { groupId: g.groupId, topics, errorCode }
        }),
      }
    }
    if (groupDenied(request.groupId)) return groupError(request.topics, v, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if (request.groupId === '') return { throttleTimeMs: 0, topics: [], errorCode: v >= 2 ? ErrorCode.INVALID_GROUP_ID : 0, groups: [] }
    const groupStatus = status(request.groupId)
    if (groupStatus !== ErrorCode.NONE) return groupError(request.topics, v, groupStatus)
    return { throttleTimeMs: 0, topics: fetch(request.groupId, request.topics, v >= 5, request.requireStable, describable), errorCode: 0, groups: [] }
  }
}

/** Kafka's OffsetFetchRequest.getErrorResponse for v1-7: the group's error (v2+), or every partition asked (v0-1). */
function groupError(requested: OffsetFetchRequestTopic[] | null, v: number, errorCode: number): OffsetFetchResponse {
  if (v >= 2) return { throttleTimeMs: 0, topics: [], errorCode, groups: [] }
  const topics = (requested ?? []).map((t) => ({
    name: t.name,
    partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode })),
  }))
  return { throttleTimeMs: 0, topics, errorCode: 0, groups: [] }
}
