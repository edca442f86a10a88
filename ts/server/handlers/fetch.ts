/**
 * Fetch (Kafka's `handleFetchRequest` and `ReplicaManager.fetchMessages`):
 *
 * 1. the request's partitions are flattened and handed to the `FetchManager`, whose context
 *    (sessionless, full, incremental or error; ts/fetch/fetch-context.ts) says what to read;
 * 2. topics are resolved: by name before v13 (unknown -> UNKNOWN_TOPIC_OR_PARTITION), by id from
 *    v13 (unknown -> UNKNOWN_TOPIC_ID), per partition;
 * 3. the known partitions are read in the context's order through `readFromLocalLog`;
 * 4. per partition, before its read (ts/replica/leader-epoch.ts, replica-selector.ts): a
 *    currentLeaderEpoch (v9+) other than ours errs (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH),
 *    a lastFetchedEpoch (v12+) that diverged from our epoch cache answers divergingEpoch, and a
 *    consumer (v11+) whose rack the `ReplicaSelector` serves better elsewhere gets
 *    preferredReadReplica; these carry no records;
 *    answered at once when maxWaitMs <= 0, nothing is read, any partition erred (an unknown
 *    topic too), diverged or was sent to another replica, or the bytes read reach minBytes; otherwise a `DelayedFetch`
 *    (ts/purgatory/delayed-fetch.ts) is parked in the replica manager's fetch purgatory under
 *    every partition read, and the handler's promise resolves when it completes (an append woke
 *    it) or expires (maxWaitMs), from a fresh read. A connection that closes drops its parked
 *    fetches; the connection keeps the responses of pipelined requests in order;
 * 5. the context picks the partitions to answer (all, or the changed ones of a session) and
 *    updates the session; consecutive partitions of one topic share a topic entry, as in Kafka's
 *    `FetchResponse.of`.
 *
 * The context is made once, before parking; `updateAndGenerateResponseData` runs once, on
 * completion (a session whose epoch moved on in between answers INVALID_FETCH_SESSION_EPOCH).
 */
import { FetchManager, type FetchContextRequest, type PartitionResult } from '../../fetch/fetch-context.js'
import { FetchSessionCache, type FetchPartitionData } from '../../fetch/fetch-session-cache.js'
import { COPY_AT_ONCE_BYTES } from '../../network/transfer.js'
import { ZERO_UUID, type FetchRequest, type FetchResponse, type FetchableTopicResponse, type PartitionData, type ResponseRecords } from '../../protocol/apis/fetch.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { DelayedFetch, type DelayedFetchParams } from '../../purgatory/delayed-fetch.js'
import type { FetchPartitionResult } from '../../replica/replica-manager.js'
import type { Broker } from '../broker.js'
import type { ApiHandler } from '../request-handler.js'

const TOPIC_IDS_FROM = 13
/** The first version with rackId, hence a preferred read replica (KIP-392). */
const RACK_ID_FROM = 11

const managers = new WeakMap<Broker, FetchManager>()

/** The broker's fetch session manager (for metrics and tests); created with the Fetch handler. */
export function fetchManagerOf(broker: Broker): FetchManager | undefined {
  return managers.get(broker)
}

type Answer = PartitionData<ResponseRecords>

/**
 * The handler. Records are held as the segment files' ranges (FileRecords) and sent by the
 * connection's response writer: zero-copy when the broker's transfer mode is zero-copy, else
 * read into two reused buffers a piece at a time (`copyTo`). In copy mode a partition's records
 * of at most COPY_AT_ONCE_BYTES are read into the response at once instead.
 */
