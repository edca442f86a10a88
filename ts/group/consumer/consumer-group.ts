/**
 * A KIP-848 consumer group (Kafka's `ConsumerGroup`): its members, the group epoch (bumped by
 * every change of membership, subscriptions or subscribed topics' metadata, which it hashes), the target
 * assignment and its epoch, and which member epoch owns each partition (`currentPartitionEpoch`),
 * so a partition is never given to a member while another still owns it.
 *
 * Each member's partitions (assigned or pending revocation) carry the epoch at which they were
 * assigned to it (KIP-1251's assignment epochs): a commit with an older member epoch than the
 * member's is still taken for partitions assigned at or before that epoch, so a commit racing
 * with an epoch bump is not refused (`validateOffsetCommit`).
 *
 * Members of the classic protocol (a classic group upgraded, or a classic consumer joining a
 * consumer group: ./classic-group-migration.ts) sit next to the others, with their session
 * timeout and JoinGroup protocols; they commit with their member epoch as generation.
 *
 * The state (Kafka's `ConsumerGroupState`): Empty without members; Assigning while the target
 * assignment is older than the group epoch; Reconciling while a member is not stable at the
 * target epoch; else Stable.
 */
import { createHash } from 'node:crypto'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { Assignment } from './assignment.js'
import { EMPTY_ASSIGNMENT } from './assignment.js'
import { isReconciledTo, MemberState, regexOf, useClassicProtocol, type ConsumerGroupMember } from './consumer-group-member.js'
import { CONSUMER_PROTOCOL_TYPE } from '../../protocol/consumer-protocol.js'

export type ConsumerGroupState = 'Empty' | 'Assigning' | 'Reconciling' | 'Stable'

/**
 * A subscribed topic as the group's target assignment saw it (Kafka's `TopicMetadata`, and what
 * Kafka 4.4 hashes into the group's metadata hash, KIP-1101: the id, the partition count and each
 * partition's racks): a change of any of them bumps the group epoch.
 */
export interface SubscribedTopic {
  readonly topicId: string
  readonly numPartitions: number
  /**
   * Each partition's racks: the broker.rack of every broker holding one of its replicas (a
   * broker without a rack adds none), sorted, a rack once per replica as Kafka lists them.
   */
  readonly partitionRacks: ReadonlyArray<readonly string[]>
}

/**
 * The group's metadata hash (Kafka 4.4's `computeGroupHash` over `computeTopicHash`, KIP-1101):
 * over the subscribed topics by name, each one's id, name, partition count and every partition's
 * racks; 0 without topics. Written with the group epoch (ConsumerGroupMetadata's metadataHash),
 * it tells a coordinator that loads the group whether the topics changed meanwhile. Kafka hashes
 * with XXH3; ferrolog with the first 8 bytes of a SHA-256 over the same fields, so the values
 * differ from Kafka's (a Kafka coordinator loading ferrolog's records would bump the epoch once).
 */
export function subscriptionMetadataHash(metadata: ReadonlyMap<string, SubscribedTopic>): bigint {
  if (metadata.size === 0) return 0n
  const hash = createHash('sha256')
  const int32 = (n: number) => {
    const b = Buffer.alloc(4)
    b.writeInt32BE(n)
    hash.update(b)
  }
  const string = (s: string) => {
    int32(Buffer.byteLength(s))
    hash.update(s)
  }
  for (const name of [...metadata.keys()].sort()) {
    const t = metadata.get(name)!
    hash.update(Buffer.from([0]))
    hash.update(Buffer.from(t.topicId, 'hex'))
    string(name)
    int32(t.numPartitions)
    for (let p = 0; p < t.numPartitions; p++) {
      int32(p)
      for (const rack of t.partitionRacks[p] ?? []) string(rack)
    }
  }
  return hash.digest().readBigInt64BE(0)
}

/** What a regular expression of the group matched (Kafka's `ResolvedRegularExpression`, ./topic-regex-resolver.ts). */
export interface ResolvedRegularExpression {
  /** The names of the matching topics the member that triggered the resolution may DESCRIBE. */
  readonly topics: ReadonlySet<string>
  /** The version of the topics it was resolved against (-1: ferrolog keeps no metadata offset). */
  readonly version: bigint
  /** When it was resolved (ms). */
  readonly timestamp: number
}

/** An error answered to a group request, with Kafka's code and message. */
export class GroupApiError extends Error {
  readonly errorCode: number
  constructor(errorCode: number, message: string) {
    super(message)
    this.errorCode = errorCode
  }
}

