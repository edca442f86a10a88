/**
 * AlterShareGroupOffsets (KIP-932), as Kafka 4.4 answers it: the share-partition start offsets of
 * an empty share group (kafka-share-groups.sh --reset-offsets).
 * - share.version below 1: UNSUPPORTED_VERSION; no READ on the group: GROUP_AUTHORIZATION_FAILED
 *   (top-level errors, with Kafka's messages);
 * - each topic without READ is TOPIC_AUTHORIZATION_FAILED, an unknown one
 *   UNKNOWN_TOPIC_OR_PARTITION, for each of its partitions;
 * - the group's coordinator: an empty group id is INVALID_GROUP_ID; a group of another kind
 *   GROUP_ID_NOT_FOUND; a group with members NON_EMPTY_GROUP; an unknown group is made (Kafka's
 *   `getOrMaybeCreateShareGroup`);
 * - each partition of a known topic (a partition past its count: UNKNOWN_TOPIC_OR_PARTITION) is
 *   initialized by the share coordinator at the requested start offset, with the group epoch as
 *   state epoch (InitializeShareGroupState, through the persister); a partition it refuses has
 *   its error; those initialized become the group's initialized partitions.
 */
import type { AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse } from '../../protocol/apis/alter-share-group-offsets.js'
import type { AlterShareGroupOffsetsResponseTopic } from '../../protocol/messages/alter-share-group-offsets-response.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { supportsShareGroups } from '../broker-features.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { errorMessageOf, forEachSharePartition } from './share-group-offsets-helper.js'

const ZERO_UUID = Buffer.alloc(16)

function topLevel(errorCode: number, errorMessage: string | null = errorMessageOf(errorCode)): AlterShareGroupOffsetsResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage, responses: [] }
}

export function alterShareGroupOffsetsHandler(broker: BrokerContext): ApiHandler<AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse> {
  return async (request, context) => {
    const groupId = request.groupId
    if (!supportsShareGroups(broker.finalizedFeatures)) return topLevel(ErrorCode.UNSUPPORTED_VERSION)
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, groupId)) return topLevel(ErrorCode.GROUP_AUTHORIZATION_FAILED)

    const refused: AlterShareGroupOffsetsResponseTopic[] = []
    const accepted: AlterShareGroupOffsetsRequest['topics'] = []
    for (const t of request.topics) {
      const errorCode = !broker.auth.authorize(context, AclOperation.READ, ResourceType.TOPIC, t.topicName)
        ? ErrorCode.TOPIC_AUTHORIZATION_FAILED
        : broker.topics.get(t.topicName) === undefined
          ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
          : ErrorCode.NONE
      if (errorCode === ErrorCode.NONE) accepted.push(t)
      else
        refused.push({
          topicName: t.topicName,
          topicId: broker.topics.get(t.topicName)?.topicId ?? ZERO_UUID,
          partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode, errorMessage: errorMessageOf(errorCode) })),
        })
    }

    if (groupId === '') return topLevel(ErrorCode.INVALID_GROUP_ID)
    const check = broker.groupCoordinator.checkShareOffsetsChangeable(groupId, true)
    if (check.errorCode !== ErrorCode.NONE) return topLevel(check.errorCode, check.errorMessage ?? errorMessageOf(check.errorCode))

    // The partitions to initialize, by topic id, with their start offsets.
    const stateEpoch = broker.groupCoordinator.shareStateEpochOf(groupId)
    const offsets = new Map<string, Map<number, bigint>>()
    const answered: AlterShareGroupOffsetsResponseTopic[] = accepted.map((t) => {
      const topic = broker.topics.get(t.topicName)!
      const id = topic.topicId.toString('hex')
      return {
        topicName: t.topicName,
        topicId: topic.topicId,
        partitions: t.partitions.map((p) => {
          if (p.partitionIndex < 0 || p.partitionIndex >= topic.partitions) {
            return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: errorMessageOf(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) }
          }
          let m = offsets.get(id)
          if (!m) offsets.set(id, (m = new Map()))
          m.set(p.partitionIndex, p.startOffset)
          return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null }
        }),
      }
    })
    const results = await forEachSharePartition(groupId, new Map([...offsets].map(([id, m]) => [id, [...m.keys()]])), (key) =>
      broker.persister.initializeState(key, stateEpoch, offsets.get(key.topicId.toString('hex'))!.get(key.partition)!),
    )
    const failed = new Map<string, { errorCode: number; errorMessage: string | null }>()
    const initialized: Array<{ topicId: string; topicName: string; partitions: number[] }> = []
    for (const [topicId, partitions] of results) {
      const ok = partitions.filter((p) => p.result.errorCode === ErrorCode.NONE).map((p) => p.partition)
      for (const p of partitions) if (p.result.errorCode !== ErrorCode.NONE) failed.set(`${topicId}:${p.partition}`, { errorCode: p.result.errorCode, errorMessage: p.result.errorMessage })
      if (ok.length > 0) initialized.push({ topicId, topicName: broker.topics.getById(Buffer.from(topicId, 'hex'))?.name ?? '', partitions: ok })
    }
    broker.groupCoordinator.markShareInitialized(groupId, initialized)
    // Share partitions made before read the new state at the next fetch.
    broker.sharePartitionManager.onGroupEmpty(groupId)
    for (const t of answered) {
      const id = t.topicId.toString('hex')
      t.partitions = t.partitions.map((p) => {
        const f = failed.get(`${id}:${p.partitionIndex}`)
        return f ? { partitionIndex: p.partitionIndex, ...f } : p
      })
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, responses: [...refused, ...answered] }
  }
}
