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
 * - STABLE: a newer target epoch starts the next step (below); otherwise nothing changes.
 * - UNREVOKED_PARTITIONS: waits until the member no longer owns any partition pending revocation
 *   (owned partitions not reported count as owned), then steps to its epoch + 1.
 * - UNRELEASED_PARTITIONS: steps again, picking up the partitions released meanwhile.
 *
 * A step (Kafka's `computeNextAssignment`): kept = current ∩ target; pending revocation =
 * current − kept; pending assignment = target − kept − partitions still owned by others. With
 * partitions to revoke that the member still owns, it stays in its epoch, UNREVOKED_PARTITIONS,
 * with only the kept partitions; otherwise it moves to the target epoch with the kept and the
 * free new partitions, UNRELEASED_PARTITIONS while some of its target is still owned elsewhere,
 * else STABLE.
 */
import { addPartition, type Assignment } from './assignment.js'
import { MemberState, updateMember, type ConsumerGroupMember } from './consumer-group-member.js'

export type OwnedTopicPartitions = ReadonlyArray<{ topicId: string; partitions: readonly number[] }>

export interface CurrentAssignmentInput {
  targetAssignmentEpoch: number
  targetAssignment: Assignment
  /** The epoch of the member owning a partition (assigned or pending revocation), -1 when none does. */
  currentPartitionEpoch: (topicId: string, partition: number) => number
  /** The partitions the member reported owning in this heartbeat; null when it did not report them. */
  ownedTopicPartitions: OwnedTopicPartitions | null
}

export function buildCurrentAssignment(member: ConsumerGroupMember, input: CurrentAssignmentInput): ConsumerGroupMember {
  switch (member.state) {
    case MemberState.STABLE:
      return member.memberEpoch !== input.targetAssignmentEpoch ? computeNextAssignment(member, member.memberEpoch, input) : member
    case MemberState.UNREVOKED_PARTITIONS:
      if (ownsRevokedPartitions(input.ownedTopicPartitions, member.partitionsPendingRevocation)) return member
      return computeNextAssignment(member, member.memberEpoch + 1, input)
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

function computeNextAssignment(member: ConsumerGroupMember, memberEpoch: number, input: CurrentAssignmentInput): ConsumerGroupMember {
  const { targetAssignment, targetAssignmentEpoch, currentPartitionEpoch } = input
  let hasUnreleasedPartitions = false
  const assigned = new Map<string, Set<number>>()
  const pendingRevocation = new Map<string, Set<number>>()
  const pendingAssignment = new Map<string, Set<number>>()
  const topicIds = new Set([...targetAssignment.keys(), ...member.assignedPartitions.keys()])
  for (const topicId of topicIds) {
    const target = targetAssignment.get(topicId) ?? new Set<number>()
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
