/**
 * Records of a Fetch response decoded by the Rust record crate (crates/record/src/fetch_index.rs,
 * through the binding's `indexFetchedRecords`): one native call per partition's data checks the
 * CRCs, decompresses and parses every whole batch into flat tables (layout in that module);
 * `FetchedRecord` objects are made from the tables only for the records handed out, and a
 * record's key, value and headers are sliced from the response (or from the decompressed arena)
 * only when read. With the `string` deserializer a key or value is decoded as UTF-8 straight from
 * those bytes: no Buffer is made for it.
 *
 * Without the binding (FERROLOG_NATIVE=0, or no .node for this platform) `nativeRecordIndexer()`
 * answers null and CompletedFetch decodes with the TypeScript twin (ts/protocol/records.ts).
 */
import { loadNative } from '../native/binding.js'
import type { RecordHeader } from '../protocol/record-types.js'
import type { ConsumerRecord, Deserializer } from './consumer-record.js'

export const BATCH_ENTRY_SIZE = 40
export const RECORD_ENTRY_SIZE = 40
export const HEADER_ENTRY_SIZE = 16
const TIMESTAMP_TYPE_MASK = 0x08

export interface FetchedRecordsIndex {
  batches: Buffer
  records: Buffer
  headers: Buffer
  arena: Buffer
  end: number
  errorCode?: string | null
  errorMessage?: string | null
  /** The records table as a DataView, made once per response on first use. */
  recordsView?: DataView
}

/** The binding's `indexFetchedRecords`: a batch whose records decompress past `maxDecompressedBytes` ends the walk with RECORD_TOO_LARGE. */
export type RecordIndexer = (records: Buffer, fromOffset: bigint, maxDecompressedBytes?: number) => FetchedRecordsIndex

/** The binding's indexer, or null where the binding (or this function of it) is absent. */
export function nativeRecordIndexer(): RecordIndexer | null {
  const native = loadNative() as unknown as { indexFetchedRecords?: RecordIndexer } | null
  return native?.indexFetchedRecords ?? null
}

/** One batch of the index (its fixed fields), shared by the records made from it. */
export interface IndexedBatch {
  topic: string
  partition: number
  baseOffset: bigint
  lastOffset: bigint
  producerId: bigint
  attributes: number
  timestampType: 'CreateTime' | 'LogAppendTime'
  firstRecord: number
  recordCount: number
  /** The records table, read in place. */
  records: DataView
  headers: FetchedRecordsIndex['headers']
  /** The records' bytes: the response's, or the arena of decompressed batches. */
  source: Buffer
  /** key.deserializer / value.deserializer is `string`. */
  keyString: boolean
  valueString: boolean
}

/** How a CompletedFetch hands out keys and values (consumer-record.ts). */
export interface Deserializers {
  key: Deserializer
  value: Deserializer
}

export const BUFFER_DESERIALIZERS: Deserializers = { key: 'buffer', value: 'buffer' }

const view = (b: Buffer) => new DataView(b.buffer, b.byteOffset, b.byteLength)

export function batchAt(index: FetchedRecordsIndex, records: Buffer, i: number, topic: string, partition: number, deserializers: Deserializers = BUFFER_DESERIALIZERS): IndexedBatch {
  const b = index.batches
  const at = i * BATCH_ENTRY_SIZE
  const attributes = b.readInt16LE(at + 24)
  return {
    topic,
    partition,
    baseOffset: b.readBigInt64LE(at),
    lastOffset: b.readBigInt64LE(at + 8),
    producerId: b.readBigInt64LE(at + 16),
    attributes,
    timestampType: attributes & TIMESTAMP_TYPE_MASK ? 'LogAppendTime' : 'CreateTime',
    firstRecord: b.readUInt32LE(at + 28),
    recordCount: b.readUInt32LE(at + 32),
    records: (index.recordsView ??= view(index.records)),
    headers: index.headers,
    source: b[at + 36] === 1 ? index.arena : records,
    keyString: deserializers.key === 'string',
    valueString: deserializers.value === 'string',
  }
}

export function batchCount(index: FetchedRecordsIndex): number {
  return index.batches.length / BATCH_ENTRY_SIZE
}

/** The offset of record `i` of a batch's index. */
export function recordOffset(batch: IndexedBatch, i: number): bigint {
  return batch.records.getBigInt64(i * RECORD_ENTRY_SIZE, true)
}

/** The key bytes of record `i` (null for a null key). */
export function recordKey(batch: IndexedBatch, i: number): Buffer | null {
  const at = i * RECORD_ENTRY_SIZE
  const len = batch.records.getInt32(at + 20, true)
  if (len < 0) return null
  const pos = batch.records.getInt32(at + 16, true)
  return batch.source.subarray(pos, pos + len)
}

/**
 * A record read from the index. It holds its batch and its place in the table, nothing more:
 * the offset and timestamp (bigints), key, value and headers are read from the table when first
 * asked for, so handing out a record the application only counts, or reads the value of, costs
 * one small object.
 */
export class FetchedRecord implements ConsumerRecord<Buffer | string, Buffer | string> {
  private readonly batch: IndexedBatch
  private readonly entry: number

  constructor(batch: IndexedBatch, i: number) {
    this.batch = batch
    this.entry = i * RECORD_ENTRY_SIZE
  }

  get topic(): string {
    return this.batch.topic
  }

  get partition(): number {
    return this.batch.partition
  }

  get offset(): bigint {
    return this.batch.records.getBigInt64(this.entry, true)
  }

  get timestamp(): bigint {
    return this.batch.records.getBigInt64(this.entry + 8, true)
  }

  get timestampType(): 'CreateTime' | 'LogAppendTime' {
    return this.batch.timestampType
  }

  /** The bytes at the table's (position, length) pair `at`: a Buffer over them, or their UTF-8 text. */
  private read(at: number, asString: boolean): Buffer | string | null {
    const r = this.batch.records
    const len = r.getInt32(at + 4, true)
    if (len < 0) return null
    const pos = r.getInt32(at, true)
    return asString ? this.batch.source.toString('utf8', pos, pos + len) : this.batch.source.subarray(pos, pos + len)
  }

  get key(): Buffer | string | null {
    return this.read(this.entry + 16, this.batch.keyString)
  }

  get value(): Buffer | string | null {
    return this.read(this.entry + 24, this.batch.valueString)
  }

  get headers(): RecordHeader[] {
    const r = this.batch.records
    const first = r.getUint32(this.entry + 32, true)
    const count = r.getUint32(this.entry + 36, true)
    const out: RecordHeader[] = []
    const h = this.batch.headers
    const source = this.batch.source
    for (let j = 0; j < count; j++) {
      const at = (first + j) * HEADER_ENTRY_SIZE
      const kp = h.readInt32LE(at)
      const kl = h.readInt32LE(at + 4)
      const vp = h.readInt32LE(at + 8)
      const vl = h.readInt32LE(at + 12)
      out.push({ key: source.toString('utf8', kp, kp + kl), value: vl < 0 ? null : source.subarray(vp, vp + vl) })
    }
    return out
  }

  /** The plain object (for logging, JSON and structured clone). */
  toJSON(): ConsumerRecord<Buffer | string, Buffer | string> {
    return { topic: this.topic, partition: this.partition, offset: this.offset, timestamp: this.timestamp, timestampType: this.timestampType, key: this.key, value: this.value, headers: this.headers }
  }
}
