/**
 * DeleteGroups: each group deleted if it is Empty (its offsets with it), else NON_EMPTY_GROUP;
 * GROUP_ID_NOT_FOUND for an unknown one, INVALID_GROUP_ID for ''; answered once the offsets
 * log's ISR holds the tombstones. v3+ say why in a message.
 * An empty share group's share-partition states go first (Kafka's `deleteShareGroups`:
 * DeleteShareGroupState of its initialized partitions, through the persister); a group whose
 * states could not all be deleted is answered that error and kept.
 */
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../../protocol/apis/delete-groups.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { forEachSharePartition } from './share-group-offsets-helper.js'

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
    const shareErrors = await deleteShareGroupStates(broker, [...deletable])
    const deleted = new Map((await broker.groupCoordinator.deleteGroups(request.groupsNames.filter((g) => deletable.has(g) && !shareErrors.has(g)))).map((r) => [r.groupId, r.errorCode]))
    for (const [groupId, errorCode] of shareErrors) deleted.set(groupId, errorCode)
    return {
      throttleTimeMs: 0,
      results: request.groupsNames.map((groupId) => {
        const errorCode = deleted.get(groupId) ?? ErrorCode.GROUP_AUTHORIZATION_FAILED
        return { groupId, errorCode, errorMessage: header.apiVersion >= 3 ? messageOf(groupId, errorCode) : null }
      }),
    }
  }
}

/** The share-partition states of the empty share groups among `groupIds`; the groups whose deletion failed, with the error. */
async function deleteShareGroupStates(broker: BrokerContext, groupIds: readonly string[]): Promise<Map<string, number>> {
  const errors = new Map<string, number>()
  await Promise.all(
    groupIds.map(async (groupId) => {
      const group = broker.groupCoordinator.statusError(groupId) === ErrorCode.NONE ? broker.groupCoordinator.shareGroup(groupId) : undefined
      if (group === undefined || group.members.size > 0) return
      const wanted = new Map([...group.initializedTopics].map(([topicId, t]) => [topicId, [...t.partitions]]))
      const results = await forEachSharePartition(groupId, wanted, (key) => broker.persister.deleteState(key))
      const failed = [...results.values()].flat().find((p) => p.result.errorCode !== ErrorCode.NONE)
      if (failed) errors.set(groupId, failed.result.errorCode)
      else broker.sharePartitionManager.onGroupEmpty(groupId)
    }),
  )
  return errors
}
