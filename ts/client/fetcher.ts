/**
 * Kafka's Fetcher for assigned partitions (no group): each partition has a position; a `poll()`
 * sends one Fetch to each leader that has assigned partitions, through that node's
 * FetchSessionHandler (one session per broker), and returns the records after the positions, in
 * offset order per partition, advancing the positions past them.
 *
 * - Positions start from ListOffsets: `earliest` (-2), `latest` (-1) or an offset. A Fetch
 *   answered OFFSET_OUT_OF_RANGE resets an earliest/latest partition the same way; for an
 *   explicit offset it is an error.
 * - Control batches (transaction markers) are skipped; with READ_COMMITTED (isolation 1) the
 *   batches of the aborted transactions that the response lists are dropped too, up to their
 *   abort marker, as Kafka's CompletedFetch does.
 * - A response the session handler refuses (a session error, partitions that do not fit) is not
 *   used at all: the positions stay, and the next poll sends a full fetch, so no offset is
 *   skipped or repeated. A failed send does the same (and the node reconnects with backoff).
 *   Leader errors (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH, ...)
 *   refresh the metadata before the next poll.
 * - `atEnd()`: every partition's position reached the end the last response told (the high
 *   watermark, or the last stable offset with READ_COMMITTED).
 */
import { fetchCodec, type FetchResponse, type PartitionData } from '../protocol/apis/fetch.js'
import { ZERO_UUID } from '../protocol/apis/common.js'
import { listOffsetsCodec, ListOffsetsTimestamp } from '../protocol/apis/list-offsets.js'
import { CONTROL_FLAG_MASK, TRANSACTIONAL_FLAG_MASK } from '../protocol/batch-header.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { batchesOf, decodeBatch } from '../protocol/records.js'
import type { RecordHeader } from '../storage/types.js'
import { KafkaClientError } from './errors.js'
import { FETCH_TOPIC_IDS_FROM, FetchSessionHandler, fetchRequestFor, tpKey, type FetchRequestData } from './fetch-session-handler.js'
import type { NetworkClient } from './network-client.js'

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
  /** Called with each request's encoded size, per node (for measuring sessions). */
  onRequest?: (nodeId: number, bytes: number, data: FetchRequestData) => void
}

export interface ConsumerRecord {
  topic: string
  partition: number
  offset: bigint
  timestamp: bigint
  timestampType: 'CreateTime' | 'LogAppendTime'
  key: Buffer | null
  value: Buffer | null
  headers: RecordHeader[]
}

interface Assigned {
  topic: string
  partition: number
  start: OffsetSpec
  position: bigint | null
  /** The end the last response told (-1 unknown). */
  end: bigint
  logStartOffset: bigint
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
])

export class Fetcher {
  private readonly client: NetworkClient
  private readonly options: Required<Omit<FetcherOptions, 'onRequest'>> & Pick<FetcherOptions, 'onRequest'>
  private readonly assigned = new Map<string, Assigned>()
  private readonly sessions = new Map<number, FetchSessionHandler>()
  private metadataStale = true

  constructor(client: NetworkClient, options: FetcherOptions = {}) {
    this.client = client
    this.options = {
      isolationLevel: options.isolationLevel ?? 0,
      maxWaitMs: options.maxWaitMs ?? 500,
      minBytes: options.minBytes ?? 1,
      maxBytes: options.maxBytes ?? 52_428_800,
      partitionMaxBytes: options.partitionMaxBytes ?? 1_048_576,
      onRequest: options.onRequest,
    }
  }

