/**
 * The classic groups and their members (Kafka's `GroupMetadataManager` of the classic protocol,
 * before KIP-848): JoinGroup, SyncGroup, Heartbeat and LeaveGroup drive each group's state
 * machine (./group-metadata.ts); sessions are swept here. The group coordinator
 * (./group-coordinator.ts) owns it and answers for it.
 *
 * Rules, as Kafka has them:
 * - A member joining without an id gets `${clientId}-${uuid}`; from JoinGroup v4 it is first
 *   answered MEMBER_ID_REQUIRED with that id and is "pending" until it joins again with it.
 * - A join, a leave, a changed subscription or an expired session starts a rebalance; its join
 *   and sync phases, with their deadlines, are ./rebalance.ts.
 * - The next generation picks the protocol all members support that most prefer; the leader
 *   gets every member's metadata, computes the assignment and sends it in SyncGroup; followers'
 *   SyncGroup answers wait for it. Then the group is Stable.
 * - Sessions: every join, sync, heartbeat and commit moves a member's deadline (the member's own
 *   session.timeout.ms, within group.min/max.session.timeout.ms); members waiting
 *   in a rebalance are kept alive (except new members, who have NEW_MEMBER_JOIN_TIMEOUT_MS).
 *   All deadlines are checked by one coarse periodic sweep, not a timer per member.
 * - Static members (KIP-345, group.instance.id) join without MEMBER_ID_REQUIRED; one that comes
 *   back with no member id replaces its old id (now FENCED_INSTANCE_ID) without a rebalance when
 *   nothing changes, and is not dropped from a rebalance for not rejoining (its session still ends).
 * - Persistence (./group-metadata-records.ts): the leader's assignment is written to the offsets
 *   log as the group's GroupMetadata record, and the group is Stable (SyncGroup answered) once
 *   the ISR holds it; a write that failed voids the assignment (the SyncGroup answers carry the
 *   write's error) and the group rebalances. A generation without members, a static member's
 *   new id (answered once written; reverted if the write failed) and a group forgotten
 *   (a tombstone) are written too. On a load (`replay`, `onLoaded`) each group comes back as its
 *   last record left it, Stable with its members (their sessions starting again) or Empty.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from '../logger.js'
import type { JoinGroupRequestProtocol } from '../protocol/apis/join-group.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { coordinatorErrorOf } from '../coordinator/coordinator-errors.js'
import type { CoordinatorRecord } from './coordinator-record.js'
import { GroupMetadata, GroupState } from './group-metadata.js'
import { groupFromRecord, groupIdOfRecord, groupMetadataRecord, groupMetadataTombstone, readGroupMetadataValue } from './group-metadata-records.js'
import { joinError, MemberMetadata, syncError, type JoinResult, type SyncResult } from './member-metadata.js'
import type { OffsetStore } from './offset-store.js'
import { Rebalancer } from './rebalance.js'

/** How long a new member may take to rejoin before it is dropped (Kafka's NewMemberJoinTimeoutMs). */
export const NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000

export interface GroupMetadataManagerConfig {
  /** group.initial.rebalance.delay.ms (Kafka: 3000). */
  initialRebalanceDelayMs: number
  /** group.min.session.timeout.ms (Kafka: 6000). */
  minSessionTimeoutMs: number
  /** group.max.session.timeout.ms (Kafka: 1800000). */
  maxSessionTimeoutMs: number
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
  /** A classic member joining a consumer group: the least time between its target assignments (0 when not given). */
  assignmentIntervalMs?: number
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

const EMPTY = Buffer.alloc(0)

export class GroupMetadataManager {
  /** Every group known, by id. */
  readonly groups = new Map<string, GroupMetadata>()
  private readonly config: GroupMetadataManagerConfig
  private readonly logger: Logger
  private readonly now: () => number
  private readonly offsets: Pick<OffsetStore, 'hasOffsets' | 'appendGroupRecords'>
  /** The coordinator's status error (./coordinator-runtime.ts): NONE while it serves. */
  private readonly statusError: () => number
  private readonly rebalance: Rebalancer

  constructor(config: GroupMetadataManagerConfig, now: () => number, offsets: Pick<OffsetStore, 'hasOffsets' | 'appendGroupRecords'>, statusError: () => number, logger: Logger) {
    this.config = config
    this.now = now
    this.offsets = offsets
    this.statusError = statusError
    this.logger = logger
    this.rebalance = new Rebalancer(config.initialRebalanceDelayMs, now, logger, (group) => void this.storeGroup(group))
  }

  // ---- The offsets log (./group-metadata-records.ts) ----

  /** A GroupMetadata record (or tombstone) met in the load of the offsets log. */
  replay(key: Buffer, value: Buffer | null): void {
    const groupId = groupIdOfRecord(key)
    if (value === null) {
      this.groups.delete(groupId)
      return
    }
    const group = groupFromRecord(groupId, readGroupMetadataValue(value), this.now)
    group.persisted = true
    this.groups.set(groupId, group)
  }

