/**
 * ShareGroupHeartbeat (KIP-932): READ on the group (GROUP_AUTHORIZATION_FAILED), DESCRIBE on
 * every subscribed topic name given (TOPIC_AUTHORIZATION_FAILED), as Kafka's KafkaApis; then the
 * group coordinator (../../group/share/share-group-manager.ts). The group's session timeout,
 * heartbeat interval and assignment interval are its group configs (share.session.timeout.ms,
 * share.heartbeat.interval.ms, share.assignment.interval.ms), else the broker's group.share.* ones.
 * Share groups are on as on a new Kafka 4.4 cluster (share.version 2 finalized by default).
 */
import type { ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse } from '../../protocol/apis/share-group-heartbeat.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

function errorResponse(errorCode: number, errorMessage: string | null = null): ShareGroupHeartbeatResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null }
}

export function shareGroupHeartbeatHandler(broker: BrokerContext): ApiHandler<ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse> {
  return async (request, context) => {
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return errorResponse(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    const names = request.subscribedTopicNames
    if (names !== null && names.length > 0) {
      const authorized = broker.auth.filterByAuthorized(context, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
      if (authorized.size < new Set(names).size) return errorResponse(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    }
    const overrides = request.groupId === '' ? {} : await broker.groupConfigs.overrides(request.groupId)
    const configured = (name: string, fallback: number) => (overrides[name] !== undefined ? Number(overrides[name]) : fallback)
    const result = broker.groupCoordinator.shareGroupHeartbeat({
      groupId: request.groupId,
      memberId: request.memberId,
      memberEpoch: request.memberEpoch,
      rackId: request.rackId,
      subscribedTopicNames: names,
      clientId: context.header.clientId ?? '',
      clientHost: `/${context.connection.socket.remoteAddress ?? ''}`,
      sessionTimeoutMs: configured('share.session.timeout.ms', broker.config.groupShareSessionTimeoutMs),
      heartbeatIntervalMs: configured('share.heartbeat.interval.ms', broker.config.groupShareHeartbeatIntervalMs),
      assignmentIntervalMs: configured('share.assignment.interval.ms', broker.config.groupShareAssignmentIntervalMs),
    })
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      errorMessage: result.errorMessage,
      memberId: result.memberId,
      memberEpoch: result.memberEpoch,
      heartbeatIntervalMs: result.heartbeatIntervalMs,
      assignment:
        result.assignment === null
          ? null
          : { topicPartitions: [...result.assignment].map(([topicId, partitions]) => ({ topicId: Buffer.from(topicId, 'hex'), partitions: [...partitions].sort((a, b) => a - b) })) },
    }
  }
}
