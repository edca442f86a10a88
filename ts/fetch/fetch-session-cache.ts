/**
 * Incremental fetch sessions (KIP-227): Kafka's `FetchSession` and `FetchSessionCache`.
 *
 * A session remembers, per partition, what the fetcher asked for (offset, max bytes, epochs) and
 * what it was last told (high watermark, last stable offset, log start offset), so that an
 * incremental request names only what changed and an incremental response carries only what
 * changed. Its partitions are kept in an insertion-ordered map: reads go in that order, and a
 * partition that returned records moves to the end, so that under a tight maxBytes every
 * partition gets its turn (fairness).
 *
 * The cache holds at most `max.incremental.fetch.session.cache.slots` sessions (1000). When it is
 * full, a new session gets a slot only by evicting one, never in FIFO order:
 * - the least recently used session, if it was idle more than `evictionMs` (120 s), always goes;
 * - otherwise the least valuable evictable session goes when the newcomer is at least as
 *   valuable. Value is Kafka's `EvictableKey` order: (privileged, size, id), a follower
 *   (privileged) above any consumer, then the larger session above the smaller. A session younger
 *   than `evictionMs` is protected from consumers; a young follower session is protected from
 *   everyone. (Kafka decides those two at each touch; here at eviction time, from the same clock.)
 * If nothing can be evicted the fetch is answered without a session (sessionId 0), as in Kafka.
 */
import { randomInt } from 'node:crypto'

/** max.incremental.fetch.session.cache.slots */
export const DEFAULT_FETCH_SESSION_CACHE_SLOTS = 1000
/** How long a session must be idle before anyone may evict it (Kafka: 120 s, not configurable). */
export const FETCH_SESSION_EVICTION_MS = 120_000

/** sessionId 0: no session. */
export const INVALID_SESSION_ID = 0
/** Epoch 0: a full fetch that asks for a new session. */
export const INITIAL_EPOCH = 0
/** Epoch -1: sessionless, or close the named session. */
export const FINAL_EPOCH = -1

const INT32_MAX = 0x7fffffff

/** The epoch after `epoch`: counts up, 1 after Int32.MAX; nothing follows FINAL_EPOCH. */
export function nextEpoch(epoch: number): number {
  if (epoch < 0) return FINAL_EPOCH
  if (epoch === INT32_MAX) return 1
  return epoch + 1
}

/** One requested partition (Kafka's `FetchRequest.PartitionData` with its TopicIdPartition). */
export interface FetchPartitionData {
  /** The topic name (requests before v13); '' when the request names topics by id. */
  topic: string
  /** The topic id (v13+); ZERO_UUID before. */
  topicId: Buffer
  partition: number
  fetchOffset: bigint
  /** The fetcher's log start offset (followers), -1 for consumers. */
  logStartOffset: bigint
  maxBytes: number
  currentLeaderEpoch: number
  lastFetchedEpoch: number
}

/** A forgotten partition of an incremental request. */
export interface TopicIdPartition {
  topic: string
  topicId: Buffer
  partition: number
}

/** A partition of a session: the last request for it and what the last response said. */
export interface CachedPartition extends FetchPartitionData {
  /** The high watermark last sent; -1 forces the next response to carry the partition. */
  highWatermark: bigint
  lastStableOffset: bigint
  /** The broker's log start offset last sent (Kafka's `localLogStartOffset`). */
  localLogStartOffset: bigint
}

/** The session key of a partition: by topic id when the session uses ids, else by name. */
export function partitionKey(p: TopicIdPartition, usesTopicIds: boolean): string {
  return `${usesTopicIds ? p.topicId.toString('hex') : p.topic}:${p.partition}`
}

/** A cached partition that has not been answered yet: the next response carries it. */
export function newCachedPartition(req: FetchPartitionData): CachedPartition {
  return { ...req, highWatermark: -1n, lastStableOffset: -1n, localLogStartOffset: -1n }
}

export class FetchSession {
  /** The epoch the next incremental request must carry. */
  epoch: number
  lastUsedMs: number
  /** Insertion-ordered: the order partitions are read in. */
  readonly partitions: Map<string, CachedPartition>

  constructor(
    readonly id: number,
    /** A follower's session (replicaId >= 0). */
    readonly privileged: boolean,
    readonly usesTopicIds: boolean,
    readonly creationMs: number,
    partitions: Iterable<CachedPartition>,
  ) {
    this.epoch = nextEpoch(INITIAL_EPOCH)
    this.lastUsedMs = creationMs
    this.partitions = new Map()
    for (const p of partitions) this.partitions.set(this.keyOf(p), p)
  }

  get size(): number {
    return this.partitions.size
  }

  keyOf(p: TopicIdPartition): string {
    return partitionKey(p, this.usesTopicIds)
  }

