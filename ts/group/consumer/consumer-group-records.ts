/**
 * A consumer group's state as Kafka's coordinator records in `__consumer_offsets` (Kafka's
 * `GroupCoordinatorRecordHelpers` and the consumer-group half of `GroupMetadataManager.replay`),
 * with the codecs generated from the group-coordinator jar's schemas
 * (ts/protocol/messages/coordinator), framed as ../coordinator-record.ts says (the int16 record
 * type then the key; the int16 version then the value; a null value is a tombstone of its key):
 *
 *   3 ConsumerGroupMetadata                 group → group epoch, subscribed topics' metadata hash
 *   5 ConsumerGroupMemberMetadata           group, member → subscription, client, rack, assignor, and
 *                                           for a classic member its session timeout and protocols
 *   6 ConsumerGroupTargetAssignmentMetadata group → target assignment epoch
 *   7 ConsumerGroupTargetAssignmentMember   group, member → its target partitions
 *   8 ConsumerGroupCurrentMemberAssignment  group, member → epochs, state, owned and revoking partitions
 *                                           (each with the epoch it was assigned at, KIP-1251)
 *  16 ConsumerGroupRegularExpression        group, regex → the topics it matched, version, timestamp
 *
 * Replayed in log order (the load of the offsets log, ../offset-store.ts), they rebuild every
 * group as it was written: members come back with their epochs and partitions, and the group
 * with its epoch and target assignment. (Kafka 4.4 no longer writes ConsumerGroupPartitionMetadata,
 * KIP-1101: the subscribed topics are looked up again at the first heartbeat, and the group epoch
 * is bumped when their hash differs from the group's record.)
 */
import { consumerGroupMetadataKeyCodec } from '../../protocol/messages/coordinator/consumer-group-metadata-key.js'
import { consumerGroupMetadataValueCodec } from '../../protocol/messages/coordinator/consumer-group-metadata-value.js'
import { consumerGroupMemberMetadataKeyCodec } from '../../protocol/messages/coordinator/consumer-group-member-metadata-key.js'
import { consumerGroupMemberMetadataValueCodec } from '../../protocol/messages/coordinator/consumer-group-member-metadata-value.js'
import { consumerGroupTargetAssignmentMetadataKeyCodec } from '../../protocol/messages/coordinator/consumer-group-target-assignment-metadata-key.js'
import { consumerGroupTargetAssignmentMetadataValueCodec } from '../../protocol/messages/coordinator/consumer-group-target-assignment-metadata-value.js'
import { consumerGroupTargetAssignmentMemberKeyCodec } from '../../protocol/messages/coordinator/consumer-group-target-assignment-member-key.js'
import { consumerGroupTargetAssignmentMemberValueCodec } from '../../protocol/messages/coordinator/consumer-group-target-assignment-member-value.js'
import { consumerGroupCurrentMemberAssignmentKeyCodec } from '../../protocol/messages/coordinator/consumer-group-current-member-assignment-key.js'
import { consumerGroupCurrentMemberAssignmentValueCodec } from '../../protocol/messages/coordinator/consumer-group-current-member-assignment-value.js'
import { consumerGroupRegularExpressionKeyCodec } from '../../protocol/messages/coordinator/consumer-group-regular-expression-key.js'
import { consumerGroupRegularExpressionValueCodec } from '../../protocol/messages/coordinator/consumer-group-regular-expression-value.js'
import { encodeKey, encodeValue, keyReader, recordTypeOf, valueReader, type CoordinatorRecord } from '../coordinator-record.js'
import { assignmentOf, topicPartitionsOf, type Assignment } from './assignment.js'
import { MemberState, newMember, updateMember, type ConsumerGroupMember } from './consumer-group-member.js'
import { ConsumerGroup, type ResolvedRegularExpression } from './consumer-group.js'

/** The record types this module writes and replays. */
export const CONSUMER_GROUP_RECORD_TYPES: ReadonlySet<number> = new Set([3, 5, 6, 7, 8, 16])

/** Kafka's byte of each MemberState. */
const STATE_BYTE: Record<MemberState, number> = { [MemberState.STABLE]: 0, [MemberState.UNREVOKED_PARTITIONS]: 1, [MemberState.UNRELEASED_PARTITIONS]: 2 }

/** Kafka's `newConsumerGroupEpochRecord`: the group epoch and the subscribed topics' metadata hash. */
export function groupEpochRecord(groupId: string, epoch: number, metadataHash: bigint): CoordinatorRecord {
  return { key: encodeKey(consumerGroupMetadataKeyCodec, { groupId }), value: encodeValue(consumerGroupMetadataValueCodec, { epoch, metadataHash }) }
}

export function groupEpochTombstone(groupId: string): CoordinatorRecord {
  return { key: encodeKey(consumerGroupMetadataKeyCodec, { groupId }), value: null }
}