export class ConsumerGroup {
  readonly groupId: string
  /**
   * A new group's epochs are 1, as Kafka 4.4's (ModernGroup's group epoch,
   * TargetAssignmentMetadata.INITIAL): its first member joins at epoch 2.
   */
  groupEpoch = 1
  /** The epoch of the target assignment (Kafka's `assignmentEpoch`). */
  assignmentEpoch = 1
  /** When the target assignment was computed (ms since the epoch; 0: never), Kafka's `assignmentTimestamp`. */
  assignmentTimestamp = 0
  readonly members = new Map<string, ConsumerGroupMember>()
  /** Static members: instance id to member id. */
  readonly staticMembers = new Map<string, string>()
  /** Each member's target assignment. */
  readonly targetAssignment = new Map<string, Assignment>()
  /** The group's regular expressions and the topics each matched at its last resolution. */
  readonly resolvedRegularExpressions = new Map<string, ResolvedRegularExpression>()
  /** The subscribed topics by name, as of the last group epoch. */
  subscriptionMetadata = new Map<string, SubscribedTopic>()
  /**
   * `subscriptionMetadataHash` of the subscribed topics as of the last group epoch (replayed from
   * the group's record: a load looks the topics up again, and a different hash bumps the epoch).
   */
  metadataHash = 0n
  /** Topic id → partition → the epoch of the member owning it. */
  private readonly partitionEpochs = new Map<string, Map<number, number>>()
  /** Member id → `topicId:partition` → the epoch at which the partition was assigned to it. */
  private readonly assignmentEpochs = new Map<string, Map<string, number>>()

  constructor(groupId: string) {
    this.groupId = groupId
  }

  state(): ConsumerGroupState {
    if (this.members.size === 0) return 'Empty'
    if (this.groupEpoch > this.assignmentEpoch) return 'Assigning'
    for (const m of this.members.values()) if (!isReconciledTo(m, this.assignmentEpoch)) return 'Reconciling'
    return 'Stable'
  }

  member(memberId: string): ConsumerGroupMember | undefined {
    return this.members.get(memberId)
  }

  staticMember(instanceId: string): ConsumerGroupMember | undefined {
    const memberId = this.staticMembers.get(instanceId)
    return memberId === undefined ? undefined : this.members.get(memberId)
  }

  /** The member's target assignment (empty when it has none). */
  targetAssignmentOf(memberId: string): Assignment {
    return this.targetAssignment.get(memberId) ?? EMPTY_ASSIGNMENT
  }

  /** The epoch of the member owning the partition, -1 when it is free. */
  currentPartitionEpoch(topicId: string, partition: number): number {
    return this.partitionEpochs.get(topicId)?.get(partition) ?? -1
  }

  /**
   * Adds or replaces a member, moving its partitions' epochs (assigned and pending revocation)
   * from its old value to the new one. Throws when a partition would be owned by two members.
   */
  updateMember(member: ConsumerGroupMember, assignmentEpochs?: (topicId: string, partition: number) => number | undefined): void {
    const previous = this.assignmentEpochs.get(member.memberId)
    const epochs = new Map<string, number>()
    for (const a of [member.assignedPartitions, member.partitionsPendingRevocation]) {
      for (const [topicId, partitions] of a) {
        for (const p of partitions) {
          const key = `${topicId}:${p}`
          epochs.set(key, assignmentEpochs?.(topicId, p) ?? previous?.get(key) ?? member.memberEpoch)
        }
      }
    }
    this.assignmentEpochs.set(member.memberId, epochs)
    const old = this.members.get(member.memberId)
    if (old) {
      this.removePartitionEpochs(old.assignedPartitions, old.memberEpoch)
      this.removePartitionEpochs(old.partitionsPendingRevocation, old.memberEpoch)
      if (old.instanceId !== null && old.instanceId !== member.instanceId) this.staticMembers.delete(old.instanceId)
    }
    this.members.set(member.memberId, member)
    if (member.instanceId !== null) this.staticMembers.set(member.instanceId, member.memberId)
    this.addPartitionEpochs(member.assignedPartitions, member.memberEpoch)
    this.addPartitionEpochs(member.partitionsPendingRevocation, member.memberEpoch)
  }

