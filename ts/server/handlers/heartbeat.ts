/** Heartbeat: keeps a member's session; REBALANCE_IN_PROGRESS tells it to rejoin. */
import type { HeartbeatRequest, HeartbeatResponse } from '../../protocol/apis/heartbeat.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function heartbeatHandler(broker: BrokerContext): ApiHandler<HeartbeatRequest, HeartbeatResponse> {
  return (request) => ({
    throttleTimeMs: 0,
    errorCode: broker.groupCoordinator.heartbeat(request.groupId, request.memberId, request.generationId, request.groupInstanceId),
  })
}
