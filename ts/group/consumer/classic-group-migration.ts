/**
 * Classic members in consumer groups, and the conversions between the two kinds of group
 * (Kafka's `ConsumerGroup.fromClassicGroup`, `ClassicGroup.fromConsumerGroup` and the records
 * they write), as group.consumer.migration.policy allows them:
 *
 * - upgrade: a ConsumerGroupHeartbeat joining a live classic group of the consumer protocol type
 *   turns it into a consumer group: the group epoch and the target assignment epoch are the
 *   classic generation; each classic member becomes a member at that epoch, Stable, owning the
 *   partitions of its last assignment (also its target), and keeps its session timeout and the
 *   protocols of its JoinGroup (its ClassicMemberMetadata). The joining member bumps the group
 *   epoch; the classic members learn it from REBALANCE_IN_PROGRESS and rejoin.
 * - downgrade: when the last member of the consumer protocol leaves (or is fenced) and classic
 *   members remain, the group becomes a Stable classic group at generation = group epoch, each
 *   member with its target assignment, and rebalances at once.
 * - a classic member in a consumer group: JoinGroup takes its subscription (and the partitions it
 *   still owns) from its embedded consumer protocol subscription and reconciles it like a
 *   heartbeat; the generation it is answered is its member epoch, SyncGroup gives it its current
 *   assignment, and Heartbeat answers REBALANCE_IN_PROGRESS while it lags the target assignment
 *   (./consumer-group-manager.ts).
 *
 * Empty groups convert both ways whatever the policy (an Empty classic group known by its offsets
 * becomes a consumer group at the first ConsumerGroupHeartbeat; an Empty consumer group a classic
 * one at the first JoinGroup).
 */
import {
  CONSUMER_PROTOCOL_TYPE,
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  type ConsumerProtocolSubscription,
  type ConsumerProtocolTopicPartition,
} from '../../protocol/consumer-protocol.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { GroupMetadata } from '../group-metadata.js'
import { MemberMetadata } from '../member-metadata.js'
import { EMPTY_ASSIGNMENT, addPartition, type Assignment } from './assignment.js'
import { MemberState, newMember, normalizeTopicNames, updateMember, type ClassicMemberMetadata, type ConsumerGroupMember } from './consumer-group-member.js'
import { ConsumerGroup, GroupApiError } from './consumer-group.js'

/** group.consumer.migration.policy (Kafka's ConsumerGroupMigrationPolicy). */
export type ConsumerGroupMigrationPolicy = 'disabled' | 'upgrade' | 'downgrade' | 'bidirectional'

export function isUpgradeEnabled(policy: ConsumerGroupMigrationPolicy): boolean {
  return policy === 'upgrade' || policy === 'bidirectional'
}

export function isDowngradeEnabled(policy: ConsumerGroupMigrationPolicy): boolean {
  return policy === 'downgrade' || policy === 'bidirectional'
}

/** The topic lookups the conversions need (the coordinator's TopicsImage has them). */
export interface TopicLookup {
  byName(name: string): { readonly topicId: Buffer } | undefined
  byId(topicId: string): { readonly name: string } | undefined
}

/** Partitions named by topic → by topic id (hex); topics that do not exist are left out. */
export function assignmentOfTopicPartitions(tps: readonly ConsumerProtocolTopicPartition[], topics: TopicLookup): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>()
  for (const tp of tps) {
    const topic = topics.byName(tp.topic)
    if (topic) for (const p of tp.partitions) addPartition(out, topic.topicId.toString('hex'), p)
  }
  return out
}

/** Partitions by topic id → named by topic, sorted; ids no longer known are left out. */
export function topicPartitionsOfAssignment(assignment: Assignment, topics: TopicLookup): ConsumerProtocolTopicPartition[] {
  const out: ConsumerProtocolTopicPartition[] = []
  for (const [topicId, partitions] of assignment) {
    const topic = topics.byId(topicId)
    if (topic) out.push({ topic: topic.name, partitions: [...partitions].sort((a, b) => a - b) })
  }
  return out.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0))
}

/**
 * The subscription of a classic member (Kafka's `deserializeSubscription`: every protocol carries
 * the same one, the first is read); a malformed one is INCONSISTENT_GROUP_PROTOCOL.
 */
export function classicSubscription(protocols: ReadonlyArray<{ name: string; metadata: Buffer }>): ConsumerProtocolSubscription {
  try {
    return decodeSubscription(protocols[0]!.metadata).value
  } catch {
    throw new GroupApiError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, 'Malformed embedded consumer protocol in subscription deserialization.')
  }
}

