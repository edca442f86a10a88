/**
 * OffsetCommit: per partition, UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist and
 * OFFSET_METADATA_TOO_LARGE past offset.metadata.max.bytes; the rest are checked against the
 * group (generation, member) and committed together, as one record batch of the offsets log,
 * answered once the log's ISR holds it (or with the coordinator's error: not the coordinator,
 * loading, the write failed).
 */
import type { OffsetCommitRequest, OffsetCommitResponse } from '../../protocol/apis/offset-commit.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { OFFSET_METADATA_MAX_BYTES, type OffsetCommitEntry } from '../../group/offsets-topic.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

/** A commit's partitions as OffsetCommit and TxnOffsetCommit both give them. */
export interface CommittedPartitions {
  name: string
  partitions: ReadonlyArray<{ partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }>
}

/**
 * The per-partition checks of OffsetCommit and TxnOffsetCommit: the errors by `topic\0partition`
 * (UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE), and the entries to commit.
 */
export function checkOffsetCommits(broker: BrokerContext, topics: readonly CommittedPartitions[]): { errors: Map<string, number>; valid: OffsetCommitEntry[] } {
  const now = BigInt(Date.now())
  const errors = new Map<string, number>()
  const valid: OffsetCommitEntry[] = []
  for (const t of topics) {
    const topic = broker.topics.get(t.name)
    for (const p of t.partitions) {
      const key = `${t.name}\0${p.partitionIndex}`
      if (!topic || p.partitionIndex < 0 || p.partitionIndex >= topic.partitions) errors.set(key, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
      else if (p.committedMetadata !== null && Buffer.byteLength(p.committedMetadata) > OFFSET_METADATA_MAX_BYTES) errors.set(key, ErrorCode.OFFSET_METADATA_TOO_LARGE)
      else valid.push({ topic: t.name, partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata, commitTimestamp: now })
    }
  }
  return { errors, valid }
}

/** Every partition of the request answered `errorCode`. */
function failAll(topics: OffsetCommitRequest['topics'], errorCode: number): OffsetCommitResponse {
  return { throttleTimeMs: 0, topics: topics.map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })) }
}

export function offsetCommitHandler(broker: BrokerContext): ApiHandler<OffsetCommitRequest, OffsetCommitResponse> {
  return async (request, context) => {
    // Kafka's: READ on the group (every partition GROUP_AUTHORIZATION_FAILED), then READ on each topic.
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return failAll(request.topics, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    const readable = broker.auth.filterByAuthorized(
      context,
      AclOperation.READ,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    )
    const { errors, valid } = checkOffsetCommits(
      broker,
      request.topics.filter((t) => readable.has(t.name)),
    )
    for (const t of request.topics) if (!readable.has(t.name)) for (const p of t.partitions) errors.set(`${t.name}\0${p.partitionIndex}`, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    const groupError =
      valid.length > 0 || errors.size === 0
        ? await broker.groupCoordinator.commitOffsets(request.groupId, request.memberId, request.generationIdOrMemberEpoch, valid, request.groupInstanceId, context.header.apiVersion)
        : ErrorCode.NONE
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: errors.get(`${t.name}\0${p.partitionIndex}`) ?? groupError })),
      })),
    }
  }
}