/** Kafka's `newConsumerGroupMemberSubscriptionRecord` (or its tombstone when `member` is null). */
export function memberSubscriptionRecord(groupId: string, memberId: string, member: ConsumerGroupMember | null): CoordinatorRecord {
  const key = encodeKey(consumerGroupMemberMetadataKeyCodec, { groupId, memberId })
  if (member === null) return { key, value: null }
  return {
    key,
    value: encodeValue(consumerGroupMemberMetadataValueCodec, {
      instanceId: member.instanceId,
      rackId: member.rackId,
      clientId: member.clientId,
      clientHost: member.clientHost,
      subscribedTopicNames: [...member.subscribedTopicNames],
      subscribedTopicRegex: member.subscribedTopicRegex,
      rebalanceTimeoutMs: member.rebalanceTimeoutMs,
      serverAssignor: member.serverAssignorName,
      classicMemberMetadata:
        member.classicMemberMetadata === null
          ? null
          : { sessionTimeoutMs: member.classicMemberMetadata.sessionTimeoutMs, supportedProtocols: member.classicMemberMetadata.supportedProtocols.map((p) => ({ ...p })) },
    }),
  }
}

/** Kafka's order of a member's tombstones: its current assignment, its target, its metadata. */
export function memberRemovalRecords(groupId: string, memberId: string): CoordinatorRecord[] {
  return [currentAssignmentRecord(groupId, memberId, null), targetAssignmentRecord(groupId, memberId, null), memberSubscriptionRecord(groupId, memberId, null)]
}

/** Kafka's `newConsumerGroupTargetAssignmentEpochRecord`. */
export function targetAssignmentEpochRecord(groupId: string, assignmentEpoch: number, now: number): CoordinatorRecord {
  return {
    key: encodeKey(consumerGroupTargetAssignmentMetadataKeyCodec, { groupId }),
    value: encodeValue(consumerGroupTargetAssignmentMetadataValueCodec, { assignmentEpoch, assignmentTimestamp: BigInt(now) }),
  }
}

export function targetAssignmentEpochTombstone(groupId: string): CoordinatorRecord {
  return { key: encodeKey(consumerGroupTargetAssignmentMetadataKeyCodec, { groupId }), value: null }
}

/** Kafka's `newConsumerGroupTargetAssignmentRecord` (or its tombstone when `assignment` is null). */
export function targetAssignmentRecord(groupId: string, memberId: string, assignment: Assignment | null): CoordinatorRecord {
  const key = encodeKey(consumerGroupTargetAssignmentMemberKeyCodec, { groupId, memberId })
  if (assignment === null) return { key, value: null }
  return { key, value: encodeValue(consumerGroupTargetAssignmentMemberValueCodec, { topicPartitions: topicPartitionsOf(assignment) }) }
}

/** Kafka's `newConsumerGroupCurrentAssignmentRecord` (or its tombstone when `member` is null). */
export function currentAssignmentRecord(
  groupId: string,
  memberId: string,
  member: ConsumerGroupMember | null,
  assignmentEpoch: (topicId: string, partition: number) => number | undefined = () => undefined,
): CoordinatorRecord {
  const key = encodeKey(consumerGroupCurrentMemberAssignmentKeyCodec, { groupId, memberId })
  if (member === null) return { key, value: null }
  const withEpochs = (a: Assignment) =>
    topicPartitionsOf(a).map((t) => {
      const hex = t.topicId.toString('hex')
      return { ...t, assignmentEpochs: t.partitions.map((p) => assignmentEpoch(hex, p) ?? member.memberEpoch) }
    })
  return {
    key,
    value: encodeValue(consumerGroupCurrentMemberAssignmentValueCodec, {
      memberEpoch: member.memberEpoch,
      previousMemberEpoch: member.previousMemberEpoch,
      state: STATE_BYTE[member.state],
      assignedPartitions: withEpochs(member.assignedPartitions),
      partitionsPendingRevocation: withEpochs(member.partitionsPendingRevocation),
    }),
  }
}

/** Kafka's `newConsumerGroupRegularExpressionRecord` (or its tombstone when `resolved` is null). */
export function regularExpressionRecord(groupId: string, regularExpression: string, resolved: ResolvedRegularExpression | null): CoordinatorRecord {
  const key = encodeKey(consumerGroupRegularExpressionKeyCodec, { groupId, regularExpression })
  if (resolved === null) return { key, value: null }
  return {
    key,
    value: encodeValue(consumerGroupRegularExpressionValueCodec, { topics: [...resolved.topics].sort(), version: resolved.version, timestamp: BigInt(resolved.timestamp) }),
  }
}

/**
 * Replays one record into `groups` (Kafka's `replay`): creates the group at its first record,
 * applies values and tombstones; a group whose metadata is tombstoned is gone. Throws on a
 * record it cannot read.
 */
