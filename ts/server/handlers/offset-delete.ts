/**
 * OffsetDelete: as Kafka's KafkaApis and coordinator answer it. Partitions of unknown topics, or
 * past a topic's partition count, are UNKNOWN_TOPIC_OR_PARTITION; the coordinator answers the
 * rest (GROUP_SUBSCRIBED_TO_TOPIC for topics the live group consumes, else deleted). A
 * group-level error (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, INVALID_GROUP_ID, NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS, a failed write's) comes alone, with no topics.
 */
import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../../protocol/apis/offset-delete.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function offsetDeleteHandler(broker: BrokerContext): ApiHandler<OffsetDeleteRequest, OffsetDeleteResponse> {
  return async (request, context) => {
    // Kafka's: DELETE on the group, then READ on each topic.
    if (!broker.auth.authorize(context, AclOperation.DELETE, ResourceType.GROUP, request.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] }
    const readable = broker.auth.filterByAuthorized(
      context,
      AclOperation.READ,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    )
    const known = (name: string, partition: number) => {
      const topic = broker.topics.get(name)
      return readable.has(name) && topic !== undefined && partition >= 0 && partition < topic.partitions
    }
    const asked = request.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex })))
    const result = await broker.groupCoordinator.deleteOffsets(
      request.groupId,
      asked.filter((p) => known(p.topic, p.partition)),
    )
    if (result.errorCode !== ErrorCode.NONE) return { errorCode: result.errorCode, throttleTimeMs: 0, topics: [] }
    const answered = new Map(result.partitions.map((p) => [`${p.topic}\0${p.partition}`, p.errorCode]))
    return {
      errorCode: ErrorCode.NONE,
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          errorCode: !readable.has(t.name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : (answered.get(`${t.name}\0${p.partitionIndex}`) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        })),
      })),
    }
  }
}
