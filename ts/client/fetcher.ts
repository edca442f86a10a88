/**
 * Kafka's consumer Fetcher (seed 001): sends Fetch requests for the fetchable partitions and
 * hands their records out, a partition's batch at a time.
 *
 * - `sendFetches()` (Kafka's prepareFetchRequests + sendFetches): the fetchable partitions are
 *   the assigned ones with a position, not paused, with no data buffered here (a queued
 *   CompletedFetch or the one being read) and no fetch in flight. Each goes to its preferred
 *   read replica (KIP-392, until metadata.max.age.ms after the leader named it) or its leader;
 *   nodes with a request in flight or awaiting reconnect are skipped. One Fetch per node, built
 *   by that node's FetchSessionHandler (incremental sessions). Nothing is sent while the data
 *   buffered here reaches fetch.max.bytes.
 * - Responses are not parsed when they arrive: each partition's data is queued as a
 *   CompletedFetch (completed-fetch.ts) and parsed when `collectFetch` reaches it. The consumer
 *   calls `sendFetches()` again right after collecting, so the next fetch is in flight while the
 *   application handles the records it got (prefetch).
 * - Prefetch goes one response further than Kafka's Fetcher: a partition with one response
 *   buffered whose end is known from its batch headers (CompletedFetch.endOffset) is fetchable
 *   again, from that end, while the buffered one is decoded and handed out; a consumer of one
 *   partition otherwise leaves the broker idle while it reads a response, then waits for the
 *   next. A second response buffered makes it unfetchable again. The prefetched response is used
 *   only if the partition's position reached its fetch offset with no seek in between (as for
 *   every response); otherwise it is dropped and the partition fetched again from its position.
 * - `collectFetch(max)` (Kafka's fetchRecords / initializeCompletedFetch): a CompletedFetch is
 *   used only if its fetch offset is still the partition's position (no seek, revoke or pause in
 *   between); then partition errors act as in Kafka: leader errors refresh the metadata and
 *   forget the preferred replica, OFFSET_OUT_OF_RANGE resets the position by the partition's
 *   reset strategy (auto.offset.reset; 'none' throws OFFSET_OUT_OF_RANGE), others throw.
 * - Positions without a value are reset with ListOffsets (`resetPositionsIfNeeded`).
 * - A response the session handler refuses (a session error, partitions that do not fit) is not
 *   used at all: the positions stay, and the next fetch is a full one. A failed send does the
 *   same (and the node reconnects with backoff).
 *
 * `assign` / `poll` / `atEnd` keep the simple use without a Consumer (ferrolog's CLI): `poll()`
 * sends one round of fetches, waits for all of them and returns every record they brought.
 */
import { fetchCodec, type FetchResponse } from '../protocol/apis/fetch.js'
import { ZERO_UUID } from '../protocol/apis/common.js'
import { listOffsetsCodec, ListOffsetsTimestamp } from '../protocol/apis/list-offsets.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { CompletedFetch } from './completed-fetch.js'
import type { ConsumerRecord, Deserializer } from './consumer-record.js'
import { KafkaClientError } from './errors.js'
import { nativeRecordIndexer, type Deserializers, type RecordIndexer } from './fetched-records.js'
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from '../protocol/compression.js'
import { FETCH_TOPIC_IDS_FROM, FetchSessionHandler, fetchRequestFor, tpKey, type FetchRequestData } from './fetch-session-handler.js'
import type { NetworkClient } from './network-client.js'
import { SubscriptionState, type TopicPartitionState } from './subscription-state.js'

export type { ConsumerRecord, Deserializer } from './consumer-record.js'
export type OffsetSpec = 'earliest' | 'latest' | bigint

export interface FetcherOptions {
  /** 0 READ_UNCOMMITTED (default), 1 READ_COMMITTED. */
  isolationLevel?: number
  /** fetch.max.wait.ms (500). */
  maxWaitMs?: number
  /** fetch.min.bytes (1). */
  minBytes?: number
  /** fetch.max.bytes (52428800). */
  maxBytes?: number
  /** max.partition.fetch.bytes (1048576). */
  partitionMaxBytes?: number
  /** client.rack, sent in Fetch v11+ for KIP-392 ('' none). */
  rackId?: string
  /** metadata.max.age.ms: how long a preferred read replica is used (300000). */
  metadataMaxAgeMs?: number
  /** Decode records with the Rust decoder when the binding is there (default true). */
  nativeDecoding?: boolean
  /**
   * The most the records of one compressed batch may decompress to (default
   * DEFAULT_MAX_DECOMPRESSED_BYTES); a batch past it is MESSAGE_TOO_LARGE (completed-fetch.ts).
   */
  maxDecompressedBytes?: number
  /**
   * key.deserializer / value.deserializer: `buffer` (default) or `string` (UTF-8). They decide
   * what the records' keys and values are: give the Fetcher's K and V type parameters to match.
   */
  keyDeserializer?: Deserializer
  valueDeserializer?: Deserializer
  /** Called with each request's encoded size, per node (for measuring sessions). */
  onRequest?: (nodeId: number, bytes: number, data: FetchRequestData) => void
}

