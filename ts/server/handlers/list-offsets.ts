/**
 * ListOffsets: earliest (-2), latest (-1: the high watermark for consumers, the last stable
 * offset for READ_COMMITTED), max timestamp (-3), or the first offset at or after a time.
 * v0 answers in its old shape (a list of offsets).
 */
import type { ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsResponse } from '../../protocol/apis/list-offsets.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { IsolationLevel } from '../../replica/replica-manager.js'
import { kafkaErrorCodeOf } from '../../storage/errors.js'
import type { Broker } from '../broker.js'
import type { ApiHandler } from '../request-handler.js'
import { LEADER_EPOCH } from './metadata.js'

const LATEST = -1n
const EARLIEST = -2n

export function listOffsetsHandler(broker: Broker): ApiHandler<ListOffsetsRequest, ListOffsetsResponse> {
  return (request, { header }) => ({
    throttleTimeMs: 0,
    topics: request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p): ListOffsetsPartitionResponse => {
        const answer = (errorCode: number, offset = -1n, timestamp = -1n, leaderEpoch = -1): ListOffsetsPartitionResponse =>
          header.apiVersion === 0
            ? // v0: the old shape, a list of offsets and nothing else.
              { partitionIndex: p.partitionIndex, errorCode, oldStyleOffsets: offset >= 0n ? [offset] : [], timestamp: -1n, offset: -1n, leaderEpoch: -1 }
            : { partitionIndex: p.partitionIndex, errorCode, oldStyleOffsets: [], timestamp, offset, leaderEpoch: header.apiVersion >= 4 ? leaderEpoch : -1 }
        const log = broker.logManager.getLog(t.name, p.partitionIndex)
        if (!log) return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch < LEADER_EPOCH) return answer(ErrorCode.FENCED_LEADER_EPOCH)
        if (p.currentLeaderEpoch > LEADER_EPOCH) return answer(ErrorCode.UNKNOWN_LEADER_EPOCH)
        try {
          if (p.timestamp === LATEST) {
            const end = request.replicaId >= 0 ? log.logEndOffset() : request.isolationLevel === IsolationLevel.READ_COMMITTED ? log.lastStableOffset() : log.highWatermark()
            return answer(ErrorCode.NONE, end, -1n, log.latestEpoch() ?? -1)
          }
          if (p.timestamp === EARLIEST) return answer(ErrorCode.NONE, log.logStartOffset(), -1n, log.latestEpoch() ?? -1)
          const found = log.fetchOffsetByTimestamp(p.timestamp)
          if (!found) return answer(ErrorCode.NONE)
          return answer(ErrorCode.NONE, found.offset, found.timestamp, found.leaderEpoch)
        } catch (err) {
          return answer(kafkaErrorCodeOf(err))
        }
      }),
    })),
  })
}
