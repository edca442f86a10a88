/**
 * Fetch (Kafka's `handleFetchRequest`): decode, hand the partitions to
 * `ReplicaManager.fetchMessages`, encode what it answers.
 *
 * 1. the request's partitions are flattened and handed to the broker's `FetchManager`, whose
 *    context (sessionless, full, incremental or error; ts/fetch/fetch-context.ts) says what to
 *    read;
 * 2. topics are resolved: by name before v13 (unknown -> UNKNOWN_TOPIC_OR_PARTITION), by id from
 *    v13 (unknown -> UNKNOWN_TOPIC_ID), per partition; a fetch naming one the broker does not
 *    hold is answered at once (maxWaitMs 0), as it always was here;
 * 3. `fetchMessages` reads the known partitions in the context's order and answers now or parks
 *    a `DelayedFetch` (ts/replica/replica-manager.ts says when); a connection that closes drops
 *    its parked fetches; the connection keeps the responses of pipelined requests in order;
 * 4. the context picks the partitions to answer (all, or the changed ones of a session) and
 *    updates the session; consecutive partitions of one topic share a topic entry, as in Kafka's
 *    `FetchResponse.of`.
 *
 * The context is made once, before parking; `updateAndGenerateResponseData` runs once, on
 * completion (a session whose epoch moved on in between answers INVALID_FETCH_SESSION_EPOCH).
 *
 * Consumer quotas (consumer_byte_rate, ts/quota/client-quota-manager.ts), as Kafka's
 * handleFetchRequest applies them to a consumer (never to a follower): the request's maxBytes is
 * capped at what the quota allows in its whole window (getMaxValueInQuotaWindow), so one answer
 * cannot be sure to overrun it; the answer's size in bytes is recorded; a client over its quota
 * gets an empty answer (no partitions, the size taken back) with throttle_time_ms, and its
 * connection is muted for that long.
 */
import type { FetchContextRequest, PartitionResult } from '../../fetch/fetch-context.js'
import type { FetchPartitionData } from '../../fetch/fetch-session-cache.js'
import { COPY_AT_ONCE_BYTES } from '../../network/transfer.js'
import {
  NO_CURRENT_LEADER,
  NO_DIVERGING_EPOCH,
  NO_SNAPSHOT_ID,
  ZERO_UUID,
  type FetchRequest,
  type FetchResponse,
  type FetchableTopicResponse,
  type PartitionData,
  type ResponseRecords,
} from '../../protocol/apis/fetch.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { DelayedFetchParams, FetchPartitionRequest, FetchPartitionResult } from '../../replica/fetch-params.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler, RequestContext } from '../kafka-apis.js'
import { encodeFetchResponseCuts } from '../../protocol/apis/fetch.js'
import { Writer } from '../../protocol/writer.js'
import { quotaNowMs } from '../../quota/client-quota-managers.js'
import { isFileRecords } from '../../storage/file-records.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

const TOPIC_IDS_FROM = 13
/** The first version that moves the follower's replicaId into the tagged ReplicaState. */
const REPLICA_STATE_FROM = 15
/** The first version with rackId, hence a preferred read replica (KIP-392). */
const RACK_ID_FROM = 11

type Answer = PartitionData<ResponseRecords>

/**
 * Each partition's error before any read, or null, in Kafka's order: a follower without
 * CLUSTER_ACTION gets TOPIC_AUTHORIZATION_FAILED everywhere; then an unknown topic id
 * UNKNOWN_TOPIC_ID; a consumer's topic without READ TOPIC_AUTHORIZATION_FAILED (before telling
 * whether it exists); an unknown topic UNKNOWN_TOPIC_OR_PARTITION.
 */
