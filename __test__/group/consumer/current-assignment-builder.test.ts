/**
 * The reconciliation of a KIP-848 member (ts/group/consumer/current-assignment-builder.ts), with
 * the cases of Kafka's CurrentAssignmentBuilderTest: each state's transitions, and that a
 * partition still owned elsewhere is never handed over and one to revoke is kept until the
 * member stops reporting it.
 */
import { describe, expect, it } from 'vitest'
import type { Assignment } from '../../../ts/group/consumer/assignment.js'
import { MemberState, newMember, updateMember, type ConsumerGroupMember } from '../../../ts/group/consumer/consumer-group-member.js'
import { buildCurrentAssignment, type OwnedTopicPartitions } from '../../../ts/group/consumer/current-assignment-builder.js'

const T1 = 'aa01'
const T2 = 'aa02'

function mk(t1: number[], t2: number[]): Assignment {
  const out = new Map<string, Set<number>>()
  if (t1.length) out.set(T1, new Set(t1))
  if (t2.length) out.set(T2, new Set(t2))
  return out
}

function member(state: MemberState, memberEpoch: number, previousMemberEpoch: number, assigned: Assignment, pending: Assignment = new Map()): ConsumerGroupMember {
  return updateMember(newMember('member'), { state, memberEpoch, previousMemberEpoch, assignedPartitions: assigned, partitionsPendingRevocation: pending })
}

function owned(t1: number[], t2: number[]): OwnedTopicPartitions {
  return [
    { topicId: T1, partitions: t1 },
    { topicId: T2, partitions: t2 },
  ]
}

const step = (m: ConsumerGroupMember, epoch: number, target: Assignment, partitionEpoch: (topicId: string, p: number) => number, ownedTopicPartitions: OwnedTopicPartitions | null = null) =>
  buildCurrentAssignment(m, { targetAssignmentEpoch: epoch, targetAssignment: target, currentPartitionEpoch: partitionEpoch, ownedTopicPartitions })

const free = () => -1
const ownedAt10 = () => 10

