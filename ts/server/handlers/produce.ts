/**
 * Produce: validate acks, append each partition's batches as the leader, answer per partition.
 * With one replica, acks=1 and acks=-1 are both satisfied by the local append; acks=0 sends no
 * response at all, as Kafka does.
 */
import type { PartitionProduceResponse, ProduceRequest, ProduceResponse } from '../../protocol/apis/produce.js'
import { OFFSETS_TOPIC } from '../../group/offset-store.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { Broker } from '../broker.js'
import type { ApiHandler } from '../request-handler.js'

export function produceHandler(broker: Broker): ApiHandler<ProduceRequest, ProduceResponse> {
  return (request) => {
    const validAcks = request.acks === 0 || request.acks === 1 || request.acks === -1
    const responses = request.topicData.map((topic) => ({
      name: topic.name,
      partitionResponses: topic.partitionData.map((p): PartitionProduceResponse => {
        const base = { index: p.index, logAppendTimeMs: -1n, recordErrors: [], errorMessage: null }
        if (!validAcks) return { ...base, errorCode: ErrorCode.INVALID_REQUIRED_ACKS, baseOffset: -1n, logStartOffset: -1n }
        // The offsets log is written by the group coordinator only, as in Kafka.
        if (topic.name === OFFSETS_TOPIC) return { ...base, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, baseOffset: -1n, logStartOffset: -1n }
        const result = broker.replicaManager.appendRecords({ topic: topic.name, partition: p.index }, p.records)
        return {
          ...base,
          errorCode: result.errorCode,
          errorMessage: result.errorMessage,
          baseOffset: result.info?.firstOffset ?? -1n,
          logAppendTimeMs: result.info?.logAppendTime ?? -1n,
          logStartOffset: result.logStartOffset,
        }
      }),
    }))
    if (request.acks === 0) return null
    return { responses, throttleTimeMs: 0 }
  }
}
