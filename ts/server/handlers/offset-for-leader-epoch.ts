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
import type { BrokerContext } from './broker-context.js'

export function offsetForLeaderEpochHandler(broker: BrokerContext): ApiHandler<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse> {
  return (request) => ({
    throttleTimeMs: 0,
    topics: request.topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p): EpochEndOffset => {
        const currentLeaderEpoch = p.currentLeaderEpoch >= 0 ? p.currentLeaderEpoch : NO_EPOCH
        const r = broker.replicaManager.lastOffsetForLeaderEpoch({ topic: t.topic, partition: p.partition }, currentLeaderEpoch, p.leaderEpoch)
        return { errorCode: r.errorCode, partition: p.partition, leaderEpoch: r.leaderEpoch, endOffset: r.endOffset }
      }),
    })),
  })
}
