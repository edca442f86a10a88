/**
 * Kafka's FetchSessionHandler (KIP-227): the client's half of an incremental fetch session with
 * one node. The broker's half is ts/fetch/fetch-session-cache.ts.
 *
 * Each request is built by `newBuilder()`: the caller adds every partition it wants from the
 * node with its fetch state, and `build()` compares that with the session:
 * - with no session (epoch 0, INITIAL) or one being closed (epoch -1), a full request listing
 *   every partition; the session's partitions become exactly those;
 * - otherwise an incremental request (the session's id and next epoch) that lists only the
 *   partitions added or altered (any field of their fetch state changed) since the last request,
 *   and forgets those not added this time. A partition whose topic id changed (a topic deleted
 *   and created again) is `replaced`: sent with its new id and, from Fetch v13 (topics by id),
 *   forgotten under its old one in the same request.
 *
 * `handleResponse` checks a response against the session: a full response must list exactly the
 * session's partitions, an incremental one only partitions of the session, topic ids (v13+) only
 * ids of the session. A valid response that gives a session id continues or opens the session
 * (epoch 1, 2, ... wrapping to 1 after 2^31-1); one with session id 0 leaves the client without
 * one (the next request is full). FETCH_SESSION_ID_NOT_FOUND resets to a full fetch without a
 * session; any other top-level error (INVALID_FETCH_SESSION_EPOCH, FETCH_SESSION_TOPIC_ID_ERROR)
 * and an invalid response close the session and open a new one with a full fetch (epoch 0 with
 * the old id), as does `handleError` after a failed send. It answers false when the response's
 * data must not be used. `notifyClose()` makes the next request the last (epoch -1): the broker
 * drops the session (and answers it as a sessionless full fetch).
 */
import { ZERO_UUID } from '../protocol/apis/common.js'
import { NO_HIGH_WATERMARK, NO_REPLICA_STATE, type FetchPartition, type FetchRequest, type FetchResponse, type FetchTopic, type ForgottenTopic, type PartitionData } from '../protocol/apis/fetch.js'
import { ErrorCode } from '../protocol/error-codes.js'

export const INVALID_SESSION_ID = 0
export const INITIAL_EPOCH = 0
export const FINAL_EPOCH = -1
/** The first Fetch version that names topics by id. */
export const FETCH_TOPIC_IDS_FROM = 13

/** Kafka's FetchMetadata: the session id and epoch a request carries. */
export class FetchMetadata {
  static readonly INITIAL = new FetchMetadata(INVALID_SESSION_ID, INITIAL_EPOCH)

  constructor(
    readonly sessionId: number,
    readonly epoch: number,
  ) {}

  static nextEpoch(epoch: number): number {
    if (epoch < 0) return FINAL_EPOCH
    return epoch === 0x7fffffff ? 1 : epoch + 1
  }

  /** A full request: opens a session (epoch 0) or closes one (epoch -1). */
  get isFull(): boolean {
    return this.epoch === INITIAL_EPOCH || this.epoch === FINAL_EPOCH
  }

  static newIncremental(sessionId: number): FetchMetadata {
    return new FetchMetadata(sessionId, FetchMetadata.nextEpoch(INITIAL_EPOCH))
  }

  nextIncremental(): FetchMetadata {
    return new FetchMetadata(this.sessionId, FetchMetadata.nextEpoch(this.epoch))
  }

  nextCloseExisting(): FetchMetadata {
    return new FetchMetadata(this.sessionId, FINAL_EPOCH)
  }

  nextCloseExistingAttemptNew(): FetchMetadata {
    return new FetchMetadata(this.sessionId, INITIAL_EPOCH)
  }
}

export interface TopicPartition {
  topic: string
  partition: number
}

/** A partition and the topic id it was fetched under. */
export interface TopicIdPartition extends TopicPartition {
  topicId: Buffer
}

