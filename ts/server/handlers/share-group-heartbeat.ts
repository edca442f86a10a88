/**
 * ShareGroupHeartbeat (KIP-932): READ on the group (GROUP_AUTHORIZATION_FAILED), DESCRIBE on
 * every subscribed topic name given (TOPIC_AUTHORIZATION_FAILED), as Kafka's KafkaApis; then the
 * group coordinator (../../group/share/share-group-manager.ts). The group's session timeout,
 * heartbeat interval and assignment interval are its group configs (share.session.timeout.ms,
 * share.heartbeat.interval.ms, share.assignment.interval.ms), else the broker's group.share.* ones.
 * Share groups are on as on a new Kafka 4.4 cluster (share.version 2 finalized by default).
 * The checks and answers it shares with ConsumerGroupHeartbeat are in ./group-heartbeat.ts.
 * With the cluster's share.version below 1 (../broker-features.ts) it answers UNSUPPORTED_VERSION, as Kafka.
 */
import type { ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse } from '../../protocol/apis/share-group-heartbeat.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { supportsShareGroups } from '../broker-features.js'
import { errorHeartbeatResponse, handleGroupHeartbeat } from './group-heartbeat.js'

export function shareGroupHeartbeatHandler(broker: BrokerContext): ApiHandler<ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse> {
  return async (request, context) => {
    if (!supportsShareGroups(broker.finalizedFeatures)) return errorHeartbeatResponse(ErrorCode.UNSUPPORTED_VERSION)
    return handleGroupHeartbeat(broker, context, request, (configured, member) =>
      broker.groupCoordinator.shareGroupHeartbeat({
        ...member,
        subscribedTopicNames: request.subscribedTopicNames,
        sessionTimeoutMs: configured('share.session.timeout.ms', broker.config.groupShareSessionTimeoutMs),
        heartbeatIntervalMs: configured('share.heartbeat.interval.ms', broker.config.groupShareHeartbeatIntervalMs),
        assignmentIntervalMs: configured('share.assignment.interval.ms', broker.config.groupShareAssignmentIntervalMs),
      }),
    )
  }
}
