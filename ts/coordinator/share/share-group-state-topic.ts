/**
 * The internal topic `__share_group_state` (Kafka's share coordinator's log): where a share
 * partition's state lives, how its log is configured, and its two records, which the share
 * coordinator (./share-coordinator.ts) writes for every change of a share partition's state and
 * replays when it becomes the coordinator of a partition of the topic.
 *
 * A share partition is named by Kafka's `SharePartitionKey`, "groupId:topicId:partition" (the
 * topic id as Kafka's `Uuid.toString`, base64url without padding); its records are in the
 * partition `Utils.abs(key.hashCode()) % numPartitions` (ts/coordinator/partition-for.ts), as
 * Kafka's `ShareCoordinatorService.partitionFor`, so ferrolog and Kafka place each key alike.
 * share.coordinator.state.topic.num.partitions partitions (50), fixed when the topic is made;
 * share.coordinator.state.topic.replication.factor replicas in a cluster (3, capped by the brokers
 * alive). Its configs are Kafka 4.4's (`ShareCoordinatorService.shareGroupStateTopicConfigs`):
 * cleanup.policy=delete with retention.ms=-1, compression.type=producer, segment.bytes
 * share.coordinator.state.topic.segment.bytes. Not compacted: a share partition's ShareUpdate
 * records all have one key, and compaction would keep only the last of them, losing the batches
 * of the others; the log is kept small by pruning what the latest snapshots made redundant
 * instead (Kafka's `lastRedundantOffset`, ./share-coordinator-shard.ts). Kafka also records
 * share.coordinator.state.topic.min.isr as its min.insync.replicas; ferrolog has no such
 * setting, the topic follows min.insync.replicas.
 *
 * Records, framed as every coordinator record (ts/group/coordinator-record.ts: key = int16 record
 * type then the key struct, value = int16 version 0 then the value struct), with the codecs
 * generated from the kafka-share-coordinator jar's schemas:
 *
 *   type 0 ShareSnapshot  key groupId, topicId, partition
 *                         value snapshotEpoch, stateEpoch, leaderEpoch, startOffset,
 *                         deliveryCompleteCount, createTimestamp, writeTimestamp,
 *                         stateBatches [firstOffset, lastOffset, deliveryState, deliveryCount]
 *                         : the whole state of the share partition
 *   type 1 ShareUpdate    key likewise
 *                         value snapshotEpoch, leaderEpoch, startOffset, deliveryCompleteCount,
 *                         stateBatches: a change, merged into the snapshot on replay
 *
 * A ShareSnapshot with a null value (a tombstone) deletes the key (DeleteShareGroupState).
 */
import { encodeKey, encodeValue, keyReader, recordTypeOf, valueReader, type CoordinatorRecord } from '../../group/coordinator-record.js'
import { readShareSnapshotKey, shareSnapshotKeyCodec } from '../../protocol/messages/coordinator/share-snapshot-key.js'
import { readShareSnapshotValue, shareSnapshotValueCodec, type ShareSnapshotValue } from '../../protocol/messages/coordinator/share-snapshot-value.js'
import { readShareUpdateKey, shareUpdateKeyCodec } from '../../protocol/messages/coordinator/share-update-key.js'
import { readShareUpdateValue, shareUpdateValueCodec, type ShareUpdateValue } from '../../protocol/messages/coordinator/share-update-value.js'
import type { LogConfig } from '../../storage/types.js'
import { partitionFor } from '../partition-for.js'

export type { ShareSnapshotValue, ShareUpdateValue }

export const SHARE_GROUP_STATE_TOPIC = '__share_group_state'

/** share.coordinator.state.topic.num.partitions: Kafka's default. */
export const DEFAULT_SHARE_COORDINATOR_STATE_TOPIC_NUM_PARTITIONS = 50
/** share.coordinator.state.topic.segment.bytes: Kafka's default, 100 MiB. */
export const DEFAULT_SHARE_COORDINATOR_STATE_TOPIC_SEGMENT_BYTES = 100 * 1024 * 1024
/** share.coordinator.snapshot.update.records.per.snapshot: Kafka's default. */
export const DEFAULT_SNAPSHOT_UPDATE_RECORDS_PER_SNAPSHOT = 500

export const SHARE_SNAPSHOT_RECORD_TYPE = 0
export const SHARE_UPDATE_RECORD_TYPE = 1

/** The log config of `__share_group_state`, as Kafka's share coordinator makes it: deleted, never by time. */
export function shareGroupStateLogConfig(segmentBytes: number = DEFAULT_SHARE_COORDINATOR_STATE_TOPIC_SEGMENT_BYTES): Partial<LogConfig> {
  return { cleanupPolicy: ['delete'], retentionMs: -1, segmentBytes }
}

/** Kafka's `SharePartitionKey.asCoordinatorKey`: "groupId:topicId:partition". */
export function sharePartitionKey(groupId: string, topicId: Buffer, partition: number): string {
  return `${groupId}:${topicId.toString('base64url')}:${partition}`
}

/** The partition of `__share_group_state` holding a share partition's state (Kafka's `ShareCoordinatorService.partitionFor`). */
export function sharePartitionFor(groupId: string, topicId: Buffer, partition: number, numPartitions: number): number {
  return partitionFor(sharePartitionKey(groupId, topicId, partition), numPartitions)
}

export interface ShareStateKey {
  groupId: string
  topicId: Buffer
  partition: number
}

export function shareSnapshotRecord(key: ShareStateKey, value: ShareSnapshotValue): CoordinatorRecord {
  return { key: encodeKey(shareSnapshotKeyCodec, key), value: encodeValue(shareSnapshotValueCodec, value) }
}

export function shareUpdateRecord(key: ShareStateKey, value: ShareUpdateValue): CoordinatorRecord {
  return { key: encodeKey(shareUpdateKeyCodec, key), value: encodeValue(shareUpdateValueCodec, value) }
}

/** A tombstone of a share partition's state (Kafka writes it with the ShareSnapshot key). */
export function shareTombstoneRecord(key: ShareStateKey): CoordinatorRecord {
  return { key: encodeKey(shareSnapshotKeyCodec, key), value: null }
}

/** A record of `__share_group_state` as replay reads it; null for a record of another type (skipped, as Kafka's replay does). */
export type ShareStateRecord = { type: 'snapshot'; key: ShareStateKey; value: ShareSnapshotValue | null } | { type: 'update'; key: ShareStateKey; value: ShareUpdateValue | null }

export function decodeShareStateRecord(key: Buffer, value: Buffer | null): ShareStateRecord | null {
  const type = recordTypeOf(key)
  if (type === SHARE_SNAPSHOT_RECORD_TYPE) {
    return { type: 'snapshot', key: readShareSnapshotKey(keyReader(key), 0), value: value === null ? null : readShareSnapshotValue(valueReader(value), value.readInt16BE(0)) }
  }
  if (type === SHARE_UPDATE_RECORD_TYPE) {
    return { type: 'update', key: readShareUpdateKey(keyReader(key), 0), value: value === null ? null : readShareUpdateValue(valueReader(value), value.readInt16BE(0)) }
  }
  return null
}
