/**
 * JoinGroup: held until the group's join phase ends (see ../../group/group-coordinator.ts).
 * v4+ new dynamic members are answered MEMBER_ID_REQUIRED with their id first. A classic member
 * of a consumer group is answered at once; the group's consumer.assignment.interval.ms (else
 * group.consumer.assignment.interval.ms) spaces its target assignments.
 */
import type { JoinGroupRequest, JoinGroupResponse } from '../../protocol/apis/join-group.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { groupConfigured } from './group-heartbeat.js'

export function joinGroupHandler(broker: BrokerContext): ApiHandler<JoinGroupRequest, JoinGroupResponse> {
  return async (request, context) => {
    const { header, connection } = context
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, request.groupId)) {
      const protocolName = header.apiVersion >= 7 ? null : ''
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, generationId: -1, protocolType: null, protocolName, leader: '', skipAssignment: false, memberId: '', members: [] }
    }
    const configured = broker.groupCoordinator.consumerGroup(request.groupId) ? await groupConfigured(broker, request.groupId) : null
    const result = await broker.groupCoordinator.joinGroup({
      groupId: request.groupId,
      memberId: request.memberId,
      groupInstanceId: request.groupInstanceId,
      clientId: header.clientId ?? '',
      clientHost: `/${connection.socket.remoteAddress ?? ''}`,
      sessionTimeoutMs: request.sessionTimeoutMs,
      rebalanceTimeoutMs: request.rebalanceTimeoutMs,
      protocolType: request.protocolType,
      protocols: request.protocols,
      // Kafka asks dynamic members only: a static member (group.instance.id) is known by that id.
      requireKnownMemberId: header.apiVersion >= 4 && request.groupInstanceId === null,
      assignmentIntervalMs: configured?.('consumer.assignment.interval.ms', broker.config.groupConsumerAssignmentIntervalMs),
    })
    const v = header.apiVersion
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      generationId: result.generationId,
      protocolType: v >= 7 ? result.protocolType : null,
      protocolName: result.protocolName,
      leader: result.leader,
      skipAssignment: false,
      memberId: result.memberId,
      members: result.members.map((m) => ({ memberId: m.memberId, groupInstanceId: v >= 5 ? m.groupInstanceId : null, metadata: m.metadata })),
    }
  }
}