describe('CurrentAssignmentBuilder (Kafka CurrentAssignmentBuilderTest)', () => {
  it('stable to stable: the next epoch with the same partitions', () => {
    const m = member(MemberState.STABLE, 10, 10, mk([1, 2, 3], [4, 5, 6]))
    expect(step(m, 11, mk([1, 2, 3], [4, 5, 6]), free)).toEqual(member(MemberState.STABLE, 11, 10, mk([1, 2, 3], [4, 5, 6])))
  })

  it('stable to stable with new partitions that are free', () => {
    const m = member(MemberState.STABLE, 10, 10, mk([1, 2, 3], [4, 5, 6]))
    expect(step(m, 11, mk([1, 2, 3, 4], [4, 5, 6, 7]), free)).toEqual(member(MemberState.STABLE, 11, 10, mk([1, 2, 3, 4], [4, 5, 6, 7])))
  })

  it('stable to unrevoked partitions: stays in its epoch, keeps only the partitions still in its target', () => {
    const m = member(MemberState.STABLE, 10, 10, mk([1, 2, 3], [4, 5, 6]))
    expect(step(m, 11, mk([2, 3, 4], [5, 6, 7]), free)).toEqual(member(MemberState.UNREVOKED_PARTITIONS, 10, 10, mk([2, 3], [5, 6]), mk([1], [4])))
  })

  it('stable to unreleased partitions: new partitions still owned by another member are not given', () => {
    const m = member(MemberState.STABLE, 10, 10, mk([1, 2, 3], [4, 5, 6]))
    expect(step(m, 11, mk([1, 2, 3, 4], [4, 5, 6, 7]), ownedAt10)).toEqual(member(MemberState.UNRELEASED_PARTITIONS, 11, 10, mk([1, 2, 3], [4, 5, 6])))
  })

  it('stable to unreleased when the owned partitions no longer hold the ones to revoke', () => {
    const m = member(MemberState.STABLE, 10, 10, mk([1, 2, 3], [4, 5, 6]))
    const r = step(m, 11, mk([1, 2, 3], [4, 5, 7]), (topicId) => (topicId === T2 ? 10 : -1), [])
    expect(r).toEqual(member(MemberState.UNRELEASED_PARTITIONS, 11, 10, mk([1, 2, 3], [4, 5])))
  })

  it('unrevoked to stable once the member reports the partitions revoked', () => {
    const m = member(MemberState.UNREVOKED_PARTITIONS, 10, 10, mk([2, 3], [5, 6]), mk([1], [4]))
    expect(step(m, 11, mk([2, 3], [5, 6]), free, owned([2, 3], [5, 6]))).toEqual(member(MemberState.STABLE, 11, 10, mk([2, 3], [5, 6])))
  })

  it('remains unrevoked while the owned partitions are unknown or still hold one to revoke', () => {
    const m = member(MemberState.UNREVOKED_PARTITIONS, 10, 10, mk([2, 3], [5, 6]), mk([1], [4]))
    const target = mk([3], [6])
    expect(step(m, 12, target, free, null)).toBe(m)
    expect(step(m, 12, target, free, owned([1, 2, 3], [5, 6]))).toBe(m)
    expect(step(m, 12, target, free, owned([2, 3], [4, 5, 6]))).toBe(m)
  })

  it('unrevoked to unrevoked: revoked, then a newer target revokes more, in the same epoch (Kafka 4.4)', () => {
    const m = member(MemberState.UNREVOKED_PARTITIONS, 10, 10, mk([2, 3], [5, 6]), mk([1], [4]))
    expect(step(m, 12, mk([3], [6]), free, owned([2, 3], [5, 6]))).toEqual(member(MemberState.UNREVOKED_PARTITIONS, 10, 10, mk([3], [6]), mk([2], [5])))
  })

  it('unrevoked to unreleased partitions', () => {
    const m = member(MemberState.UNREVOKED_PARTITIONS, 11, 10, mk([2, 3], [5, 6]))
    expect(step(m, 11, mk([2, 3, 4], [5, 6, 7]), ownedAt10, owned([2, 3], [5, 6]))).toEqual(member(MemberState.UNRELEASED_PARTITIONS, 11, 11, mk([2, 3], [5, 6])))
  })

  it('unreleased to stable at a newer epoch', () => {
    const m = member(MemberState.UNRELEASED_PARTITIONS, 11, 11, mk([2, 3], [5, 6]))
    expect(step(m, 12, mk([2, 3], [5, 6]), ownedAt10)).toEqual(member(MemberState.STABLE, 12, 11, mk([2, 3], [5, 6])))
  })

  it('unreleased to stable once the partitions are released', () => {
    const m = member(MemberState.UNRELEASED_PARTITIONS, 11, 11, mk([2, 3], [5, 6]))
    expect(step(m, 11, mk([2, 3, 4], [5, 6, 7]), free)).toEqual(member(MemberState.STABLE, 11, 11, mk([2, 3, 4], [5, 6, 7])))
  })

  it('unreleased stays unreleased while they are still owned', () => {
    const m = member(MemberState.UNRELEASED_PARTITIONS, 11, 11, mk([2, 3], [5, 6]))
    expect(step(m, 11, mk([2, 3, 4], [5, 6, 7]), ownedAt10)).toEqual(m)
  })

  it('unreleased to unrevoked when a newer target takes partitions away', () => {
    const m = member(MemberState.UNRELEASED_PARTITIONS, 11, 11, mk([2, 3], [5, 6]))
    expect(step(m, 12, mk([3], [6]), ownedAt10)).toEqual(member(MemberState.UNREVOKED_PARTITIONS, 11, 11, mk([3], [6]), mk([2], [5])))
  })

  describe('a subscription change (Kafka 4.4 withHasSubscriptionChanged)', () => {
    const changed = (m: ConsumerGroupMember, epoch: number, target: Assignment, subscribed: string[], ownedTopicPartitions: OwnedTopicPartitions | null) =>
      buildCurrentAssignment(m, {
        targetAssignmentEpoch: epoch,
        targetAssignment: target,
        currentPartitionEpoch: free,
        ownedTopicPartitions,
        subscribedTopicIds: new Set(subscribed),
        hasSubscriptionChanged: true,
      })

    it('stable: the partitions of a topic no longer subscribed are revoked at once, before any new target', () => {
      const m = member(MemberState.STABLE, 10, 10, mk([1, 2, 3], [4, 5, 6]))
      expect(changed(m, 10, mk([1, 2, 3], [4, 5, 6]), [T1], null)).toEqual(member(MemberState.UNREVOKED_PARTITIONS, 10, 10, mk([1, 2, 3], []), mk([], [4, 5, 6])))
      // Already reported revoked: it simply keeps the rest.
      expect(changed(m, 10, mk([1, 2, 3], [4, 5, 6]), [T1], owned([1, 2, 3], []))).toEqual(member(MemberState.STABLE, 10, 10, mk([1, 2, 3], [])))
      // Still subscribed to both: nothing changes.
      expect(changed(m, 10, mk([1, 2, 3], [4, 5, 6]), [T1, T2], null)).toBe(m)
    })

    it('unrevoked: a topic left while revoking joins the partitions pending revocation', () => {
      const m = member(MemberState.UNREVOKED_PARTITIONS, 10, 10, mk([2, 3], [5, 6]), mk([1], [4]))
      expect(changed(m, 11, mk([2, 3], [5, 6]), [T1], owned([1, 2, 3], [4, 5, 6]))).toEqual(member(MemberState.UNREVOKED_PARTITIONS, 10, 10, mk([2, 3], []), mk([1], [4, 5, 6])))
    })

    it("a newer target's partitions of a topic no longer subscribed are not given", () => {
      const m = member(MemberState.STABLE, 10, 10, mk([1, 2], []))
      expect(changed(m, 11, mk([1, 2], [3]), [T1], owned([1, 2], []))).toEqual(member(MemberState.STABLE, 11, 10, mk([1, 2], [])))
    })
  })
})
