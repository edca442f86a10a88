/**
 * Kafka's ShareCompletedFetch and ShareFetchBuffer: one partition's answer to a ShareFetch, and
 * the queue of them the application's polls read from.
 *
 * A ShareFetch answer has the partition's record batches and, apart, the offset ranges this
 * member acquired (AcquiredRecords: first and last offset, delivery count). The batches are
 * decoded as a Fetch's are (completed-fetch.ts, the native decoder when present); only records
 * whose offsets were acquired are handed out, each with the delivery count of its range (a batch
 * may hold records another member acquired, or that were already settled). An acquired offset
 * with no record (a control record, a transaction marker, a compacted record) is acknowledged as
 * a gap (type 0) so that the broker does not wait for it.
 */
import type { PartitionData as FetchPartitionData } from '../protocol/apis/fetch.js'
import type { AcquiredRecords } from '../protocol/messages/share-fetch-response.js'
import { CompletedFetch } from './completed-fetch.js'
import type { ConsumerRecord } from './consumer-record.js'
import type { RecordIndexer } from './fetched-records.js'
import type { TopicIdPartition } from './share-session-handler.js'

/** A record as a share consumer hands it out: a ConsumerRecord and its delivery count (1 the first time). */
export interface ShareConsumerRecord extends ConsumerRecord {
  deliveryCount: number
}

export class ShareCompletedFetch {
  isConsumed = false
  /** Acquired offsets with no record, to acknowledge as gaps. */
  readonly gaps: bigint[] = []
  private readonly inner: CompletedFetch | null
  private readonly ranges: AcquiredRecords[]
  private rangeIndex = 0
  /** The lowest acquired offset not yet handed out nor counted as a gap. */
  private nextAcquired: bigint

  constructor(
    readonly tp: TopicIdPartition,
    readonly nodeId: number,
    records: Buffer | null,
    acquired: readonly AcquiredRecords[],
    indexer: RecordIndexer | null,
    maxDecompressedBytes: number,
  ) {
    this.ranges = [...acquired].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
    const first = this.ranges[0]?.firstOffset ?? 0n
    this.nextAcquired = first
    // The Fetch partition CompletedFetch decodes: only errorCode, records and abortedTransactions are read.
    const data: FetchPartitionData = {
      partitionIndex: tp.partition,
      errorCode: 0,
      highWatermark: -1n,
      lastStableOffset: -1n,
      logStartOffset: -1n,
      divergingEpoch: { epoch: -1, endOffset: -1n },
      currentLeader: { leaderId: -1, leaderEpoch: -1 },
      snapshotId: { endOffset: -1n, epoch: -1 },
      abortedTransactions: null,
      preferredReadReplica: -1,
      records,
    }
    this.inner = this.ranges.length > 0 && records ? new CompletedFetch(tp.topic, tp.partition, first, 0, data, false, nodeId, indexer, maxDecompressedBytes) : null
    if (!this.inner) this.finish()
  }

  /** The acquired offsets from nextAcquired up to `below` (exclusive, within acquired ranges) are gaps. */
  private gapsBelow(below: bigint): void {
    while (this.rangeIndex < this.ranges.length) {
      const r = this.ranges[this.rangeIndex]!
      if (this.nextAcquired < r.firstOffset) this.nextAcquired = r.firstOffset
      const end = below <= r.lastOffset ? below : r.lastOffset + 1n
      for (let o = this.nextAcquired; o < end; o++) this.gaps.push(o)
      if (end > this.nextAcquired) this.nextAcquired = end
      if (below <= r.lastOffset) return
      this.rangeIndex++
    }
  }

  private finish(): void {
    this.gapsBelow(BigInt('0x7fffffffffffffff'))
    this.isConsumed = true
  }

  /** Up to `max` acquired records, in offset order; [] once consumed. */
  fetchRecords(max: number): ShareConsumerRecord[] {
    const out: ShareConsumerRecord[] = []
    while (!this.isConsumed && out.length < max) {
      // The inner fetch decodes with the default (Buffer) deserializers.
      const batch = this.inner!.fetchRecords(max - out.length) as ConsumerRecord[]
      if (batch.length === 0 && this.inner!.isConsumed) {
        this.finish()
        break
      }
      for (const r of batch) {
        const offset = r.offset
        this.gapsBelow(offset)
        const range = this.ranges[this.rangeIndex]
        if (!range || offset < range.firstOffset || offset < this.nextAcquired) continue
        this.nextAcquired = offset + 1n
        out.push({
          topic: r.topic,
          partition: r.partition,
          offset,
          timestamp: r.timestamp,
          timestampType: r.timestampType,
          key: r.key,
          value: r.value,
          headers: r.headers,
          deliveryCount: range.deliveryCount,
        })
      }
      if (this.inner!.isConsumed) this.finish()
    }
    return out
  }
}

/** The answers not yet handed out, and a wait for the next one. */
export class ShareFetchBuffer {
  private readonly queue: ShareCompletedFetch[] = []
  private waiters: Array<() => void> = []

  add(fetch: ShareCompletedFetch): void {
    this.queue.push(fetch)
    this.wakeup()
  }

  /** Ends every wait (data came, the assignment changed, the consumer closes). */
  wakeup(): void {
    const w = this.waiters
    this.waiters = []
    for (const resolve of w) resolve()
  }

  /** Resolves at the next add or wakeup, or after `ms`. */
  awaitChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms))
      this.waiters.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  /** The next answer with records or gaps left; consumed ones are dropped. */
  peek(): ShareCompletedFetch | undefined {
    return this.queue[0]
  }

  poll(): void {
    this.queue.shift()
  }

  hasDataFor(nodeId: number): boolean {
    return this.queue.some((f) => f.nodeId === nodeId && !f.isConsumed)
  }

  /** Drops everything (the records stay acquired until released or their lock ends). */
  drain(): ShareCompletedFetch[] {
    return this.queue.splice(0)
  }
}
