/**
 * ConsumerGroupHeartbeat (KIP-848): READ on the group (GROUP_AUTHORIZATION_FAILED), DESCRIBE on
 * every subscribed topic name given (TOPIC_AUTHORIZATION_FAILED: clients may not learn of topics
 * they cannot describe), as Kafka's KafkaApis; a regex resolves only to the topics the member may
 * DESCRIBE; then the group coordinator
 * (../../group/consumer/consumer-group-manager.ts). The group's session timeout, heartbeat
 * interval and assignment interval are its group configs (consumer.session.timeout.ms,
 * consumer.heartbeat.interval.ms, consumer.assignment.interval.ms), else the broker's
 * group.consumer.* ones.
 * The checks and answers it shares with ShareGroupHeartbeat are in ./group-heartbeat.ts.
 * With the cluster's group.version below 1 (../broker-features.ts) it answers UNSUPPORTED_VERSION, as Kafka.
 */
import type { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse } from '../../protocol/apis/consumer-group-heartbeat.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { supportsConsumerGroups } from '../broker-features.js'
import { errorHeartbeatResponse, handleGroupHeartbeat } from './group-heartbeat.js'

export function consumerGroupHeartbeatHandler(broker: BrokerContext): ApiHandler<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse> {
  return async (request, context) => {
    if (!supportsConsumerGroups(broker.finalizedFeatures)) return errorHeartbeatResponse(ErrorCode.UNSUPPORTED_VERSION)
    return handleGroupHeartbeat(broker, context, request, (configured, member) =>
      broker.groupCoordinator.consumerGroupHeartbeat({
        ...member,
        instanceId: request.instanceId,
        rebalanceTimeoutMs: request.rebalanceTimeoutMs,
        subscribedTopicNames: request.subscribedTopicNames,
        subscribedTopicRegex: request.subscribedTopicRegex,
        serverAssignor: request.serverAssignor,
        topicPartitions: request.topicPartitions,
        apiVersion: context.header.apiVersion,
        sessionTimeoutMs: configured('consumer.session.timeout.ms', broker.config.groupConsumerSessionTimeoutMs),
        heartbeatIntervalMs: configured('consumer.heartbeat.interval.ms', broker.config.groupConsumerHeartbeatIntervalMs),
        assignmentIntervalMs: configured('consumer.assignment.interval.ms', broker.config.groupConsumerAssignmentIntervalMs),
        mayDescribeTopic: (topic) => broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, topic),
      }),
    )
  }
}
