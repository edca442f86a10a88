/**
 * Kafka's RecordAccumulator: a queue of ProducerBatches per partition, filled by `send` and
 * emptied by the Sender.
 *
 *   - append: the record joins the partition's last batch while that stays within batch.size,
 *     else opens a new one (a record above batch.size gets a batch of its own); with compression
 *     batch.size counts the estimated compressed bytes, from the ratio the topic's batches had
 *     so far (Kafka's CompressionRatioEstimator: starts at 1, moves towards the observed ratio by
 *     0.005 when it improves and at least 0.05 when it worsens, times 1.05);
 *   - buffer.memory: the estimated bytes of every record not yet completed (queued or in flight)
 *     stay within it; `hasRoom` tells whether a record fits now, and `onFree` hears when a
 *     completed batch gave its bytes back;
 *   - ready: a partition's first batch may go when it is full (or not the last one), linger.ms
 *     has passed since it was opened, a flush or close is under way, or sends wait for memory;
 *     a batch to retry only after its backoff;
 *   - drain: for one node, the first batch of each partition it leads (one per partition per
 *     request, as Kafka's Produce v3+ requires), up to max.request.size, skipping partitions the
 *     Sender holds back (`canDrain`: ordering, a transaction not yet told of the partition);
 *   - reenqueue: a batch to retry goes back to the front of its queue, in sequence order;
 *   - expire: batches still queued delivery.timeout.ms after they were opened fail.
 */
import { KafkaClientError } from './errors.js'
import { ProducerBatch, RECORD_BATCH_OVERHEAD, type AppendedRecord, type RecordCallback } from './producer-batch.js'

export interface TopicPartitionQueue {
  topic: string
  partition: number
  batches: ProducerBatch[]
}

export interface AccumulatorConfig {
  batchSize: number
  /** Whether batches are compressed: batch.size then counts estimated compressed bytes. */
  compressed: boolean
  lingerMs: number
  bufferMemory: number
  deliveryTimeoutMs: number
}

const tpKey = (topic: string, partition: number) => `${topic}\u0000${partition}`

/** Kafka's CompressionRatioEstimator: margin on the estimate, and its steps towards the observed ratio. */
const COMPRESSION_RATE_ESTIMATION_FACTOR = 1.05
const COMPRESSION_RATIO_IMPROVING_STEP = 0.005
const COMPRESSION_RATIO_DETERIORATE_STEP = 0.05

export class RecordAccumulator {
  private readonly queues = new Map<string, TopicPartitionQueue>()
  private readonly incomplete = new Set<ProducerBatch>()
  /** Per topic, the estimated compressed size over the uncompressed size (1 without compression). */
  private readonly ratios = new Map<string, number>()
  private nextBatchId = 0
  private used = 0
  private flushes = 0
  closing = false
  /** Sends wait for memory: batches go at once, to free it. */
  memoryWaiters = false
  onFree: () => void = () => {}

  constructor(private readonly config: AccumulatorConfig) {}

  get usedBytes(): number {
    return this.used
  }

  hasRoom(bytes: number): boolean {
    return this.used + bytes <= this.config.bufferMemory
  }

  /**
   * The bytes a batch of `estimatedBytes` uncompressed takes on the wire, as Kafka estimates it:
   * times the topic's compression ratio (learnt from the batches built, starting at 1) and 1.05.
   */
  wireBytes(topic: string, estimatedBytes: number): number {
    if (!this.config.compressed) return estimatedBytes
    return estimatedBytes * (this.ratios.get(topic) ?? 1) * COMPRESSION_RATE_ESTIMATION_FACTOR
  }

  /** A batch of `topic` was built: its observed compression ratio moves the estimate (Kafka's steps). */
  observeCompression(topic: string, uncompressed: number, compressed: number): void {
    if (!this.config.compressed || uncompressed <= 0) return
    const observed = compressed / uncompressed
    const current = this.ratios.get(topic) ?? 1
    if (observed > current) this.ratios.set(topic, Math.max(current + COMPRESSION_RATIO_DETERIORATE_STEP, observed))
    else if (observed < current) this.ratios.set(topic, Math.max(current - COMPRESSION_RATIO_IMPROVING_STEP, observed))
  }

  /** Appends a record of `size` estimated bytes; true when it filled a batch (the Sender may send). */
  append(topic: string, partition: number, record: AppendedRecord, size: number, callback: RecordCallback, nowMs: number): boolean {
    const key = tpKey(topic, partition)
    let q = this.queues.get(key)
    if (q === undefined) this.queues.set(key, (q = { topic, partition, batches: [] }))
    const last = q.batches.at(-1)
    if (last === undefined || last.inFlight || last.hasSequence || last.attempts > 0 || this.wireBytes(topic, last.estimatedBytes + size) > this.config.batchSize) {
      const batch = new ProducerBatch(topic, partition, nowMs, this.nextBatchId++)
      q.batches.push(batch)
      this.incomplete.add(batch)
      batch.append(record, size, callback)
      this.used += size
      // the batch before it is now full, or this one is already
      return last !== undefined || this.wireBytes(topic, batch.estimatedBytes) >= this.config.batchSize
    }
    last.append(record, size, callback)
    this.used += size
    return this.wireBytes(topic, last.estimatedBytes) >= this.config.batchSize
  }

