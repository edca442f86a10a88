/**
 * Kafka's `FetchManager.newContext` and its four contexts: what one Fetch request reads and
 * which partitions its response carries.
 *
 *   sessionId  epoch        context
 *   0          -1 (or v<7)  sessionless: read and answer every requested partition, sessionId 0
 *   any        0            full: as sessionless, then cache a new session (a non-zero sessionId
 *                           is removed first); the response carries the new id (0 if no slot)
 *   id         -1           close: remove the session, answer sessionless
 *   id         > 0          incremental: unknown id -> FETCH_SESSION_ID_NOT_FOUND; epoch not the
 *                           expected one -> INVALID_FETCH_SESSION_EPOCH; a session that used topic
 *                           ids asked with a version that has none (or the reverse) ->
 *                           FETCH_SESSION_TOPIC_ID_ERROR; else the listed partitions are added or
 *                           updated, the forgotten ones dropped, and every session partition is
 *                           read in the session's order. A session left empty is closed and the
 *                           request answered sessionless.
 *
 * An incremental response carries only the partitions that returned records or whose high
 * watermark, last stable offset or log start offset changed since the session last said them,
 * that erred, or that carry a diverging epoch or a preferred read replica. Partitions that
 * returned records move to the end of the session's order. An error context reads nothing and
 * answers with the top-level error and no partitions.
 *
 * The context does not read logs or resolve topic ids: the Fetch handler does both, between
 * `partitionsToRead` and `updateAndGenerateResponseData`.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import {
  FINAL_EPOCH,
  INITIAL_EPOCH,
  INVALID_SESSION_ID,
  type CachedPartition,
  type FetchPartitionData,
  type FetchSession,
  type FetchSessionCache,
  type TopicIdPartition,
  newCachedPartition,
  nextEpoch,
} from './fetch-session-cache.js'

/** The first Fetch version with sessions, and the first that names topics by id. */
export const FETCH_SESSIONS_FROM = 7
export const FETCH_TOPIC_IDS_FROM = 13

/** The session fields of a request, with its partitions flattened (Kafka's FetchMetadata + REQ_MAP). */
export interface FetchContextRequest {
  version: number
  sessionId: number
  sessionEpoch: number
  /** replicaId >= 0: a follower, whose session is privileged in the cache. */
  isFromFollower: boolean
  fetchData: readonly FetchPartitionData[]
  toForget: readonly TopicIdPartition[]
}

/** What the context needs to know of one partition's response. */
export interface PartitionResponseView {
  errorCode: number
  highWatermark: bigint
  lastStableOffset: bigint
  logStartOffset: bigint
  preferredReadReplica: number
  /** None when absent or at Kafka's default (epoch -1), as Kafka's `FetchResponse.isDivergingEpoch`. */
  divergingEpoch?: { epoch: number }
}

export interface PartitionResult<T extends PartitionResponseView> {
  partition: FetchPartitionData
  response: T
  /** Bytes of records returned. */
  recordsSize: number
}

export interface FetchContextResponse<T extends PartitionResponseView> {
  errorCode: number
  sessionId: number
  /** The partitions to answer, in response order. */
  partitions: PartitionResult<T>[]
}

export type FetchContextKind = 'sessionless' | 'full' | 'incremental' | 'error'

export interface FetchContext {
  readonly kind: FetchContextKind
  /** The partitions to read, in reading order (none for an error context). */
  partitionsToRead(): FetchPartitionData[]
  /** Picks the partitions to answer and updates the session from the read results (same order). */
  updateAndGenerateResponseData<T extends PartitionResponseView>(results: PartitionResult<T>[], now: number): FetchContextResponse<T>
}

class SessionErrorContext implements FetchContext {
  readonly kind = 'error'
  constructor(readonly errorCode: number) {}
  partitionsToRead(): FetchPartitionData[] {
    return []
  }
  updateAndGenerateResponseData<T extends PartitionResponseView>(): FetchContextResponse<T> {
    return { errorCode: this.errorCode, sessionId: INVALID_SESSION_ID, partitions: [] }
  }
}

class SessionlessFetchContext implements FetchContext {
  readonly kind = 'sessionless'
  constructor(private readonly fetchData: readonly FetchPartitionData[]) {}
  partitionsToRead(): FetchPartitionData[] {
    return [...this.fetchData]
  }
  updateAndGenerateResponseData<T extends PartitionResponseView>(results: PartitionResult<T>[]): FetchContextResponse<T> {
    return { errorCode: ErrorCode.NONE, sessionId: INVALID_SESSION_ID, partitions: results }
  }
}

