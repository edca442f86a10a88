/**
 * A member of a KIP-848 consumer group (Kafka's `ConsumerGroupMember`): its epoch and the epoch
 * before it, its reconciliation state (`MemberState`), its subscription, and its current
 * assignment: the partitions it owns (`assignedPartitions`) and those it must give up first
 * (`partitionsPendingRevocation`). Members are immutable values: every change builds a new one
 * (`updateMember`), so the group can tell whether a heartbeat changed anything.
 */
import { EMPTY_ASSIGNMENT, assignmentEquals, type Assignment } from './assignment.js'

/** Kafka's `MemberState`, with its names. */
export const MemberState = {
  /** Owns its whole target assignment, at the target epoch. */
  STABLE: 'stable',
  /** Must revoke partitions (still owned, in the previous epoch) before it moves on. */
  UNREVOKED_PARTITIONS: 'unrevoked_partitions',
  /** At the target epoch, waiting for partitions other members still own. */
  UNRELEASED_PARTITIONS: 'unreleased_partitions',
} as const
export type MemberState = (typeof MemberState)[keyof typeof MemberState]

/** memberEpoch -1: the member leaves the group. */
export const LEAVE_GROUP_MEMBER_EPOCH = -1
/** memberEpoch -2: a static member leaves for a while, keeping its partitions until its session ends. */
export const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

export interface ConsumerGroupMember {
  readonly memberId: string
  readonly memberEpoch: number
  readonly previousMemberEpoch: number
  readonly state: MemberState
  readonly instanceId: string | null
  readonly rackId: string | null
  readonly rebalanceTimeoutMs: number
  readonly clientId: string
  readonly clientHost: string
  /** Sorted, without duplicates. */
  readonly subscribedTopicNames: readonly string[]
  /** The RE2 regular expression of the topics it subscribes to as well; null or '' for none. */
  readonly subscribedTopicRegex: string | null
  readonly serverAssignorName: string | null
  readonly assignedPartitions: Assignment
  readonly partitionsPendingRevocation: Assignment
  /**
   * A member that speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat) in a consumer
   * group: its session timeout and the protocols of its last JoinGroup (Kafka's
   * ClassicMemberMetadata); null for a member of the consumer protocol.
   */
  readonly classicMemberMetadata: ClassicMemberMetadata | null
}

/** What a classic member joined with (Kafka's ConsumerGroupMemberMetadataValue.ClassicMemberMetadata). */
export interface ClassicMemberMetadata {
  readonly sessionTimeoutMs: number
  /** In the member's order of preference; each with its embedded consumer protocol subscription. */
  readonly supportedProtocols: ReadonlyArray<{ readonly name: string; readonly metadata: Buffer }>
}

/** Whether the member speaks the classic protocol (Kafka's `useClassicProtocol`). */
export function useClassicProtocol(member: ConsumerGroupMember): boolean {
  return member.classicMemberMetadata !== null
}

/** A new member: epoch 0, stable, nothing assigned, nothing subscribed. */
export function newMember(memberId: string): ConsumerGroupMember {
  return {
    memberId,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: MemberState.STABLE,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: -1,
    clientId: '',
    clientHost: '',
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    serverAssignorName: null,
    assignedPartitions: EMPTY_ASSIGNMENT,
    partitionsPendingRevocation: EMPTY_ASSIGNMENT,
    classicMemberMetadata: null,
  }
}

/** A copy with `changes`; Kafka's `updateMemberEpoch` is `{ memberEpoch: e, previousMemberEpoch: m.memberEpoch }`. */
export function updateMember(member: ConsumerGroupMember, changes: Partial<ConsumerGroupMember>): ConsumerGroupMember {
  return { ...member, ...changes }
}

/** Kafka's `isReconciledTo`: stable at `targetAssignmentEpoch`. */
export function isReconciledTo(member: ConsumerGroupMember, targetAssignmentEpoch: number): boolean {
  return member.state === MemberState.STABLE && member.memberEpoch === targetAssignmentEpoch
}

/** Every field the same. */
export function memberEquals(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return (
    a.memberId === b.memberId &&
    a.memberEpoch === b.memberEpoch &&
    a.previousMemberEpoch === b.previousMemberEpoch &&
    a.state === b.state &&
    a.instanceId === b.instanceId &&
    a.rackId === b.rackId &&
    a.rebalanceTimeoutMs === b.rebalanceTimeoutMs &&
    a.clientId === b.clientId &&
    a.clientHost === b.clientHost &&
    a.serverAssignorName === b.serverAssignorName &&
    a.subscribedTopicRegex === b.subscribedTopicRegex &&
    sameTopicNames(a.subscribedTopicNames, b.subscribedTopicNames) &&
    assignmentEquals(a.assignedPartitions, b.assignedPartitions) &&
    assignmentEquals(a.partitionsPendingRevocation, b.partitionsPendingRevocation) &&
    classicMetadataEquals(a.classicMemberMetadata, b.classicMemberMetadata)
  )
}

function classicMetadataEquals(a: ClassicMemberMetadata | null, b: ClassicMemberMetadata | null): boolean {
  if (a === null || b === null) return a === b
  return (
    a.sessionTimeoutMs === b.sessionTimeoutMs &&
    a.supportedProtocols.length === b.supportedProtocols.length &&
    a.supportedProtocols.every((p, i) => p.name === b.supportedProtocols[i]!.name && p.metadata.equals(b.supportedProtocols[i]!.metadata))
  )
}

export function sameTopicNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i])
}

/** The member's regex, null when it has none (Kafka's `subscribedTopicRegex` is also '' for none). */
export function regexOf(member: ConsumerGroupMember): string | null {
  return member.subscribedTopicRegex === null || member.subscribedTopicRegex === '' ? null : member.subscribedTopicRegex
}

/** Topic names as members hold them: sorted, without duplicates. */
export function normalizeTopicNames(names: readonly string[]): string[] {
  return [...new Set(names)].sort()
}
