/**
 * The record format's values as TypeScript sees them (Kafka's `Record`, `Header` and
 * `RecordBatch` of org.apache.kafka.common.record, decoded): what the decoder (records.ts) gives
 * and the batch builder (batch-builder.ts) takes. int64 values are `bigint`.
 */

export interface RecordHeader {
  key: string
  value: Buffer | null
}

/** One decoded record, offset and timestamp absolute. */
export interface LogRecord {
  offset: bigint
  timestamp: bigint
  key: Buffer | null
  value: Buffer | null
  headers: RecordHeader[]
}

export type CompressionType = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd'

/** One decoded record batch with its records. */
export interface RecordBatch {
  baseOffset: bigint
  lastOffset: bigint
  partitionLeaderEpoch: number
  compression: CompressionType
  timestampType: 'CreateTime' | 'LogAppendTime'
  isTransactional: boolean
  isControl: boolean
  baseTimestamp: bigint
  maxTimestamp: bigint
  producerId: bigint
  producerEpoch: number
  baseSequence: number
  /** The batch's size on disk. */
  sizeInBytes: number
  records: LogRecord[]
}

/** A record as a library user hands it to `Log.append`. */
export interface ProducerRecord {
  key?: Buffer | string | null
  value: Buffer | string | null
  headers?: Array<{ key: string; value: Buffer | string | null }>
  /** Milliseconds since the epoch; default now. */
  timestamp?: bigint | number
}