  /** The load ended: the sessions of the members it brought back start now (Kafka's `onLoaded`). */
  onLoaded(): void {
    let members = 0
    for (const group of this.groups.values()) {
      for (const member of group.members.values()) this.keepAlive(member)
      members += group.members.size
    }
    if (this.groups.size > 0) this.logger.info('loaded classic groups', { groups: this.groups.size, members })
  }

  /** Groups known only by their committed offsets are Empty groups, as Kafka loads them. */
  loadGroups(groupIds: readonly string[]): void {
    for (const groupId of groupIds) if (!this.groups.has(groupId)) this.groups.set(groupId, new GroupMetadata(groupId, this.now))
  }

  /**
   * Writes the group's GroupMetadata record (each member's assignment from `assignments`, else
   * its own); resolves to the append's error code once the ISR holds it or the write failed.
   */
  private storeGroup(group: GroupMetadata, assignments?: ReadonlyMap<string, Buffer>): Promise<number> {
    group.persisted = true
    return this.write([groupMetadataRecord(group, assignments)], group.groupId)
  }

  private write(records: CoordinatorRecord[], groupId: string): Promise<number> {
    return this.offsets.appendGroupRecords(records).then((errorCode) => {
      if (errorCode !== ErrorCode.NONE) this.logger.warn('group metadata not written', { group: groupId, errorCode })
      return errorCode
    })
  }

  /** Every group dropped, Dead; the answers it held go out NOT_COORDINATOR. */
  unload(): void {
    this.completeHeldRequests()
    for (const group of this.groups.values()) group.transitionTo(GroupState.Dead)
    this.groups.clear()
  }

  /** Answers every held JoinGroup and SyncGroup with NOT_COORDINATOR (the broker stops, or the groups are unloaded). */
  completeHeldRequests(): void {
    for (const group of this.groups.values()) {
      for (const member of group.members.values()) {
        member.completeJoin(joinError(ErrorCode.NOT_COORDINATOR, member.memberId))
        member.completeSync(syncError(ErrorCode.NOT_COORDINATOR))
      }
    }
  }

  // ---- Conversions with consumer groups (./consumer/classic-group-migration.ts) ----

  /** A live group upgraded to a consumer group: its held JoinGroup and SyncGroup answers go out REBALANCE_IN_PROGRESS (its members rejoin), and it is gone. */
  removeUpgradedGroup(groupId: string): void {
    const group = this.groups.get(groupId)
    if (!group) return
    for (const member of group.members.values()) {
      member.completeJoin(joinError(ErrorCode.REBALANCE_IN_PROGRESS, member.memberId))
      member.completeSync(syncError(ErrorCode.REBALANCE_IN_PROGRESS))
    }
    group.transitionTo(GroupState.Dead)
    this.groups.delete(groupId)
  }

  /** A consumer group downgraded to this Stable classic group (its record written by the caller): its members' sessions start now, and it rebalances. */
  adoptDowngradedGroup(group: GroupMetadata, reason: string): void {
    group.persisted = true
    this.groups.set(group.groupId, group)
    for (const member of group.members.values()) this.keepAlive(member)
    this.rebalance.prepareRebalance(group, reason)
  }

  // ---- JoinGroup ----

