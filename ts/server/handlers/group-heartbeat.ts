/**
 * What ConsumerGroupHeartbeat (KIP-848, ./consumer-group-heartbeat.ts) and ShareGroupHeartbeat
 * (KIP-932, ./share-group-heartbeat.ts) do alike, as Kafka's KafkaApis does for both:
 *
 * - READ on the group, else GROUP_AUTHORIZATION_FAILED;
 * - DESCRIBE on every subscribed topic name given, else TOPIC_AUTHORIZATION_FAILED (clients may
 *   not learn of topics they cannot describe);
 * - the group's configs (KIP-848's group-level overrides of the broker's group.* keys), read once
 *   per heartbeat; none for the empty group id, which the coordinator refuses;
 * - the answer: the coordinator's result, its assignment by topic id with partitions sorted; an
 *   error answer carries no member and no assignment.
 */
import { ErrorCode } from '../../protocol/error-codes.js'
import { topicPartitionsOf, type Assignment } from '../../group/consumer/assignment.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import type { BrokerContext } from './broker-context.js'
import type { RequestContext } from '../kafka-apis.js'

/** The fields both heartbeat responses have. */
export interface GroupHeartbeatResponse {
  throttleTimeMs: number
  errorCode: number
  errorMessage: string | null
  memberId: string | null
  memberEpoch: number
  heartbeatIntervalMs: number
  assignment: { topicPartitions: Array<{ topicId: Buffer; partitions: number[] }> } | null
}

/** What the coordinator answers a heartbeat of either kind. */
export interface GroupHeartbeatResult {
  errorCode: number
  errorMessage: string | null
  memberId: string | null
  memberEpoch: number
  heartbeatIntervalMs: number
  /** Partitions by topic id (hex); null when not sent. */
  assignment: Assignment | null
}

/** The answer of a heartbeat refused with `errorCode`. */
export function errorHeartbeatResponse(errorCode: number, errorMessage: string | null = null): GroupHeartbeatResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null }
}

/** READ on the group, DESCRIBE on each subscribed topic name: the error, or NONE. */
function heartbeatAuthorizationError(broker: BrokerContext, context: RequestContext, groupId: string, subscribedTopicNames: readonly string[] | null): number {
  if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, groupId)) return ErrorCode.GROUP_AUTHORIZATION_FAILED
  if (subscribedTopicNames !== null && subscribedTopicNames.length > 0) {
    const authorized = broker.auth.filterByAuthorized(context, AclOperation.DESCRIBE, ResourceType.TOPIC, subscribedTopicNames)
    if (authorized.size < new Set(subscribedTopicNames).size) return ErrorCode.TOPIC_AUTHORIZATION_FAILED
  }
  return ErrorCode.NONE
}

/** The group's value of the numeric group config `name`, else `fallback` (the broker's). */
/** A group's numeric config: its override, else `fallback` (the broker's). */
export async function groupConfigured(broker: BrokerContext, groupId: string): Promise<(name: string, fallback: number) => number> {
  const overrides = groupId === '' ? {} : await broker.groupConfigs.overrides(groupId)
  return (name, fallback) => (overrides[name] !== undefined ? Number(overrides[name]) : fallback)
}

/** The answer carrying the coordinator's `result`. */
function heartbeatResponse(result: GroupHeartbeatResult): GroupHeartbeatResponse {
  return {
    throttleTimeMs: 0,
    errorCode: result.errorCode,
    errorMessage: result.errorMessage,
    memberId: result.memberId,
    memberEpoch: result.memberEpoch,
    heartbeatIntervalMs: result.heartbeatIntervalMs,
    assignment: result.assignment === null ? null : { topicPartitions: topicPartitionsOf(result.assignment) },
  }
}

/** What a heartbeat of either kind tells the coordinator of its member alike. */
export interface HeartbeatMember {
  groupId: string
  memberId: string
  memberEpoch: number
  rackId: string | null
  /** The request header's client id ('' when null). */
  clientId: string
  /** `/` and the client's address, as Kafka's describe answers show it. */
  clientHost: string
}

/**
 * A heartbeat of either kind: the authorization checks, then `heartbeat` with the group's
 * configs (`configured`) and what the request says of its member, its result as the answer.
 */
export async function handleGroupHeartbeat(
  broker: BrokerContext,
  context: RequestContext,
  request: { groupId: string; memberId: string; memberEpoch: number; rackId: string | null; subscribedTopicNames: readonly string[] | null },
  heartbeat: (configured: (name: string, fallback: number) => number, member: HeartbeatMember) => GroupHeartbeatResult,
): Promise<GroupHeartbeatResponse> {
  const refused = heartbeatAuthorizationError(broker, context, request.groupId, request.subscribedTopicNames)
  if (refused !== ErrorCode.NONE) return errorHeartbeatResponse(refused)
  const configured = await groupConfigured(broker, request.groupId)
  const member: HeartbeatMember = {
    groupId: request.groupId,
    memberId: request.memberId,
    memberEpoch: request.memberEpoch,
    rackId: request.rackId,
    clientId: context.header.clientId ?? '',
    clientHost: `/${context.connection.socket.remoteAddress ?? ''}`,
  }
  return heartbeatResponse(heartbeat(configured, member))
}
