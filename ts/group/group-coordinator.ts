/**
 * The classic group coordinator (Kafka's `GroupCoordinator`, before KIP-848): JoinGroup,
 * SyncGroup, Heartbeat and LeaveGroup drive each group's state machine (./group-metadata.ts);
 * OffsetCommit checks the member and generation and writes through ./offset-store.ts.
 *
 * Rules, as Kafka has them:
 * - A member joining without an id gets `${clientId}-${uuid}`; from JoinGroup v4 it is first
 *   answered MEMBER_ID_REQUIRED with that id and is "pending" until it joins again with it.
 * - A join, a leave, a changed subscription or an expired session starts a rebalance; its join
 *   and sync phases, with their deadlines, are ./rebalance.ts.
 * - The next generation picks the protocol all members support that most prefer; the leader
 *   gets every member's metadata, computes the assignment and sends it in SyncGroup; followers'
 *   SyncGroup answers wait for it. Then the group is Stable.
 * - Sessions: every join, sync, heartbeat and commit moves a member's deadline; members waiting
 *   in a rebalance are kept alive (except new members, who have NEW_MEMBER_JOIN_TIMEOUT_MS).
 *   All deadlines are checked by one coarse periodic sweep, not a timer per member.
 * - DeleteGroups removes only Empty groups; OffsetDelete refuses the topics a live consumer
 *   group subscribes to. Both delete offsets with tombstones in the offsets log.
 * - Static members (KIP-345, group.instance.id) join without MEMBER_ID_REQUIRED; one that comes
 *   back with no member id replaces its old id (now FENCED_INSTANCE_ID) without a rebalance when
 *   nothing changes, and is not dropped from a rebalance for not rejoining (its session still ends).
 *
 * Not here yet: group.max.size, persisting group metadata (generations restart after a broker
 * restart; committed offsets do not), JoinGroup v9's skipAssignment for static leaders.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from '../logger.js'
import type { JoinGroupRequestProtocol } from '../protocol/apis/join-group.js'
import { CONSUMER_PROTOCOL_TYPE } from '../protocol/consumer-protocol.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { kafkaErrorCodeOf } from '../storage/errors.js'
import { GroupMetadata, GroupState } from './group-metadata.js'
import { joinError, MemberMetadata, syncError, type JoinResult, type SyncResult } from './member-metadata.js'
import { Rebalancer } from './rebalance.js'
import type { OffsetCommitEntry, OffsetStore } from './offset-store.js'

/** How long a new member may take to rejoin before it is dropped (Kafka's NewMemberJoinTimeoutMs). */
export const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
export const DEFAULT_SWEEP_INTERVAL_MS = 100

export interface GroupCoordinatorConfig {
  /** group.initial.rebalance.delay.ms (Kafka: 3000). */
  initialRebalanceDelayMs: number
  /** group.min.session.timeout.ms (Kafka: 6000). */
  minSessionTimeoutMs: number
  /** group.max.session.timeout.ms (Kafka: 1800000). */
  maxSessionTimeoutMs: number
  /** The period of the session and rebalance sweep; 0 starts no timer (tests call `sweep`). */
  sweepIntervalMs?: number
  /** Milliseconds now; Date.now by default. */
  clock?: () => number
}

export interface JoinGroupParams {
  groupId: string
  memberId: string
  groupInstanceId: string | null
  clientId: string
  clientHost: string
  sessionTimeoutMs: number
  /** -1 (JoinGroup v0): the session timeout. */
  rebalanceTimeoutMs: number
  protocolType: string
  protocols: JoinGroupRequestProtocol[]
  /** JoinGroup v4+: a new member is first given its id with MEMBER_ID_REQUIRED. */
  requireKnownMemberId: boolean
}

export interface SyncGroupParams {
  groupId: string
  generationId: number
  memberId: string
  groupInstanceId: string | null
  protocolType: string | null
  protocolName: string | null
  assignments: Array<{ memberId: string; assignment: Buffer }>
}

export interface GroupDescription {
  groupId: string
  state: GroupState
  protocolType: string
  protocolName: string
  members: Array<{ memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; metadata: Buffer; assignment: Buffer }>
}

const EMPTY = Buffer.alloc(0)

