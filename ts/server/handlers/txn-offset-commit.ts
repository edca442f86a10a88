/**
 * TxnOffsetCommit: offsets committed inside the producer's transaction, by the group coordinator
 * (ts/group/offset-metadata-manager.ts): per partition UNKNOWN_TOPIC_OR_PARTITION and
 * OFFSET_METADATA_TOO_LARGE as OffsetCommit; the rest written as one transactional batch of the
 * producer to `__consumer_offsets`, visible once the transaction commits. The producer's epoch is
 * checked by that append against the partition's producer state (older: INVALID_PRODUCER_EPOCH).
 */
import type { TxnOffsetCommitRequest, TxnOffsetCommitResponse } from '../../protocol/apis/txn-offset-commit.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { OFFSET_METADATA_MAX_BYTES, type OffsetCommitEntry } from '../../group/offsets-topic.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function txnOffsetCommitHandler(broker: BrokerContext): ApiHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponse> {
  return async (request) => {
    const now = BigInt(Date.now())
    const errors = new Map<string, number>()
    const valid: OffsetCommitEntry[] = []
    for (const t of request.topics) {
      const topic = broker.topics.get(t.name)
      for (const p of t.partitions) {
        const key = `${t.name}\0${p.partitionIndex}`
        if (!topic || p.partitionIndex < 0 || p.partitionIndex >= topic.partitions) errors.set(key, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        else if (p.committedMetadata !== null && Buffer.byteLength(p.committedMetadata) > OFFSET_METADATA_MAX_BYTES) errors.set(key, ErrorCode.OFFSET_METADATA_TOO_LARGE)
        else valid.push({ topic: t.name, partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata, commitTimestamp: now })
      }
    }
    const groupError =
      valid.length > 0 || errors.size === 0
        ? await broker.groupCoordinator.commitTransactionalOffsets(request.groupId, request.producerId, request.producerEpoch, request.memberId, request.generationId, request.groupInstanceId, valid)
        : ErrorCode.NONE
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: errors.get(`${t.name}\0${p.partitionIndex}`) ?? groupError })),
      })),
    }
  }
}