  /** A batch completed or failed for good: its bytes are free. */
  deallocate(batch: ProducerBatch): void {
    if (!this.incomplete.delete(batch)) return
    this.used -= batch.estimatedBytes - RECORD_BATCH_OVERHEAD
    this.onFree()
  }

  /** The partitions with batches, in a stable order. */
  partitions(): IterableIterator<TopicPartitionQueue> {
    return this.queues.values()
  }

  /** Whether the first batch of `q` may be sent now; else ms until it may (Infinity: never by time). */
  readyIn(q: TopicPartitionQueue, nowMs: number): number {
    const first = q.batches[0]
    if (first === undefined || first.inFlight) return Infinity
    if (first.attempts > 0) return Math.max(0, first.retryAt - nowMs)
    const full = q.batches.length > 1 || this.wireBytes(q.topic, first.estimatedBytes) >= this.config.batchSize
    if (full || this.flushes > 0 || this.closing || this.memoryWaiters) return 0
    return Math.max(0, first.createdMs + this.config.lingerMs - nowMs)
  }

  /**
   * The batches to send to one node: the first batch of each of `queues` (the partitions it
   * leads) that is ready and that `canDrain` lets go, while their estimated total stays within
   * `maxBytes` (the first always goes).
   */
  drain(queues: readonly TopicPartitionQueue[], maxBytes: number, nowMs: number, canDrain: (q: TopicPartitionQueue, first: ProducerBatch) => boolean): ProducerBatch[] {
    const out: ProducerBatch[] = []
    let bytes = 0
    for (const q of queues) {
      const first = q.batches[0]
      if (first === undefined || this.readyIn(q, nowMs) > 0 || !canDrain(q, first)) continue
      const wire = first.builtSize ?? this.wireBytes(q.topic, first.estimatedBytes)
      if (out.length > 0 && bytes + wire > maxBytes) continue
      q.batches.shift()
      first.inFlight = true
      bytes += wire
      out.push(first)
      if (q.batches.length === 0) this.queues.delete(tpKey(q.topic, q.partition))
    }
    return out
  }

  /** Puts a batch to retry back at the front of its partition's queue, in sequence order. */
  reenqueue(batch: ProducerBatch): void {
    batch.inFlight = false
    const key = tpKey(batch.topic, batch.partition)
    let q = this.queues.get(key)
    if (q === undefined) this.queues.set(key, (q = { topic: batch.topic, partition: batch.partition, batches: [] }))
    let at = 0
    while (at < q.batches.length && q.batches[at]!.hasSequence && batch.hasSequence && q.batches[at]!.baseSequence < batch.baseSequence) at++
    if (!batch.hasSequence) while (at < q.batches.length && q.batches[at]!.attempts > 0) at++
    q.batches.splice(at, 0, batch)
  }

  /** Replaces a split batch by its halves, at the front of its queue. */
  reenqueueSplit(batch: ProducerBatch, parts: readonly ProducerBatch[]): void {
    this.incomplete.delete(batch)
    for (const p of parts) this.incomplete.add(p)
    for (const p of [...parts].reverse()) {
      const key = tpKey(p.topic, p.partition)
      let q = this.queues.get(key)
      if (q === undefined) this.queues.set(key, (q = { topic: p.topic, partition: p.partition, batches: [] }))
      q.batches.unshift(p)
    }
  }

  /** Removes and returns the queued (not in-flight) batches opened delivery.timeout.ms ago or more. */
  expire(nowMs: number): ProducerBatch[] {
    const out: ProducerBatch[] = []
    for (const [key, q] of this.queues) {
      while (q.batches.length > 0 && nowMs - q.batches[0]!.createdMs >= this.config.deliveryTimeoutMs) out.push(q.batches.shift()!)
      if (q.batches.length === 0) this.queues.delete(key)
    }
    return out
  }

  /** Removes and returns every queued batch (abort, forced close). */
  drainAll(): ProducerBatch[] {
    const out: ProducerBatch[] = []
    for (const q of this.queues.values()) out.push(...q.batches)
    this.queues.clear()
    return out
  }

  /** The queued batches of a partition (sequence bookkeeping). */
  queued(topic: string, partition: number): readonly ProducerBatch[] {
    return this.queues.get(tpKey(topic, partition))?.batches ?? []
  }

  hasQueued(): boolean {
    return this.queues.size > 0
  }

  get incompleteCount(): number {
    return this.incomplete.size
  }

  /** Waits until every batch opened before the call completed or failed (Kafka's awaitFlushCompletion). */
  async flush(onStart: () => void): Promise<void> {
    const upTo = this.nextBatchId - 1
    this.flushes++
    try {
      onStart()
      for (;;) {
        const waiting = [...this.incomplete].filter((b) => b.id <= upTo)
        if (waiting.length === 0) return
        await Promise.all(waiting.map((b) => b.whenDone()))
      }
    } finally {
      this.flushes--
    }
  }

  /** Fails every queued batch with `error` (not those in flight). */
  abortQueued(error: KafkaClientError): void {
    for (const b of this.drainAll()) {
      b.fail(error)
      this.deallocate(b)
    }
  }
}
