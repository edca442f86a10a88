/**
 * LeaveGroup: up to v2 one member, answered with its error at the top level; v3+ a batch of
 * members, each with its own error.
 */
import type { LeaveGroupRequest, LeaveGroupResponse } from '../../protocol/apis/leave-group.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'

export function leaveGroupHandler(broker: BrokerContext): ApiHandler<LeaveGroupRequest, LeaveGroupResponse> {
  return (request, context) => {
    const { header } = context
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] }
    if (header.apiVersion >= 3) {
      const result = broker.groupCoordinator.leaveGroup(
        request.groupId,
        request.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId })),
      )
      return { throttleTimeMs: 0, errorCode: result.errorCode, members: result.members }
    }
    const result = broker.groupCoordinator.leaveGroup(request.groupId, [{ memberId: request.memberId, groupInstanceId: null }])
    const errorCode = result.errorCode !== 0 ? result.errorCode : result.members[0]!.errorCode
    return { throttleTimeMs: 0, errorCode, members: [] }
  }
}
