/**
 * ConsumerGroupHeartbeat (KIP-848): READ on the group (GROUP_AUTHORIZATION_FAILED), DESCRIBE on
 * every subscribed topic name given (TOPIC_AUTHORIZATION_FAILED: clients may not learn of topics
 * they cannot describe), as Kafka's KafkaApis; a regex resolves only to the topics the member may
 * DESCRIBE; then the group coordinator
 * (../../group/consumer/consumer-group-manager.ts). The group's session timeout and heartbeat
 * interval and assignment interval are its group configs (consumer.session.timeout.ms,
 * consumer.heartbeat.interval.ms, consumer.assignment.interval.ms), else the broker's
 * group.consumer.* ones.
 */
import type { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse } from '../../protocol/apis/consumer-group-heartbeat.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

function errorResponse(errorCode: number, errorMessage: string | null = null): ConsumerGroupHeartbeatResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null }
}

export function consumerGroupHeartbeatHandler(broker: BrokerContext): ApiHandler<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse> {
  return async (request, context) => {
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return errorResponse(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    const names = request.subscribedTopicNames
    if (names !== null && names.length > 0) {
      const authorized = broker.auth.filterByAuthorized(context, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
      if (authorized.size < new Set(names).size) return errorResponse(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    }
    const overrides = request.groupId === '' ? {} : await broker.groupConfigs.overrides(request.groupId)
    const configured = (name: string, fallback: number) => (overrides[name] !== undefined ? Number(overrides[name]) : fallback)
    const result = broker.groupCoordinator.consumerGroupHeartbeat({
      groupId: request.groupId,
      memberId: request.memberId,
      memberEpoch: request.memberEpoch,
      instanceId: request.instanceId,
      rackId: request.rackId,
      rebalanceTimeoutMs: request.rebalanceTimeoutMs,
      subscribedTopicNames: names,
      subscribedTopicRegex: request.subscribedTopicRegex,
      serverAssignor: request.serverAssignor,
      topicPartitions: request.topicPartitions,
      clientId: context.header.clientId ?? '',
      clientHost: `/${context.connection.socket.remoteAddress ?? ''}`,
      apiVersion: context.header.apiVersion,
      sessionTimeoutMs: configured('consumer.session.timeout.ms', broker.config.groupConsumerSessionTimeoutMs),
      heartbeatIntervalMs: configured('consumer.heartbeat.interval.ms', broker.config.groupConsumerHeartbeatIntervalMs),
      assignmentIntervalMs: configured('consumer.assignment.interval.ms', broker.config.groupConsumerAssignmentIntervalMs),
      mayDescribeTopic: (topic) => broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic),
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