function fetchErrors(
  broker: BrokerContext,
  context: RequestContext,
  follower: boolean,
  toRead: ReadonlyArray<{ topic: string }>,
  names: ReadonlyArray<string | null>,
  usesTopicIds: boolean,
): Array<number | null> {
  const topicOf = (i: number): string | null => (usesTopicIds ? (names[i] ?? null) : toRead[i]!.topic)
  if (follower && !broker.auth.authorizeCluster(context, AclOperation.CLUSTER_ACTION)) return toRead.map(() => ErrorCode.TOPIC_AUTHORIZATION_FAILED)
  const readable = follower
    ? null
    : broker.auth.filterByAuthorized(
        context,
        AclOperation.READ,
        ResourceType.TOPIC,
        toRead.map((_, i) => topicOf(i) ?? ''),
      )
  return toRead.map((_, i) => {
    const topic = topicOf(i)
    if (topic === null) return ErrorCode.UNKNOWN_TOPIC_ID
    if (readable !== null && !readable.has(topic)) return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    return names[i] === null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : null
  })
}

/**
 * The handler. Records are held as the segment files' ranges (FileRecords) and sent by the
 * connection's response writer: zero-copy when the broker's transfer mode is zero-copy, else
 * read into two reused buffers a piece at a time (`copyTo`). In copy mode a partition's records
 * of at most COPY_AT_ONCE_BYTES are read into the response at once instead.
 */
export function fetchHandler(broker: BrokerContext): ApiHandler<FetchRequest, FetchResponse<ResponseRecords>> {
  const zeroCopy = broker.config.transfer === 'zero-copy'
  const manager = broker.fetchManager
  return (request, requestContext) => {
    const { header, connection } = requestContext
    const version = header.apiVersion
    const usesTopicIds = version >= TOPIC_IDS_FROM
    const replicaId = version >= REPLICA_STATE_FROM ? request.replicaState.replicaId : request.replicaId
    const context = manager.newContext(contextRequest(request, version, replicaId >= 0))

    const toRead = context.partitionsToRead()
    const names = toRead.map((p) => (usesTopicIds ? (broker.visibleTopicById(p.topicId)?.name ?? null) : broker.visibleTopic(p.topic) ? p.topic : null))
    const errors = fetchErrors(broker, requestContext, replicaId >= 0, toRead, names, usesTopicIds)
    const known = toRead.flatMap((p, i): FetchPartitionRequest[] => {
      const topic = names[i] ?? null // names and errors map toRead one to one
      return topic === null || errors[i] !== null
        ? []
        : [
            {
              topic,
              partition: p.partition,
              fetchOffset: p.fetchOffset,
              partitionMaxBytes: p.maxBytes,
              currentLeaderEpoch: p.currentLeaderEpoch,
              lastFetchedEpoch: p.lastFetchedEpoch,
              logStartOffset: p.logStartOffset,
            },
          ]
    })
    const user = connection.principal.name
    const clientId = header.clientId ?? ''
    const quota = replicaId < 0 && broker.quotas.fetch.quotasEnabled ? broker.quotas.fetch : null
    const maxBytes = quota ? Math.max(0, Math.min(request.maxBytes, Math.floor(quota.maxValueInQuotaWindow(user, clientId)))) : request.maxBytes
    const params: DelayedFetchParams = {
      replicaId,
      maxBytes,
      isolationLevel: request.isolationLevel,
      hardMaxBytesLimit: version <= 2,
      clientMetadata: version >= RACK_ID_FROM && replicaId < 0 ? { rackId: request.rackId, clientId: header.clientId ?? '' } : undefined,
      minBytes: Math.min(request.minBytes, maxBytes),
      // A partition the broker does not hold is an error to answer now, not to wait on.
      maxWaitMs: known.length < toRead.length ? 0 : request.maxWaitMs,
    }
    const answer = (reads: FetchPartitionResult[]): FetchResponse<ResponseRecords> => {
      let next = 0
      const results: PartitionResult<Answer>[] = toRead.map((p, i) => {
        const errorCode = errors[i] ?? null
        if (errorCode !== null) return { partition: p, recordsSize: 0, response: errorAnswer(p.partition, errorCode) }
        const r = reads[next++]!
        const slice = r.info?.records
        const records = slice === undefined ? null : slice.toSend(zeroCopy || slice.size > COPY_AT_ONCE_BYTES)
        const response: Answer = {
          partitionIndex: p.partition,
          errorCode: r.errorCode,
          highWatermark: r.highWatermark,
          lastStableOffset: r.lastStableOffset,
          logStartOffset: r.logStartOffset,
          // READ_COMMITTED reads answer the aborted transactions their records overlap (the
          // log's addAbortedTransactions); other reads, and errors, answer none (null).
          abortedTransactions: r.info?.abortedTransactions ?? null,
          preferredReadReplica: r.preferredReadReplica ?? -1,
          records: records ?? Buffer.alloc(0),
          divergingEpoch: r.divergingEpoch ?? NO_DIVERGING_EPOCH,
          currentLeader: NO_CURRENT_LEADER,
          snapshotId: NO_SNAPSHOT_ID,
        }
        return { partition: p, recordsSize: records === null ? 0 : (slice?.size ?? 0), response }
      })
      const generated = context.updateAndGenerateResponseData(results, manager.now())
      let bytesOut = 0
      for (const p of generated.partitions) bytesOut += p.recordsSize
      broker.brokerTopicStats.updateBytesOut(replicaId >= 0, bytesOut)
      const response: FetchResponse<ResponseRecords> = {
        throttleTimeMs: 0,
        errorCode: generated.errorCode,
        sessionId: generated.sessionId,
        responses: byTopic(generated.partitions, usesTopicIds, names, toRead),
        nodeEndpoints: [],
      }
      if (!quota) return response
      const now = quotaNowMs()
      const size = responseSize(version, response)
      const throttleTimeMs = quota.maybeRecordAndGetThrottleTimeMs(user, clientId, size, now)
      if (throttleTimeMs === 0) return response
      // Kafka's getThrottledResponse: nothing of this answer is sent, nor counted.
      quota.unrecord(user, clientId, size, now)
      for (const t of response.responses) for (const p of t.partitions) if (isFileRecords(p.records)) p.records.close()
      connection.throttle(throttleTimeMs)
      return { ...response, throttleTimeMs, responses: [] }
    }

    return new Promise<FetchResponse<ResponseRecords>>((resolve, reject) => {
      let answered = false
      let stopWatchingClose = () => {}
      const drop = broker.replicaManager.fetchMessages(params, known, (reads) => {
        answered = true
        stopWatchingClose()
        try {
          resolve(answer(reads))
        } catch (err) {
          reject(err)
        }
      })
      if (!answered) stopWatchingClose = connection.onClosed(drop)
    })
  }
}

