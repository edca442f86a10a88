/**
 * Produce: validate acks, append each partition's batch as the leader, answer per partition
 * (several batches for one partition: INVALID_RECORD, as Kafka answers from v3 on). The
 * partitions' appends run together: compressed batches are checked off the event loop (their
 * records may inflate to 100 MiB each), so other clients are served meanwhile, as Kafka's
 * other request handler threads serve them.
 * With one replica, acks=1 and acks=-1 are both satisfied by the local append; acks=0 sends no
 * response at all, as Kafka does.
 */
import type { PartitionProduceResponse, ProduceRequest, ProduceResponse } from '../../protocol/apis/produce.js'
import { OFFSETS_TOPIC } from '../../group/offset-store.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { batchesOf } from '../../protocol/records.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

const ONE_BATCH = 'Produce requests with version 3 and above must have exactly one record batch per partition'

/** How many batches the records hold; what cannot be walked is left to the append to reject. */
function batchCount(records: Buffer): number {
  let n = 0
  try {
    for (const _ of batchesOf(records)) if (++n > 1) break
  } catch {
    return n
  }
  return n
}

export function produceHandler(broker: BrokerContext): ApiHandler<ProduceRequest, ProduceResponse> {
  return async (request) => {
    const validAcks = request.acks === 0 || request.acks === 1 || request.acks === -1
    const appends = request.topicData.map((topic) => ({
      name: topic.name,
      partitionResponses: topic.partitionData.map(async (p): Promise<PartitionProduceResponse> => {
        const base = { index: p.index, logAppendTimeMs: -1n, recordErrors: [], errorMessage: null }
        if (!validAcks) return { ...base, errorCode: ErrorCode.INVALID_REQUIRED_ACKS, baseOffset: -1n, logStartOffset: -1n }
        // The offsets log is written by the group coordinator only, as in Kafka.
        if (topic.name === OFFSETS_TOPIC) return { ...base, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, baseOffset: -1n, logStartOffset: -1n }
        // Kafka's ProduceRequest.validateRecords: from v3 on, exactly one batch per partition.
        if (p.records !== null && batchCount(p.records) > 1) {
          return { ...base, errorCode: ErrorCode.INVALID_RECORD, errorMessage: ONE_BATCH, baseOffset: -1n, logStartOffset: -1n }
        }
        const result = await broker.replicaManager.appendRecords({ topic: topic.name, partition: p.index }, p.records)
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
    // Every partition's append is under way (compressed ones checked off the loop, in parallel);
    // the answer waits for all, acks=0 too (no answer, but the next request comes after them).
    const responses = await Promise.all(appends.map(async (t) => ({ name: t.name, partitionResponses: await Promise.all(t.partitionResponses) })))
    if (request.acks === 0) return null
    return { responses, throttleTimeMs: 0 }
  }
}