export class GroupCoordinator {
  readonly offsets: OffsetStore
  private readonly groups = new Map<string, GroupMetadata>()
  private readonly config: GroupCoordinatorConfig
  private readonly logger: Logger
  private readonly now: () => number
  private readonly timer: NodeJS.Timeout | null = null
  private readonly rebalance: Rebalancer
  private stopped = false

  constructor(offsets: OffsetStore, config: GroupCoordinatorConfig, logger: Logger) {
    this.offsets = offsets
    this.config = config
    this.logger = logger
    this.now = config.clock ?? Date.now
    this.rebalance = new Rebalancer(config.initialRebalanceDelayMs, this.now, logger)
    // Groups known only by their committed offsets are Empty groups, as Kafka loads them.
    for (const groupId of offsets.groupIds()) this.groups.set(groupId, new GroupMetadata(groupId))
    const every = config.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS
    if (every > 0) {
      this.timer = setInterval(() => this.sweep(), every)
      this.timer.unref()
    }
  }

  /** Stops the sweep and answers every held JoinGroup and SyncGroup with NOT_COORDINATOR. */
  stop(): void {
    this.stopped = true
    if (this.timer) clearInterval(this.timer)
    for (const group of this.groups.values()) {
      for (const member of group.members.values()) {
        member.completeJoin(joinError(ErrorCode.NOT_COORDINATOR, member.memberId))
        member.completeSync(syncError(ErrorCode.NOT_COORDINATOR))
      }
    }
  }

  group(groupId: string): GroupMetadata | undefined {
    return this.groups.get(groupId)
  }

  // ---- JoinGroup ----

  joinGroup(p: JoinGroupParams): Promise<JoinResult> {
    if (this.stopped) return Promise.resolve(joinError(ErrorCode.NOT_COORDINATOR, p.memberId))
    if (p.groupId === '') return Promise.resolve(joinError(ErrorCode.INVALID_GROUP_ID, p.memberId))
    if (p.sessionTimeoutMs < this.config.minSessionTimeoutMs || p.sessionTimeoutMs > this.config.maxSessionTimeoutMs) {
      return Promise.resolve(joinError(ErrorCode.INVALID_SESSION_TIMEOUT, p.memberId))
    }
    let group = this.groups.get(p.groupId)
    if (!group) {
      if (p.memberId !== '') return Promise.resolve(joinError(ErrorCode.UNKNOWN_MEMBER_ID, p.memberId))
      group = new GroupMetadata(p.groupId)
      this.groups.set(p.groupId, group)
    }
    if (group.is(GroupState.Dead)) return Promise.resolve(joinError(ErrorCode.COORDINATOR_NOT_AVAILABLE, p.memberId))
    const g = group
    const result = new Promise<JoinResult>((resolve) => {
      if (p.memberId === '') this.joinNewMember(g, p, resolve)
      else this.joinKnownMember(g, p, resolve)
    })
    this.rebalance.checkJoinPhase(g)
    this.maybeForget(g)
    return result
  }