/** What a Fetch asks of one partition (Kafka's FetchRequest.PartitionData). */
export interface PartitionFetchState {
  /** ZERO_UUID when unknown: the request then names topics (Fetch v12 or older). */
  topicId: Buffer
  fetchOffset: bigint
  /** -1 for a consumer. */
  logStartOffset: bigint
  maxBytes: number
  /** -1 when unknown. */
  currentLeaderEpoch: number
  /** -1 when unknown. */
  lastFetchedEpoch: number
}

export interface SessionPartition {
  tp: TopicPartition
  data: PartitionFetchState
}

/** Kafka's FetchSessionHandler.FetchRequestData: what one request sends. */
export interface FetchRequestData {
  /** The partitions to list in the request, in order (all of them for a full request). */
  toSend: Map<string, SessionPartition>
  /** Partitions to forget. */
  toForget: TopicIdPartition[]
  /** Partitions whose topic id changed: forgotten under the old id on v13+ (and sent in toSend). */
  toReplace: TopicIdPartition[]
  /** Every partition of the session after this request. */
  sessionPartitions: Map<string, SessionPartition>
  metadata: FetchMetadata
  /** Every partition has a topic id: the request may be v13+. */
  canUseTopicIds: boolean
}

export const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`

function sameState(a: PartitionFetchState, b: PartitionFetchState): boolean {
  return (
    a.topicId.equals(b.topicId) &&
    a.fetchOffset === b.fetchOffset &&
    a.logStartOffset === b.logStartOffset &&
    a.maxBytes === b.maxBytes &&
    a.currentLeaderEpoch === b.currentLeaderEpoch &&
    a.lastFetchedEpoch === b.lastFetchedEpoch
  )
}

export class FetchSessionHandler {
  readonly node: number
  private nextMetadata = FetchMetadata.INITIAL
  private sessionPartitions = new Map<string, SessionPartition>()
  /** Topic id (hex) to name, for the topics of the session when it uses topic ids. */
  private topicNames = new Map<string, string>()

  constructor(node: number) {
    this.node = node
  }

  get sessionId(): number {
    return this.nextMetadata.sessionId
  }

  /** The metadata of the next request. */
  get metadata(): FetchMetadata {
    return this.nextMetadata
  }

  /** Topic id (hex) to name of the session's topics (empty when it names topics). */
  get sessionTopicNames(): ReadonlyMap<string, string> {
    return this.topicNames
  }

  get partitions(): ReadonlyMap<string, SessionPartition> {
    return this.sessionPartitions
  }

  newBuilder(): FetchSessionBuilder {
    return new FetchSessionBuilder(this)
  }

  /** Called by the builder: takes the next request's partitions into the session. */
  build(next: Map<string, SessionPartition>, topicNames: Map<string, string>, withoutTopicIds: number): FetchRequestData {
    let canUseTopicIds = withoutTopicIds === 0
    if (this.nextMetadata.isFull) {
      this.sessionPartitions = next
      this.topicNames = canUseTopicIds ? topicNames : new Map()
      return { toSend: new Map(next), toForget: [], toReplace: [], sessionPartitions: new Map(next), metadata: this.nextMetadata, canUseTopicIds }
    }
    const toForget: TopicIdPartition[] = []
    const toReplace: TopicIdPartition[] = []
    // What changed goes to the end of `next`, in the session's order; what is new stays first.
    for (const [key, prev] of this.sessionPartitions) {
      const now = next.get(key)
      if (now === undefined) {
        this.sessionPartitions.delete(key)
        toForget.push({ ...prev.tp, topicId: prev.data.topicId })
        if (prev.data.topicId.equals(ZERO_UUID)) canUseTopicIds = false
        continue
      }
      next.delete(key)
      if (!prev.data.topicId.equals(now.data.topicId) && !prev.data.topicId.equals(ZERO_UUID) && !now.data.topicId.equals(ZERO_UUID)) {
        toReplace.push({ ...prev.tp, topicId: prev.data.topicId })
        next.set(key, now)
        this.sessionPartitions.set(key, now)
      } else if (!sameState(prev.data, now.data)) {
        next.set(key, now)
        this.sessionPartitions.set(key, now)
      }
    }
    for (const [key, entry] of next) {
      if (this.sessionPartitions.has(key)) break // the first moved entry: the rest are moved too
      this.sessionPartitions.set(key, entry)
    }
    this.topicNames = canUseTopicIds ? topicNames : new Map()
    return { toSend: next, toForget, toReplace, sessionPartitions: new Map(this.sessionPartitions), metadata: this.nextMetadata, canUseTopicIds }
  }

  /** The partitions a response lists, by key (topic ids resolved through the session on v13+). */
  responsePartitions(res: FetchResponse, version: number): Map<string, PartitionData> {
    const out = new Map<string, PartitionData>()
    for (const t of res.responses) {
      const name = version >= FETCH_TOPIC_IDS_FROM ? this.topicNames.get(t.topicId.toString('hex')) : t.topic
      if (name === undefined) continue
      for (const p of t.partitions) out.set(tpKey(name, p.partitionIndex), p)
    }
    return out
  }

  /** Why a response does not fit the session, or null when it does. */
  private verify(res: FetchResponse, version: number, full: boolean): string | null {
    const problems: string[] = []
    if (version >= FETCH_TOPIC_IDS_FROM) {
      const extraIds = res.responses.filter((t) => !this.topicNames.has(t.topicId.toString('hex'))).map((t) => t.topicId.toString('hex'))
      if (extraIds.length > 0) problems.push(`extraIds=(${extraIds.join(', ')})`)
    }
    const listed = this.responsePartitions(res, version)
    const extra = [...listed.keys()].filter((k) => !this.sessionPartitions.has(k))
    if (extra.length > 0) problems.push(`extraPartitions=(${extra.map(show).join(', ')})`)
    if (full) {
      const omitted = [...this.sessionPartitions.keys()].filter((k) => !listed.has(k))
      if (omitted.length > 0) problems.push(`omittedPartitions=(${omitted.map(show).join(', ')})`)
    }
    return problems.length > 0 ? problems.join(', ') : null
  }

  /** Last problem found by handleResponse (for logs and tests). */
  lastProblem: string | null = null

  /**
   * Takes in the response to the last built request; false when its partition data must not be
   * used (a session error, or partitions that do not fit the session).
   */
  handleResponse(res: FetchResponse, version: number): boolean {
    this.lastProblem = null
    if (res.errorCode !== ErrorCode.NONE) {
      this.lastProblem = `error ${res.errorCode}`
      this.nextMetadata = res.errorCode === ErrorCode.FETCH_SESSION_ID_NOT_FOUND ? FetchMetadata.INITIAL : this.nextMetadata.nextCloseExistingAttemptNew()
      return false
    }
    if (this.nextMetadata.isFull) {
      if (res.responses.length === 0 && res.throttleTimeMs > 0) {
        // KIP-219: a throttled full fetch is answered empty; not an error, but nothing to use.
        this.nextMetadata = FetchMetadata.INITIAL
        return false
      }
      const problem = this.verify(res, version, true)
      this.lastProblem = problem
      if (problem !== null) {
        this.nextMetadata = FetchMetadata.INITIAL
        return false
      }
      this.nextMetadata = res.sessionId === INVALID_SESSION_ID ? FetchMetadata.INITIAL : FetchMetadata.newIncremental(res.sessionId)
      return true
    }
    const problem = this.verify(res, version, false)
    this.lastProblem = problem
    if (problem !== null) {
      this.nextMetadata = this.nextMetadata.nextCloseExistingAttemptNew()
      return false
    }
    this.nextMetadata = res.sessionId === INVALID_SESSION_ID ? FetchMetadata.INITIAL : this.nextMetadata.nextIncremental()
    return true
  }

  /** After a failed send: close the session and open a new one with the next (full) request. */
  handleError(_err?: unknown): void {
    this.nextMetadata = this.nextMetadata.nextCloseExistingAttemptNew()
  }

  /** Makes the next request close the session (epoch -1). */
  notifyClose(): void {
    this.nextMetadata = this.nextMetadata.nextCloseExisting()
  }
}

const show = (key: string): string => key.replace('\u0000', '-')

/** Kafka's FetchSessionHandler.Builder: collects the partitions of the next request. */
export class FetchSessionBuilder {
  private readonly next = new Map<string, SessionPartition>()
  private readonly topicNames = new Map<string, string>()
  private withoutTopicIds = 0
  private built = false

  constructor(private readonly handler: FetchSessionHandler) {}

  add(tp: TopicPartition, data: PartitionFetchState): this {
    this.next.set(tpKey(tp.topic, tp.partition), { tp, data })
    if (data.topicId.equals(ZERO_UUID)) this.withoutTopicIds++
    else if (!this.topicNames.has(data.topicId.toString('hex'))) this.topicNames.set(data.topicId.toString('hex'), tp.topic)
    return this
  }

  build(): FetchRequestData {
    if (this.built) throw new Error('a FetchSessionBuilder builds once')
    this.built = true
    return this.handler.build(this.next, this.topicNames, this.withoutTopicIds)
  }
}

export interface FetchRequestOptions {
  maxWaitMs: number
  minBytes: number
  maxBytes: number
  /** 0 READ_UNCOMMITTED, 1 READ_COMMITTED. */
  isolationLevel: number
  rackId?: string
  /** A follower's broker id (-1 for a consumer). */
  replicaId?: number
  /** A follower's broker epoch (KIP-903; Fetch v15+ ReplicaState), -1 when unknown. */
  replicaEpoch?: bigint
}

/**
 * The Fetch request for `data` at `version` (Kafka's FetchRequest.Builder): partitions grouped
 * by topic in order, by name before v13 and by id from v13, the forgotten partitions (and, from
 * v13, the replaced ones under their old ids).
 */
export function fetchRequestFor(data: FetchRequestData, version: number, options: FetchRequestOptions): FetchRequest {
  const byId = version >= FETCH_TOPIC_IDS_FROM
  // One entry per topic (in the order of first appearance), as Kafka's builder groups them.
  const grouped = new Map<string, FetchTopic>()
  for (const { tp, data: d } of data.toSend.values()) {
    const key = byId ? `${tp.topic}\u0000${d.topicId.toString('hex')}` : tp.topic
    let last = grouped.get(key)
    if (!last) grouped.set(key, (last = { topic: byId ? '' : tp.topic, topicId: byId ? d.topicId : ZERO_UUID, partitions: [] }))
    const p: FetchPartition = {
      partition: tp.partition,
      currentLeaderEpoch: version >= 9 ? d.currentLeaderEpoch : -1,
      fetchOffset: d.fetchOffset,
      lastFetchedEpoch: version >= 12 ? d.lastFetchedEpoch : -1,
      logStartOffset: d.logStartOffset,
      partitionMaxBytes: d.maxBytes,
      replicaDirectoryId: ZERO_UUID,
      highWatermark: NO_HIGH_WATERMARK,
    }
    last.partitions.push(p)
  }
  const topics = [...grouped.values()]
  const forgotten = new Map<string, ForgottenTopic>()
  const forget = (list: TopicIdPartition[]) => {
    for (const tp of list) {
      const key = byId ? tp.topicId.toString('hex') : tp.topic
      let f = forgotten.get(key)
      if (!f) forgotten.set(key, (f = { topic: byId ? '' : tp.topic, topicId: byId ? tp.topicId : ZERO_UUID, partitions: [] }))
      f.partitions.push(tp.partition)
    }
  }
  forget(data.toForget)
  if (byId) forget(data.toReplace)
  const replicaId = options.replicaId ?? -1
  return {
    clusterId: null,
    replicaId: version < 15 ? replicaId : -1,
    replicaState: version >= 15 && replicaId >= 0 ? { replicaId, replicaEpoch: options.replicaEpoch ?? -1n } : NO_REPLICA_STATE,
    maxWaitMs: options.maxWaitMs,
    minBytes: options.minBytes,
    maxBytes: options.maxBytes,
    isolationLevel: options.isolationLevel,
    sessionId: data.metadata.sessionId,
    sessionEpoch: data.metadata.epoch,
    topics,
    forgottenTopicsData: [...forgotten.values()],
    rackId: options.rackId ?? '',
  }
}
