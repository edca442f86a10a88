/**
 * Kafka's server-side `ConsumerGroupPartitionAssignor` (KIP-848): from the members' subscriptions
 * (topic ids that exist) and their current target assignments, the next target assignment of
 * every member. The assignors are named in `group.consumer.assignors` (./uniform-assignor.ts,
 * ./range-assignor.ts); a member may ask for one (`serverAssignor`), the group uses the one most
 * of its members ask for, else the first configured.
 */
import type { Assignment } from '../assignment.js'

export interface MemberSubscriptionSpec {
  readonly memberId: string
  readonly instanceId: string | null
  readonly rackId: string | null
  /** The ids (hex) of the existing topics the member subscribes to. */
  readonly subscribedTopicIds: ReadonlySet<string>
  /** The member's current target assignment. */
  readonly assignment: Assignment
}

export interface GroupSpec {
  /** The members, in the order the assignor may take as given. */
  readonly members: readonly MemberSubscriptionSpec[]
}

/** The partition counts of the subscribed topics, and their partitions' racks. */
export interface SubscribedTopicDescriber {
  /** The topic's partition count, -1 when it does not exist. */
  numPartitions(topicId: string): number
  /**
   * The racks of the brokers holding the partition's replicas (empty when none has a rack, or
   * the partition is unknown). Kafka 4.4's uniform and range assignors, as ferrolog's, do not use
   * them (nor the members' `rackId`): Kafka passes them for the assignors a broker may plug in.
   */
  racksForPartition(topicId: string, partition: number): ReadonlySet<string>
}

export class PartitionAssignorError extends Error {}

export interface ConsumerGroupPartitionAssignor {
  readonly name: string
  /** Every member's target assignment (an empty one for a member given nothing). */
  assign(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, Assignment>
}

/** Whether all members subscribe to the same topics (Kafka's HOMOGENEOUS subscription type). */
export function isHomogeneous(group: GroupSpec): boolean {
  const first = group.members[0]?.subscribedTopicIds
  if (!first) return true
  return group.members.every((m) => m.subscribedTopicIds.size === first.size && [...first].every((t) => m.subscribedTopicIds.has(t)))
}

/** Kafka's order of members for deterministic assignors: static members by instance id first, then the others by member id. */
export function sortedMembers(group: GroupSpec): MemberSubscriptionSpec[] {
  return [...group.members].sort((a, b) => {
    if (a.instanceId !== null && b.instanceId !== null) return compare(a.instanceId, b.instanceId)
    if (a.instanceId !== null) return -1
    if (b.instanceId !== null) return 1
    return compare(a.memberId, b.memberId)
  })
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
