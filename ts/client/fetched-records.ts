/**
 * Records of a Fetch response decoded by the Rust record crate (crates/record/src/fetch_index.rs,
 * through the binding's `indexFetchedRecords`): one native call per partition's data checks the
 * CRCs, decompresses and parses every whole batch into flat tables (layout in that module);
 * `FetchedRecord` objects are made from the tables only for the records handed out, and a
 * record's key, value and headers are sliced from the response (or from the decompressed arena)
 * only when read.
 *
 * Without the binding (FERROLOG_NATIVE=0, or no .node for this platform) `nativeRecordIndexer()`
 * answers null and CompletedFetch decodes with the TypeScript twin (ts/protocol/records.ts).
 */
import { loadNative } from '../native/binding.js'
import type { RecordHeader } from '../storage/types.js'
import type { ConsumerRecord } from './completed-fetch.js'

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
}

export type RecordIndexer = (records: Buffer, fromOffset: bigint) => FetchedRecordsIndex

/** The binding's indexer, or null where the binding (or this function of it) is absent. */
export function nativeRecordIndexer(): RecordIndexer | null {
  const native = loadNative() as unknown as { indexFetchedRecords?: RecordIndexer } | null
  return native?.indexFetchedRecords ?? null
}

/** One batch of the index (its fixed fields). */
export interface IndexedBatch {
  baseOffset: bigint
  lastOffset: bigint
  producerId: bigint
  attributes: number
  firstRecord: number
  recordCount: number
  /** The records' bytes: the response's, or the arena of decompressed batches. */
  source: Buffer
}

export function batchAt(index: FetchedRecordsIndex, records: Buffer, i: number): IndexedBatch {
  const b = index.batches
  const at = i * BATCH_ENTRY_SIZE
  return {
    baseOffset: b.readBigInt64LE(at),
    lastOffset: b.readBigInt64LE(at + 8),
    producerId: b.readBigInt64LE(at + 16),
    attributes: b.readInt16LE(at + 24),
    firstRecord: b.readUInt32LE(at + 28),
    recordCount: b.readUInt32LE(at + 32),
    source: b[at + 36] === 1 ? index.arena : records,
  }
}

export function batchCount(index: FetchedRecordsIndex): number {
  return index.batches.length / BATCH_ENTRY_SIZE
}

/** The offset of record `i` of the index. */
export function recordOffset(index: FetchedRecordsIndex, i: number): bigint {
  return index.records.readBigInt64LE(i * RECORD_ENTRY_SIZE)
}

/** The key bytes of record `i` (null for a null key). */
export function recordKey(index: FetchedRecordsIndex, source: Buffer, i: number): Buffer | null {
  const at = i * RECORD_ENTRY_SIZE
  const len = index.records.readInt32LE(at + 20)
  if (len < 0) return null
  const pos = index.records.readInt32LE(at + 16)
  return source.subarray(pos, pos + len)
}

/** A record read from the index: key, value and headers are sliced when first read. */
export class FetchedRecord implements ConsumerRecord {
  readonly topic: string
  readonly partition: number
  readonly offset: bigint
  readonly timestamp: bigint
  readonly timestampType: 'CreateTime' | 'LogAppendTime'
  private readonly index: FetchedRecordsIndex
  private readonly source: Buffer
  private readonly entry: number

  constructor(topic: string, partition: number, index: FetchedRecordsIndex, source: Buffer, attributes: number, i: number) {
    this.topic = topic
    this.partition = partition
    this.index = index
    this.source = source
    this.entry = i * RECORD_ENTRY_SIZE
    this.offset = index.records.readBigInt64LE(this.entry)
    this.timestamp = index.records.readBigInt64LE(this.entry + 8)
    this.timestampType = attributes & TIMESTAMP_TYPE_MASK ? 'LogAppendTime' : 'CreateTime'
  }

  private slice(at: number): Buffer | null {
    const r = this.index.records
    const len = r.readInt32LE(at + 4)
    if (len < 0) return null
    const pos = r.readInt32LE(at)
    return this.source.subarray(pos, pos + len)
  }

  get key(): Buffer | null {
    return this.slice(this.entry + 16)
  }

  get value(): Buffer | null {
    return this.slice(this.entry + 24)
  }

  get headers(): RecordHeader[] {
    const r = this.index.records
    const first = r.readUInt32LE(this.entry + 32)
    const count = r.readUInt32LE(this.entry + 36)
    const out: RecordHeader[] = []
    const h = this.index.headers
    for (let j = 0; j < count; j++) {
      const at = (first + j) * HEADER_ENTRY_SIZE
      const kp = h.readInt32LE(at)
      const kl = h.readInt32LE(at + 4)
      const vp = h.readInt32LE(at + 8)
      const vl = h.readInt32LE(at + 12)
      out.push({ key: this.source.toString('utf8', kp, kp + kl), value: vl < 0 ? null : this.source.subarray(vp, vp + vl) })
    }
    return out
  }

  /** The plain object (for logging, JSON and structured clone). */
  toJSON(): ConsumerRecord {
    return { topic: this.topic, partition: this.partition, offset: this.offset, timestamp: this.timestamp, timestampType: this.timestampType, key: this.key, value: this.value, headers: this.headers }
  }
}
