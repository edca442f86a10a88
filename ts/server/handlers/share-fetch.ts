/**
 * ShareFetch (KIP-932; Kafka's `handleShareFetchRequest`): a share group member acquires records
 * of the partitions this broker leads, within its share session, with acknowledgements of
 * records it holds piggy-backed.
 *
 * 1. READ on the group (GROUP_AUTHORIZATION_FAILED), a group id and member id (INVALID_REQUEST);
 * 2. the share session (ts/share/share-session-cache.ts): epoch 0 opens one with the partitions
 *    named (acknowledgements with it: INVALID_REQUEST), -1 closes the member's, any other must be
 *    the session's next epoch (SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH); errors are
 *    answered at the top level and change nothing;
 * 3. per partition: an unknown topic id UNKNOWN_TOPIC_ID, a topic without READ
 *    TOPIC_AUTHORIZATION_FAILED; the acknowledgements go to the share partitions first
 *    (acknowledgeErrorCode per partition, once the share coordinator holds them);
 * 4. epoch -1: the session is closed and what the member still holds is released, nothing is
 *    acquired; a renew-only request (isRenewAck) acquires nothing either;
 * 5. otherwise the share partitions acquire from every partition of the session (one not made
 *    yet reads its state from the share coordinator first: ts/share/persister.ts); when nothing
 *    was acquired and maxWaitMs allows, the fetch parks (ts/share/delayed-share-fetch.ts) until
 *    records can be acquired or the wait ends, and is dropped if the connection closes.
 *
 * A new session answers every partition it has; a later request the partitions with records,
 * an error or an acknowledgement result, as Kafka's ShareSessionContext does.
 */
import type { ShareFetchRequest, ShareFetchResponse } from '../../protocol/apis/share-fetch.js'
import type { PartitionData, ShareFetchableTopicResponse } from '../../protocol/messages/share-fetch-response.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { Connection } from '../../network/connection.js'
import type { ShareFetchPartitionResult } from '../../share/share-partition-manager.js'
import { FINAL_EPOCH, INITIAL_EPOCH, nextEpoch, sharePartitionRefKey, type SharePartitionRef } from '../../share/share-session-cache.js'
import type { AcknowledgeResult } from '../../share/share-partition.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'
import { supportsShareGroups } from '../broker-features.js'
import { currentLeader, refreshShareGroupConfig, sharePartitionRef } from './share-request-helper.js'

/** A request's maxRecords of 0 or less: the consumer's default max.poll.records. */
const DEFAULT_MAX_RECORDS = 500

type Response = ShareFetchResponse<Buffer | null>

function topLevelError(errorCode: number, errorMessage: string | null = null): Response {
  return { throttleTimeMs: 0, errorCode, errorMessage, acquisitionLockTimeoutMs: 0, responses: [], nodeEndpoints: [] }
}

/** One requested partition: its place in the answer, its reference (null: unknown topic id) and its error before any work. */
interface Named {
  topicId: Buffer
  partition: number
  ref: SharePartitionRef | null
  errorCode: number
}