  /**
   * Applies an incremental request: listed partitions are added at the end or updated in place
   * (their position is kept), forgotten ones dropped. Returns what happened, for logs and tests.
   */
  update(fetchData: readonly FetchPartitionData[], toForget: readonly TopicIdPartition[]): { added: number; updated: number; removed: number } {
    let added = 0
    let updated = 0
    let removed = 0
    for (const req of fetchData) {
      const key = this.keyOf(req)
      const cached = this.partitions.get(key)
      if (cached) {
        cached.fetchOffset = req.fetchOffset
        cached.logStartOffset = req.logStartOffset
        cached.maxBytes = req.maxBytes
        cached.currentLeaderEpoch = req.currentLeaderEpoch
        cached.lastFetchedEpoch = req.lastFetchedEpoch
        updated++
      } else {
        this.partitions.set(key, newCachedPartition(req))
        added++
      }
    }
    for (const tp of toForget) if (this.partitions.delete(this.keyOf(tp))) removed++
    return { added, updated, removed }
  }

  /** Fairness: a partition that returned records goes to the back of the reading order. */
  moveToEnd(p: TopicIdPartition): void {
    const key = this.keyOf(p)
    const cached = this.partitions.get(key)
    if (!cached) return
    this.partitions.delete(key)
    this.partitions.set(key, cached)
  }
}

export interface FetchSessionCacheOptions {
  maxEntries?: number
  evictionMs?: number
  /** A random positive int32 (tests pass a fixed sequence). */
  randomId?: () => number
}

/** Counts for metrics (Kafka's NumIncrementalFetchSessions, ...PartitionsCached, ...EvictionsPerSec). */
export interface FetchSessionCacheMetrics {
  sessions: number
  partitionsCached: number
  evictions: number
  /** Sessions created since start. */
  sessionsCreated: number
}

export class FetchSessionCache {
  readonly maxEntries: number
  readonly evictionMs: number
  private readonly randomId: () => number
  /** By id, in least-recently-used-first order (a touch moves a session to the end). */
  private readonly sessions = new Map<number, FetchSession>()
  private evictions = 0
  private sessionsCreated = 0

  constructor(options: FetchSessionCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_FETCH_SESSION_CACHE_SLOTS
    this.evictionMs = options.evictionMs ?? FETCH_SESSION_EVICTION_MS
    this.randomId = options.randomId ?? (() => randomInt(1, INT32_MAX + 1))
  }

  get(id: number): FetchSession | undefined {
    return this.sessions.get(id)
  }

  /** Session ids from least to most recently used. */
  ids(): number[] {
    return [...this.sessions.keys()]
  }

  get metrics(): FetchSessionCacheMetrics {
    let partitionsCached = 0
    for (const s of this.sessions.values()) partitionsCached += s.size
    return { sessions: this.sessions.size, partitionsCached, evictions: this.evictions, sessionsCreated: this.sessionsCreated }
  }

  /**
   * Creates a session for a full fetch if there is a free slot or one can be evicted; returns
   * its id, or INVALID_SESSION_ID (the fetch is then answered without a session).
   */
  maybeCreateSession(now: number, privileged: boolean, usesTopicIds: boolean, partitions: readonly CachedPartition[]): number {
    if (this.maxEntries <= 0) return INVALID_SESSION_ID
    if (this.sessions.size >= this.maxEntries && !this.tryEvict(privileged, partitions.length, now)) return INVALID_SESSION_ID
    const session = new FetchSession(this.newSessionId(), privileged, usesTopicIds, now, partitions)
    this.sessions.set(session.id, session)
    this.sessionsCreated++
    return session.id
  }

  /** Marks a session used now (it becomes the most recently used). */
  touch(session: FetchSession, now: number): void {
    if (this.sessions.get(session.id) !== session) return
    session.lastUsedMs = now
    this.sessions.delete(session.id)
    this.sessions.set(session.id, session)
  }

  remove(id: number): FetchSession | undefined {
    const session = this.sessions.get(id)
    if (session) this.sessions.delete(id)
    return session
  }

  /** Frees one slot for a new session of `size` partitions, if the rules above allow it. */
  private tryEvict(privileged: boolean, size: number, now: number): boolean {
    const lru = this.sessions.values().next().value
    if (lru === undefined) return false
    if (now - lru.lastUsedMs > this.evictionMs) return this.evict(lru)
    let victim: FetchSession | undefined
    for (const s of this.sessions.values()) {
      const old = now - s.creationMs > this.evictionMs
      const evictable = privileged ? !s.privileged || old : old
      if (evictable && (victim === undefined || compareEvictable(s, victim) < 0)) victim = s
    }
    // The newcomer's key has id 0, below every real id: an equal (privileged, size) does not evict.
    if (victim === undefined || compareEvictable({ privileged, size, id: 0 }, victim) < 0) return false
    return this.evict(victim)
  }

  private evict(session: FetchSession): boolean {
    this.sessions.delete(session.id)
    this.evictions++
    return true
  }

  private newSessionId(): number {
    for (;;) {
      const id = this.randomId()
      if (id > 0 && id <= INT32_MAX && !this.sessions.has(id)) return id
    }
  }
}

/** Kafka's `EvictableKey` order: (privileged, size, id); the smallest is evicted first. */
function compareEvictable(a: { privileged: boolean; size: number; id: number }, b: { privileged: boolean; size: number; id: number }): number {
  if (a.privileged !== b.privileged) return a.privileged ? 1 : -1
  if (a.size !== b.size) return a.size - b.size
  return a.id - b.id
}