export function replayConsumerGroupRecord(groups: Map<string, ConsumerGroup>, key: Buffer, value: Buffer | null): void {
  const type = recordTypeOf(key)
  const r = keyReader(key)
  const vr = () => valueReader(value!)
  const groupOf = (groupId: string): ConsumerGroup => {
    let g = groups.get(groupId)
    if (!g) groups.set(groupId, (g = new ConsumerGroup(groupId)))
    return g
  }
  switch (type) {
    case 3: {
      const { groupId } = consumerGroupMetadataKeyCodec.read(r, 0)
      if (value === null) {
        groups.delete(groupId)
        return
      }
      const { epoch, metadataHash } = consumerGroupMetadataValueCodec.read(vr(), 0)
      const group = groupOf(groupId)
      group.groupEpoch = epoch
      group.metadataHash = metadataHash
      return
    }
    case 5: {
      const { groupId, memberId } = consumerGroupMemberMetadataKeyCodec.read(r, 0)
      const group = groupOf(groupId)
      if (value === null) {
        const old = group.member(memberId)
        if (old) group.removeMember(memberId)
        return
      }
      const v = consumerGroupMemberMetadataValueCodec.read(vr(), 0)
      group.updateMember(
        updateMember(group.member(memberId) ?? newMember(memberId), {
          instanceId: v.instanceId,
          rackId: v.rackId,
          clientId: v.clientId,
          clientHost: v.clientHost,
          subscribedTopicNames: [...v.subscribedTopicNames].sort(),
          subscribedTopicRegex: v.subscribedTopicRegex,
          rebalanceTimeoutMs: v.rebalanceTimeoutMs,
          serverAssignorName: v.serverAssignor,
          classicMemberMetadata: v.classicMemberMetadata,
        }),
      )
      return
    }
    case 6: {
      const { groupId } = consumerGroupTargetAssignmentMetadataKeyCodec.read(r, 0)
      if (value === null) return
      const v = consumerGroupTargetAssignmentMetadataValueCodec.read(vr(), 0)
      const group = groupOf(groupId)
      group.assignmentEpoch = v.assignmentEpoch
      group.assignmentTimestamp = Number(v.assignmentTimestamp)
      return
    }
    case 7: {
      const { groupId, memberId } = consumerGroupTargetAssignmentMemberKeyCodec.read(r, 0)
      const group = groupOf(groupId)
      if (value === null) group.targetAssignment.delete(memberId)
      else group.targetAssignment.set(memberId, assignmentOf(consumerGroupTargetAssignmentMemberValueCodec.read(vr(), 0).topicPartitions))
      return
    }
    case 8: {
      const { groupId, memberId } = consumerGroupCurrentMemberAssignmentKeyCodec.read(r, 0)
      const group = groupOf(groupId)
      const member = group.member(memberId)
      if (value === null) {
        // The member's assignment is gone: it owns nothing (its metadata's tombstone removes it).
        if (member) group.updateMember(updateMember(member, { assignedPartitions: new Map(), partitionsPendingRevocation: new Map() }))
        return
      }
      const v = consumerGroupCurrentMemberAssignmentValueCodec.read(vr(), 0)
      // KIP-1251's assignment epochs, when written (records before it have none: the member epoch).
      const epochs = new Map<string, number>()
      for (const t of [...v.assignedPartitions, ...v.partitionsPendingRevocation]) {
        const hex = t.topicId.toString('hex')
        t.partitions.forEach((p, i) => {
          const e = t.assignmentEpochs?.[i]
          if (e !== undefined) epochs.set(`${hex}:${p}`, e)
        })
      }
      const state = (Object.keys(STATE_BYTE) as MemberState[]).find((s) => STATE_BYTE[s] === v.state) ?? MemberState.STABLE
      group.updateMember(
        updateMember(member ?? newMember(memberId), {
          memberEpoch: v.memberEpoch,
          previousMemberEpoch: v.previousMemberEpoch,
          state,
          assignedPartitions: assignmentOf(v.assignedPartitions),
          partitionsPendingRevocation: assignmentOf(v.partitionsPendingRevocation),
        }),
        (topicId, partition) => epochs.get(`${topicId}:${partition}`),
      )
      return
    }
    case 16: {
      const { groupId, regularExpression } = consumerGroupRegularExpressionKeyCodec.read(r, 0)
      const group = groupOf(groupId)
      if (value === null) {
        group.resolvedRegularExpressions.delete(regularExpression)
        return
      }
      const v = consumerGroupRegularExpressionValueCodec.read(vr(), 0)
      group.resolvedRegularExpressions.set(regularExpression, { topics: new Set(v.topics), version: v.version, timestamp: Number(v.timestamp) })
      return
    }
    default:
      throw new Error(`not a consumer group record: type ${type}`)
  }
}
