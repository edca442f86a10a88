/**
 * One classic group (Kafka's `GroupMetadata`): its state, members, generation, leader and
 * chosen protocol.
 *
 * States and the only transitions allowed (Kafka's `validPreviousStates`):
 *
 *   Empty               <- PreparingRebalance            no members (offsets may remain)
 *   PreparingRebalance  <- Empty, Stable, CompletingRebalance
 *                                                        JoinGroup answers are held
 *   CompletingRebalance <- PreparingRebalance            the leader is computing the assignment
 *   Stable              <- CompletingRebalance           assignments handed out
 *   Dead                <- any                           the group is gone
 *
 * The state machine's rules live in ./group-coordinator.ts; this class keeps the data and the
 * small decisions on it (who has joined, which protocol wins).
 */
import type { JoinGroupRequestProtocol } from '../protocol/apis/join-group.js'
import { CONSUMER_PROTOCOL_TYPE, decodeSubscriptionTopics } from '../protocol/consumer-protocol.js'
import type { MemberMetadata } from './member-metadata.js'

export const GroupState = {
  Empty: 'Empty',
  PreparingRebalance: 'PreparingRebalance',
  CompletingRebalance: 'CompletingRebalance',
  Stable: 'Stable',
  Dead: 'Dead',
} as const

export type GroupState = (typeof GroupState)[keyof typeof GroupState]

const VALID_PREVIOUS_STATES: Record<GroupState, readonly GroupState[]> = {
  Empty: [GroupState.PreparingRebalance],
  PreparingRebalance: [GroupState.Empty, GroupState.Stable, GroupState.CompletingRebalance],
  CompletingRebalance: [GroupState.PreparingRebalance],
  Stable: [GroupState.CompletingRebalance],
  Dead: [GroupState.Empty, GroupState.PreparingRebalance, GroupState.CompletingRebalance, GroupState.Stable, GroupState.Dead],
}

/** The join phase of a rebalance: when it ends at the latest, and the initial delay (Kafka's `InitialDelayedJoin`). */
export interface JoinPhase {
  deadlineMs: number
  /** Set while the group waits group.initial.rebalance.delay.ms for more first members. */
  initialDelay: { delayMs: number; remainingMs: number } | null
}

export class GroupMetadata {
  readonly groupId: string
  private readonly clock: () => number
  private stateValue: GroupState = GroupState.Empty
  /** When the group entered its state (Kafka's `currentStateTimestamp`, ms); null when not known (a record without it). */
  currentStateTimestamp: number | null
  generationId = 0
  protocolType: string | null = null
  protocolName: string | null = null
  leaderId: string | null = null
  readonly members = new Map<string, MemberMetadata>()
  /** Member ids handed out with MEMBER_ID_REQUIRED whose second JoinGroup has not come yet, with their deadline. */
  readonly pendingMembers = new Map<string, number>()
  /** The running join phase, while PreparingRebalance. */
  joinPhase: JoinPhase | null = null
  /** A member joined during the initial delay: wait one more delay. */
  newMemberAdded = false
  /** Members of the new generation whose SyncGroup has not come yet, and until when it may (Kafka's `DelayedSync`). */
  /** Static members (KIP-345): group.instance.id -> its current member id. */
  readonly staticMembers = new Map<string, string>()
  readonly pendingSyncMembers = new Set<string>()
  syncDeadlineMs = 0
  /**
   * The topics the members of the current generation subscribe to (Kafka's `subscribedTopics`),
   * read from their consumer-protocol metadata when a generation starts; null when unknown: not a
   * consumer group, or metadata that does not parse.
   */
  subscribedTopics: ReadonlySet<string> | null = null
  /** A GroupMetadata record of the group is in the log (written or loaded): forgetting the group writes its tombstone. */
  persisted = false

  constructor(groupId: string, clock: () => number = Date.now) {
    this.groupId = groupId
    this.clock = clock
    this.currentStateTimestamp = clock()
  }

  get state(): GroupState {
    return this.stateValue
  }

  is(state: GroupState): boolean {
    return this.stateValue === state
  }

