/**
 * Kafka's ProducerBatch: the records of one partition that go to the broker together as one
 * magic-2 record batch, with each record's promise. The batch is built (batch-builder.ts,
 * compressed by the Rust binding when it loads, else by the TypeScript codecs) when the Sender
 * first sends it, and resent as built on a retry, with the same producer id, epoch and sequence,
 * so that the broker recognizes a batch it already appended. It is built again only when its
 * sequence changes (an earlier batch of the partition failed for good) or it is split.
 *
 * `estimatedBytes` is what buffer.memory and batch.size count: the records' uncompressed size
 * (key, value, headers and a record's overhead), an upper bound of what the batch takes.
 */
import { buildBatch } from '../protocol/batch-builder.js'
import type { Compressor } from '../protocol/compression.js'
import type { CompressionType, ProducerRecord } from '../protocol/record-types.js'
import type { KafkaClientError } from './errors.js'

/** Where a record was written (Kafka's RecordMetadata). */
export interface RecordMetadata {
  topic: string
  partition: number
  /** -1 with acks=0. */
  offset: bigint
  /** The record's CreateTime, or the broker's LogAppendTime for such a topic. */
  timestamp: bigint
}

/** A record as the producer keeps it: its timestamp set at send. */
export interface AppendedRecord extends ProducerRecord {
  timestamp: number | bigint
}

export interface RecordCallback {
  resolve(metadata: RecordMetadata): void
  reject(error: KafkaClientError): void
}

/** A batch's record overhead in the estimate (varints and attributes of a record, upper bound). */
const RECORD_OVERHEAD = 21
/** Kafka's RECORD_BATCH_OVERHEAD (the v2 header). */
export const RECORD_BATCH_OVERHEAD = 61

const byteLength = (x: Buffer | string | null | undefined): number => (x == null ? 0 : typeof x === 'string' ? Buffer.byteLength(x) : x.length)

/** An upper bound of a record's size in a batch, uncompressed. */
export function estimateRecordSize(r: ProducerRecord): number {
  let n = RECORD_OVERHEAD + byteLength(r.key) + byteLength(r.value)
  const headers = r.headers
  if (headers !== undefined) for (const h of headers) n += 10 + Buffer.byteLength(h.key) + byteLength(h.value)
  return n
}

export class ProducerBatch {
  readonly records: AppendedRecord[] = []
  readonly callbacks: RecordCallback[] = []
  estimatedBytes = RECORD_BATCH_OVERHEAD
  attempts = 0
  /** When the batch may be sent again after a retriable error (retry.backoff.ms). */
  retryAt = 0
  /** The sequence of the first record, -1 before the batch was first sent (or without idempotence). */
  baseSequence = -1
  /** The sequence the request in flight carried (to tell an adjusted batch from a stale answer). */
  sentSequence = -1
  producerId = -1n
  producerEpoch = -1
  isTransactional = false
  inFlight = false
  /** The last attempt failed in a way that leaves unknown whether the broker appended it. */
  unknownOutcome = false
  private built: Buffer | null = null
  private done = false
  private readonly waiters: Array<() => void> = []

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly createdMs: number,
    /** Increasing in creation order (the halves of a split batch keep its id): what flush waits for. */
    readonly id: number,
  ) {}

  /** The built batch's size, once built. */
  get builtSize(): number | undefined {
    return this.built?.length
  }

  get recordCount(): number {
    return this.records.length
  }

  get isDone(): boolean {
    return this.done
  }

  get hasSequence(): boolean {
    return this.baseSequence >= 0
  }

  append(record: AppendedRecord, size: number, callback: RecordCallback): void {
    this.records.push(record)
    this.callbacks.push(callback)
    this.estimatedBytes += size
  }

  /** Gives the batch its producer id, epoch and sequence (a change rebuilds it). */
  setProducerState(producerId: bigint, producerEpoch: number, baseSequence: number, isTransactional: boolean): void {
    if (this.producerId !== producerId || this.producerEpoch !== producerEpoch || this.baseSequence !== baseSequence || this.isTransactional !== isTransactional) this.built = null
    this.producerId = producerId
    this.producerEpoch = producerEpoch
    this.baseSequence = baseSequence
    this.isTransactional = isTransactional
  }

  /** The record batch's bytes (built once per producer state). */
  build(compression: CompressionType, compressor: Compressor | undefined, checksum?: (data: Uint8Array) => number): Buffer {
    this.built ??= buildBatch(this.records, {
      compression,
      compressor,
      checksum,
      producerId: this.producerId,
      producerEpoch: this.producerEpoch,
      baseSequence: this.baseSequence,
      isTransactional: this.isTransactional,
    })
    return this.built
  }

  /** Two batches of the same records, halves in order, with the sequence range split between them. */
  split(): [ProducerBatch, ProducerBatch] {
    const half = Math.ceil(this.records.length / 2)
    const parts: [ProducerBatch, ProducerBatch] = [new ProducerBatch(this.topic, this.partition, this.createdMs, this.id), new ProducerBatch(this.topic, this.partition, this.createdMs, this.id)]
    this.records.forEach((r, i) => parts[i < half ? 0 : 1].append(r, estimateRecordSize(r), this.callbacks[i]!))
    for (const [i, p] of parts.entries()) {
      p.attempts = this.attempts
      if (this.hasSequence) p.setProducerState(this.producerId, this.producerEpoch, this.baseSequence + (i === 0 ? 0 : half), this.isTransactional)
    }
    this.done = true
    this.settle()
    return parts
  }

  /** Resolves every record's promise: offsets from `baseOffset`, timestamps from `logAppendTime` (-1: the records'). */
  complete(baseOffset: bigint, logAppendTime: bigint): void {
    if (this.done) return
    this.done = true
    for (let i = 0; i < this.records.length; i++) {
      const r = this.records[i]!
      this.callbacks[i]!.resolve({
        topic: this.topic,
        partition: this.partition,
        offset: baseOffset < 0n ? -1n : baseOffset + BigInt(i),
        timestamp: logAppendTime >= 0n ? logAppendTime : BigInt(r.timestamp),
      })
    }
    this.settle()
  }

  /** Rejects every record's promise with `error` (or `errorOf(index)`). */
  fail(error: KafkaClientError, errorOf?: (index: number) => KafkaClientError | undefined): void {
    if (this.done) return
    this.done = true
    for (let i = 0; i < this.callbacks.length; i++) this.callbacks[i]!.reject(errorOf?.(i) ?? error)
    this.settle()
  }

  /** Resolves once the batch completed or failed (never rejects). */
  whenDone(): Promise<void> {
    if (this.done) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  private settle(): void {
    for (const w of this.waiters.splice(0)) w()
  }
}