  /** Assigns partitions of `topic` (all of them when `partitions` is null), starting at `start`. */
  async assign(topic: string, partitions: number[] | null, start: OffsetSpec): Promise<void> {
    const md = await this.client.refreshMetadata([topic])
    const t = md.topic(topic)
    if (!t || t.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${topic}`)
    const all = t.partitions.map((p) => p.partition)
    for (const p of partitions ?? all) {
      if (!all.includes(p)) throw new KafkaClientError('UNKNOWN_TOPIC_OR_PARTITION', `topic ${topic} has no partition ${p}`)
      this.assigned.set(tpKey(topic, p), { topic, partition: p, start, position: null, end: -1n, logStartOffset: -1n })
    }
    this.metadataStale = false
  }

  /** Stops fetching a partition (the next request of its node's session forgets it). */
  unassign(topic: string, partition: number): void {
    this.assigned.delete(tpKey(topic, partition))
  }

  /** Sets a partition's next offset (the next request of its session alters it). */
  seek(topic: string, partition: number, offset: bigint): void {
    const a = this.assigned.get(tpKey(topic, partition))
    if (!a) throw new KafkaClientError('UNKNOWN_TOPIC_OR_PARTITION', `${topic}-${partition} is not assigned`)
    a.position = offset
  }

  position(topic: string, partition: number): bigint | null {
    return this.assigned.get(tpKey(topic, partition))?.position ?? null
  }

  /** The session handler of each node fetched from. */
  get sessionHandlers(): ReadonlyMap<number, FetchSessionHandler> {
    return this.sessions
  }

  atEnd(): boolean {
    for (const a of this.assigned.values()) if (a.position === null || a.end < 0n || a.position < a.end) return false
    return true
  }

  /** One round of fetches; the records it got. */
  async poll(): Promise<ConsumerRecord[]> {
    if (this.metadataStale) await this.refresh()
    await this.resolvePositions()
    const byNode = new Map<number, Assigned[]>()
    for (const a of this.assigned.values()) {
      if (a.position === null) continue
      const leader = this.client.metadata.leaderFor(a.topic, a.partition)
      if (!leader) {
        this.metadataStale = true
        continue
      }
      let list = byNode.get(leader.nodeId)
      if (!list) byNode.set(leader.nodeId, (list = []))
      list.push(a)
    }
    // Sessions of nodes that lead none of our partitions any more are closed.
    for (const [nodeId, handler] of this.sessions) if (!byNode.has(nodeId) && handler.partitions.size > 0) byNode.set(nodeId, [])
    const out: ConsumerRecord[][] = await Promise.all([...byNode].map(([nodeId, list]) => this.fetchFrom(nodeId, list)))
    if (byNode.size === 0) await new Promise((resolve) => setTimeout(resolve, 100))
    return out.flat()
  }

  private async refresh(): Promise<void> {
    try {
      await this.client.refreshMetadata([...new Set([...this.assigned.values()].map((a) => a.topic))])
      this.metadataStale = false
    } catch (err) {
      if (!(err instanceof KafkaClientError) || !err.retriable) throw err
    }
  }

  private handlerFor(nodeId: number): FetchSessionHandler {
    let h = this.sessions.get(nodeId)
    if (!h) this.sessions.set(nodeId, (h = new FetchSessionHandler(nodeId)))
    return h
  }

  private async fetchFrom(nodeId: number, list: Assigned[]): Promise<ConsumerRecord[]> {
    const handler = this.handlerFor(nodeId)
    const builder = handler.newBuilder()
    const md = this.client.metadata
    for (const a of list) {
      const topicId = md.topic(a.topic)?.topicId ?? ZERO_UUID
      builder.add(
        { topic: a.topic, partition: a.partition },
        {
          topicId,
          fetchOffset: a.position!,
          logStartOffset: -1n,
          maxBytes: this.options.partitionMaxBytes,
          currentLeaderEpoch: md.partition(a.topic, a.partition)?.leaderEpoch ?? -1,
          lastFetchedEpoch: -1,
        },
      )
    }
    const data = builder.build()
    let version = -1
    let response: FetchResponse
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
      if (!(err instanceof KafkaClientError) || !err.retriable) throw err
      this.metadataStale = true
      return []
    }
    if (!handler.handleResponse(response, version)) {
      if (response.errorCode !== ErrorCode.NONE && response.errorCode !== ErrorCode.FETCH_SESSION_ID_NOT_FOUND && response.errorCode !== ErrorCode.INVALID_FETCH_SESSION_EPOCH) {
        this.metadataStale = true
      }
      return []
    }
    const records: ConsumerRecord[] = []
    for (const [key, p] of handler.responsePartitions(response, version)) {
      const a = this.assigned.get(key)
      if (!a || a.position === null) continue
      this.takePartition(a, p, records)
    }
    return records
  }

  private takePartition(a: Assigned, p: PartitionData, out: ConsumerRecord[]): void {
    if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      if (typeof a.start === 'bigint') throw KafkaClientError.fromErrorCode(p.errorCode, `${a.topic}-${a.partition} at offset ${a.position} (log ${p.logStartOffset}..${p.highWatermark})`)
      a.position = null
      return
    }
    if (LEADER_ERRORS.has(p.errorCode)) {
      this.metadataStale = true
      return
    }
    if (p.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(p.errorCode, `fetch ${a.topic}-${a.partition}`)
    a.end = this.options.isolationLevel === 1 ? p.lastStableOffset : p.highWatermark
    a.logStartOffset = p.logStartOffset
    const buf = p.records
    if (!buf || buf.length === 0) return
    // Aborted transactions (READ_COMMITTED): producer id -> first offsets, in offset order.
    const aborted = (p.abortedTransactions ?? []).slice().sort((x, y) => (x.firstOffset < y.firstOffset ? -1 : 1))
    const abortedProducers = new Set<bigint>()
    const readCommitted = this.options.isolationLevel === 1
    for (const { position, header } of batchesOf(buf)) {
      const lastOffset = header.baseOffset + BigInt(header.lastOffsetDelta)
      if (lastOffset < a.position!) continue
      const isControl = (header.attributes & CONTROL_FLAG_MASK) !== 0
      const isTransactional = (header.attributes & TRANSACTIONAL_FLAG_MASK) !== 0
      if (readCommitted) {
        while (aborted.length > 0 && aborted[0].firstOffset <= lastOffset) abortedProducers.add(aborted.shift()!.producerId)
      }
      const batch = decodeBatch(buf, position)
      if (isControl) {
        // An abort marker ends its producer's aborted transaction.
        if (readCommitted && batch.records[0]?.key && batch.records[0].key.length >= 4 && batch.records[0].key.readInt16BE(2) === 0) abortedProducers.delete(header.producerId)
      } else if (!(readCommitted && isTransactional && abortedProducers.has(header.producerId))) {
        for (const r of batch.records) {
          if (r.offset < a.position!) continue
          out.push({ topic: a.topic, partition: a.partition, offset: r.offset, timestamp: r.timestamp, timestampType: batch.timestampType, key: r.key, value: r.value, headers: r.headers })
        }
      }
      a.position = lastOffset + 1n
    }
  }

  /** ListOffsets for partitions without a position, from their leaders. */
  private async resolvePositions(): Promise<void> {
    const byLeader = new Map<number, Assigned[]>()
    for (const a of this.assigned.values()) {
      if (a.position !== null) continue
      if (typeof a.start === 'bigint') {
        a.position = a.start
        continue
      }
      const leader = this.client.metadata.leaderFor(a.topic, a.partition)
      if (!leader) {
        this.metadataStale = true
        continue
      }
      let list = byLeader.get(leader.nodeId)
      if (!list) byLeader.set(leader.nodeId, (list = []))
      list.push(a)
    }
    await Promise.all(
      [...byLeader].map(async ([nodeId, list]) => {
        const topics = [...new Set(list.map((a) => a.topic))]
        try {
          const res = await this.client.request(nodeId, listOffsetsCodec, (version) => ({
            replicaId: -1,
            isolationLevel: version >= 2 ? this.options.isolationLevel : 0,
            topics: topics.map((name) => ({
              name,
              partitions: list
                .filter((a) => a.topic === name)
                .map((a) => ({ partitionIndex: a.partition, currentLeaderEpoch: -1, timestamp: a.start === 'latest' ? ListOffsetsTimestamp.LATEST : ListOffsetsTimestamp.EARLIEST, maxNumOffsets: 1 })),
            })),
          }))
          for (const t of res.topics) {
            for (const p of t.partitions) {
              const a = this.assigned.get(tpKey(t.name, p.partitionIndex))
              if (!a) continue
              if (p.errorCode === ErrorCode.NONE) a.position = p.offset >= 0n ? p.offset : (p.oldStyleOffsets[0] ?? 0n)
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
