/**
 * Fetch (Kafka's `handleFetchRequest`): sessionless reads through `readFromLocalLog`, answered
 * at once. The fetch issue adds the purgatory (long poll), fetch sessions and the zero-copy
 * writer; here the record bytes are read into the response.
 */
import type { FetchRequest, FetchResponse, FetchableTopicResponse } from '../../protocol/apis/fetch.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { Broker } from '../broker.js'
import type { ApiHandler } from '../request-handler.js'

export function fetchHandler(broker: Broker): ApiHandler<FetchRequest, FetchResponse> {
  return (request) => {
    const named = request.topics.map((t) => {
      const topic = t.topic !== '' ? broker.topics.get(t.topic) : broker.topics.getById(t.topicId)
      return { request: t, name: topic?.name ?? null }
    })
    const wanted = named.flatMap(({ request: t, name }) =>
      name === null ? [] : t.partitions.map((p) => ({ topic: name, partition: p.partition, fetchOffset: p.fetchOffset, partitionMaxBytes: p.partitionMaxBytes })),
    )
    const results = broker.replicaManager.readFromLocalLog(
      { replicaId: request.replicaState?.replicaId ?? request.replicaId, maxBytes: request.maxBytes, isolationLevel: request.isolationLevel, hardMaxBytesLimit: false },
      wanted,
    )
    let next = 0
    const responses: FetchableTopicResponse[] = named.map(({ request: t, name }) => ({
      topic: t.topic,
      topicId: t.topicId,
      partitions: t.partitions.map((p) => {
        if (name === null) {
          const errorCode = t.topic !== '' ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID
          return { partitionIndex: p.partition, errorCode, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, abortedTransactions: null, preferredReadReplica: -1, records: null }
        }
        const r = results[next++]
        const log = broker.replicaManager.getLog(r)
        const records = r.info && r.info.records.size > 0 && log ? log.readSlice(r.info.records) : null
        return {
          partitionIndex: p.partition,
          errorCode: r.errorCode,
          highWatermark: r.highWatermark,
          lastStableOffset: r.lastStableOffset,
          logStartOffset: r.logStartOffset,
          abortedTransactions: request.isolationLevel === 1 ? [] : null,
          preferredReadReplica: -1,
          records: records ?? Buffer.alloc(0),
        }
      }),
    }))
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses }
  }
}