/**
 * A classic member's assignment as SyncGroup hands it out (Kafka's `prepareAssignment`): its
 * partitions in the consumer protocol, at the version of its first protocol's subscription.
 */
export function classicAssignment(member: ConsumerGroupMember, assignment: Assignment, topics: TopicLookup): Buffer {
  const metadata = member.classicMemberMetadata?.supportedProtocols[0]?.metadata
  const version = metadata && metadata.length >= 2 ? Math.min(Math.max(metadata.readInt16BE(0), 0), 3) : 0
  return encodeAssignment({ assignedPartitions: topicPartitionsOfAssignment(assignment, topics), userData: null }, version)
}

/** The classic member metadata of a JoinGroup. */
export function classicMemberMetadata(sessionTimeoutMs: number, protocols: ReadonlyArray<{ name: string; metadata: Buffer }>): ClassicMemberMetadata {
  return { sessionTimeoutMs, supportedProtocols: protocols.map((p) => ({ name: p.name, metadata: p.metadata })) }
}

/**
 * Kafka's `ConsumerGroup.fromClassicGroup`: the consumer group a live classic group becomes
 * (module doc). Throws GROUP_ID_NOT_FOUND when a member's subscription or assignment does not
 * parse, or two members own one partition; the classic group is then left as it was.
 */
export function consumerGroupFromClassicGroup(classic: GroupMetadata, topics: TopicLookup): ConsumerGroup {
  const group = new ConsumerGroup(classic.groupId)
  group.groupEpoch = classic.generationId
  group.assignmentEpoch = classic.generationId
  try {
    for (const m of classic.members.values()) {
      const subscription = decodeSubscription(m.metadataFor(classic.protocolName ?? '') ?? m.protocols[0]!.metadata).value
      // A member without an assignment yet (it joined the rebalance under way) owns nothing.
      const assigned = m.assignment.length === 0 ? EMPTY_ASSIGNMENT : assignmentOfTopicPartitions(decodeAssignment(m.assignment).value.assignedPartitions, topics)
      const member = updateMember(newMember(m.memberId), {
        memberEpoch: classic.generationId,
        previousMemberEpoch: classic.generationId,
        state: MemberState.STABLE,
        instanceId: m.groupInstanceId,
        rackId: subscription.rackId,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: normalizeTopicNames(subscription.topics),
        assignedPartitions: assigned,
        classicMemberMetadata: classicMemberMetadata(m.sessionTimeoutMs, m.protocols),
      })
      group.targetAssignment.set(member.memberId, assigned)
      group.updateMember(member)
    }
  } catch (err) {
    if (err instanceof GroupApiError) throw err
    throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Cannot upgrade the classic group ${classic.groupId} to consumer group because the embedded consumer protocol is malformed.`)
  }
  return group
}

/**
 * Kafka's `ClassicGroup.fromConsumerGroup`: the Stable classic group a consumer group becomes
 * when `leavingMemberId`, its last member of the consumer protocol, goes (module doc).
 */
export function classicGroupFromConsumerGroup(group: ConsumerGroup, leavingMemberId: string, topics: TopicLookup, now: number): GroupMetadata {
  const classic = new GroupMetadata(group.groupId)
  const members: Array<{ member: ConsumerGroupMember; classic: MemberMetadata }> = []
  for (const m of group.members.values()) {
    if (m.memberId === leavingMemberId || m.classicMemberMetadata === null) continue
    const c = new MemberMetadata({
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      protocolType: CONSUMER_PROTOCOL_TYPE,
      protocols: m.classicMemberMetadata.supportedProtocols.map((p) => ({ name: p.name, metadata: p.metadata })),
      sessionTimeoutMs: m.classicMemberMetadata.sessionTimeoutMs,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
    })
    c.heartbeatDeadlineMs = now + c.sessionTimeoutMs
    classic.add(c)
    members.push({ member: m, classic: c })
  }
  classic.startStable(group.groupEpoch, CONSUMER_PROTOCOL_TYPE)
  for (const { member, classic: c } of members) {
    const metadata = c.metadataFor(classic.protocolName!)
    const version = metadata && metadata.length >= 2 ? Math.min(Math.max(metadata.readInt16BE(0), 0), 3) : 0
    c.assignment = encodeAssignment({ assignedPartitions: topicPartitionsOfAssignment(group.targetAssignmentOf(member.memberId), topics), userData: null }, version)
  }
  return classic
}
