/** Kafka's `ConsumerRecord`: one record as the consumer hands it out, with its topic and partition. */
import type { RecordHeader } from '../protocol/record-types.js'

/**
 * `K` and `V` are what key.deserializer and value.deserializer make of the bytes: Buffer by
 * default, string with `'string'`. A null key or value stays null whatever the deserializer, as
 * with Kafka's deserializers.
 */
export interface ConsumerRecord<K = Buffer, V = Buffer> {
  topic: string
  partition: number
  offset: bigint
  timestamp: bigint
  timestampType: 'CreateTime' | 'LogAppendTime'
  key: K | null
  value: V | null
  headers: RecordHeader[]
}

/**
 * key.deserializer / value.deserializer (consumer-config.ts): `buffer` hands out the bytes (a
 * Buffer over the fetched data, Kafka's ByteBufferDeserializer), `string` decodes them as UTF-8
 * (Kafka's StringDeserializer) straight from the fetched data, without a Buffer per record.
 */
export type Deserializer = 'buffer' | 'string'
