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
 * - Commits, DeleteGroups and OffsetDelete are answered once their records are on the ISR of
 *   the offsets partition (acks=all, ./offset-store.ts); a failed write is answered with Kafka's
 *   mapping of its error (./coordinator-errors.ts) and changes nothing.
 *
 * Election (Kafka's `onElection` / `onResignation`, driven by the replica manager's
 * `onLeadershipChange` through `onLeadershipChange` here; a standalone broker elects itself at
 * start): the broker that leads `__consumer_offsets-0` coordinates every group. Elected in a
 * leader epoch newer than any it saw, the coordinator loads the offsets log (groups known by
 * their offsets come back Empty); until it is loaded, group requests are answered
 * COORDINATOR_LOAD_IN_PROGRESS (a Heartbeat NONE, as Kafka answers it blindly). Resigning (in
 * an epoch at least its own, or with none given) drops every group and the offsets: held
 * JoinGroup and SyncGroup answers, and every later group request, get NOT_COORDINATOR, and the
 * clients look the coordinator up again. Before any election the coordinator is not one either.
 *
 * Not here yet: group.max.size, persisting group metadata (generations restart after a broker
 * restart or a change of coordinator; committed offsets do not), JoinGroup v9's skipAssignment
 * for static leaders.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from '../logger.js'
