/** Kafka's `ConsumerRecord`: one record as the consumer hands it out, with its topic and partition. */
import type { RecordHeader } from '../protocol/record-types.js'

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
