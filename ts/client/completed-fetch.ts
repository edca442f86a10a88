/**
 * Kafka's CompletedFetch: one partition's data from a Fetch response, queued by the Fetcher and
 * parsed only when the application asks for records (`fetchRecords(max)`), a batch at a time,
 * so a large response costs nothing until read and a response read in parts keeps its place.
 *
 * - Batches come from BatchIterator: a partial batch at the end of the response (the broker cuts
 *   at max bytes) is ignored; the next fetch starts at the offset after the last whole batch.
 * - Each batch is decoded with its CRC checked (CORRUPT_MESSAGE otherwise) and decompressed.
 *   Its records may decompress to at most maxDecompressedBytes: past that the batch is
 *   MESSAGE_TOO_LARGE, inflated no further (a decompression bomb costs the reader that bound).
 * - Records before the fetch offset (a batch that starts earlier, compacted or compressed
 *   batches) are skipped; control batches are never returned.
 * - READ_COMMITTED: the response's abortedTransactions (producer id, first offset) mark where
 *   each aborted transaction starts; a transactional batch of a producer whose aborted
 *   transaction has started is dropped until that producer's abort marker (a control batch with
 *   key type 0), as Kafka's CompletedFetch does with its PriorityQueue.
 *
 * With an indexer (the Rust decoder, fetched-records.ts) the whole response is decoded in one
 * native call when first read and records are made from its tables as they are handed out;
 * without one, the TypeScript decoder decodes a batch at a time. Both follow the rules above.
 *
 * Keys and values are handed out as Buffers over the response, or as strings decoded from it
 * (the `string` deserializers, consumer-record.ts).
 *
 * `nextFetchOffset` is where the partition's position goes once the records returned so far are
 * consumed: past the last batch read (even one wholly skipped), not only past the last record.
 * `endOffset`, known when the response arrives from its batch headers alone, is where it goes once
 * the whole response is consumed: the Fetcher fetches the next data from there meanwhile.
 */
import type { PartitionData } from '../protocol/apis/fetch.js'
import { CONTROL_FLAG_MASK, LAST_OFFSET_DELTA_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, TRANSACTIONAL_FLAG_MASK } from '../protocol/batch-header.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { batchesOf, decodeBatch, type BatchIterator } from '../protocol/records.js'
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from '../protocol/compression.js'
import { OutputLimitError } from '../protocol/output-limit.js'
import type { LogRecord } from '../protocol/record-types.js'
import type { ConsumerRecord } from './consumer-record.js'
import { KafkaClientError } from './errors.js'
import {
  BUFFER_DESERIALIZERS,
  FetchedRecord,
  batchAt,
  batchCount,
  recordKey,
  recordOffset,
  type Deserializers,
  type FetchedRecordsIndex,
  type IndexedBatch,
  type RecordIndexer,
} from './fetched-records.js'

/** A record as a CompletedFetch hands it out: keys and values as its deserializers make them. */
export type DeserializedRecord = ConsumerRecord<Buffer | string, Buffer | string>

/** Kafka's ControlRecordType ABORT, the key's type field. */
const ABORT_MARKER = 0

/**
 * The offset after the last whole batch of a response's records, from the batch headers alone
 * (no CRC check: a batch that turns out corrupt stops the reading, and the data fetched from
 * here is then not used); null when there is no whole batch.
 */
export function offsetAfterWholeBatches(records: Buffer): bigint | null {
  let pos = 0
  let end: bigint | null = null
  while (records.length - pos >= RECORD_BATCH_OVERHEAD) {
    const size = LOG_OVERHEAD + records.readInt32BE(pos + LENGTH_OFFSET)
    if (size < RECORD_BATCH_OVERHEAD || size > records.length - pos) break
    end = records.readBigInt64BE(pos) + BigInt(records.readInt32BE(pos + LAST_OFFSET_DELTA_OFFSET)) + 1n
    pos += size
  }
  return end
}

export class CompletedFetch {
  readonly topic: string
  readonly partition: number
  /** The offset the request asked from. */
  readonly fetchOffset: bigint
  /** The partition's positionVersion when the request was built: a seek since makes this stale. */
  readonly positionVersion: number
  readonly data: PartitionData
  readonly sizeInBytes: number
  readonly nodeId: number
  /** Set by the Fetcher once the response's partition-level fields are taken in. */
  initialized = false
  /** No records left to return. */
  isConsumed = false
  nextFetchOffset: bigint
  /** Where the position goes once every record of the response is consumed; null: not known (no whole batch, an error). */
  readonly endOffset: bigint | null
  private readonly readCommitted: boolean
  private batches: BatchIterator | null = null
  private records: LogRecord[] = []
  private recordIndex = 0
  private timestampType: ConsumerRecord['timestampType'] = 'CreateTime'
  private readonly aborted: Array<{ producerId: bigint; firstOffset: bigint }>
  private readonly abortedProducers = new Set<bigint>()

