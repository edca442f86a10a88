/**
 * DeleteGroups: each group deleted if it is Empty (its offsets with it), else NON_EMPTY_GROUP;
 * GROUP_ID_NOT_FOUND for an unknown one, INVALID_GROUP_ID for ''; answered once the offsets
 * log's ISR holds the tombstones. v3+ say why in a message.
 */
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../../protocol/apis/delete-groups.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

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
    default:
      return `Group ${groupId} could not be deleted.`
  }
}

export function deleteGroupsHandler(broker: BrokerContext): ApiHandler<DeleteGroupsRequest, DeleteGroupsResponse> {
  return async (request, { header }) => ({
    throttleTimeMs: 0,
    results: (await broker.groupCoordinator.deleteGroups(request.groupsNames)).map((r) => ({
      ...r,
      errorMessage: header.apiVersion >= 3 ? messageOf(r.groupId, r.errorCode) : null,
    })),
  })
}
