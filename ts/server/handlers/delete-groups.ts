/**
 * DeleteGroups: each group deleted if it is Empty (its offsets with it), else NON_EMPTY_GROUP;
 * GROUP_ID_NOT_FOUND for an unknown one, INVALID_GROUP_ID for ''; answered once the offsets
 * log's ISR holds the tombstones. v3+ say why in a message.
 */
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../../protocol/apis/delete-groups.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

function messageOf(groupId: string, errorCode: number): string | null {
  switch (errorCode) {
    case ErrorCode.NONE:
      return null
    case ErrorCode.GROUP_ID_NOT_FOUND:
      return `Group ${groupId} not found.`
    case ErrorCode.NON_EMPTY_GROUP:
      return `Group ${groupId} is not empty: it has members.`
    case ErrorCode.INVALID_GROUP_ID:
      return 'The group id is invalid.'
    case ErrorCode.GROUP_AUTHORIZATION_FAILED:
      return 'Group authorization failed.'
    default:
      return `Group ${groupId} could not be deleted.`
  }
}

export function deleteGroupsHandler(broker: BrokerContext): ApiHandler<DeleteGroupsRequest, DeleteGroupsResponse> {
  return async (request, { header, connection }) => {
    // Kafka's: DELETE on each group, else GROUP_AUTHORIZATION_FAILED for it.
    const deletable = broker.auth.filterByAuthorized({ header, connection }, AclOperation.DELETE, ResourceType.GROUP, request.groupsNames)
    const deleted = new Map((await broker.groupCoordinator.deleteGroups(request.groupsNames.filter((g) => deletable.has(g)))).map((r) => [r.groupId, r.errorCode]))
    return {
      throttleTimeMs: 0,
      results: request.groupsNames.map((groupId) => {
        const errorCode = deleted.get(groupId) ?? ErrorCode.GROUP_AUTHORIZATION_FAILED
        return { groupId, errorCode, errorMessage: header.apiVersion >= 3 ? messageOf(groupId, errorCode) : null }
      }),
    }
  }
}
