/** SyncGroup: the leader hands out the assignment; followers wait for it. */
import type { SyncGroupRequest, SyncGroupResponse } from '../../protocol/apis/sync-group.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'

export function syncGroupHandler(broker: BrokerContext): ApiHandler<SyncGroupRequest, SyncGroupResponse> {
  return async (request, context) => {
    const { header } = context
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, request.groupId))
      return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) }
    const result = await broker.groupCoordinator.syncGroup({
      groupId: request.groupId,
      generationId: request.generationId,
      memberId: request.memberId,
      groupInstanceId: request.groupInstanceId,
      protocolType: request.protocolType,
      protocolName: request.protocolName,
      assignments: request.assignments,
    })
    const v5 = header.apiVersion >= 5
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode,
      protocolType: v5 ? result.protocolType : null,
      protocolName: v5 ? result.protocolName : null,
      assignment: result.assignment,
    }
  }
}
