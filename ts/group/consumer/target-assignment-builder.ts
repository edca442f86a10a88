/**
 * Kafka's `TargetAssignmentBuilder`: the group's next target assignment, computed by the
 * assignor from every member's subscription (topic names, and those its regex resolved to, as
 * ids of the existing topics, as of the group's subscription metadata, with their partitions'
 * racks), its rack and current target assignment, with one member added, updated or removed
 * first (the one whose heartbeat bumped the group epoch).
 */
import type { Assignment } from './assignment.js'
import { EMPTY_ASSIGNMENT } from './assignment.js'
import type { ConsumerGroup, SubscribedTopic } from './consumer-group.js'
import type { ConsumerGroupMember } from './consumer-group-member.js'
import type { ConsumerGroupPartitionAssignor, MemberSubscriptionSpec } from './assignor/partition-assignor.js'

export interface TargetAssignmentChange {
  /** The member to add or replace, or the id of the member to leave out. */
  updatedMember?: ConsumerGroupMember
  removedMemberId?: string
}

export function buildTargetAssignment(
  group: ConsumerGroup,
  assignor: ConsumerGroupPartitionAssignor,
  subscriptionMetadata: ReadonlyMap<string, SubscribedTopic>,
  change: TargetAssignmentChange,
): Map<string, Assignment> {
  const members = new Map(group.members)
  if (change.removedMemberId !== undefined) members.delete(change.removedMemberId)
  if (change.updatedMember) members.set(change.updatedMember.memberId, change.updatedMember)
  const byId = new Map<string, SubscribedTopic>([...subscriptionMetadata.values()].map((t) => [t.topicId, t]))
  const specs: MemberSubscriptionSpec[] = [...members.values()]
    .sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0))
    .map((m) => ({
      memberId: m.memberId,
      instanceId: m.instanceId,
      rackId: m.rackId,
      subscribedTopicIds: new Set([...group.memberTopicNames(m)].flatMap((name) => subscriptionMetadata.get(name)?.topicId ?? [])),
      assignment: group.targetAssignment.get(m.memberId) ?? EMPTY_ASSIGNMENT,
    }))
  return assignor.assign(
    { members: specs },
    {
      numPartitions: (topicId) => byId.get(topicId)?.numPartitions ?? -1,
      racksForPartition: (topicId, partition) => new Set(byId.get(topicId)?.partitionRacks[partition] ?? []),
    },
  )
}
