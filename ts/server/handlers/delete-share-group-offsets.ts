/**
 * DeleteShareGroupOffsets (KIP-932), as Kafka 4.4 answers it: the share-partition states of
 * topics of an empty share group are deleted (kafka-share-groups.sh --delete-offsets).
 * - share.version below 1: UNSUPPORTED_VERSION; no DELETE on the group: GROUP_AUTHORIZATION_FAILED
 *   (top-level errors, with Kafka's messages);
 * - each topic without READ is TOPIC_AUTHORIZATION_FAILED;
 * - the group's coordinator: an empty group id is INVALID_GROUP_ID; an unknown group (or one of
 *   another kind) GROUP_ID_NOT_FOUND; a group with members NON_EMPTY_GROUP;
 * - an unknown topic is UNKNOWN_TOPIC_OR_PARTITION, a topic with no initialized partition for the
 *   group too ("There is no offset information to delete."); the states of the initialized
 *   partitions of the others are deleted by the share coordinator (DeleteShareGroupState,
 *   through the persister): a topic whose deletion failed has the error, the others are no
 *   longer initialized for the group and answered first.
 */
import type { DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse } from '../../protocol/apis/delete-share-group-offsets.js'
import type { DeleteShareGroupOffsetsResponseTopic } from '../../protocol/messages/delete-share-group-offsets-response.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { supportsShareGroups } from '../broker-features.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { errorMessageOf, forEachSharePartition } from './share-group-offsets-helper.js'

const ZERO_UUID = Buffer.alloc(16)

function topLevel(errorCode: number, errorMessage: string | null = errorMessageOf(errorCode)): DeleteShareGroupOffsetsResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage, responses: [] }
}

export function deleteShareGroupOffsetsHandler(broker: BrokerContext): ApiHandler<DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse> {
  return async (request, context) => {
    const groupId = request.groupId
    if (!supportsShareGroups(broker.finalizedFeatures)) return topLevel(ErrorCode.UNSUPPORTED_VERSION)
    if (!broker.auth.authorize(context, AclOperation.DELETE, ResourceType.GROUP, groupId)) return topLevel(ErrorCode.GROUP_AUTHORIZATION_FAILED)

    const unauthorized: DeleteShareGroupOffsetsResponseTopic[] = []
    const names: string[] = []
    for (const t of request.topics) {
      if (broker.auth.authorize(context, AclOperation.READ, ResourceType.TOPIC, t.topicName)) names.push(t.topicName)
      else unauthorized.push({ topicName: t.topicName, topicId: ZERO_UUID, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: errorMessageOf(ErrorCode.TOPIC_AUTHORIZATION_FAILED) })
    }

    if (groupId === '') return topLevel(ErrorCode.INVALID_GROUP_ID)
    const check = broker.groupCoordinator.checkShareOffsetsChangeable(groupId, false)
    if (check.errorCode !== ErrorCode.NONE) return topLevel(check.errorCode, check.errorMessage ?? errorMessageOf(check.errorCode))
    const initialized = broker.groupCoordinator.shareGroup(groupId)?.initializedTopics ?? new Map()

    const errors: DeleteShareGroupOffsetsResponseTopic[] = []
    const wanted = new Map<string, number[]>()
    for (const name of names) {
      const topic = broker.topics.get(name)
      const init = topic && initialized.get(topic.topicId.toString('hex'))
      if (topic === undefined) errors.push({ topicName: name, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: errorMessageOf(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) })
      else if (init === undefined) errors.push({ topicName: name, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'There is no offset information to delete.' })
      else
        wanted.set(
          topic.topicId.toString('hex'),
          [...init.partitions].sort((a, b) => a - b),
        )
    }

    const results = await forEachSharePartition(groupId, wanted, (key) => broker.persister.deleteState(key))
    const deleted: DeleteShareGroupOffsetsResponseTopic[] = []
    for (const [topicId, partitions] of results) {
      const topic = broker.topics.getById(Buffer.from(topicId, 'hex'))
      const failed = partitions.find((p) => p.result.errorCode !== ErrorCode.NONE)?.result
      const entry = { topicName: topic?.name ?? '', topicId: Buffer.from(topicId, 'hex') }
      if (failed) errors.push({ ...entry, errorCode: failed.errorCode, errorMessage: failed.errorMessage ?? errorMessageOf(failed.errorCode) })
      else deleted.push({ ...entry, errorCode: ErrorCode.NONE, errorMessage: null })
    }
    broker.groupCoordinator.forgetShareInitialized(
      groupId,
      deleted.map((t) => t.topicId.toString('hex')),
    )
    broker.sharePartitionManager.onGroupEmpty(groupId)
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, responses: [...unauthorized, ...deleted, ...errors] }
  }
}