  transitionTo(state: GroupState): void {
    if (!VALID_PREVIOUS_STATES[state].includes(this.stateValue)) {
      throw new Error(`group ${this.groupId} cannot go from ${this.stateValue} to ${state}`)
    }
    this.stateValue = state
    this.currentStateTimestamp = this.clock()
  }

  has(memberId: string): boolean {
    return this.members.has(memberId)
  }

  get(memberId: string): MemberMetadata | undefined {
    return this.members.get(memberId)
  }

  add(member: MemberMetadata): void {
    if (this.members.size === 0) this.protocolType = member.protocolType
    this.members.set(member.memberId, member)
    if (member.groupInstanceId !== null) this.staticMembers.set(member.groupInstanceId, member.memberId)
    this.leaderId ??= member.memberId
  }

  /** Removes a member; a new leader is the first remaining member, preferably one that rejoined. */
  remove(memberId: string): void {
    const member = this.members.get(memberId)
    if (member?.groupInstanceId != null && this.staticMembers.get(member.groupInstanceId) === memberId) this.staticMembers.delete(member.groupInstanceId)
    this.members.delete(memberId)
    this.pendingSyncMembers.delete(memberId)
    if (this.leaderId !== memberId) return
    const members = [...this.members.values()]
    this.leaderId = (members.find((m) => m.isAwaitingJoin) ?? members[0])?.memberId ?? null
  }

  /** A static member's instance id now belongs to another member id (FENCED_INSTANCE_ID). */
  isStaticMemberFenced(groupInstanceId: string | null, memberId: string): boolean {
    if (groupInstanceId === null) return false
    const current = this.staticMembers.get(groupInstanceId)
    return current !== undefined && current !== memberId
  }

  /** The member of a static instance id, if it is in the group. */
  staticMember(groupInstanceId: string | null): MemberMetadata | undefined {
    if (groupInstanceId === null) return undefined
    const memberId = this.staticMembers.get(groupInstanceId)
    return memberId !== undefined ? this.members.get(memberId) : undefined
  }

  /** Moves a static member to a new member id (it restarted); the old id is fenced from now on. */
  replaceStaticMember(oldMemberId: string, newMemberId: string, replacement: MemberMetadata): void {
    const old = this.members.get(oldMemberId)
    this.members.delete(oldMemberId)
    if (old) replacement.assignment = old.assignment
    this.members.set(newMemberId, replacement)
    if (replacement.groupInstanceId !== null) this.staticMembers.set(replacement.groupInstanceId, newMemberId)
    if (this.leaderId === oldMemberId) this.leaderId = newMemberId
    if (this.pendingSyncMembers.delete(oldMemberId)) this.pendingSyncMembers.add(newMemberId)
  }

  /** Every member has sent its JoinGroup of this rebalance and no member id is pending. */
  hasAllMembersJoined(): boolean {
    for (const member of this.members.values()) if (!member.isAwaitingJoin) return false
    return this.pendingMembers.size === 0
  }

  notYetRejoinedMembers(): MemberMetadata[] {
    return [...this.members.values()].filter((m) => !m.isAwaitingJoin)
  }

  /** The longest rebalance timeout of the members: how long a join phase may last. */
  rebalanceTimeoutMs(): number {
    let max = 0
    for (const member of this.members.values()) max = Math.max(max, member.rebalanceTimeoutMs)
    return max
  }

  /** The protocols every member supports. */
  candidateProtocols(): Set<string> {
    const members = [...this.members.values()]
    if (members.length === 0) return new Set()
    const out = new Set(members[0]!.protocols.map((p) => p.name))
    for (const member of members.slice(1)) {
      const names = new Set(member.protocols.map((p) => p.name))
      for (const name of out) if (!names.has(name)) out.delete(name)
    }
    return out
  }

  /** Whether a (new or changed) member with these protocols could be in the group (Kafka's `supportsProtocols`). */
  supportsProtocols(protocolType: string, protocols: readonly JoinGroupRequestProtocol[]): boolean {
    if (this.members.size === 0) return protocolType !== '' && protocols.length > 0
    if (protocolType !== this.protocolType) return false
    const candidates = this.candidateProtocols()
    return protocols.some((p) => candidates.has(p.name))
  }