  /** Removes a member, its target assignment and its partitions' epochs (they are free again). */
  removeMember(memberId: string): void {
    const old = this.members.get(memberId)
    if (!old) return
    this.removePartitionEpochs(old.assignedPartitions, old.memberEpoch)
    this.removePartitionEpochs(old.partitionsPendingRevocation, old.memberEpoch)
    if (old.instanceId !== null && this.staticMembers.get(old.instanceId) === memberId) this.staticMembers.delete(old.instanceId)
    this.members.delete(memberId)
    this.targetAssignment.delete(memberId)
    this.assignmentEpochs.delete(memberId)
  }

  /** The epoch at which the member was given the partition (assigned or pending revocation); undefined when it does not own it. */
  partitionAssignmentEpoch(memberId: string, topicId: string, partition: number): number | undefined {
    return this.assignmentEpochs.get(memberId)?.get(`${topicId}:${partition}`)
  }

  /** How many members subscribe to each topic name, by name or through a resolved regex. */
  subscribedTopicNames(): Map<string, number> {
    const out = new Map<string, number>()
    for (const m of this.members.values()) for (const t of this.memberTopicNames(m)) out.set(t, (out.get(t) ?? 0) + 1)
    return out
  }

  /** The topic names a member subscribes to: its names and the topics its regex resolved to. */
  memberTopicNames(member: ConsumerGroupMember): Set<string> {
    const names = new Set(member.subscribedTopicNames)
    const regex = regexOf(member)
    if (regex !== null) for (const t of this.resolvedRegularExpressions.get(regex)?.topics ?? []) names.add(t)
    return names
  }

  /** How many members speak the classic protocol. */
  numClassicProtocolMembers(): number {
    let n = 0
    for (const m of this.members.values()) if (useClassicProtocol(m)) n++
    return n
  }

  /**
   * Kafka's `supportsClassicProtocols`: a classic member may join with these protocols when its
   * protocol type is `consumer` and one of them is supported by every classic member (any, when
   * the group is empty).
   */
  supportsClassicProtocols(protocolType: string, protocols: readonly string[]): boolean {
    if (protocolType !== CONSUMER_PROTOCOL_TYPE) return false
    if (this.members.size === 0) return protocols.length > 0
    const classic = [...this.members.values()].filter(useClassicProtocol)
    return protocols.some((name) => classic.every((m) => m.classicMemberMetadata!.supportedProtocols.some((p) => p.name === name)))
  }

  /** Kafka's `allMembersUseClassicProtocolExcept`: every member but `memberId` (a consumer-protocol member) speaks the classic protocol. */
  allMembersUseClassicProtocolExcept(memberId: string): boolean {
    const member = this.members.get(memberId)
    return member !== undefined && !useClassicProtocol(member) && this.numClassicProtocolMembers() === this.members.size - 1
  }

  /**
   * Kafka's `waitingOnUnreleasedPartition`: the member is UNRELEASED_PARTITIONS and a partition of
   * its target is still owned by another member.
   */
  waitingOnUnreleasedPartition(member: ConsumerGroupMember): boolean {
    if (member.state !== MemberState.UNRELEASED_PARTITIONS) return false
    for (const [topicId, partitions] of this.targetAssignmentOf(member.memberId)) {
      const assigned = member.assignedPartitions.get(topicId)
      for (const p of partitions) if (!assigned?.has(p) && this.currentPartitionEpoch(topicId, p) !== -1) return true
    }
    return false
  }

  /** Whether a member subscribes to the topic (OffsetDelete refuses it). */
  isSubscribedToTopic(topic: string): boolean {
    for (const m of this.members.values()) if (this.memberTopicNames(m).has(topic)) return true
    return false
  }

  /** How many members subscribe to each regex (Kafka's `subscribedRegularExpressions`). */
  subscribedRegularExpressions(): Map<string, number> {
    const out = new Map<string, number>()
    for (const m of this.members.values()) {
      const regex = regexOf(m)
      if (regex !== null) out.set(regex, (out.get(regex) ?? 0) + 1)
    }
    return out
  }

  /** How many members subscribe to `regex`. */
  numSubscribedMembers(regex: string): number {
    let n = 0
    for (const m of this.members.values()) if (regexOf(m) === regex) n++
    return n
  }

  /** When the group's regexes were last resolved (-Infinity: never). */
  lastResolvedRegularExpressionRefreshTimeMs(): number {
    let last = Number.NEGATIVE_INFINITY
    for (const r of this.resolvedRegularExpressions.values()) last = Math.max(last, r.timestamp)
    return last
  }

