/**
 * Kafka's `CurrentAssignmentBuilder`: one step of a member's reconciliation towards its target
 * assignment, from its state, the partitions it reports owning in the heartbeat, and which
 * partitions other members still own (`currentPartitionEpoch`: the epoch of the member owning a
 * partition, -1 when it is free).
 *
 * The rule that keeps a partition from being owned by two members: a partition leaves the target
 * of one member and enters another's, but the new owner is given it only once it is free, that is
 * once the old owner has reported it revoked (its heartbeat's owned partitions no longer list it).
 *
 * - STABLE: a newer target epoch starts the next step (below); otherwise, when the member's
 *   subscription changed in this heartbeat, the partitions of topics it no longer subscribes to
 *   are revoked at once (below), without waiting for the next target.
 * - UNREVOKED_PARTITIONS: waits until the member no longer owns any partition pending revocation
 *   (owned partitions not reported count as owned; a subscription change meanwhile revokes more
 *   at once), then steps again from its epoch (as Kafka 4.4: not epoch + 1).
 * - UNRELEASED_PARTITIONS: steps again, picking up the partitions released meanwhile.
 *
 * A step (Kafka's `computeNextAssignment`): the target counts only the topics the member
 * subscribes to now; kept = current ∩ target; pending revocation = current − kept; pending
 * assignment = target − kept − partitions still owned by others. With
 * partitions to revoke that the member still owns, it stays in its epoch, UNREVOKED_PARTITIONS,
 * with only the kept partitions; otherwise it moves to the target epoch with the kept and the
 * free new partitions, UNRELEASED_PARTITIONS while some of its target is still owned elsewhere,
 * else STABLE.
 *
 * A subscription change (Kafka's `updateCurrentAssignment`): the assigned partitions of topics
 * no longer subscribed join those pending revocation; while the member still owns some of them
 * it is UNREVOKED_PARTITIONS in its epoch, else it simply keeps the others.
 */
import { addPartition, copyAssignment, type Assignment } from './assignment.js'
import { MemberState, updateMember, type ConsumerGroupMember } from './consumer-group-member.js'

export type OwnedTopicPartitions = ReadonlyArray<{ topicId: string; partitions: readonly number[] }>

export interface CurrentAssignmentInput {
  targetAssignmentEpoch: number
  targetAssignment: Assignment
  /** The epoch of the member owning a partition (assigned or pending revocation), -1 when none does. */
  currentPartitionEpoch: (topicId: string, partition: number) => number
  /** The partitions the member reported owning in this heartbeat; null when it did not report them. */
  ownedTopicPartitions: OwnedTopicPartitions | null
  /** The ids (hex) of the topics the member subscribes to now, by name or through its regex; all when not given. */
  subscribedTopicIds?: ReadonlySet<string>
  /** Whether the member's subscription (topic names or regex) changed in this heartbeat. */
  hasSubscriptionChanged?: boolean
}

export function buildCurrentAssignment(member: ConsumerGroupMember, input: CurrentAssignmentInput): ConsumerGroupMember {
  switch (member.state) {
    case MemberState.STABLE:
      if (member.memberEpoch !== input.targetAssignmentEpoch) return computeNextAssignment(member, member.memberEpoch, input)
      return input.hasSubscriptionChanged ? updateCurrentAssignment(member, input) : member
    case MemberState.UNREVOKED_PARTITIONS:
      if (ownsRevokedPartitions(input.ownedTopicPartitions, member.partitionsPendingRevocation)) {
        return input.hasSubscriptionChanged ? updateCurrentAssignment(member, input) : member
      }
      return computeNextAssignment(member, member.memberEpoch, input)
    case MemberState.UNRELEASED_PARTITIONS:
      return computeNextAssignment(member, member.memberEpoch, input)
  }
}

/** Whether the reported owned partitions include any of `pending` (not reported: assumed so). */
function ownsRevokedPartitions(owned: OwnedTopicPartitions | null, pending: Assignment): boolean {
  if (owned === null) return true
  for (const t of owned) {
    const revoking = pending.get(t.topicId)
    if (revoking && t.partitions.some((p) => revoking.has(p))) return true
  }
  return false
}

/** Revokes at once the assigned partitions of topics the member no longer subscribes to. */
function updateCurrentAssignment(member: ConsumerGroupMember, input: CurrentAssignmentInput): ConsumerGroupMember {
  const subscribed = input.subscribedTopicIds
  if (subscribed === undefined) return member
  const unsubscribed = [...member.assignedPartitions.keys()].filter((topicId) => !subscribed.has(topicId))
  if (unsubscribed.length === 0) return member
  const assigned = copyAssignment(member.assignedPartitions)
  const pending = copyAssignment(member.partitionsPendingRevocation)
  for (const topicId of unsubscribed) {
    for (const p of assigned.get(topicId)!) addPartition(pending, topicId, p)
    assigned.delete(topicId)
  }
  if (ownsRevokedPartitions(input.ownedTopicPartitions, pending)) {
    return updateMember(member, {
      state: MemberState.UNREVOKED_PARTITIONS,
      previousMemberEpoch: member.memberEpoch,
      assignedPartitions: assigned,
      partitionsPendingRevocation: pending,
    })
  }
  return updateMember(member, { previousMemberEpoch: member.memberEpoch, assignedPartitions: assigned })
}

function computeNextAssignment(member: ConsumerGroupMember, memberEpoch: number, input: CurrentAssignmentInput): ConsumerGroupMember {
  const { targetAssignment, targetAssignmentEpoch, currentPartitionEpoch } = input
  let hasUnreleasedPartitions = false
  const assigned = new Map<string, Set<number>>()
  const pendingRevocation = new Map<string, Set<number>>()
  const pendingAssignment = new Map<string, Set<number>>()
  const topicIds = new Set([...targetAssignment.keys(), ...member.assignedPartitions.keys()])
  for (const topicId of topicIds) {
    const subscribed = input.subscribedTopicIds === undefined || input.subscribedTopicIds.has(topicId)
    const target = (subscribed ? targetAssignment.get(topicId) : undefined) ?? new Set<number>()
    const current = member.assignedPartitions.get(topicId) ?? new Set<number>()
    for (const p of current) {
      if (target.has(p)) addPartition(assigned, topicId, p)
      else addPartition(pendingRevocation, topicId, p)
    }
    for (const p of target) {
      if (current.has(p)) continue
      if (currentPartitionEpoch(topicId, p) !== -1) hasUnreleasedPartitions = true
      else addPartition(pendingAssignment, topicId, p)
    }
  }
  if (pendingRevocation.size > 0 && ownsRevokedPartitions(input.ownedTopicPartitions, pendingRevocation)) {
    return updateMember(member, {
      state: MemberState.UNREVOKED_PARTITIONS,
      previousMemberEpoch: member.memberEpoch,
      memberEpoch,
      assignedPartitions: assigned,
      partitionsPendingRevocation: pendingRevocation,
    })
  }
  for (const [topicId, partitions] of pendingAssignment) for (const p of partitions) addPartition(assigned, topicId, p)
  return updateMember(member, {
    state: hasUnreleasedPartitions ? MemberState.UNRELEASED_PARTITIONS : MemberState.STABLE,
    previousMemberEpoch: member.memberEpoch,
    memberEpoch: targetAssignmentEpoch,
    assignedPartitions: assigned,
    partitionsPendingRevocation: new Map(),
  })
}
