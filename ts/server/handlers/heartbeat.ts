/** Heartbeat: keeps a member's session; REBALANCE_IN_PROGRESS tells it to rejoin. */
import type { HeartbeatRequest, HeartbeatResponse } from '../../protocol/apis/heartbeat.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'

export function heartbeatHandler(broker: BrokerContext): ApiHandler<HeartbeatRequest, HeartbeatResponse> {
  return (request, context) => ({
    throttleTimeMs: 0,
    errorCode: !broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, request.groupId)
      ? ErrorCode.GROUP_AUTHORIZATION_FAILED
      : broker.groupCoordinator.heartbeat(request.groupId, request.memberId, request.generationId, request.groupInstanceId),
  })
}
