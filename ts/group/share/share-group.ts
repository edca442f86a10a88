/**
 * A share group (KIP-932, Kafka's `ShareGroup`) and its members (Kafka's `ShareGroupMember`):
 * the group epoch (bumped by every change of membership, subscriptions or subscribed topics),
 * the target assignment and its epoch, and the partitions whose share state is initialized
 * (only those are assigned, as Kafka assigns a partition once the share coordinator initialized
 * its state). Unlike a consumer group, a member takes its target at once: several members may
 * read one partition, so nothing waits for a partition to be revoked elsewhere.
 *
 * The state (Kafka's `ShareGroupState`): Empty without members, else Stable.
 */
import { EMPTY_ASSIGNMENT, type Assignment } from '../consumer/assignment.js'
import type { SubscribedTopic } from '../consumer/consumer-group.js'

export type ShareGroupState = 'Empty' | 'Stable'

/** memberEpoch -1: the member leaves the group. */
export const LEAVE_GROUP_MEMBER_EPOCH = -1

/** A member: immutable, every change builds a new one. */
export interface ShareGroupMember {
  readonly memberId: string
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
  readonly rackId: string | null
  readonly clientId: string
  readonly clientHost: string
  /** Sorted, without duplicates. */
  readonly subscribedTopicNames: readonly string[]
  readonly assignedPartitions: Assignment
}

export function newShareGroupMember(memberId: string): ShareGroupMember {
  return { memberId, memberEpoch: 0, previousMemberEpoch: 0, rackId: null, clientId: '', clientHost: '', subscribedTopicNames: [], assignedPartitions: EMPTY_ASSIGNMENT }
}

/** A topic whose share state is initialized for the group: its name and partitions. */
export interface InitializedTopic {
  readonly topicName: string
  readonly partitions: ReadonlySet<number>
}

export class ShareGroup {
  readonly groupId: string
  /** 1 for a new group, as Kafka 4.4: its first member joins at epoch 2. */
  groupEpoch = 1
  assignmentEpoch = 1
  /** When the target assignment was last computed (ms; 0: never; group.share.assignment.interval.ms counts from it). */
  lastAssignmentMs = 0
  readonly members = new Map<string, ShareGroupMember>()
  readonly targetAssignment = new Map<string, Assignment>()
  /** The subscribed topics by name, as of the last group epoch. */
  subscriptionMetadata = new Map<string, SubscribedTopic>()
  /** Topic id (hex) → the partitions whose share state is initialized (ShareGroupStatePartitionMetadata). */
  readonly initializedTopics = new Map<string, InitializedTopic>()

  constructor(groupId: string) {
    this.groupId = groupId
  }

  state(): ShareGroupState {
    return this.members.size === 0 ? 'Empty' : 'Stable'
  }

  targetAssignmentOf(memberId: string): Assignment {
    return this.targetAssignment.get(memberId) ?? EMPTY_ASSIGNMENT
  }

  /** Whether the partition's share state is initialized (it may be assigned). */
  isInitialized(topicId: string, partition: number): boolean {
    return this.initializedTopics.get(topicId)?.partitions.has(partition) === true
  }

  /** The topic names some member subscribes to. */
  subscribedTopicNames(): Set<string> {
    const out = new Set<string>()
    for (const m of this.members.values()) for (const t of m.subscribedTopicNames) out.add(t)
    return out
  }

  removeMember(memberId: string): void {
    this.members.delete(memberId)
    this.targetAssignment.delete(memberId)
  }
}