  private readonly indexer: RecordIndexer | null
  private pendingError: KafkaClientError | null = null
  private index: FetchedRecordsIndex | null = null
  private batchIndex = 0
  private recordEnd = 0
  private current: IndexedBatch | null = null

  private readonly maxDecompressedBytes: number
  private readonly deserializers: Deserializers

  constructor(
    topic: string,
    partition: number,
    fetchOffset: bigint,
    positionVersion: number,
    data: PartitionData,
    readCommitted: boolean,
    nodeId: number,
    indexer: RecordIndexer | null = null,
    maxDecompressedBytes = DEFAULT_MAX_DECOMPRESSED_BYTES,
    deserializers: Deserializers = BUFFER_DESERIALIZERS,
  ) {
    this.indexer = indexer
    this.deserializers = deserializers
    this.maxDecompressedBytes = maxDecompressedBytes
    this.topic = topic
    this.partition = partition
    this.fetchOffset = fetchOffset
    this.positionVersion = positionVersion
    this.data = data
    this.sizeInBytes = data.records?.length ?? 0
    this.readCommitted = readCommitted
    this.nextFetchOffset = fetchOffset
    this.nodeId = nodeId
    const end = data.errorCode === ErrorCode.NONE && data.records ? offsetAfterWholeBatches(data.records) : null
    this.endOffset = end !== null && end > fetchOffset ? end : null
    this.aborted = readCommitted ? (data.abortedTransactions ?? []).slice().sort((x, y) => (x.firstOffset < y.firstOffset ? -1 : x.firstOffset > y.firstOffset ? 1 : 0)) : []
  }

  /**
   * The batch at `baseOffset` decompresses past maxDecompressedBytes: MESSAGE_TOO_LARGE (not
   * retriable, nothing of the batch inflated further). The position stays at the batch, so the
   * next poll meets it again; the application decides: seek past it, or a larger bound.
   */
  private tooLarge(baseOffset: bigint, cause: Error): KafkaClientError {
    return new KafkaClientError(
      'MESSAGE_TOO_LARGE',
      `${this.topic}-${this.partition} batch at offset ${baseOffset}: its records decompress to more than maxDecompressedBytes (${this.maxDecompressedBytes} bytes)`,
      { cause },
    )
  }

  /** Up to `max` records from where the last call stopped; [] when consumed. */
  fetchRecords(max: number): DeserializedRecord[] {
    if (this.pendingError) {
      const err = this.pendingError
      this.pendingError = null
      this.isConsumed = true
      throw err
    }
    const out: DeserializedRecord[] = []
    const buf = this.data.records
    if (!buf || this.isConsumed) {
      this.isConsumed = true
      return out
    }
    if (this.indexer) return this.fetchIndexed(buf, max)
    this.batches ??= batchesOf(buf)
    const keyString = this.deserializers.key === 'string'
    const valueString = this.deserializers.value === 'string'
    while (out.length < max) {
      if (this.recordIndex < this.records.length) {
        const r = this.records[this.recordIndex++]!
        const key = keyString && r.key ? r.key.toString('utf8') : r.key
        const value = valueString && r.value ? r.value.toString('utf8') : r.value
        out.push({ topic: this.topic, partition: this.partition, offset: r.offset, timestamp: r.timestamp, timestampType: this.timestampType, key, value, headers: r.headers })
        this.nextFetchOffset = r.offset + 1n
        continue
      }
      const next = this.batches.next()
      if (next.done) {
        this.isConsumed = true
        break
      }
      const { position, header } = next.value
      const lastOffset = header.baseOffset + BigInt(header.lastOffsetDelta)
      if (lastOffset < this.nextFetchOffset) continue
      let batch
      try {
        batch = decodeBatch(buf, position, { maxDecompressedBytes: this.maxDecompressedBytes })
      } catch (err) {
        const error =
          err instanceof OutputLimitError
            ? this.tooLarge(header.baseOffset, err)
            : new KafkaClientError('CORRUPT_MESSAGE', `${this.topic}-${this.partition} batch at offset ${header.baseOffset}: ${(err as Error).message}`, { cause: err })
        // The records before it are returned first; the error comes with the next call.
        if (out.length === 0) {
          this.isConsumed = true
          throw error
        }
        this.pendingError = error
        return out
      }
      const isControl = (header.attributes & CONTROL_FLAG_MASK) !== 0
      if (this.readCommitted) {
        while (this.aborted.length > 0 && this.aborted[0]!.firstOffset <= lastOffset) this.abortedProducers.add(this.aborted.shift()!.producerId)
      }
      this.records = []
      this.recordIndex = 0
      if (isControl) {
        const key = batch.records[0]?.key
        if (this.readCommitted && key && key.length >= 4 && key.readInt16BE(2) === ABORT_MARKER) this.abortedProducers.delete(header.producerId)
      } else if (!(this.readCommitted && (header.attributes & TRANSACTIONAL_FLAG_MASK) !== 0 && this.abortedProducers.has(header.producerId))) {
        const from = this.nextFetchOffset
        this.records = from > batch.baseOffset ? batch.records.filter((r) => r.offset >= from) : batch.records
        this.timestampType = batch.timestampType
      }
      // Past this batch whatever of it is returned: a skipped batch is not fetched again.
      if (this.records.length === 0) this.nextFetchOffset = lastOffset + 1n
      else this.pendingBatchEnd = lastOffset + 1n
    }
    if (this.recordIndex >= this.records.length && this.pendingBatchEnd > this.nextFetchOffset) this.nextFetchOffset = this.pendingBatchEnd
    return out
  }

