/**
 * The internal topic `__consumer_offsets`: where it is, how its log is configured, and the
 * records in it (Kafka's `OffsetCommitKey` and `OffsetCommitValue` schemas, which its
 * `GroupMetadataManager` writes and replays; here ./offset-store.ts does).
 *
 * offsets.topic.num.partitions partitions (50, as Kafka), fixed when the topic is made (an
 * existing topic keeps its count: ts/server/internal-topics.ts); a group's records all go to
 * the partition of Kafka's `partitionFor(groupId)` (ts/coordinator/partition-for.ts), whose
 * leader coordinates the group (./group-coordinator-service.ts). OFFSETS_PARTITION is the
 * default partition of the single-partition parts (a store, a runtime) used alone.
 *
 * Each commit is one record; one OffsetCommit request is one batch (all or nothing). The layout
 * follows Kafka's OffsetCommitKey v1 and OffsetCommitValue v3, big-endian, strings as int16
 * length + UTF-8 (length -1 = null):
 *
 *   key    version int16 = 1 | group string | topic string | partition int32
 *   value  version int16 = 3 | offset int64 | leaderEpoch int32 (-1 none) |
 *          metadata string (nullable) | commitTimestamp int64 (ms)
 *
 * A record with a null value (tombstone) deletes the key: OffsetDelete and DeleteGroups append
 * one per deleted offset, as one batch, as Kafka writes them to __consumer_offsets, so that what
 * was deleted stays deleted after a restart. Later records win on replay. The log is compacted
 * (`offsetsLogConfig`): the cleaner keeps each key's latest record and drops its tombstone once
 * delete.retention.ms has passed.
 */
import { Reader } from '../protocol/reader.js'
import { Writer } from '../protocol/writer.js'
import type { LogConfig } from '../storage/types.js'

export const OFFSETS_TOPIC = '__consumer_offsets'
export const OFFSETS_PARTITION = 0
const KEY_VERSION = 1
const VALUE_VERSION = 3
/** offset.metadata.max.bytes */
export const OFFSET_METADATA_MAX_BYTES = 4096

export const OFFSETS_TOPIC_PARTITION = { topic: OFFSETS_TOPIC, partition: OFFSETS_PARTITION } as const

/** offsets.topic.segment.bytes: Kafka's default, 100 MiB. */
export const DEFAULT_OFFSETS_TOPIC_SEGMENT_BYTES = 100 * 1024 * 1024

/**
 * The log config of `__consumer_offsets`, as Kafka's `GroupCoordinator.offsetsTopicConfigs`:
 * compacted (the broker's log cleaner keeps the latest record of each key, tombstones for
 * delete.retention.ms), segments of offsets.topic.segment.bytes. (Kafka also sets
 * compression.type=producer, which is what ferrolog stores anyway.)
 */
export function offsetsLogConfig(segmentBytes: number = DEFAULT_OFFSETS_TOPIC_SEGMENT_BYTES): Partial<LogConfig> {
  return { cleanupPolicy: ['compact'], segmentBytes }
}

export const OFFSETS_LOG_CONFIG: Partial<LogConfig> = offsetsLogConfig()

export interface CommittedOffset {
  offset: bigint
  leaderEpoch: number
  metadata: string | null
  commitTimestamp: bigint
}

export interface OffsetCommitEntry extends CommittedOffset {
  topic: string
  partition: number
}

export function encodeOffsetKey(group: string, topic: string, partition: number): Buffer {
  return new Writer(64).int16(KEY_VERSION).string(group).string(topic).int32(partition).finish()
}

export function decodeOffsetKey(key: Buffer): { group: string; topic: string; partition: number } {
  const r = new Reader(key)
  const version = r.int16()
  if (version !== KEY_VERSION) throw new Error(`unknown offset key version ${version}`)
  return { group: r.string(), topic: r.string(), partition: r.int32() }
}

export function encodeOffsetValue(v: CommittedOffset): Buffer {
  return new Writer(64).int16(VALUE_VERSION).int64(v.offset).int32(v.leaderEpoch).nullableString(v.metadata).int64(v.commitTimestamp).finish()
}

export function decodeOffsetValue(value: Buffer): CommittedOffset {
  const r = new Reader(value)
  const version = r.int16()
  if (version !== VALUE_VERSION) throw new Error(`unknown offset value version ${version}`)
  return { offset: r.int64(), leaderEpoch: r.int32(), metadata: r.nullableString(), commitTimestamp: r.int64() }
}

/** The records of a group's commits, one per offset. */
export function commitRecords(group: string, entries: readonly OffsetCommitEntry[]): Array<{ key: Buffer; value: Buffer; timestamp: bigint }> {
  return entries.map((e) => ({ key: encodeOffsetKey(group, e.topic, e.partition), value: encodeOffsetValue(e), timestamp: e.commitTimestamp }))
}