class FullFetchContext implements FetchContext {
  readonly kind = 'full'
  constructor(
    private readonly cache: FetchSessionCache,
    private readonly fetchData: readonly FetchPartitionData[],
    private readonly usesTopicIds: boolean,
    private readonly isFromFollower: boolean,
  ) {}
  partitionsToRead(): FetchPartitionData[] {
    return [...this.fetchData]
  }
  updateAndGenerateResponseData<T extends PartitionResponseView>(results: PartitionResult<T>[], now: number): FetchContextResponse<T> {
    const cached = results.map(({ partition, response }) => {
      const p = newCachedPartition(partition)
      if (response.errorCode === ErrorCode.NONE) {
        p.highWatermark = response.highWatermark
        p.lastStableOffset = response.lastStableOffset
        p.localLogStartOffset = response.logStartOffset
      }
      return p
    })
    const sessionId = this.cache.maybeCreateSession(now, this.isFromFollower, this.usesTopicIds, cached)
    return { errorCode: ErrorCode.NONE, sessionId, partitions: results }
  }
}

class IncrementalFetchContext implements FetchContext {
  readonly kind = 'incremental'
  constructor(
    private readonly session: FetchSession,
    /** The epoch the session expects next, had no other request come in between. */
    private readonly expectedEpoch: number,
  ) {}
  partitionsToRead(): FetchPartitionData[] {
    return [...this.session.partitions.values()]
  }
  updateAndGenerateResponseData<T extends PartitionResponseView>(results: PartitionResult<T>[]): FetchContextResponse<T> {
    const session = this.session
    if (session.epoch !== this.expectedEpoch) {
      return { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: INVALID_SESSION_ID, partitions: [] }
    }
    const answered: PartitionResult<T>[] = []
    for (const result of results) {
      const cached = session.partitions.get(session.keyOf(result.partition))
      if (!cached) continue
      if (!maybeUpdateResponseData(cached, result)) continue
      answered.push(result)
      if (result.recordsSize > 0) session.moveToEnd(cached)
    }
    return { errorCode: ErrorCode.NONE, sessionId: session.id, partitions: answered }
  }
}

/**
 * Kafka's `CachedPartition.maybeUpdateResponseData`: whether an incremental response must carry
 * the partition; remembers what it now says. An error resets the cached high watermark, so the
 * partition is sent again once the error is gone.
 */
export function maybeUpdateResponseData(cached: CachedPartition, result: PartitionResult<PartitionResponseView>): boolean {
  const r = result.response
  let mustRespond = result.recordsSize > 0
  if (cached.highWatermark !== r.highWatermark) {
    mustRespond = true
    cached.highWatermark = r.highWatermark
  }
  if (cached.lastStableOffset !== r.lastStableOffset) {
    mustRespond = true
    cached.lastStableOffset = r.lastStableOffset
  }
  if (cached.localLogStartOffset !== r.logStartOffset) {
    mustRespond = true
    cached.localLogStartOffset = r.logStartOffset
  }
  if (r.preferredReadReplica >= 0) mustRespond = true
  if (r.errorCode !== ErrorCode.NONE) {
    cached.highWatermark = -1n
    mustRespond = true
  }
  if (r.divergingEpoch !== undefined && r.divergingEpoch.epoch !== -1) mustRespond = true
  return mustRespond
}

/** Kafka's `FetchManager`: turns each request into its context. */
export class FetchManager {
  constructor(
    readonly cache: FetchSessionCache,
    private readonly clock: () => number = Date.now,
  ) {}

  newContext(request: FetchContextRequest): FetchContext {
    const { version, fetchData, toForget } = request
    // Before v7 the fields do not exist; the codec decodes them to 0 and -1 anyway.
    const sessionId = version >= FETCH_SESSIONS_FROM ? request.sessionId : INVALID_SESSION_ID
    const epoch = version >= FETCH_SESSIONS_FROM ? request.sessionEpoch : FINAL_EPOCH
    const usesTopicIds = version >= FETCH_TOPIC_IDS_FROM
    if (epoch === INITIAL_EPOCH || epoch === FINAL_EPOCH) {
      // Any session named in a full request is closed.
      if (sessionId !== INVALID_SESSION_ID) this.cache.remove(sessionId)
      if (epoch === FINAL_EPOCH) return new SessionlessFetchContext(fetchData)
      return new FullFetchContext(this.cache, fetchData, usesTopicIds, request.isFromFollower)
    }
    const session = this.cache.get(sessionId)
    if (!session) return new SessionErrorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    if (session.epoch !== epoch) return new SessionErrorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
    if (session.usesTopicIds !== usesTopicIds) return new SessionErrorContext(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
    session.update(fetchData, toForget)
    if (session.size === 0) {
      this.cache.remove(session.id)
      return new SessionlessFetchContext(fetchData)
    }
    this.cache.touch(session, this.clock())
    session.epoch = nextEpoch(session.epoch)
    return new IncrementalFetchContext(session, nextEpoch(epoch))
  }

  now(): number {
    return this.clock()
  }
}