  /** fetchRecords over the native decoder's tables. */
  private fetchIndexed(buf: Buffer, max: number): DeserializedRecord[] {
    const out: DeserializedRecord[] = []
    const index = (this.index ??= this.indexer!(buf, this.fetchOffset, this.maxDecompressedBytes))
    while (out.length < max) {
      const batch = this.current
      if (batch && this.recordIndex < this.recordEnd) {
        // Records before the fetch offset are only in a batch that starts before it: past them,
        // records are handed out without reading their offsets.
        if (this.skipBelowNextOffset) {
          while (this.recordIndex < this.recordEnd && recordOffset(batch, this.recordIndex) < this.nextFetchOffset) this.recordIndex++
          this.skipBelowNextOffset = false
          continue
        }
        const n = Math.min(this.recordEnd - this.recordIndex, max - out.length)
        for (let i = 0; i < n; i++) out.push(new FetchedRecord(batch, this.recordIndex++))
        this.nextFetchOffset = recordOffset(batch, this.recordIndex - 1) + 1n
        continue
      }
      if (batch) {
        if (batch.lastOffset + 1n > this.nextFetchOffset) this.nextFetchOffset = batch.lastOffset + 1n
        this.current = null
      }
      if (this.batchIndex >= batchCount(index)) {
        if (index.errorCode && out.length === 0) {
          this.isConsumed = true
          if (index.errorCode === 'RECORD_TOO_LARGE') throw this.tooLarge(buf.readBigInt64BE(index.end), new Error(index.errorMessage ?? ''))
          throw new KafkaClientError('CORRUPT_MESSAGE', `${this.topic}-${this.partition} after offset ${this.nextFetchOffset}: ${index.errorMessage}`)
        }
        if (!index.errorCode) this.isConsumed = true
        break
      }
      const b = batchAt(index, buf, this.batchIndex++, this.topic, this.partition, this.deserializers)
      if (b.lastOffset < this.nextFetchOffset) continue
      if (this.readCommitted) {
        while (this.aborted.length > 0 && this.aborted[0]!.firstOffset <= b.lastOffset) this.abortedProducers.add(this.aborted.shift()!.producerId)
      }
      this.current = b
      this.recordIndex = b.firstRecord
      this.recordEnd = b.firstRecord + b.recordCount
      this.skipBelowNextOffset = b.baseOffset < this.nextFetchOffset
      if ((b.attributes & CONTROL_FLAG_MASK) !== 0) {
        const key = b.recordCount > 0 ? recordKey(b, b.firstRecord) : null
        if (this.readCommitted && key && key.length >= 4 && key.readInt16BE(2) === ABORT_MARKER) this.abortedProducers.delete(b.producerId)
        this.recordEnd = this.recordIndex
      } else if (this.readCommitted && (b.attributes & TRANSACTIONAL_FLAG_MASK) !== 0 && this.abortedProducers.has(b.producerId)) {
        this.recordEnd = this.recordIndex
      }
    }
    if (this.current && this.recordIndex >= this.recordEnd && this.current.lastOffset + 1n > this.nextFetchOffset) this.nextFetchOffset = this.current.lastOffset + 1n
    return out
  }

  /** The current batch starts before nextFetchOffset: its records below it are skipped first. */
  private skipBelowNextOffset = false

  /** The end of the batch whose records are being returned (its last records may be compacted away). */
  private pendingBatchEnd = -1n

  /** Drops what is left (the partition was revoked, paused or seeked). */
  drain(): void {
    this.isConsumed = true
    this.records = []
    this.index = null
  }
}
