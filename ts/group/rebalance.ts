/**
 * The two timed phases of a rebalance (Kafka's `prepareRebalance`, `DelayedJoin`,
 * `InitialDelayedJoin`, `onCompleteJoin` and `DelayedSync`):
 *
 * - join phase (PreparingRebalance): JoinGroup answers are held until every known member has
 *   rejoined or the rebalance timeout passes; an Empty group first waits
 *   group.initial.rebalance.delay.ms, once more after each new member, up to the rebalance
 *   timeout. At the end, dynamic members that did not rejoin leave and the next generation starts.
 * - sync phase (CompletingRebalance, then Stable): members that send no SyncGroup within the
 *   rebalance timeout leave, and the group rebalances again.
 *
 * Deadlines are checked when something happens to the group and by the coordinator's sweep.
 */
import type { Logger } from '../logger.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { GroupState, type GroupMetadata } from './group-metadata.js'
import { syncError, type JoinResult, type MemberMetadata } from './member-metadata.js'

const EMPTY = Buffer.alloc(0)

export class Rebalancer {
  private readonly initialRebalanceDelayMs: number
  private readonly now: () => number
  private readonly logger: Logger
  /** A join phase ended with no member: the Empty generation is written (Kafka's record of it). */
  private readonly onEmptyGeneration: (group: GroupMetadata) => void

  constructor(initialRebalanceDelayMs: number, now: () => number, logger: Logger, onEmptyGeneration: (group: GroupMetadata) => void = () => undefined) {
    this.initialRebalanceDelayMs = initialRebalanceDelayMs
    this.now = now
    this.logger = logger
    this.onEmptyGeneration = onEmptyGeneration
  }

  maybePrepareRebalance(group: GroupMetadata, reason: string): void {
    if (group.is(GroupState.Stable) || group.is(GroupState.CompletingRebalance) || group.is(GroupState.Empty)) this.prepareRebalance(group, reason)
  }

  prepareRebalance(group: GroupMetadata, reason: string): void {
    // Assignments being waited for are void: those members must join again.
    if (group.is(GroupState.CompletingRebalance)) {
      for (const member of group.members.values()) {
        member.assignment = EMPTY
        member.completeSync(syncError(ErrorCode.REBALANCE_IN_PROGRESS))
      }
    }
    group.pendingSyncMembers.clear()
    const initial = group.is(GroupState.Empty)
    group.transitionTo(GroupState.PreparingRebalance)
    const now = this.now()
    const rebalanceTimeoutMs = group.rebalanceTimeoutMs()
    if (initial) {
      const delayMs = this.initialRebalanceDelayMs
      group.newMemberAdded = false
      group.joinPhase = { deadlineMs: now + delayMs, initialDelay: { delayMs, remainingMs: Math.max(rebalanceTimeoutMs - delayMs, 0) } }
    } else {
      group.joinPhase = { deadlineMs: now + rebalanceTimeoutMs, initialDelay: null }
    }
    this.logger.info('preparing to rebalance group', { group: group.groupId, generation: group.generationId, reason })
  }

  /** Ends the join phase when its time has come (Kafka's DelayedJoin / InitialDelayedJoin). */
  checkJoinPhase(group: GroupMetadata): void {
    const phase = group.joinPhase
    if (!group.is(GroupState.PreparingRebalance) || !phase) return
    const now = this.now()
    if (phase.initialDelay) {
      if (now < phase.deadlineMs) return
      const delay = phase.initialDelay
      if (group.newMemberAdded && delay.remainingMs > 0) {
        group.newMemberAdded = false
        const next = Math.min(delay.delayMs, delay.remainingMs)
        delay.remainingMs = Math.max(delay.remainingMs - next, 0)
        phase.deadlineMs = now + next
        if (next > 0) return
      }
    } else if (!group.hasAllMembersJoined() && now < phase.deadlineMs) {
      return
    }
    this.completeJoinPhase(group)
  }

  /** Kafka's `onCompleteJoin`: drop who did not rejoin, start the next generation, answer the joins. */
  completeJoinPhase(group: GroupMetadata): void {
    // Dynamic members that did not rejoin leave; static ones stay (they may come back with their instance id).
    for (const member of group.notYetRejoinedMembers()) {
      if (member.groupInstanceId !== null) continue
      this.logger.info('member did not rejoin in time and leaves the group', { group: group.groupId, member: member.memberId })
      member.completeSync(syncError(ErrorCode.UNKNOWN_MEMBER_ID))
      group.remove(member.memberId)
    }
    const rejoined = [...group.members.values()].filter((m) => m.isAwaitingJoin)
    if (rejoined.length === 0 && group.members.size > 0) {
      // Only absent static members: wait another rebalance timeout (sessions will expire them).
      group.joinPhase = { deadlineMs: this.now() + group.rebalanceTimeoutMs(), initialDelay: null }
      return
    }
    // The leader must be a member that is waiting for its answer (Kafka's `maybeElectNewJoinedLeader`).
    if (rejoined.length > 0 && !group.get(group.leaderId ?? '')?.isAwaitingJoin) group.leaderId = rejoined[0]!.memberId
    group.joinPhase = null
    group.initNextGeneration()
    this.logger.info('group rebalanced', { group: group.groupId, generation: group.generationId, state: group.state, protocol: group.protocolName, members: group.members.size })
    if (group.is(GroupState.Empty)) return this.onEmptyGeneration(group)
    const now = this.now()
    group.syncDeadlineMs = now + group.rebalanceTimeoutMs()
    for (const member of group.members.values()) {
      member.isNew = false
      member.heartbeatDeadlineMs = now + member.sessionTimeoutMs
      group.pendingSyncMembers.add(member.memberId)
      member.completeJoin(this.joinResult(group, member))
    }
  }

  /** The answer of a completed join for one member: the leader gets everyone's metadata. */
  joinResult(group: GroupMetadata, member: MemberMetadata): JoinResult {
    const isLeader = member.memberId === group.leaderId
    return {
      errorCode: ErrorCode.NONE,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leader: group.leaderId ?? '',
      memberId: member.memberId,
      members: isLeader ? [...group.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadataFor(group.protocolName!) ?? EMPTY })) : [],
    }
  }

  /** Members that never sent their SyncGroup within the rebalance timeout leave; the group rebalances (Kafka's `DelayedSync`). */
  checkSyncPhase(group: GroupMetadata, now: number): void {
    if (group.pendingSyncMembers.size === 0 || now < group.syncDeadlineMs) return
    if (!group.is(GroupState.CompletingRebalance) && !group.is(GroupState.Stable)) return
    const missing = [...group.pendingSyncMembers]
    for (const memberId of missing) {
      const member = group.get(memberId)
      member?.completeSync(syncError(ErrorCode.UNKNOWN_MEMBER_ID))
      group.remove(memberId)
    }
    this.prepareRebalance(group, `members ${missing.join(', ')} sent no SyncGroup within the rebalance timeout`)
    this.checkJoinPhase(group)
  }
}