  joinGroup(p: JoinGroupParams): Promise<JoinResult> {
    if (p.groupId === '') return Promise.resolve(joinError(ErrorCode.INVALID_GROUP_ID, p.memberId))
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return Promise.resolve(joinError(status, p.memberId))
    if (p.sessionTimeoutMs < this.config.minSessionTimeoutMs || p.sessionTimeoutMs > this.config.maxSessionTimeoutMs) {
      return Promise.resolve(joinError(ErrorCode.INVALID_SESSION_TIMEOUT, p.memberId))
    }
    let group = this.groups.get(p.groupId)
    if (!group) {
      if (p.memberId !== '') return Promise.resolve(joinError(ErrorCode.UNKNOWN_MEMBER_ID, p.memberId))
      group = new GroupMetadata(p.groupId, this.now)
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
    const member = newMember(newMemberId, p)
    group.replaceStaticMember(old.memberId, newMemberId, member)
    this.keepAlive(member)
    member.awaitingJoin = resolve
    this.logger.info('static member rejoined with a new member id', { group: group.groupId, instance: p.groupInstanceId, member: newMemberId, fenced: old.memberId })
    switch (group.state) {
      case GroupState.Stable:
        if (group.selectProtocol() === group.protocolName) {
          // The new member id is written first; if it cannot be, the old one is back.
          void this.storeGroup(group).then((errorCode) => {
            if (errorCode === ErrorCode.NONE) {
              member.completeJoin({
                errorCode: ErrorCode.NONE,
                generationId: group.generationId,
                protocolType: group.protocolType,
                protocolName: group.protocolName,
                leader: currentLeader,
                memberId: newMemberId,
                members: [],
              })
              return
            }
            if (group.get(newMemberId) === member && !group.is(GroupState.Dead)) {
              group.replaceStaticMember(newMemberId, old.memberId, old)
              this.keepAlive(old)
            }
            member.completeJoin(joinError(coordinatorErrorOf(errorCode, 'group'), ''))
          })
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
    const member = newMember(memberId, p)
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
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return Promise.resolve(syncError(status))
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
        if (member.memberId === group.leaderId) this.storeAssignment(group, member, new Map(p.assignments.map((a) => [a.memberId, a.assignment])))
        return result
      }
    }
  }

  /**
   * The leader's assignment: written with the group (Kafka's `storeGroup`), then handed out and
   * the group Stable; if the write failed, the members waiting get its error and the group
   * rebalances. Nothing happens when the group moved on meanwhile (a rebalance, an unload).
   */
  private storeAssignment(group: GroupMetadata, leader: MemberMetadata, received: ReadonlyMap<string, Buffer>): void {
    const generation = group.generationId
    const assignments = new Map([...group.members.keys()].map((memberId) => [memberId, received.get(memberId) ?? EMPTY]))
    void this.storeGroup(group, assignments).then((errorCode) => {
      if (!group.is(GroupState.CompletingRebalance) || group.generationId !== generation) return
      if (errorCode !== ErrorCode.NONE) {
        const error = coordinatorErrorOf(errorCode, 'group')
        for (const m of group.members.values()) {
          m.assignment = EMPTY
          m.completeSync(syncError(error))
        }
        this.rebalance.maybePrepareRebalance(group, `error ${error} when storing the group assignment during SyncGroup (member ${leader.memberId})`)
        this.rebalance.checkJoinPhase(group)
        return
      }
      for (const m of group.members.values()) m.assignment = assignments.get(m.memberId) ?? EMPTY
      group.transitionTo(GroupState.Stable)
      for (const m of group.members.values()) m.completeSync(this.syncResult(group, m))
    })
  }

  private syncResult(group: GroupMetadata, member: MemberMetadata): SyncResult {
    return { errorCode: ErrorCode.NONE, protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment }
  }

  // ---- Heartbeat ----

  heartbeat(groupId: string, memberId: string, generationId: number, groupInstanceId: string | null = null): number {
    const status = this.statusError()
    // Kafka answers a heartbeat blindly while the coordinator loads.
    if (status !== ErrorCode.NONE) return status === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ? ErrorCode.NONE : status
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
  leaveGroup(
    groupId: string,
    members: Array<{ memberId: string; groupInstanceId: string | null }>,
  ): { errorCode: number; members: Array<{ memberId: string; groupInstanceId: string | null; errorCode: number }> } {
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return { errorCode: status, members: [] }
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
    }
  }

  /**
   * Kafka's `cleanupGroupMetadata` (every offsets.retention.check.interval.ms): the Empty groups
   * with nothing pending and no committed offsets are forgotten. Until then an Empty group is
   * listed, described and deleted as Kafka's is (a member that left or whose session ended does
   * not take its group with it).
   */
  cleanupGroupMetadata(): void {
    for (const group of [...this.groups.values()]) this.maybeForget(group)
  }

  keepAlive(member: MemberMetadata): void {
    member.heartbeatDeadlineMs = this.now() + member.sessionTimeoutMs
  }

  /**
   * An Empty group with nothing pending and no committed offsets is Dead and forgotten: at the
   * cleanup, or at once when a request that made it failed (Kafka rolls such a group back).
   */
  maybeForget(group: GroupMetadata): void {
    if (!group.is(GroupState.Empty) || group.members.size > 0 || group.pendingMembers.size > 0 || this.offsets.hasOffsets(group.groupId)) return
    group.transitionTo(GroupState.Dead)
    this.groups.delete(group.groupId)
    // Written once, the group would come back at the next load: its tombstone.
    if (group.persisted) void this.write([groupMetadataTombstone(group.groupId)], group.groupId)
  }
}

/** A member as a JoinGroup asks for it (no rebalance timeout given: the session timeout). */
function newMember(memberId: string, p: JoinGroupParams): MemberMetadata {
  return new MemberMetadata({
    memberId,
    groupInstanceId: p.groupInstanceId,
    clientId: p.clientId,
    clientHost: p.clientHost,
    protocolType: p.protocolType,
    protocols: p.protocols,
    sessionTimeoutMs: p.sessionTimeoutMs,
    rebalanceTimeoutMs: p.rebalanceTimeoutMs >= 0 ? p.rebalanceTimeoutMs : p.sessionTimeoutMs,
  })
}
