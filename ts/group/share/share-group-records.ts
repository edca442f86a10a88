/**
 * A share group's state as Kafka's coordinator records in `__consumer_offsets` (Kafka's
 * `GroupCoordinatorRecordHelpers` and the share-group half of `GroupMetadataManager.replay`),
 * with the codecs generated from the group-coordinator jar's schemas
 * (ts/protocol/messages/coordinator), framed as ../coordinator-record.ts says (the int16 record
 * type then the key; the int16 version then the value; a null value is a tombstone):
 *
 *  10 ShareGroupMemberMetadata            group, member → rack, client id and host, topic names
 *  11 ShareGroupMetadata                  group → group epoch
 *  12 ShareGroupTargetAssignmentMetadata  group → target assignment epoch
 *  13 ShareGroupTargetAssignmentMember    group, member → its target partitions
 *  14 ShareGroupCurrentMemberAssignment   group, member → epochs, state (0), assigned partitions
 *  15 ShareGroupStatePartitionMetadata    group → the topics whose share state is initialized
 *
 * Replayed in log order, they rebuild every share group as it was written.
 */
import { shareGroupMemberMetadataKeyCodec } from '../../protocol/messages/coordinator/share-group-member-metadata-key.js'
import { shareGroupMemberMetadataValueCodec } from '../../protocol/messages/coordinator/share-group-member-metadata-value.js'
import { shareGroupMetadataKeyCodec } from '../../protocol/messages/coordinator/share-group-metadata-key.js'
import { shareGroupMetadataValueCodec } from '../../protocol/messages/coordinator/share-group-metadata-value.js'
import { shareGroupTargetAssignmentMetadataKeyCodec } from '../../protocol/messages/coordinator/share-group-target-assignment-metadata-key.js'
import { shareGroupTargetAssignmentMetadataValueCodec } from '../../protocol/messages/coordinator/share-group-target-assignment-metadata-value.js'
import { shareGroupTargetAssignmentMemberKeyCodec } from '../../protocol/messages/coordinator/share-group-target-assignment-member-key.js'
import { shareGroupTargetAssignmentMemberValueCodec } from '../../protocol/messages/coordinator/share-group-target-assignment-member-value.js'
import { shareGroupCurrentMemberAssignmentKeyCodec } from '../../protocol/messages/coordinator/share-group-current-member-assignment-key.js'
import { shareGroupCurrentMemberAssignmentValueCodec } from '../../protocol/messages/coordinator/share-group-current-member-assignment-value.js'
import { shareGroupStatePartitionMetadataKeyCodec } from '../../protocol/messages/coordinator/share-group-state-partition-metadata-key.js'
import { shareGroupStatePartitionMetadataValueCodec } from '../../protocol/messages/coordinator/share-group-state-partition-metadata-value.js'
import { assignmentOf, topicPartitionsOf, type Assignment } from '../consumer/assignment.js'
import { encodeKey, encodeValue, keyReader, recordTypeOf, valueReader, type CoordinatorRecord } from '../coordinator-record.js'
import { newShareGroupMember, ShareGroup, type ShareGroupMember } from './share-group.js'

/** The record types this module writes and replays. */
export const SHARE_GROUP_RECORD_TYPES: ReadonlySet<number> = new Set([10, 11, 12, 13, 14, 15])

/** Kafka's `newShareGroupEpochRecord` (a tombstone when `epoch` is null). */
export function shareGroupEpochRecord(groupId: string, epoch: number | null): CoordinatorRecord {
  const key = encodeKey(shareGroupMetadataKeyCodec, { groupId })
  return { key, value: epoch === null ? null : encodeValue(shareGroupMetadataValueCodec, { epoch, metadataHash: 0n }) }
}

/** Kafka's `newShareGroupMemberSubscriptionRecord` (a tombstone when `member` is null). */
export function shareMemberSubscriptionRecord(groupId: string, memberId: string, member: ShareGroupMember | null): CoordinatorRecord {
  const key = encodeKey(shareGroupMemberMetadataKeyCodec, { groupId, memberId })
  if (member === null) return { key, value: null }
  return {
    key,
    value: encodeValue(shareGroupMemberMetadataValueCodec, {
      rackId: member.rackId,
      clientId: member.clientId,
      clientHost: member.clientHost,
      subscribedTopicNames: [...member.subscribedTopicNames],
    }),
  }
}

/** Kafka's `newShareGroupTargetAssignmentEpochRecord` (a tombstone when `assignmentEpoch` is null). */
export function shareTargetAssignmentEpochRecord(groupId: string, assignmentEpoch: number | null, now = 0): CoordinatorRecord {
  const key = encodeKey(shareGroupTargetAssignmentMetadataKeyCodec, { groupId })
  return { key, value: assignmentEpoch === null ? null : encodeValue(shareGroupTargetAssignmentMetadataValueCodec, { assignmentEpoch, assignmentTimestamp: BigInt(now) }) }
}

/** Kafka's `newShareGroupTargetAssignmentRecord` (a tombstone when `assignment` is null). */
export function shareTargetAssignmentRecord(groupId: string, memberId: string, assignment: Assignment | null): CoordinatorRecord {
  const key = encodeKey(shareGroupTargetAssignmentMemberKeyCodec, { groupId, memberId })
  if (assignment === null) return { key, value: null }
  return { key, value: encodeValue(shareGroupTargetAssignmentMemberValueCodec, { topicPartitions: topicPartitionsOf(assignment) }) }
}