/** Records of one partition, in offset order. */
export interface FetchedBatch<K = Buffer, V = Buffer> {
  topic: string
  partition: number
  records: ConsumerRecord<K, V>[]
  /** The partition's high watermark as the response told. */
  highWatermark: bigint
}

const LEADER_ERRORS = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.INCONSISTENT_TOPIC_ID,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  78, // OFFSET_NOT_AVAILABLE
])

type Options = Required<Omit<FetcherOptions, 'onRequest' | 'nativeDecoding' | 'maxDecompressedBytes' | 'keyDeserializer' | 'valueDeserializer'>> & Pick<FetcherOptions, 'onRequest'>

/** K and V: the keys' and values' type, Buffer by default, string with the `string` deserializers. */
export class Fetcher<K = Buffer, V = Buffer> {
  readonly subscriptions: SubscriptionState
  private readonly client: NetworkClient
  private readonly options: Options
  private readonly sessions = new Map<number, FetchSessionHandler>()
  private readonly completedFetches: CompletedFetch[] = []
  private nextInLine: CompletedFetch | null = null
  private readonly nodesWithPendingFetchRequests = new Set<number>()
  private readonly partitionsInFlight = new Set<string>()
  private readonly inFlight = new Set<Promise<void>>()
  /** An error of a fetch that is not retriable: thrown by the next collect. */
  private failure: unknown = null
  private waiters: Array<() => void> = []
  private metadataStale = true
  private closed = false
  private readonly indexer: RecordIndexer | null
  private readonly maxDecompressedBytes: number
  private readonly deserializers: Deserializers

  constructor(client: NetworkClient, options: FetcherOptions = {}, subscriptions?: SubscriptionState) {
    this.client = client
    this.indexer = options.nativeDecoding === false ? null : nativeRecordIndexer()
    this.maxDecompressedBytes = options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES
    this.deserializers = { key: options.keyDeserializer ?? 'buffer', value: options.valueDeserializer ?? 'buffer' }
    this.subscriptions = subscriptions ?? new SubscriptionState()
    this.options = {
      isolationLevel: options.isolationLevel ?? 0,
      maxWaitMs: options.maxWaitMs ?? 500,
      minBytes: options.minBytes ?? 1,
      maxBytes: options.maxBytes ?? 52_428_800,
      partitionMaxBytes: options.partitionMaxBytes ?? 1_048_576,
      rackId: options.rackId ?? '',
      metadataMaxAgeMs: options.metadataMaxAgeMs ?? 300_000,
      onRequest: options.onRequest,
    }
  }

  private get readCommitted(): boolean {
    return this.options.isolationLevel === 1
  }