  /**
   * Kafka's `selectProtocol`: among the protocols all members support, each member votes for
   * the first in its own order; most votes win (ties go to the leader's preference).
   */
  selectProtocol(): string {
    const candidates = this.candidateProtocols()
    if (candidates.size === 0) throw new Error(`group ${this.groupId} has no protocol all members support`)
    const votes = new Map<string, number>()
    for (const member of this.members.values()) {
      const vote = member.vote(candidates)
      if (vote !== undefined) votes.set(vote, (votes.get(vote) ?? 0) + 1)
    }
    const leader = this.leaderId !== null ? this.members.get(this.leaderId) : undefined
    const order = (leader ?? [...this.members.values()][0]!).protocols.map((p) => p.name).filter((n) => candidates.has(n))
    let best = order[0]!
    for (const name of order) if ((votes.get(name) ?? 0) > (votes.get(best) ?? 0)) best = name
    return best
  }

  /** Starts the next generation after a join phase (Kafka's `initNextGeneration`). */
  initNextGeneration(): void {
    this.generationId++
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol()
      this.subscribedTopics = this.computeSubscribedTopics()
      this.transitionTo(GroupState.CompletingRebalance)
    } else {
      this.protocolName = null
      this.leaderId = null
      this.subscribedTopics = this.computeSubscribedTopics()
      this.transitionTo(GroupState.Empty)
    }
  }

  /**
   * Starts the group Stable at `generationId` with its members as they are (a consumer group
   * downgraded to a classic group, ./consumer/classic-group-migration.ts): the protocol the
   * members vote for, the topics they subscribe to. Only from a new, Empty group.
   */
  startStable(generationId: number, protocolType: string): void {
    if (!this.is(GroupState.Empty) || this.members.size === 0) throw new Error(`group ${this.groupId} cannot start Stable from ${this.stateValue} with ${this.members.size} members`)
    this.generationId = generationId
    this.protocolType = protocolType
    this.protocolName = this.selectProtocol()
    this.subscribedTopics = this.computeSubscribedTopics()
    this.stateValue = GroupState.Stable
    this.currentStateTimestamp = this.clock()
  }

  /**
   * The group as its last GroupMetadata record left it (Kafka's replay of the record,
   * ./group-metadata-records.ts): Stable with its members at their generation, or Empty without
   * any. Only from a new, Empty group.
   */
  restore(
    record: { generationId: number; protocolType: string | null; protocolName: string | null; leaderId: string | null; currentStateTimestamp: number | null },
    members: readonly MemberMetadata[],
  ): void {
    if (!this.is(GroupState.Empty) || this.members.size > 0) throw new Error(`group ${this.groupId} cannot be restored from ${this.stateValue} with ${this.members.size} members`)
    for (const member of members) this.add(member)
    this.generationId = record.generationId
    this.protocolType = record.protocolType
    this.protocolName = record.protocolName
    this.leaderId = record.leaderId
    this.currentStateTimestamp = record.currentStateTimestamp
    this.stateValue = members.length > 0 ? GroupState.Stable : GroupState.Empty
    this.subscribedTopics = this.computeSubscribedTopics()
  }

  /** Kafka's `computeSubscribedTopics`: every member's topics, for a consumer group whose metadata parses. */
  private computeSubscribedTopics(): ReadonlySet<string> | null {
    if (this.protocolType !== CONSUMER_PROTOCOL_TYPE) return null
    if (this.members.size === 0) return new Set()
    if (this.protocolName === null) return null
    const topics = new Set<string>()
    try {
      for (const member of this.members.values()) {
        for (const topic of decodeSubscriptionTopics(member.metadataFor(this.protocolName) ?? Buffer.alloc(0))) topics.add(topic)
      }
    } catch {
      return null
    }
    return topics
  }

  /**
   * Whether the group consumes a topic (Kafka's `isSubscribedToTopic`): when its subscriptions
   * are not known, a consumer group is taken to consume every topic, any other group none.
   */
  isSubscribedToTopic(topic: string): boolean {
    return this.subscribedTopics ? this.subscribedTopics.has(topic) : this.protocolType === CONSUMER_PROTOCOL_TYPE
  }
}