  private joinNewMember(group: GroupMetadata, p: JoinGroupParams, resolve: (r: JoinResult) => void): void {
    if (!group.supportsProtocols(p.protocolType, p.protocols)) return resolve(joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, ''))
    // A static member is named after its group.instance.id (and is never asked MEMBER_ID_REQUIRED).
    const memberId = `${p.groupInstanceId ?? p.clientId}-${randomUUID()}`
    const known = group.staticMember(p.groupInstanceId)
    if (known) return this.updateStaticMemberAndRebalance(group, known, memberId, p, resolve)
    if (p.requireKnownMemberId && p.groupInstanceId === null) {
      group.pendingMembers.set(memberId, this.now() + p.sessionTimeoutMs)
      return resolve(joinError(ErrorCode.MEMBER_ID_REQUIRED, memberId))
    }
    this.addMemberAndRebalance(group, memberId, p, resolve)
  }

  private joinKnownMember(group: GroupMetadata, p: JoinGroupParams, resolve: (r: JoinResult) => void): void {
    if (group.pendingMembers.has(p.memberId)) {
      if (!group.supportsProtocols(p.protocolType, p.protocols)) return resolve(joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, p.memberId))
      group.pendingMembers.delete(p.memberId)
      return this.addMemberAndRebalance(group, p.memberId, p, resolve)
    }
    if (group.isStaticMemberFenced(p.groupInstanceId, p.memberId)) return resolve(joinError(ErrorCode.FENCED_INSTANCE_ID, p.memberId))
    const member = group.get(p.memberId)
    if (!member) return resolve(joinError(ErrorCode.UNKNOWN_MEMBER_ID, p.memberId))
    if (!group.supportsProtocols(p.protocolType, p.protocols)) return resolve(joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, p.memberId))
    this.keepAlive(member)
    switch (group.state) {
      case GroupState.PreparingRebalance:
        return this.updateMemberAndRebalance(group, member, p, resolve)
      case GroupState.CompletingRebalance:
        // The join response was lost: answer it again, unless the subscription changed.
        if (member.matches(p.protocols)) return resolve(this.rebalance.joinResult(group, member))
        return this.updateMemberAndRebalance(group, member, p, resolve)
      case GroupState.Stable:
        // The leader rejoining (new topics to assign) or a changed subscription starts a rebalance.
        if (member.memberId === group.leaderId || !member.matches(p.protocols)) return this.updateMemberAndRebalance(group, member, p, resolve)
        return resolve(this.rebalance.joinResult(group, member))
      default:
        return resolve(joinError(ErrorCode.UNKNOWN_MEMBER_ID, p.memberId))
    }
  }

  /**
   * A static member back with no member id (it restarted): it takes a new id and the old one is
   * fenced. In a Stable group whose protocol would not change it gets the current generation at
   * once, with the old leader id so that it does not run the assignor (Kafka before JoinGroup v9).
   */
  private updateStaticMemberAndRebalance(group: GroupMetadata, old: MemberMetadata, newMemberId: string, p: JoinGroupParams, resolve: (r: JoinResult) => void): void {
    const currentLeader = group.leaderId ?? ''
    old.completeJoin(joinError(ErrorCode.FENCED_INSTANCE_ID, old.memberId))
    old.completeSync(syncError(ErrorCode.FENCED_INSTANCE_ID))
    const member = new MemberMetadata({
      memberId: newMemberId,
      groupInstanceId: p.groupInstanceId,
      clientId: p.clientId,
      clientHost: p.clientHost,
      protocolType: p.protocolType,
      protocols: p.protocols,
      sessionTimeoutMs: p.sessionTimeoutMs,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs >= 0 ? p.rebalanceTimeoutMs : p.sessionTimeoutMs,
    })
    group.replaceStaticMember(old.memberId, newMemberId, member)
    this.keepAlive(member)
    member.awaitingJoin = resolve
    this.logger.info('static member rejoined with a new member id', { group: group.groupId, instance: p.groupInstanceId, member: newMemberId, fenced: old.memberId })
    switch (group.state) {
      case GroupState.Stable:
        if (group.selectProtocol() === group.protocolName) {
          member.completeJoin({ errorCode: ErrorCode.NONE, generationId: group.generationId, protocolType: group.protocolType, protocolName: group.protocolName, leader: currentLeader, memberId: newMemberId, members: [] })
          return
        }
        return this.rebalance.maybePrepareRebalance(group, `static member ${p.groupInstanceId} rejoined with other protocols`)
      case GroupState.CompletingRebalance:
        // The leader may be assigning to the old id: start over.
        return this.rebalance.prepareRebalance(group, `static member ${p.groupInstanceId} rejoined during the assignment`)
      default:
        return // PreparingRebalance: the member now waits with the others.
    }
  }

  private addMemberAndRebalance(group: GroupMetadata, memberId: string, p: JoinGroupParams, resolve: (r: JoinResult) => void): void {
    const member = new MemberMetadata({
      memberId,
      groupInstanceId: p.groupInstanceId,
      clientId: p.clientId,
      clientHost: p.clientHost,
      protocolType: p.protocolType,
      protocols: p.protocols,
      sessionTimeoutMs: p.sessionTimeoutMs,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs >= 0 ? p.rebalanceTimeoutMs : p.sessionTimeoutMs,
    })
    member.isNew = true
    member.awaitingJoin = resolve
    member.heartbeatDeadlineMs = this.now() + NEW_MEMBER_JOIN_TIMEOUT_MS
    // A member joining while the first generation waits out the initial delay extends it.
    if (group.is(GroupState.PreparingRebalance) && group.generationId === 0) group.newMemberAdded = true
    group.add(member)
    this.logger.info('member joined group', { group: group.groupId, member: memberId, members: group.members.size })
    this.rebalance.maybePrepareRebalance(group, `member ${memberId} joined`)
  }

  private updateMemberAndRebalance(group: GroupMetadata, member: MemberMetadata, p: JoinGroupParams, resolve: (r: JoinResult) => void): void {
    member.protocols = p.protocols
    member.sessionTimeoutMs = p.sessionTimeoutMs
    member.rebalanceTimeoutMs = p.rebalanceTimeoutMs >= 0 ? p.rebalanceTimeoutMs : p.sessionTimeoutMs
    // A join sent again before the first was answered replaces it; the first goes back.
    member.completeJoin(joinError(ErrorCode.REBALANCE_IN_PROGRESS, member.memberId))
    member.awaitingJoin = resolve
    this.rebalance.maybePrepareRebalance(group, `member ${member.memberId} rejoined`)
  }

  // ---- SyncGroup ----

  syncGroup(p: SyncGroupParams): Promise<SyncResult> {
    if (this.stopped) return Promise.resolve(syncError(ErrorCode.NOT_COORDINATOR))
    const group = this.groups.get(p.groupId)
    if (!group) return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID))
    if (group.is(GroupState.Dead)) return Promise.resolve(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE))
    if (group.isStaticMemberFenced(p.groupInstanceId, p.memberId)) return Promise.resolve(syncError(ErrorCode.FENCED_INSTANCE_ID))
    const member = group.get(p.memberId)
    if (!member) return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID))
    if (p.generationId !== group.generationId) return Promise.resolve(syncError(ErrorCode.ILLEGAL_GENERATION))
    if ((p.protocolType !== null && p.protocolType !== group.protocolType) || (p.protocolName !== null && p.protocolName !== group.protocolName)) {
      return Promise.resolve(syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
    }
    switch (group.state) {
      case GroupState.Empty:
        return Promise.resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID))
      case GroupState.PreparingRebalance:
        return Promise.resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS))
      case GroupState.Stable:
        this.keepAlive(member)
        group.pendingSyncMembers.delete(member.memberId)
        return Promise.resolve(this.syncResult(group, member))
      default: {
        // CompletingRebalance: wait for the leader's assignment (or hand it out, from the leader).
        this.keepAlive(member)
        group.pendingSyncMembers.delete(member.memberId)
        const result = new Promise<SyncResult>((resolve) => {
          member.completeSync(syncError(ErrorCode.REBALANCE_IN_PROGRESS))
          member.awaitingSync = resolve
        })
        if (member.memberId === group.leaderId) {
          const assignments = new Map(p.assignments.map((a) => [a.memberId, a.assignment]))
          for (const m of group.members.values()) m.assignment = assignments.get(m.memberId) ?? EMPTY
          group.transitionTo(GroupState.Stable)
          for (const m of group.members.values()) m.completeSync(this.syncResult(group, m))
        }
        return result
      }
    }
  }

  private syncResult(group: GroupMetadata, member: MemberMetadata): SyncResult {
    return { errorCode: ErrorCode.NONE, protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment }
  }

  // ---- Heartbeat ----

  heartbeat(groupId: string, memberId: string, generationId: number, groupInstanceId: string | null = null): number {
    const group = this.groups.get(groupId)
    if (!group) return ErrorCode.UNKNOWN_MEMBER_ID
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if (group.isStaticMemberFenced(groupInstanceId, memberId)) return ErrorCode.FENCED_INSTANCE_ID
    const member = group.get(memberId)
    if (!member) return ErrorCode.UNKNOWN_MEMBER_ID
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION
    switch (group.state) {
      case GroupState.Empty:
        return ErrorCode.UNKNOWN_MEMBER_ID
      case GroupState.PreparingRebalance:
        this.keepAlive(member)
        return ErrorCode.REBALANCE_IN_PROGRESS
      default:
        this.keepAlive(member)
        return ErrorCode.NONE
    }
  }

  // ---- LeaveGroup ----

  /** Removes members; a group-level error code and one per member. */
  leaveGroup(groupId: string, members: Array<{ memberId: string; groupInstanceId: string | null }>): { errorCode: number; members: Array<{ memberId: string; groupInstanceId: string | null; errorCode: number }> } {
    const group = this.groups.get(groupId)
    if (!group) return { errorCode: ErrorCode.NONE, members: members.map((m) => ({ ...m, errorCode: ErrorCode.UNKNOWN_MEMBER_ID })) }
    if (group.is(GroupState.Dead)) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: members.map((m) => ({ ...m, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE })) }
    const out = members.map((m) => {
      // An administrator may remove a static member by its instance id alone (member id '').
      if (m.memberId !== '' && group.isStaticMemberFenced(m.groupInstanceId, m.memberId)) return { ...m, errorCode: ErrorCode.FENCED_INSTANCE_ID }
      if (group.pendingMembers.delete(m.memberId)) {
        this.rebalance.checkJoinPhase(group)
        return { ...m, errorCode: ErrorCode.NONE }
      }
      const member = group.staticMember(m.groupInstanceId) ?? group.get(m.memberId)
      if (!member) return { ...m, errorCode: ErrorCode.UNKNOWN_MEMBER_ID }
      this.removeMemberAndUpdateGroup(group, member, 'left the group')
      return { ...m, errorCode: ErrorCode.NONE }
    })
    this.maybeForget(group)
    return { errorCode: ErrorCode.NONE, members: out }
  }

  private removeMemberAndUpdateGroup(group: GroupMetadata, member: MemberMetadata, reason: string): void {
    this.logger.info(`member ${reason}`, { group: group.groupId, member: member.memberId })
    member.completeJoin(joinError(ErrorCode.UNKNOWN_MEMBER_ID, member.memberId))
    member.completeSync(syncError(ErrorCode.UNKNOWN_MEMBER_ID))
    group.remove(member.memberId)
    if (group.is(GroupState.Stable) || group.is(GroupState.CompletingRebalance)) this.rebalance.maybePrepareRebalance(group, `member ${member.memberId} ${reason}`)
    this.rebalance.checkJoinPhase(group)
  }

  // ---- Sessions and rebalance deadlines ----

  /** Expires sessions and pending member ids, and ends join phases whose time has come. */
  sweep(): void {
    const now = this.now()
    for (const group of [...this.groups.values()]) {
      for (const [memberId, deadline] of group.pendingMembers) {
        if (now >= deadline) group.pendingMembers.delete(memberId)
      }
      for (const member of [...group.members.values()]) {
        const keptAlive = !member.isNew && (member.isAwaitingJoin || member.awaitingSync !== null)
        if (now >= member.heartbeatDeadlineMs && !keptAlive && group.has(member.memberId)) {
          this.removeMemberAndUpdateGroup(group, member, `session expired (${member.sessionTimeoutMs} ms without a heartbeat)`)
        }
      }
      this.rebalance.checkJoinPhase(group)
      this.rebalance.checkSyncPhase(group, now)
      this.maybeForget(group)
    }
  }

  private keepAlive(member: MemberMetadata): void {
    member.heartbeatDeadlineMs = this.now() + member.sessionTimeoutMs
  }

  /** An Empty group with nothing pending and no committed offsets is Dead and forgotten. */
  private maybeForget(group: GroupMetadata): void {
    if (!group.is(GroupState.Empty) || group.members.size > 0 || group.pendingMembers.size > 0 || this.offsets.hasOffsets(group.groupId)) return
    group.transitionTo(GroupState.Dead)
    this.groups.delete(group.groupId)
  }

  // ---- Offsets ----

  /**
   * Kafka's `handleCommitOffsets` checks: members of a managed group commit in their current
   * generation; generation -1 is a "simple" commit, allowed only while the group is Empty (or
   * unknown: the group is then created, Empty, to hold the offsets). Returns the error code for
   * every partition of the request.
   */
  commitOffsets(groupId: string, memberId: string, generationId: number, entries: readonly OffsetCommitEntry[], groupInstanceId: string | null = null): number {
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID
    let group = this.groups.get(groupId)
    if (!group) {
      if (generationId >= 0) return ErrorCode.ILLEGAL_GENERATION
      group = new GroupMetadata(groupId)
      this.groups.set(groupId, group)
    }
    if (group.is(GroupState.Dead)) return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if (group.isStaticMemberFenced(groupInstanceId, memberId)) return ErrorCode.FENCED_INSTANCE_ID
    if (!(generationId < 0 && group.is(GroupState.Empty))) {
      const member = group.get(memberId)
      if (!member) return ErrorCode.UNKNOWN_MEMBER_ID
      if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION
      if (group.is(GroupState.CompletingRebalance)) return ErrorCode.REBALANCE_IN_PROGRESS
      this.keepAlive(member)
    }
    try {
      this.offsets.commit(groupId, entries)
    } catch (err) {
      // Kafka's mapping of a failed append to the offsets log.
      this.logger.error('cannot append committed offsets', { group: groupId, error: String(err) })
      return kafkaErrorCodeOf(err) === ErrorCode.MESSAGE_TOO_LARGE ? ErrorCode.INVALID_COMMIT_OFFSET_SIZE : ErrorCode.COORDINATOR_NOT_AVAILABLE
    }
    return ErrorCode.NONE
  }

  // ---- DeleteGroups, OffsetDelete ----

  /**
   * Kafka's `deleteGroups`: only an Empty group can go (NON_EMPTY_GROUP while it has members,
   * GROUP_ID_NOT_FOUND when there is none by that id); its committed offsets are deleted with
   * tombstones in the offsets log, so it stays gone after a restart. Each id is answered once.
   */
  deleteGroups(groupIds: readonly string[]): Array<{ groupId: string; errorCode: number }> {
    return [...new Set(groupIds)].map((groupId) => ({ groupId, errorCode: this.deleteGroup(groupId) }))
  }

  private deleteGroup(groupId: string): number {
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID
    const group = this.groups.get(groupId)
    if (!group || group.is(GroupState.Dead)) return ErrorCode.GROUP_ID_NOT_FOUND
    if (!group.is(GroupState.Empty)) return ErrorCode.NON_EMPTY_GROUP
    try {
      this.offsets.deleteGroup(groupId)
    } catch (err) {
      this.logger.error('cannot append offset tombstones of a deleted group', { group: groupId, error: String(err) })
      return ErrorCode.COORDINATOR_NOT_AVAILABLE
    }
    // Members given an id with MEMBER_ID_REQUIRED find no group when they come back.
    group.transitionTo(GroupState.Dead)
    this.groups.delete(groupId)
    this.logger.info('deleted group', { group: groupId })
    return ErrorCode.NONE
  }

  /**
   * Kafka's `deleteOffsets` (OffsetDelete): a group-level error when the group is unknown
   * (GROUP_ID_NOT_FOUND) or has members and is not a consumer group (NON_EMPTY_GROUP); else,
   * per partition, GROUP_SUBSCRIBED_TO_TOPIC for a topic the group consumes, and the others'
   * offsets are deleted with tombstones (a partition without one is answered NONE too). A group
   * left Empty with no offsets is gone, as after a restart.
   */
  deleteOffsets(groupId: string, partitions: ReadonlyArray<{ topic: string; partition: number }>): { errorCode: number; partitions: Array<{ topic: string; partition: number; errorCode: number }> } {
    if (groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, partitions: [] }
    const group = this.groups.get(groupId)
    if (!group || group.is(GroupState.Dead)) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, partitions: [] }
    if (!group.is(GroupState.Empty) && group.protocolType !== CONSUMER_PROTOCOL_TYPE) return { errorCode: ErrorCode.NON_EMPTY_GROUP, partitions: [] }
    const out = partitions.map((p) => ({ ...p, errorCode: group.isSubscribedToTopic(p.topic) ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE }))
    try {
      this.offsets.delete(groupId, out.filter((p) => p.errorCode === ErrorCode.NONE))
    } catch (err) {
      this.logger.error('cannot append offset tombstones', { group: groupId, error: String(err) })
      return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, partitions: [] }
    }
    this.maybeForget(group)
    return { errorCode: ErrorCode.NONE, partitions: out }
  }

  // ---- DescribeGroups, ListGroups ----

  describeGroup(groupId: string): GroupDescription | null {
    const group = this.groups.get(groupId)
    if (!group) return null
    const stable = group.is(GroupState.Stable)
    return {
      groupId,
      state: group.state,
      protocolType: group.protocolType ?? '',
      protocolName: stable ? (group.protocolName ?? '') : '',
      members: [...group.members.values()].map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        metadata: stable ? (m.metadataFor(group.protocolName!) ?? EMPTY) : EMPTY,
        assignment: stable ? m.assignment : EMPTY,
      })),
    }
  }

  listGroups(): Array<{ groupId: string; protocolType: string; state: GroupState }> {
    return [...this.groups.values()].map((g) => ({ groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state }))
  }
}