  /**
   * Kafka's `validateOffsetCommit` for consumer groups: with no members, a commit without a
   * member epoch (< 0: the admin client, or a consumer not in the group) is taken; otherwise the
   * member must exist (UNKNOWN_MEMBER_ID), commit with OffsetCommit v9+ unless transactional
   * (UNSUPPORTED_VERSION), in its current epoch, or an older one (KIP-1251, Kafka 4.4): then each
   * partition committed (`partitions`: topic ids and partitions) must be the member's, assigned at
   * or before that epoch. A newer epoch, or a partition that fails, is STALE_MEMBER_EPOCH.
   */
  validateOffsetCommit(
    memberId: string,
    memberEpoch: number,
    isTransactional: boolean,
    apiVersion: number,
    partitions: ReadonlyArray<{ topicId: string | undefined; partition: number; topic: string }> = [],
  ): void {
    if (memberEpoch < 0 && this.members.size === 0) return
    const member = this.members.get(memberId)
    if (!member) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${this.groupId}.`)
    // A classic member commits with its generation, which must be its member epoch (ILLEGAL_GENERATION).
    if (useClassicProtocol(member)) return this.validateMemberEpoch(memberEpoch, member.memberEpoch, true)
    if (!isTransactional && apiVersion < 9) throw new GroupApiError(ErrorCode.UNSUPPORTED_VERSION, 'OffsetCommit version 9 or above must be used by members using the modern group protocol')
    if (memberEpoch === member.memberEpoch) return
    if (memberEpoch > member.memberEpoch) throw new GroupApiError(ErrorCode.STALE_MEMBER_EPOCH, `Received member epoch ${memberEpoch} is newer than current member epoch ${member.memberEpoch}.`)
    for (const { topicId, partition, topic } of partitions) {
      const assigned = topicId === undefined ? undefined : this.partitionAssignmentEpoch(memberId, topicId, partition)
      if (assigned === undefined) throw new GroupApiError(ErrorCode.STALE_MEMBER_EPOCH, `Partition ${topic}-${partition} is not assigned or pending revocation for member.`)
      if (memberEpoch < assigned)
        throw new GroupApiError(ErrorCode.STALE_MEMBER_EPOCH, `Received member epoch ${memberEpoch} is older than assignment epoch ${assigned} for partition ${topic}-${partition}.`)
    }
  }

  /**
   * Kafka's `validateOffsetFetch`: a fetch without member (null id, epoch < 0) is taken; else
   * the member must exist (UNKNOWN_MEMBER_ID) and fetch in its current epoch (STALE_MEMBER_EPOCH).
   */
  validateOffsetFetch(memberId: string | null, memberEpoch: number): void {
    if (memberId === null && memberEpoch < 0) return
    const member = memberId === null ? undefined : this.members.get(memberId)
    if (!member) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${this.groupId}.`)
    this.validateMemberEpoch(memberEpoch, member.memberEpoch, useClassicProtocol(member))
  }

  /** Kafka's `validateMemberEpoch`: a classic member's generation that is not its epoch is ILLEGAL_GENERATION, else STALE_MEMBER_EPOCH. */
  private validateMemberEpoch(received: number, expected: number, useClassic: boolean): void {
    if (received === expected) return
    if (useClassic) throw new GroupApiError(ErrorCode.ILLEGAL_GENERATION, `The received generation id ${received} does not match the expected member epoch ${expected}.`)
    throw new GroupApiError(ErrorCode.STALE_MEMBER_EPOCH, `The received member epoch ${received} does not match the expected member epoch ${expected}.`)
  }

  private addPartitionEpochs(assignment: Assignment, epoch: number): void {
    for (const [topicId, partitions] of assignment) {
      let epochs = this.partitionEpochs.get(topicId)
      if (!epochs) this.partitionEpochs.set(topicId, (epochs = new Map()))
      for (const p of partitions) {
        const owner = epochs.get(p)
        if (owner !== undefined) throw new Error(`Cannot set the epoch of ${topicId}-${p} to ${epoch} because the partition is still owned at epoch ${owner}`)
        epochs.set(p, epoch)
      }
    }
  }

  private removePartitionEpochs(assignment: Assignment, epoch: number): void {
    for (const [topicId, partitions] of assignment) {
      const epochs = this.partitionEpochs.get(topicId)
      if (!epochs) continue
      for (const p of partitions) if (epochs.get(p) === epoch) epochs.delete(p)
      if (epochs.size === 0) this.partitionEpochs.delete(topicId)
    }
  }
}
