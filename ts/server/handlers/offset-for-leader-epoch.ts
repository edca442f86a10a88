/**
 * OffsetForLeaderEpoch: the end offset of a leader epoch (the start offset of the next epoch, or
 * the log end for the latest one), from the log's leader-epoch cache (`Partition.lastOffsetForLeaderEpoch`).
 * currentLeaderEpoch older than ours -> FENCED_LEADER_EPOCH, newer -> UNKNOWN_LEADER_EPOCH; an
 * epoch the cache cannot answer -> NONE with leaderEpoch -1 and endOffset -1 (Kafka's
 * UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET).
 */
import type { EpochEndOffset, OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse } from '../../protocol/apis/offset-for-leader-epoch.js'
import { NO_EPOCH } from '../../replica/leader-epoch.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'

export function offsetForLeaderEpochHandler(broker: BrokerContext): ApiHandler<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse> {
  return (request, context) => {
    // Kafka's: CLUSTER_ACTION on the cluster (a follower), else DESCRIBE on each topic.
    const all = broker.auth.authorizeCluster(context, AclOperation.CLUSTER_ACTION)
    const describable = all
      ? null
      : broker.auth.filterByAuthorized(
          context,
          AclOperation.DESCRIBE,
          ResourceType.TOPIC,
          request.topics.map((t) => t.topic),
        )
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p): EpochEndOffset => {
          if (describable !== null && !describable.has(t.topic)) return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, partition: p.partition, leaderEpoch: -1, endOffset: -1n }
          const currentLeaderEpoch = p.currentLeaderEpoch >= 0 ? p.currentLeaderEpoch : NO_EPOCH
          const r = broker.replicaManager.lastOffsetForLeaderEpoch({ topic: t.topic, partition: p.partition }, currentLeaderEpoch, p.leaderEpoch)
          return { errorCode: r.errorCode, partition: p.partition, leaderEpoch: r.leaderEpoch, endOffset: r.endOffset }
        }),
      })),
    }
  }
}