/** The response's size in bytes, its records included (Kafka's FetchResponse.sizeOf). */
function responseSize(version: number, response: FetchResponse<ResponseRecords>): number {
  const w = new Writer()
  let size = 0
  for (const cut of encodeFetchResponseCuts(w, version, response)) size += cut.size
  return size + w.length
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
  const toForget = request.forgottenTopicsData.flatMap((t) => t.partitions.map((partition) => ({ topic: usesTopicIds ? '' : t.topic, topicId: usesTopicIds ? t.topicId : ZERO_UUID, partition })))
  return { version, sessionId: request.sessionId, sessionEpoch: request.sessionEpoch, isFromFollower, fetchData, toForget }
}

function errorAnswer(partitionIndex: number, errorCode: number): Answer {
  return {
    partitionIndex,
    errorCode,
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: null,
    divergingEpoch: NO_DIVERGING_EPOCH,
    currentLeader: NO_CURRENT_LEADER,
    snapshotId: NO_SNAPSHOT_ID,
  }
}

/** Groups consecutive partitions of one topic into one topic entry. */
function byTopic(answered: PartitionResult<Answer>[], usesTopicIds: boolean, names: (string | null)[], toRead: FetchPartitionData[]): FetchableTopicResponse<ResponseRecords>[] {
  const nameOf = new Map(toRead.map((p, i) => [p, names[i]]))
  const out: FetchableTopicResponse<ResponseRecords>[] = []
  let lastKey: string | null = null
  for (const { partition: p, response } of answered) {
    const key = usesTopicIds ? p.topicId.toString('hex') : p.topic
    if (key !== lastKey) {
      out.push({ topic: usesTopicIds ? (nameOf.get(p) ?? '') : p.topic, topicId: p.topicId, partitions: [] })
      lastKey = key
    }
    out[out.length - 1]!.partitions.push(response)
  }
  return out
}
