/**
 * OffsetForLeaderEpoch: the end offset of a leader epoch (the start offset of the next epoch, or
 * the log end for the latest one), from the log's leader-epoch cache (`Log.endOffsetForEpoch`).
 * currentLeaderEpoch older than ours -> FENCED_LEADER_EPOCH, newer -> UNKNOWN_LEADER_EPOCH; an
 * epoch the cache cannot answer -> NONE with leaderEpoch -1 and endOffset -1 (Kafka's
 * UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET).
 */
import type { EpochEndOffset, OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse } from '../../protocol/apis/offset-for-leader-epoch.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { kafkaErrorCodeOf } from '../../storage/errors.js'
import type { Broker } from '../broker.js'
import type { ApiHandler } from '../request-handler.js'
import { LEADER_EPOCH } from './metadata.js'

const UNDEFINED_EPOCH = -1
const UNDEFINED_EPOCH_OFFSET = -1n

export function offsetForLeaderEpochHandler(broker: Broker): ApiHandler<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse> {
  return (request) => ({
    throttleTimeMs: 0,
    topics: request.topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p): EpochEndOffset => {
        const answer = (errorCode: number, leaderEpoch = UNDEFINED_EPOCH, endOffset = UNDEFINED_EPOCH_OFFSET) => ({ errorCode, partition: p.partition, leaderEpoch, endOffset })
        const log = broker.logManager.getLog(t.topic, p.partition)
        if (!log) return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch < LEADER_EPOCH) return answer(ErrorCode.FENCED_LEADER_EPOCH)
        if (p.currentLeaderEpoch > LEADER_EPOCH) return answer(ErrorCode.UNKNOWN_LEADER_EPOCH)
        try {
          const found = log.endOffsetForEpoch(p.leaderEpoch)
          return found ? answer(ErrorCode.NONE, found.epoch, found.endOffset) : answer(ErrorCode.NONE)
        } catch (err) {
          return answer(kafkaErrorCodeOf(err))
        }
      }),
    })),
  })
}
