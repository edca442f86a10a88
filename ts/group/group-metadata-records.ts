/**
 * A classic group's state as Kafka's coordinator record in `__consumer_offsets` (Kafka's
 * `GroupCoordinatorRecordHelpers.newGroupMetadataRecord` and the classic half of
 * `GroupMetadataManager.replay`), framed as ./coordinator-record.ts says, with the codecs
 * generated from the group-coordinator jar's schemas (ts/protocol/messages/coordinator):
 *
 *   2 GroupMetadata   group → protocol type, generation, protocol, leader, current state
 *                     timestamp, and each member: member id, group instance id, client id and
 *                     host, rebalance and session timeouts, its metadata for the group's
 *                     protocol (its subscription) and its assignment
 *
 * Kafka 4.4 writes the value at version 3 (flexible version 4 is read, never written); a
 * tombstone (null value) deletes the group. Written (./group-metadata-manager.ts):
 *
 * - when the leader's SyncGroup hands out the assignment: the generation with every member and
 *   its assignment (the group is Stable once the ISR holds it);
 * - when a join phase ends with no member: the generation, Empty (protocol and leader null);
 * - when a static member rejoins a Stable group with a new member id: the group with it;
 * - at the conversions with consumer groups (./consumer/classic-group-migration.ts): a tombstone
 *   when a classic group becomes a consumer group, the group when a consumer group becomes a
 *   classic one;
 * - a tombstone when the group is deleted (DeleteGroups) or forgotten, Empty with no offsets.
 *
 * Replayed (`groupFromRecord`), a record with members is a Stable group at its generation whose
 * members each support the one protocol of the group with their subscription; their sessions
 * start when the load ends. Without members, an Empty group.
 */
import { groupMetadataKeyCodec } from '../protocol/messages/coordinator/group-metadata-key.js'
import { groupMetadataValueCodec, type GroupMetadataValue } from '../protocol/messages/coordinator/group-metadata-value.js'
import { encodeKey, encodeValue, keyReader, valueReader, valueVersionOf, type CoordinatorRecord } from './coordinator-record.js'
import { GroupMetadata } from './group-metadata.js'
import { MemberMetadata } from './member-metadata.js'

/** The record type of GroupMetadata (its key's version in Kafka's older words). */
export const GROUP_METADATA_RECORD_TYPE = 2

/** The value version Kafka 4.4 writes. */
const VALUE_VERSION = 3

/**
 * Kafka's `newGroupMetadataRecord`: the group with each member's subscription (its metadata for
 * the group's protocol) and its assignment from `assignments` (none given: the member's own).
 * A group without members (Empty) has protocol and leader null.
 */
export function groupMetadataRecord(group: GroupMetadata, assignments?: ReadonlyMap<string, Buffer>): CoordinatorRecord {
  const members = [...group.members.values()].map((m) => {
    const subscription = group.protocolName !== null ? m.metadataFor(group.protocolName) : undefined
    if (subscription === undefined) throw new Error(`group ${group.groupId}: member ${m.memberId} has no metadata for the group's protocol`)
    return {
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeout: m.rebalanceTimeoutMs,
      sessionTimeout: m.sessionTimeoutMs,
      subscription,
      assignment: assignments ? (assignments.get(m.memberId) ?? Buffer.alloc(0)) : m.assignment,
    }
  })
  const empty = members.length === 0
  return {
    key: encodeKey(groupMetadataKeyCodec, { group: group.groupId }),
    value: encodeValue(
      groupMetadataValueCodec,
      {
        protocolType: group.protocolType ?? '',
        generation: group.generationId,
        protocol: empty ? null : group.protocolName,
        leader: empty ? null : group.leaderId,
        currentStateTimestamp: BigInt(group.currentStateTimestamp ?? -1),
        members,
      },
      VALUE_VERSION,
    ),
  }
}

/** Kafka's `newGroupMetadataTombstoneRecord`. */
export function groupMetadataTombstone(groupId: string): CoordinatorRecord {
  return { key: encodeKey(groupMetadataKeyCodec, { group: groupId }), value: null }
}

/** The group id of a GroupMetadata key. */
export function groupIdOfRecord(key: Buffer): string {
  return groupMetadataKeyCodec.read(keyReader(key), 0).group
}

/** A GroupMetadata value, at the version it was written in. */
export function readGroupMetadataValue(value: Buffer): GroupMetadataValue {
  return groupMetadataValueCodec.read(valueReader(value), valueVersionOf(value))
}

/** Kafka's replay of a GroupMetadata value: the group it describes (module doc). */
export function groupFromRecord(groupId: string, v: GroupMetadataValue, clock: () => number): GroupMetadata {
  const protocolType = v.protocolType === '' ? null : v.protocolType
  const members = v.members.map(
    (m) =>
      new MemberMetadata({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        protocolType: protocolType ?? '',
        protocols: [{ name: v.protocol ?? '', metadata: m.subscription }],
        sessionTimeoutMs: m.sessionTimeout,
        // Records before version 1 have none: the session timeout.
        rebalanceTimeoutMs: m.rebalanceTimeout === -1 ? m.sessionTimeout : m.rebalanceTimeout,
      }),
  )
  v.members.forEach((m, i) => (members[i]!.assignment = m.assignment))
  const group = new GroupMetadata(groupId, clock)
  group.restore(
    {
      generationId: v.generation,
      protocolType,
      protocolName: v.protocol,
      leaderId: v.leader,
      currentStateTimestamp: v.currentStateTimestamp === -1n ? null : Number(v.currentStateTimestamp),
    },
    members,
  )
  return group
}