export function shareFetchHandler(broker: BrokerContext): ApiHandler<ShareFetchRequest, Response> {
  const manager = broker.sharePartitionManager
  const watched = new WeakSet<Connection>()
  return async (request, context) => {
    const groupId = request.groupId ?? ''
    const memberId = request.memberId ?? ''
    if (!supportsShareGroups(broker.finalizedFeatures)) return topLevelError(ErrorCode.UNSUPPORTED_VERSION)
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, groupId)) return topLevelError(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if (groupId === '' || memberId === '') return topLevelError(ErrorCode.INVALID_REQUEST, 'A share fetch needs a group id and a member id.')
    const config = await refreshShareGroupConfig(broker, groupId)

    const named = resolve(broker, context, request)
    const forgotten = request.forgottenTopicsData.flatMap((t) => t.partitions.map((p) => sharePartitionRef(broker, t.topicId, p))).filter((r) => r !== null)
    const hasAcks = request.topics.some((t) => t.partitions.some((p) => p.acknowledgementBatches.length > 0))
    const valid = named.filter((n) => n.errorCode === ErrorCode.NONE).map((n) => n.ref!)

    // The share session (Kafka's SharePartitionManager.newContext).
    const epoch = request.shareSessionEpoch
    let full = false
    if (epoch === INITIAL_EPOCH) {
      if (hasAcks) return topLevelError(ErrorCode.INVALID_REQUEST, 'Acknowledge data present in the initial share fetch request.')
      if (manager.sessions.maybeCreateSession(groupId, memberId, valid, context.connection.id) === null) return topLevelError(ErrorCode.SHARE_SESSION_LIMIT_REACHED)
      if (!watched.has(context.connection)) {
        watched.add(context.connection)
        context.connection.onClosed(() => manager.sessions.connectionClosed(context.connection.id))
      }
      full = true
    } else {
      const session = manager.sessions.get(groupId, memberId)
      if (session === undefined) return topLevelError(ErrorCode.SHARE_SESSION_NOT_FOUND)
      if (epoch !== FINAL_EPOCH) {
        if (session.epoch !== epoch) return topLevelError(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
        session.update(valid, forgotten)
        session.epoch = nextEpoch(session.epoch)
      }
    }

    // Piggy-backed acknowledgements, per partition, before anything is acquired.
    // Each is answered once the share coordinator holds it.
    const ackResults = new Map<string, AcknowledgeResult>()
    const acks: Array<Promise<void>> = []
    for (const t of request.topics) {
      for (const p of t.partitions) {
        if (p.acknowledgementBatches.length === 0) continue
        const n = named.find((x) => x.partition === p.partitionIndex && x.topicId.equals(t.topicId))!
        if (n.errorCode !== ErrorCode.NONE) continue
        acks.push(manager.acknowledge(groupId, memberId, n.ref!, p.acknowledgementBatches).then((r) => void ackResults.set(sharePartitionRefKey(n.ref!), r)))
      }
    }
    await Promise.all(acks)

    const session = manager.sessions.get(groupId, memberId)
    const toFetch = epoch === FINAL_EPOCH || request.isRenewAck || session === undefined ? [] : [...session.partitions.values()]
    if (epoch === FINAL_EPOCH) manager.releaseSession(groupId, memberId)
    const maxRecords = request.maxRecords > 0 ? request.maxRecords : DEFAULT_MAX_RECORDS

    const answer = (fetched: ShareFetchPartitionResult[]): Response => {
      const byKey = new Map<string, PartitionData<Buffer | null>>()
      const topics: ShareFetchableTopicResponse<Buffer | null>[] = []
      const entry = (topicId: Buffer, partition: number, ref: SharePartitionRef | null): PartitionData<Buffer | null> => {
        const key = `${topicId.toString('hex')}:${partition}`
        let data = byKey.get(key)
        if (data === undefined) {
          data = {
            partitionIndex: partition,
            errorCode: 0,
            errorMessage: null,
            acknowledgeErrorCode: 0,
            acknowledgeErrorMessage: null,
            currentLeader: currentLeader(broker, ref),
            records: Buffer.alloc(0),
            acquiredRecords: [],
          }
          byKey.set(key, data)
          let topic = topics.find((t) => t.topicId.equals(topicId))
          if (topic === undefined) topics.push((topic = { topicId, partitions: [] }))
          topic.partitions.push(data)
        }
        return data
      }
      for (const n of named) {
        if (n.errorCode !== ErrorCode.NONE) entry(n.topicId, n.partition, n.ref).errorCode = n.errorCode
        else if (full) entry(n.topicId, n.partition, n.ref)
      }
      for (const f of fetched) {
        if (f.errorCode === ErrorCode.NONE && f.acquiredRecords.length === 0 && !full) continue
        const data = entry(Buffer.from(f.ref.topicId, 'hex'), f.ref.partition, f.ref)
        data.errorCode = f.errorCode
        data.records = f.records ?? Buffer.alloc(0)
        data.acquiredRecords = f.acquiredRecords
      }
      for (const n of named) {
        const ack = n.ref === null ? undefined : ackResults.get(sharePartitionRefKey(n.ref))
        if (ack === undefined) continue
        const data = entry(n.topicId, n.partition, n.ref)
        data.acknowledgeErrorCode = ack.errorCode
        data.acknowledgeErrorMessage = ack.errorMessage
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, acquisitionLockTimeoutMs: config.recordLockDurationMs, responses: topics, nodeEndpoints: [] }
    }

    // The share partitions not made yet read their state first (Kafka's maybeInitialize).
    await manager.maybeInitialize(groupId, toFetch)
    const fetched = manager.fetch(groupId, memberId, toFetch, maxRecords, request.maxBytes)
    const acquiredAny = fetched.some((f) => f.acquiredRecords.length > 0 || f.errorCode !== ErrorCode.NONE)
    if (acquiredAny || toFetch.length === 0 || request.maxWaitMs <= 0) return answer(fetched)
    return new Promise<Response>((resolve, reject) => {
      let answered = false
      let stopWatchingClose = () => {}
      const drop = manager.park(groupId, toFetch, request.maxWaitMs, () => {
        answered = true
        stopWatchingClose()
        try {
          resolve(answer(manager.fetch(groupId, memberId, toFetch, maxRecords, request.maxBytes)))
        } catch (err) {
          reject(err)
        }
      })
      if (!answered) stopWatchingClose = context.connection.onClosed(drop)
    })
  }
}

/** The request's partitions with their references and errors (UNKNOWN_TOPIC_ID, TOPIC_AUTHORIZATION_FAILED). */
function resolve(broker: BrokerContext, context: Parameters<ApiHandler<ShareFetchRequest, Response>>[1], request: ShareFetchRequest): Named[] {
  const named = request.topics.flatMap((t) =>
    t.partitions.map((p): Named => ({ topicId: t.topicId, partition: p.partitionIndex, ref: sharePartitionRef(broker, t.topicId, p.partitionIndex), errorCode: ErrorCode.NONE })),
  )
  const readable = broker.auth.filterByAuthorized(
    context,
    AclOperation.READ,
    ResourceType.TOPIC,
    named.filter((n) => n.ref !== null).map((n) => n.ref!.topic),
  )
  for (const n of named) {
    if (n.ref === null) n.errorCode = ErrorCode.UNKNOWN_TOPIC_ID
    else if (!readable.has(n.ref.topic)) n.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED
  }
  return named
}