import type { JoinGroupRequestProtocol } from '../protocol/apis/join-group.js'
import { CONSUMER_PROTOCOL_TYPE } from '../protocol/consumer-protocol.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { LeadershipChange } from '../replica/replica-manager.js'
import { coordinatorErrorOf } from './coordinator-errors.js'
import { GroupMetadata, GroupState } from './group-metadata.js'
import { joinError, MemberMetadata, syncError, type JoinResult, type SyncResult } from './member-metadata.js'
import { Rebalancer } from './rebalance.js'
import { OFFSETS_PARTITION, OFFSETS_TOPIC, type OffsetCommitEntry, type OffsetStore } from './offset-store.js'

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
  /** The period of the session and rebalance sweep (while elected); 0 starts no timer (tests call `sweep`). */
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
  /** The sweep, while elected. */
  private timer: NodeJS.Timeout | null = null
  private readonly rebalance: Rebalancer
  private stopped = false
  /** Not the coordinator (never elected, or resigned), loading the offsets log, or serving. */
  private status: 'inactive' | 'loading' | 'active' = 'inactive'
  /** The newest leader epoch of the offsets partition seen in an election or resignation (Kafka's `epochForPartitionId`). */
  private epoch: number | null = null
  /** The load under way, while loading. */
  private loading: Promise<void> | null = null

  constructor(offsets: OffsetStore, config: GroupCoordinatorConfig, logger: Logger) {
    this.offsets = offsets
    this.config = config
    this.logger = logger
    this.now = config.clock ?? Date.now
    this.rebalance = new Rebalancer(config.initialRebalanceDelayMs, this.now, logger)
  }

  /**
   * The error that answers every group request while this broker does not coordinate the
   * groups: COORDINATOR_LOAD_IN_PROGRESS while it loads the offsets log, NOT_COORDINATOR when it
   * is not (or no longer) the coordinator or is stopped; NONE when it serves.
   */
  statusError(): number {
    if (this.stopped || this.status === 'inactive') return ErrorCode.NOT_COORDINATOR
    return this.status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE
  }

  /**
   * The replica manager's `onLeadershipChange`: an election for each offsets partition this
   * broker now leads, a resignation for each it no longer does.
   */
  onLeadershipChange(leaders: readonly LeadershipChange[], followers: readonly LeadershipChange[]): void {
    for (const p of leaders) if (p.topic === OFFSETS_TOPIC) void this.onElection(p.partition, p.leaderEpoch)
    for (const p of followers) if (p.topic === OFFSETS_TOPIC) this.onResignation(p.partition, p.leaderEpoch)
  }

  /**
   * Kafka's `onElection`: this broker leads the offsets partition in `leaderEpoch`. A newer
   * epoch than any seen starts the load, unless one is loaded or loading already (then only the
   * epoch moves, as Kafka's coordinator runtime does); an older or equal one is ignored.
   * Resolves once the load under way ended (loaded, abandoned or failed: a failure is logged,
   * and the coordinator stays inactive until the next election).
   */
  onElection(partition: number, leaderEpoch: number): Promise<void> {
    if (partition !== OFFSETS_PARTITION || this.stopped) return Promise.resolve()
    if (this.epoch !== null && leaderEpoch <= this.epoch) {
      this.logger.warn('ignored an election as group coordinator: not a newer epoch', { partition, leaderEpoch, currentEpoch: this.epoch })
      return this.loading ?? Promise.resolve()
    }
    this.epoch = leaderEpoch
    if (this.status !== 'inactive') return this.loading ?? Promise.resolve()
    this.status = 'loading'
    this.startSweep()
    this.logger.info('elected group coordinator; loading the offsets log', { partition, leaderEpoch })
    const loading: Promise<void> = this.offsets.load(leaderEpoch).then(
      (loaded) => {
        if (!loaded || this.loading !== loading) return
        this.loading = null
        // Groups known only by their committed offsets are Empty groups, as Kafka loads them.
        for (const groupId of this.offsets.groupIds()) if (!this.groups.has(groupId)) this.groups.set(groupId, new GroupMetadata(groupId))
        this.status = 'active'
      },
      (err: Error) => {
        if (this.loading !== loading) return
        this.logger.error('cannot load the offsets log: not coordinating the groups', { partition, leaderEpoch, error: err.message })
        this.resign()
      },
    )
    this.loading = loading
    return loading
  }

  /**
   * Kafka's `onResignation`: this broker no longer leads the offsets partition. Unless the
   * coordinator was elected in a newer epoch than `leaderEpoch` (absent: any), every group is
   * dropped (held JoinGroup and SyncGroup answers go out NOT_COORDINATOR) and the offsets with them.
   */
  onResignation(partition: number, leaderEpoch?: number): void {
    if (partition !== OFFSETS_PARTITION || this.stopped) return
    if (leaderEpoch !== undefined && this.epoch !== null && this.epoch > leaderEpoch) {
      this.logger.warn('ignored a resignation as group coordinator: elected in a newer epoch', { partition, leaderEpoch, currentEpoch: this.epoch })
      return
    }
    if (leaderEpoch !== undefined) this.epoch = leaderEpoch
    if (this.status === 'inactive') return
    this.logger.info('resigned as group coordinator', { partition, leaderEpoch, groups: this.groups.size })
    this.resign()
  }

  private resign(): void {
    this.status = 'inactive'
    this.loading = null
    this.stopSweep()
    this.unloadGroups()
    this.offsets.unload()
  }

  /** Every group dropped, Dead; the answers it held go out NOT_COORDINATOR. */
  private unloadGroups(): void {
    for (const group of this.groups.values()) {
      for (const member of group.members.values()) {
        member.completeJoin(joinError(ErrorCode.NOT_COORDINATOR, member.memberId))
        member.completeSync(syncError(ErrorCode.NOT_COORDINATOR))
      }
      group.transitionTo(GroupState.Dead)
    }
    this.groups.clear()
  }

  private startSweep(): void {
    const every = this.config.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS
    if (every <= 0 || this.timer !== null) return
    this.timer = setInterval(() => this.sweep(), every)
    this.timer.unref()
  }

  private stopSweep(): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }

  /**
   * Stops the sweep and answers every held JoinGroup and SyncGroup with NOT_COORDINATOR (and
   * later group requests too); writes waiting for their acks are answered NOT_COORDINATOR.
   */
  stop(): void {
    this.stopped = true
    this.stopSweep()
    for (const group of this.groups.values()) {
      for (const member of group.members.values()) {
        member.completeJoin(joinError(ErrorCode.NOT_COORDINATOR, member.memberId))
        member.completeSync(syncError(ErrorCode.NOT_COORDINATOR))
      }
    }
    this.offsets.unload()
  }

  group(groupId: string): GroupMetadata | undefined {
    return this.groups.get(groupId)
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
  leaveGroup(groupId: string, members: Array<{ memberId: string; groupInstanceId: string | null }>): { errorCode: number; members: Array<{ memberId: string; groupInstanceId: string | null; errorCode: number }> } {
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
   * unknown: the group is then created, Empty, to hold the offsets). Then the commits are
   * written (Kafka's `storeOffsets`) and applied once the ISR holds them. Resolves to the error
   * code for every partition of the request.
   */
  async commitOffsets(groupId: string, memberId: string, generationId: number, entries: readonly OffsetCommitEntry[], groupInstanceId: string | null = null): Promise<number> {
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return status
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
    const g = group
    // A group deleted or unloaded meanwhile does not take the offsets (Kafka's putCacheCallback).
    const appendError = await this.offsets.commit(groupId, entries, { onlyIf: () => !g.is(GroupState.Dead) })
    if (appendError === ErrorCode.NONE) return ErrorCode.NONE
    this.logger.warn('offset commit not written', { group: groupId, appendError })
    // A group made for these offsets alone goes again.
    if (this.groups.get(groupId) === g) this.maybeForget(g)
    return coordinatorErrorOf(appendError, 'commit')
  }

  // ---- DeleteGroups, OffsetDelete ----

  /**
   * Kafka's `deleteGroups`: only an Empty group can go (NON_EMPTY_GROUP while it has members,
   * GROUP_ID_NOT_FOUND when there is none by that id); it is gone at once (Dead: commits on
   * their way to the ISR no longer apply), and its committed offsets, those on their way too,
   * are deleted with tombstones in the offsets log, so it stays gone after a restart. Each id is
   * answered once, when its tombstones are on the ISR; if they could not be written, the group
   * is back (Empty, known by its offsets) and the answer is Kafka's mapping of the error.
   */
  deleteGroups(groupIds: readonly string[]): Promise<Array<{ groupId: string; errorCode: number }>> {
    return Promise.all([...new Set(groupIds)].map(async (groupId) => ({ groupId, errorCode: await this.deleteGroup(groupId) })))
  }

  private async deleteGroup(groupId: string): Promise<number> {
    if (groupId === '') return ErrorCode.INVALID_GROUP_ID
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return status
    const group = this.groups.get(groupId)
    if (!group || group.is(GroupState.Dead)) return ErrorCode.GROUP_ID_NOT_FOUND
    if (!group.is(GroupState.Empty)) return ErrorCode.NON_EMPTY_GROUP
    // Members given an id with MEMBER_ID_REQUIRED find no group when they come back.
    group.transitionTo(GroupState.Dead)
    this.groups.delete(groupId)
    const { errorCode: appendError } = await this.offsets.deleteGroup(groupId)
    if (appendError !== ErrorCode.NONE) {
      this.logger.warn('offset tombstones of a deleted group not written', { group: groupId, appendError })
      if (this.statusError() === ErrorCode.NONE && !this.groups.has(groupId) && this.offsets.hasOffsets(groupId)) this.groups.set(groupId, new GroupMetadata(groupId))
      return coordinatorErrorOf(appendError, 'tombstones')
    }
    this.logger.info('deleted group', { group: groupId })
    return ErrorCode.NONE
  }

  /**
   * Kafka's `deleteOffsets` (OffsetDelete): a group-level error when the group is unknown
   * (GROUP_ID_NOT_FOUND) or has members and is not a consumer group (NON_EMPTY_GROUP); else,
   * per partition, GROUP_SUBSCRIBED_TO_TOPIC for a topic the group consumes, and the others'
   * offsets are deleted with tombstones (a partition without one is answered NONE too), answered
   * once the ISR holds them. A group left Empty with no offsets is gone, as after a restart.
   */
  async deleteOffsets(
    groupId: string,
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
  ): Promise<{ errorCode: number; partitions: Array<{ topic: string; partition: number; errorCode: number }> }> {
    if (groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, partitions: [] }
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return { errorCode: status, partitions: [] }
    const group = this.groups.get(groupId)
    if (!group || group.is(GroupState.Dead)) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, partitions: [] }
    if (!group.is(GroupState.Empty) && group.protocolType !== CONSUMER_PROTOCOL_TYPE) return { errorCode: ErrorCode.NON_EMPTY_GROUP, partitions: [] }
    const out = partitions.map((p) => ({ ...p, errorCode: group.isSubscribedToTopic(p.topic) ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE }))
    const { errorCode: appendError } = await this.offsets.delete(groupId, out.filter((p) => p.errorCode === ErrorCode.NONE))
    if (appendError !== ErrorCode.NONE) {
      this.logger.warn('offset tombstones not written', { group: groupId, appendError })
      return { errorCode: coordinatorErrorOf(appendError, 'tombstones'), partitions: [] }
    }
    if (this.groups.get(groupId) === group) this.maybeForget(group)
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