  /** Assigns partitions of `topic` (all of them when `partitions` is null), starting at `start`. */
  async assign(topic: string, partitions: number[] | null, start: OffsetSpec): Promise<void> {
    const md = await this.client.refreshMetadata([topic])
    const t = md.topic(topic)
    if (!t || t.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${topic}`)
    const all = t.partitions.map((p) => p.partition)
    for (const p of partitions ?? all) {
      if (!all.includes(p)) throw new KafkaClientError('UNKNOWN_TOPIC_OR_PARTITION', `topic ${topic} has no partition ${p}`)
    }
    const current = this.subscriptions.assignedPartitions.map((s) => ({ topic: s.topic, partition: s.partition }))
    const added = (partitions ?? all).map((partition) => ({ topic, partition }))
    this.subscriptions.assignFromUser([...current, ...added], typeof start === 'bigint' ? 'none' : start)
    for (const { partition } of added) {
      const s = this.subscriptions.assignedState(topic, partition)
      if (typeof start === 'bigint') s.seek(start)
      else s.resetStrategy = start
    }
    this.metadataStale = false
  }

  /** Stops fetching a partition (the next request of its node's session forgets it). */
  unassign(topic: string, partition: number): void {
    const rest = this.subscriptions.assignedPartitions.filter((s) => s.topic !== topic || s.partition !== partition)
    this.subscriptions.assignFromUser(rest.map((s) => ({ topic: s.topic, partition: s.partition })))
    this.clearBufferedDataForUnassignedPartitions()
  }

  /** Sets a partition's next offset (the next request of its session alters it). */
  seek(topic: string, partition: number, offset: bigint): void {
    this.subscriptions.assignedState(topic, partition).seek(offset)
    this.wake()
  }

  position(topic: string, partition: number): bigint | null {
    return this.subscriptions.state(topic, partition)?.position ?? null
  }

  /** The session handler of each node fetched from. */
  get sessionHandlers(): ReadonlyMap<number, FetchSessionHandler> {
    return this.sessions
  }

  /** Every partition's position reached the end the last response told (HW, or LSO with READ_COMMITTED). */
  atEnd(): boolean {
    for (const s of this.subscriptions.assignedPartitions) {
      const end = s.end(this.readCommitted)
      if (s.position === null || end < 0n || s.position < end) return false
    }
    return true
  }

  /** One round of fetches: sends them, waits for all, returns every record they brought. */
  async poll(): Promise<ConsumerRecord<K, V>[]> {
    await this.maybeRefreshMetadata()
    await this.resetPositionsIfNeeded()
    const sent = this.sendFetches()
    await Promise.all([...this.inFlight])
    if (sent === 0) await new Promise((resolve) => setTimeout(resolve, 100))
    return this.collectFetch(Number.MAX_SAFE_INTEGER).flatMap((b) => b.records)
  }

  /** Whether the metadata must be refreshed before fetching (a leader error, an unknown leader). */
  get needsMetadata(): boolean {
    return this.metadataStale
  }

  requestMetadataUpdate(): void {
    this.metadataStale = true
  }

  /**
   * Refreshes the metadata of the assigned topics when a fetch asked for it. A topic the broker
   * will not describe to this principal (TOPIC_AUTHORIZATION_FAILED) fails the poll, as Kafka's
   * consumer throws TopicAuthorizationException, instead of waiting for a leader forever; the
   * metadata stays stale, so the next poll asks again (an ACL may have been granted since).
   */
  async maybeRefreshMetadata(): Promise<void> {
    if (!this.metadataStale) return
    const topics = [...new Set(this.subscriptions.assignedPartitions.map((s) => s.topic))]
    try {
      await this.client.refreshMetadata(topics)
    } catch (err) {
      if (!(err instanceof KafkaClientError) || !err.retriable) throw err
      return
    }
    const unauthorized = topics.filter((t) => this.client.metadata.topic(t)?.errorCode === ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    if (unauthorized.length > 0) throw new KafkaClientError('TOPIC_AUTHORIZATION_FAILED', `not authorized to access topics: [${unauthorized.join(', ')}]`)
    this.metadataStale = false
  }

  /** Bytes of fetched data not yet returned. */
  get bufferedBytes(): number {
    let n = 0
    for (const c of this.completedFetches) n += c.sizeInBytes
    if (this.nextInLine && !this.nextInLine.isConsumed) n += this.nextInLine.sizeInBytes
    return n
  }

  /** Whether collectFetch has something to look at. */
  get hasCompletedFetches(): boolean {
    return this.completedFetches.length > 0 || (this.nextInLine !== null && !this.nextInLine.isConsumed)
  }

  get hasInFlightFetches(): boolean {
    return this.inFlight.size > 0
  }

  /** Resolves when a response arrives, `wake()` is called, or after `timeoutMs`. */
  awaitFetches(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.hasCompletedFetches || this.failure !== null) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        this.waiters = this.waiters.filter((w) => w !== done)
        resolve()
      }
      const timer = setTimeout(done, Math.max(0, timeoutMs))
      signal?.addEventListener('abort', done, { once: true })
      this.waiters.push(done)
    })
  }

  /** Ends a wait in awaitFetches (a seek, a resume, a rebalance to handle). */
  wake(): void {
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }

  /** Partitions to fetch and from which offset: their position, or the end of their one buffered response. */
  private fetchablePartitions(): Array<[string, TopicPartitionState, bigint]> {
    const buffered = new Map<string, CompletedFetch[]>()
    const add = (c: CompletedFetch) => {
      const key = tpKey(c.topic, c.partition)
      const list = buffered.get(key)
      if (list) list.push(c)
      else buffered.set(key, [c])
    }
    if (this.nextInLine && !this.nextInLine.isConsumed) add(this.nextInLine)
    for (const c of this.completedFetches) add(c)
    const out: Array<[string, TopicPartitionState, bigint]> = []
    for (const [key, s] of this.subscriptions.fetchablePartitions((key) => !this.partitionsInFlight.has(key))) {
      const list = buffered.get(key)
      if (!list) out.push([key, s, s.position!])
      else if (list.length === 1 && list[0]!.endOffset !== null && list[0]!.positionVersion === s.positionVersion) out.push([key, s, list[0]!.endOffset])
    }
    return out
  }

  /** Kafka's selectReadReplica: the preferred read replica while it is fresh and known, else the leader. */
  private selectReadReplica(s: TopicPartitionState, now: number): number | undefined {
    if (s.preferredReadReplica >= 0) {
      if (now < s.preferredReadReplicaExpiresAt && this.client.metadata.node(s.preferredReadReplica)) return s.preferredReadReplica
      s.preferredReadReplica = -1
    }
    return this.client.metadata.leaderFor(s.topic, s.partition)?.nodeId
  }

  /** Sends a Fetch to each node that has fetchable partitions and none in flight; how many were sent. */
  sendFetches(): number {
    if (this.closed || this.failure !== null) return 0
    if (this.bufferedBytes >= this.options.maxBytes) return 0
    const now = Date.now()
    const byNode = new Map<number, Array<[string, TopicPartitionState, bigint]>>()
    for (const entry of this.fetchablePartitions()) {
      const nodeId = this.selectReadReplica(entry[1], now)
      if (nodeId === undefined) {
        this.metadataStale = true
        continue
      }
      if (this.nodesWithPendingFetchRequests.has(nodeId)) continue
      let list = byNode.get(nodeId)
      if (!list) byNode.set(nodeId, (list = []))
      list.push(entry)
    }
    // A session holding partitions no longer assigned (unassigned, revoked, moved) is told to
    // forget them even when nothing else is fetched from its node.
    for (const [nodeId, handler] of this.sessions) {
      if (byNode.has(nodeId) || this.nodesWithPendingFetchRequests.has(nodeId) || !this.client.metadata.node(nodeId)) continue
      for (const key of handler.partitions.keys()) {
        if (this.subscriptions.stateOf(key)) continue
        byNode.set(nodeId, [])
        break
      }
    }
    for (const [nodeId, list] of byNode) {
      const p = this.fetchFrom(nodeId, list)
        .then((prefetch) => {
          // The next data of these partitions is asked for now, while this response is read.
          if (prefetch) this.sendFetches()
        })
        .finally(() => {
          this.inFlight.delete(p)
          this.wake()
        })
      this.inFlight.add(p)
    }
    return byNode.size
  }

  private handlerFor(nodeId: number): FetchSessionHandler {
    let h = this.sessions.get(nodeId)
    if (!h) this.sessions.set(nodeId, (h = new FetchSessionHandler(nodeId)))
    return h
  }

  /** One Fetch to a node; whether a response it brought has a known end (a prefetch may go out). */
  private async fetchFrom(nodeId: number, list: Array<[string, TopicPartitionState, bigint]>): Promise<boolean> {
    const handler = this.handlerFor(nodeId)
    const builder = handler.newBuilder()
    const md = this.client.metadata
    const versions = new Map<string, number>()
    for (const [key, s, fetchOffset] of list) {
      builder.add(
        { topic: s.topic, partition: s.partition },
        {
          topicId: md.topic(s.topic)?.topicId ?? ZERO_UUID,
          fetchOffset,
          logStartOffset: -1n,
          maxBytes: this.options.partitionMaxBytes,
          currentLeaderEpoch: md.partition(s.topic, s.partition)?.leaderEpoch ?? -1,
          lastFetchedEpoch: -1,
        },
      )
      versions.set(key, s.positionVersion)
      this.partitionsInFlight.add(key)
    }
    const data = builder.build()
    this.nodesWithPendingFetchRequests.add(nodeId)
    let version = -1
    let response: FetchResponse
    try {
      try {
        response = await this.client.request(
          nodeId,
          fetchCodec,
          (v) => {
            version = v
            return fetchRequestFor(data, v, this.options)
          },
          {
            maxVersion: data.canUseTopicIds ? undefined : FETCH_TOPIC_IDS_FROM - 1,
            timeoutMs: this.client.requestTimeoutMs + this.options.maxWaitMs,
            onEncoded: (bytes) => this.options.onRequest?.(nodeId, bytes, data),
          },
        )
      } catch (err) {
        handler.handleError(err)
        if (this.closed) return false
        if (!(err instanceof KafkaClientError) || !err.retriable) this.failure ??= err
        this.metadataStale = true
        for (const [, s] of list) if (s.preferredReadReplica === nodeId) s.preferredReadReplica = -1
        return false
      }
      if (!handler.handleResponse(response, version)) {
        if (response.errorCode !== ErrorCode.NONE && response.errorCode !== ErrorCode.FETCH_SESSION_ID_NOT_FOUND && response.errorCode !== ErrorCode.INVALID_FETCH_SESSION_EPOCH) {
          this.metadataStale = true
        }
        return false
      }
      let prefetch = false
      for (const [key, p] of handler.responsePartitions(response, version)) {
        const sent = data.sessionPartitions.get(key)
        if (!sent) continue
        const c = new CompletedFetch(
          sent.tp.topic,
          sent.tp.partition,
          sent.data.fetchOffset,
          versions.get(key) ?? -1,
          p,
          this.readCommitted,
          nodeId,
          this.indexer,
          this.maxDecompressedBytes,
          this.deserializers,
        )
        this.completedFetches.push(c)
        if (c.endOffset !== null) prefetch = true
      }
      return prefetch
    } finally {
      this.nodesWithPendingFetchRequests.delete(nodeId)
      for (const [key] of list) this.partitionsInFlight.delete(key)
    }
  }

  /**
   * Up to `maxRecords` records from the queued responses, one batch per partition in the order
   * they came, advancing the positions past them (Kafka's collectFetch).
   */
  collectFetch(maxRecords: number): FetchedBatch<K, V>[] {
    if (this.failure !== null) {
      const err = this.failure
      this.failure = null
      throw err
    }
    const out: FetchedBatch<K, V>[] = []
    let remaining = maxRecords
    while (remaining > 0) {
      if (!this.nextInLine || this.nextInLine.isConsumed) {
        const c = this.completedFetches[0]
        if (!c) break
        try {
          this.nextInLine = this.initializeCompletedFetch(c)
        } catch (err) {
          this.completedFetches.shift()
          if (out.length > 0) {
            // Return what was read; the error comes with the next collect (as Kafka's cachedRecordTooLargeException).
            this.failure = err
            break
          }
          throw err
        }
        this.completedFetches.shift()
        continue
      }
      const c = this.nextInLine
      const s = this.subscriptions.state(c.topic, c.partition)
      if (!s || s.paused || s.positionVersion !== c.positionVersion || s.position !== c.nextFetchOffset) {
        // Revoked, paused or seeked since: the data is dropped and fetched again from the position.
        c.drain()
        continue
      }
      let records
      try {
        // Keys and values are what this.deserializers make: K and V as the options promise.
        records = c.fetchRecords(remaining) as ConsumerRecord<K, V>[]
      } catch (err) {
        // Records this collect already took (their positions moved past them) are returned;
        // the error comes with the next collect, as Kafka's FetchCollector does.
        if (out.length > 0) {
          this.failure = err
          break
        }
        throw err
      }
      s.position = c.nextFetchOffset
      if (records.length === 0) continue
      const last = out[out.length - 1]
      if (last && last.topic === c.topic && last.partition === c.partition) last.records.push(...records)
      else out.push({ topic: c.topic, partition: c.partition, records, highWatermark: s.highWatermark })
      remaining -= records.length
    }
    return out
  }

  /** Kafka's initializeCompletedFetch: the partition-level outcome; null when the data is not to be used. */
  private initializeCompletedFetch(c: CompletedFetch): CompletedFetch | null {
    const s = this.subscriptions.state(c.topic, c.partition)
    if (!s || s.paused || s.position !== c.fetchOffset || s.positionVersion !== c.positionVersion) return null
    const p = c.data
    if (p.errorCode === ErrorCode.NONE) {
      s.highWatermark = p.highWatermark
      s.lastStableOffset = p.lastStableOffset
      s.logStartOffset = p.logStartOffset
      if (p.preferredReadReplica >= 0 && p.preferredReadReplica !== s.preferredReadReplica) {
        s.preferredReadReplica = p.preferredReadReplica
        s.preferredReadReplicaExpiresAt = Date.now() + this.options.metadataMaxAgeMs
      }
      c.initialized = true
      return c
    }
    if (LEADER_ERRORS.has(p.errorCode)) {
      this.metadataStale = true
      s.preferredReadReplica = -1
      return null
    }
    if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      if (s.preferredReadReplica >= 0 && c.nodeId === s.preferredReadReplica) {
        // A follower behind the leader: ask the leader (Kafka's clearPreferredReadReplica).
        s.preferredReadReplica = -1
        return null
      }
      if (s.resetStrategy === 'none') {
        throw KafkaClientError.fromErrorCode(p.errorCode, `${c.topic}-${c.partition} at offset ${c.fetchOffset} (log ${p.logStartOffset}..${p.highWatermark})`)
      }
      s.seek(null)
      return null
    }
    if (p.errorCode === ErrorCode.UNKNOWN_SERVER_ERROR) return null
    throw KafkaClientError.fromErrorCode(p.errorCode, `fetch ${c.topic}-${c.partition}`)
  }

  /** Drops buffered data of partitions no longer assigned (after a rebalance or unassign). */
  clearBufferedDataForUnassignedPartitions(): void {
    for (let i = this.completedFetches.length - 1; i >= 0; i--) {
      const c = this.completedFetches[i]!
      if (!this.subscriptions.isAssigned(c.topic, c.partition)) this.completedFetches.splice(i, 1)
    }
    if (this.nextInLine && !this.subscriptions.isAssigned(this.nextInLine.topic, this.nextInLine.partition)) this.nextInLine.drain()
  }

  /** ListOffsets for partitions without a position, from their leaders, by their reset strategy. */
  async resetPositionsIfNeeded(): Promise<void> {
    const byLeader = new Map<number, TopicPartitionState[]>()
    for (const s of this.subscriptions.partitionsNeedingReset) {
      if (s.resetStrategy === 'none') throw new KafkaClientError('OFFSET_OUT_OF_RANGE', `${s.topic}-${s.partition} has no committed offset and auto.offset.reset is none`)
      const leader = this.client.metadata.leaderFor(s.topic, s.partition)
      if (!leader) {
        this.metadataStale = true
        continue
      }
      let list = byLeader.get(leader.nodeId)
      if (!list) byLeader.set(leader.nodeId, (list = []))
      list.push(s)
    }
    await Promise.all(
      [...byLeader].map(async ([nodeId, list]) => {
        const topics = [...new Set(list.map((s) => s.topic))]
        const versions = new Map(list.map((s) => [tpKey(s.topic, s.partition), s.positionVersion]))
        try {
          const res = await this.client.request(nodeId, listOffsetsCodec, (version) => ({
            replicaId: -1,
            isolationLevel: version >= 2 ? this.options.isolationLevel : 0,
            topics: topics.map((name) => ({
              name,
              partitions: list
                .filter((s) => s.topic === name)
                .map((s) => ({
                  partitionIndex: s.partition,
                  currentLeaderEpoch: -1,
                  timestamp: s.resetStrategy === 'latest' ? ListOffsetsTimestamp.LATEST : ListOffsetsTimestamp.EARLIEST,
                })),
            })),
            timeoutMs: 0,
          }))
          for (const t of res.topics) {
            for (const p of t.partitions) {
              const s = this.subscriptions.state(t.name, p.partitionIndex)
              // A seek while the request was out wins.
              if (!s || s.position !== null || s.positionVersion !== versions.get(tpKey(t.name, p.partitionIndex))) continue
              if (p.errorCode === ErrorCode.NONE) s.seek(p.offset >= 0n ? p.offset : 0n)
              else if (LEADER_ERRORS.has(p.errorCode)) this.metadataStale = true
              else throw KafkaClientError.fromErrorCode(p.errorCode, `ListOffsets ${t.name}-${p.partitionIndex}`)
            }
          }
        } catch (err) {
          if (!(err instanceof KafkaClientError) || !err.retriable) throw err
          this.metadataStale = true
        }
      }),
    )
  }

  /** Closes each node's session with a last (epoch -1) fetch, best effort. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.allSettled([...this.inFlight])
    this.wake()
    await Promise.all(
      [...this.sessions].map(async ([nodeId, handler]) => {
        if (handler.sessionId === 0 || !this.client.isReady(nodeId)) return
        handler.notifyClose()
        const data = handler.newBuilder().build()
        try {
          await this.client.request(nodeId, fetchCodec, (v) => fetchRequestFor(data, v, { ...this.options, maxWaitMs: 0 }), { timeoutMs: 2000 })
        } catch {
          // The broker drops idle sessions itself.
        }
      }),
    )
    this.sessions.clear()
  }
}