export function fetchHandler(broker: Broker): ApiHandler<FetchRequest, FetchResponse<ResponseRecords>> {
  const zeroCopy = broker.config.transfer === 'zero-copy'
  const manager = new FetchManager(new FetchSessionCache({ maxEntries: broker.config.fetchSessionCacheSlots }))
  managers.set(broker, manager)
  return (request, { header, connection }) => {
    const version = header.apiVersion
    const usesTopicIds = version >= TOPIC_IDS_FROM
    const replicaId = request.replicaState?.replicaId ?? request.replicaId
    const context = manager.newContext(contextRequest(request, version, replicaId >= 0))

    const toRead = context.partitionsToRead()
    const names = toRead.map((p) => (usesTopicIds ? (broker.visibleTopicById(p.topicId)?.name ?? null) : broker.visibleTopic(p.topic) ? p.topic : null))
    const known = toRead.flatMap((p, i) => {
      const topic = names[i]
      return topic === null
        ? []
        : [{ topic, partition: p.partition, fetchOffset: p.fetchOffset, partitionMaxBytes: p.maxBytes, currentLeaderEpoch: p.currentLeaderEpoch, lastFetchedEpoch: p.lastFetchedEpoch }]
    })
    const params: DelayedFetchParams = {
      replicaId,
      maxBytes: request.maxBytes,
      isolationLevel: request.isolationLevel,
      hardMaxBytesLimit: version <= 2,
      clientMetadata: version >= RACK_ID_FROM && replicaId < 0 ? { rackId: request.rackId, clientId: header.clientId ?? '' } : undefined,
      minBytes: request.minBytes,
      maxWaitMs: request.maxWaitMs,
    }
    const answer = (reads: FetchPartitionResult[]): FetchResponse<ResponseRecords> => {
      let next = 0
      const results: PartitionResult<Answer>[] = toRead.map((p, i) => {
        if (names[i] === null) {
          const errorCode = usesTopicIds ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
          return { partition: p, recordsSize: 0, response: errorAnswer(p.partition, errorCode) }
        }
        const r = reads[next++]
        const log = broker.replicaManager.getLog(r)
        const slice = r.info && r.info.records.size > 0 && log ? r.info.records : null
        const records = slice === null ? null : zeroCopy || slice.size > COPY_AT_ONCE_BYTES ? log!.fileRecords(slice) : log!.readSlice(slice)
        const response: Answer = {
          partitionIndex: p.partition,
          errorCode: r.errorCode,
          highWatermark: r.highWatermark,
          lastStableOffset: r.lastStableOffset,
          logStartOffset: r.logStartOffset,
          abortedTransactions: request.isolationLevel === 1 ? [] : null,
          preferredReadReplica: r.preferredReadReplica ?? -1,
          records: records ?? Buffer.alloc(0),
        }
        if (r.divergingEpoch !== undefined) response.divergingEpoch = r.divergingEpoch
        return { partition: p, recordsSize: slice?.size ?? 0, response }
      })
      const generated = context.updateAndGenerateResponseData(results, manager.now())
      return { throttleTimeMs: 0, errorCode: generated.errorCode, sessionId: generated.sessionId, responses: byTopic(generated.partitions, usesTopicIds, names, toRead) }
    }

    const reads = broker.replicaManager.readFromLocalLog(params, known)
    const bytesReadable = reads.reduce((sum, r) => sum + (r.info?.records.size ?? 0), 0)
    const errorReadingData = known.length < toRead.length || reads.some((r) => r.errorCode !== ErrorCode.NONE || r.info === null)
    const hasDivergingEpoch = reads.some((r) => r.divergingEpoch !== undefined)
    const hasPreferredReadReplica = reads.some((r) => (r.preferredReadReplica ?? -1) >= 0)
    if (params.maxWaitMs <= 0 || known.length === 0 || bytesReadable >= params.minBytes || errorReadingData || hasDivergingEpoch || hasPreferredReadReplica) {
      return answer(reads)
    }

    return new Promise<FetchResponse<ResponseRecords>>((resolve, reject) => {
      let stopWatchingClose = () => {}
      const statuses = known.map((fetchInfo, i) => ({ fetchInfo, fetchOffsetMetadata: reads[i].info!.fetchOffsetMetadata }))
      const delayed = new DelayedFetch(
        params,
        statuses,
        broker.replicaManager,
        (completedReads) => {
          stopWatchingClose()
          try {
            resolve(answer(completedReads))
          } catch (err) {
            reject(err)
          }
        },
        broker.replicaManager.delayedFetchMetrics,
      )
      const { parked, drop } = broker.replicaManager.parkDelayedFetch(delayed)
      if (parked) stopWatchingClose = connection.onClosed(drop)
    })
  }
}

function contextRequest(request: FetchRequest, version: number, isFromFollower: boolean): FetchContextRequest {
  const usesTopicIds = version >= TOPIC_IDS_FROM
  const fetchData: FetchPartitionData[] = request.topics.flatMap((t) =>
    t.partitions.map((p) => ({
      topic: usesTopicIds ? '' : t.topic,
      topicId: usesTopicIds ? t.topicId : ZERO_UUID,
      partition: p.partition,
      fetchOffset: p.fetchOffset,
      logStartOffset: p.logStartOffset,
      maxBytes: p.partitionMaxBytes,
      currentLeaderEpoch: p.currentLeaderEpoch,
      lastFetchedEpoch: p.lastFetchedEpoch,
    })),
  )
  const toForget = request.forgottenTopicsData.flatMap((t) =>
    t.partitions.map((partition) => ({ topic: usesTopicIds ? '' : t.topic, topicId: usesTopicIds ? t.topicId : ZERO_UUID, partition })),
  )
  return { version, sessionId: request.sessionId, sessionEpoch: request.sessionEpoch, isFromFollower, fetchData, toForget }
}

function errorAnswer(partitionIndex: number, errorCode: number): Answer {
  return { partitionIndex, errorCode, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, abortedTransactions: null, preferredReadReplica: -1, records: null }
}

/** Groups consecutive partitions of one topic into one topic entry. */
function byTopic(
  answered: PartitionResult<Answer>[],
  usesTopicIds: boolean,
  names: (string | null)[],
  toRead: FetchPartitionData[],
): FetchableTopicResponse<ResponseRecords>[] {
  const nameOf = new Map(toRead.map((p, i) => [p, names[i]]))
  const out: FetchableTopicResponse<ResponseRecords>[] = []
  let lastKey: string | null = null
  for (const { partition: p, response } of answered) {
    const key = usesTopicIds ? p.topicId.toString('hex') : p.topic
    if (key !== lastKey) {
      out.push({ topic: usesTopicIds ? (nameOf.get(p) ?? '') : p.topic, topicId: p.topicId, partitions: [] })
      lastKey = key
    }
    out[out.length - 1].partitions.push(response)
  }
  return out
}