/** Kafka's `newShareGroupCurrentAssignmentRecord` (a tombstone when `member` is null); the state is always 0 (stable). */
export function shareCurrentAssignmentRecord(groupId: string, memberId: string, member: ShareGroupMember | null): CoordinatorRecord {
  const key = encodeKey(shareGroupCurrentMemberAssignmentKeyCodec, { groupId, memberId })
  if (member === null) return { key, value: null }
  return {
    key,
    value: encodeValue(shareGroupCurrentMemberAssignmentValueCodec, {
      memberEpoch: member.memberEpoch,
      previousMemberEpoch: member.previousMemberEpoch,
      state: 0,
      assignedPartitions: topicPartitionsOf(member.assignedPartitions),
    }),
  }
}

/** Kafka's `newShareGroupStatePartitionMetadataRecord` (a tombstone when `group` is null): the initialized topics. */
export function shareStatePartitionMetadataRecord(groupId: string, group: ShareGroup | null): CoordinatorRecord {
  const key = encodeKey(shareGroupStatePartitionMetadataKeyCodec, { groupId })
  if (group === null) return { key, value: null }
  return {
    key,
    value: encodeValue(shareGroupStatePartitionMetadataValueCodec, {
      initializingTopics: [],
      initializedTopics: [...group.initializedTopics]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([topicId, t]) => ({ topicId: Buffer.from(topicId, 'hex'), topicName: t.topicName, partitions: [...t.partitions].sort((x, y) => x - y) })),
      deletingTopics: [],
    }),
  }
}

/**
 * Replays one record into `groups` (Kafka's `replay`): creates the group at its first record;
 * a group whose metadata is tombstoned is gone. Throws on a record it cannot read.
 */
export function replayShareGroupRecord(groups: Map<string, ShareGroup>, key: Buffer, value: Buffer | null): void {
  const type = recordTypeOf(key)
  const r = keyReader(key)
  const v = () => valueReader(value!)
  const groupOf = (groupId: string): ShareGroup => {
    let g = groups.get(groupId)
    if (!g) groups.set(groupId, (g = new ShareGroup(groupId)))
    return g
  }
  switch (type) {
    case 10: {
      const { groupId, memberId } = shareGroupMemberMetadataKeyCodec.read(r, 0)
      const group = groupOf(groupId)
      if (value === null) return group.removeMember(memberId)
      const m = shareGroupMemberMetadataValueCodec.read(v(), 0)
      const old = group.members.get(memberId) ?? newShareGroupMember(memberId)
      group.members.set(memberId, { ...old, rackId: m.rackId, clientId: m.clientId, clientHost: m.clientHost, subscribedTopicNames: [...m.subscribedTopicNames].sort() })
      return
    }
    case 11: {
      const { groupId } = shareGroupMetadataKeyCodec.read(r, 0)
      if (value === null) {
        groups.delete(groupId)
        return
      }
      groupOf(groupId).groupEpoch = shareGroupMetadataValueCodec.read(v(), 0).epoch
      return
    }
    case 12: {
      const { groupId } = shareGroupTargetAssignmentMetadataKeyCodec.read(r, 0)
      if (value === null) return
      groupOf(groupId).assignmentEpoch = shareGroupTargetAssignmentMetadataValueCodec.read(v(), 0).assignmentEpoch
      return
    }
    case 13: {
      const { groupId, memberId } = shareGroupTargetAssignmentMemberKeyCodec.read(r, 0)
      const group = groupOf(groupId)
      if (value === null) group.targetAssignment.delete(memberId)
      else group.targetAssignment.set(memberId, assignmentOf(shareGroupTargetAssignmentMemberValueCodec.read(v(), 0).topicPartitions))
      return
    }
    case 14: {
      const { groupId, memberId } = shareGroupCurrentMemberAssignmentKeyCodec.read(r, 0)
      const group = groupOf(groupId)
      const old = group.members.get(memberId)
      if (value === null) {
        if (old) group.members.set(memberId, { ...old, assignedPartitions: new Map() })
        return
      }
      const a = shareGroupCurrentMemberAssignmentValueCodec.read(v(), 0)
      group.members.set(memberId, {
        ...(old ?? newShareGroupMember(memberId)),
        memberEpoch: a.memberEpoch,
        previousMemberEpoch: a.previousMemberEpoch,
        assignedPartitions: assignmentOf(a.assignedPartitions),
      })
      return
    }
    case 15: {
      const { groupId } = shareGroupStatePartitionMetadataKeyCodec.read(r, 0)
      const group = groupOf(groupId)
      group.initializedTopics.clear()
      if (value === null) return
      for (const t of shareGroupStatePartitionMetadataValueCodec.read(v(), 0).initializedTopics) {
        group.initializedTopics.set(t.topicId.toString('hex'), { topicName: t.topicName, partitions: new Set(t.partitions) })
      }
      return
    }
    default:
      throw new Error(`not a share group record: type ${type}`)
  }
}
