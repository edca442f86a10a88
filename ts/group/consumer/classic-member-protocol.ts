/**
 * The classic members of KIP-848 consumer groups (Kafka's classicGroupJoinToConsumerGroup,
 * classicGroupSyncToConsumerGroup, classicGroupHeartbeatToConsumerGroup and
 * classicGroupLeaveToConsumerGroup): consumers of the classic protocol in a group upgraded from a
 * classic group, or joining a consumer group, as ./classic-group-migration.ts tells.
 *
 * - JoinGroup: the member (new, known, or a static instance back with a new id) takes the
 *   subscription of its embedded consumer protocol and is reconciled as a heartbeat reconciles a
 *   member (./consumer-group-manager.ts), with the partitions its subscription says it still owns;
 *   it is answered at once: its member epoch as generation, its first protocol, no leader. It then
 *   has its rebalance timeout to send SyncGroup (Kafka's sync timeout).
 * - SyncGroup: its current assignment, in the consumer protocol at its subscription's version;
 *   REBALANCE_IN_PROGRESS when the target assignment moved past it and it is not revoking.
 * - Heartbeat: REBALANCE_IN_PROGRESS when it lags the target assignment, must revoke, or may take
 *   partitions now released; it then has its rebalance timeout to rejoin (Kafka's join timeout).
 * - LeaveGroup: it is fenced as a consumer-protocol member would be.
 * A member missing a join or sync timeout is fenced; its session is its JoinGroup's session timeout.
 */
import type { Logger } from '../../logger.js'
import { CONSUMER_PROTOCOL_TYPE } from '../../protocol/consumer-protocol.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { CoordinatorRecord } from '../coordinator-record.js'
import type { JoinGroupParams, SyncGroupParams } from '../group-metadata-manager.js'
import { joinError, syncError, type JoinResult, type SyncResult } from '../member-metadata.js'
import { assignmentOfTopicPartitions, classicAssignment, classicMemberMetadata, classicSubscription, type ConsumerGroupMigrationPolicy, type TopicLookup } from './classic-group-migration.js'
import { MemberState, newMember, normalizeTopicNames, updateMember, type ConsumerGroupMember } from './consumer-group-member.js'
import { memberRemovalRecords, targetAssignmentRecord } from './consumer-group-records.js'
import { GroupApiError, type ConsumerGroup } from './consumer-group.js'

/** What the classic members need of the consumer group manager. */
export interface ClassicMemberHost {
  readonly groups: ReadonlyMap<string, ConsumerGroup>
  readonly clock: () => number
  readonly maxSize: number
  readonly migrationPolicy: ConsumerGroupMigrationPolicy
  readonly topics: TopicLookup
  /** Steps 1 to 3 of a heartbeat: the member's new subscription, the target assignment, its reconciliation. */
  updateAndReconcile(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    subscribed: ConsumerGroupMember,
    owned: ReadonlyArray<{ topicId: string; partitions: readonly number[] }>,
    records: CoordinatorRecord[],
    now: number,
    assignmentIntervalMs: number,
  ): ConsumerGroupMember
  cancelTimers(groupId: string, memberId: string): void
  setSessionDeadline(groupId: string, memberId: string, deadline: number): void
  fenceMember(group: ConsumerGroup, memberId: string): void
  writeRecords(records: CoordinatorRecord[]): void
}

export class ClassicMemberProtocol {
  private readonly host: ClassicMemberHost
  private readonly logger: Logger
  /** `groupId\0memberId` → when a classic member told to rejoin must have sent its JoinGroup (Kafka's join timeout). */
  private readonly classicJoinDeadlines = new Map<string, number>()
  /** `groupId\0memberId` → when a classic member that joined must have sent its SyncGroup (Kafka's sync timeout). */
  private readonly classicSyncDeadlines = new Map<string, number>()

  constructor(host: ClassicMemberHost, logger: Logger) {
    this.host = host
    this.logger = logger
  }

  /**
   * Kafka's `classicGroupJoinToConsumerGroup`: a JoinGroup to a live consumer group. The member
   * (new, or known) takes the subscription of its embedded protocol and is reconciled with the
   * partitions it reports owning; it is answered at once, its member epoch as generation.
   */
  join(p: JoinGroupParams): JoinResult {
    const records: CoordinatorRecord[] = []
    try {
      return this.joinRecorded(p, records)
    } catch (err) {
      if (!(err instanceof GroupApiError)) throw err
      return joinError(err.errorCode, p.memberId)
    } finally {
      if (records.length > 0) this.host.writeRecords(records)
    }
  }

  private joinRecorded(p: JoinGroupParams, records: CoordinatorRecord[]): JoinResult {
    const group = this.host.groups.get(p.groupId)
    if (!group) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Group ${p.groupId} not found.`)
    if (this.host.migrationPolicy === 'disabled') {
      throw new GroupApiError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `Cannot join the consumer group ${group.groupId} with the classic protocol because the group migration is disabled.`)
    }
    const now = this.host.clock()
    const isUnknownMember = p.memberId === ''
    const memberId = isUnknownMember ? crypto.randomUUID() : p.memberId
    if (group.members.size >= this.host.maxSize && !group.members.has(memberId) && !(p.groupInstanceId !== null && group.staticMember(p.groupInstanceId))) {
      throw new GroupApiError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${this.host.maxSize} members.`)
    }
    if (
      !group.supportsClassicProtocols(
        p.protocolType,
        p.protocols.map((x) => x.name),
      )
    ) {
      throw new GroupApiError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `Member ${memberId}'s protocols are not supported.`)
    }
    if (p.requireKnownMemberId && isUnknownMember && p.groupInstanceId === null) return joinError(ErrorCode.MEMBER_ID_REQUIRED, memberId)
    let member: ConsumerGroupMember
    if (p.groupInstanceId === null) member = group.member(memberId) ?? newMember(memberId)
    else {
      const existing = group.staticMember(p.groupInstanceId)
      if (!existing) member = group.member(memberId) ?? newMember(memberId)
      else if (existing.memberId === memberId) member = existing
      else if (!isUnknownMember) {
        throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${p.groupInstanceId} was fenced by member ${existing.memberId}.`)
      } else {
        // The instance restarted: the new member id takes the old one's place and partitions.
        const target = group.targetAssignmentOf(existing.memberId)
        group.removeMember(existing.memberId)
        this.host.cancelTimers(group.groupId, existing.memberId)
        member = updateMember(existing, { memberId, memberEpoch: 0, previousMemberEpoch: 0 })
        group.updateMember(member)
        group.targetAssignment.set(memberId, target)
        records.push(...memberRemovalRecords(group.groupId, existing.memberId), targetAssignmentRecord(group.groupId, memberId, target))
      }
    }
    const subscription = classicSubscription(p.protocols)
    const subscribed = updateMember(member, {
      instanceId: p.groupInstanceId ?? member.instanceId,
      rackId: subscription.rackId ?? member.rackId,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs >= 0 ? p.rebalanceTimeoutMs : p.sessionTimeoutMs,
      subscribedTopicNames: normalizeTopicNames(subscription.topics),
      clientId: p.clientId,
      clientHost: p.clientHost,
      classicMemberMetadata: classicMemberMetadata(p.sessionTimeoutMs, p.protocols),
    })
    const owned = [...assignmentOfTopicPartitions(subscription.ownedPartitions, this.host.topics)].map(([topicId, partitions]) => ({ topicId, partitions: [...partitions] }))
    if (!group.members.has(memberId)) this.logger.info('classic member joins the consumer group', { group: group.groupId, member: memberId })
    const updated = this.host.updateAndReconcile(group, member, subscribed, owned, records, now, p.assignmentIntervalMs ?? 0)
    const key = `${group.groupId}\0${memberId}`
    this.classicJoinDeadlines.delete(key)
    this.host.setSessionDeadline(group.groupId, memberId, now + p.sessionTimeoutMs)
    this.classicSyncDeadlines.set(key, now + subscribed.rebalanceTimeoutMs)
    return {
      errorCode: ErrorCode.NONE,
      generationId: updated.memberEpoch,
      protocolType: CONSUMER_PROTOCOL_TYPE,
      protocolName: p.protocols[0]!.name,
      leader: '',
      memberId,
      members: [],
    }
  }

  /** Kafka's `validateConsumerGroupMember` then `throwIfMemberDoesNotUseClassicProtocol`. */
  private member(group: ConsumerGroup, memberId: string, instanceId: string | null): ConsumerGroupMember {
    let member: ConsumerGroupMember | undefined
    if (instanceId === null) {
      member = group.member(memberId)
      if (!member) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${group.groupId}.`)
    } else {
      member = group.staticMember(instanceId)
      if (!member) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member with instance id ${instanceId} is not a member of group ${group.groupId}.`)
      if (member.memberId !== memberId) throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${instanceId} was fenced by member ${member.memberId}.`)
    }
    if (member.classicMemberMetadata === null) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${member.memberId} does not use the classic protocol.`)
    return member
  }

  private checkGeneration(member: ConsumerGroupMember, generationId: number): void {
    if (member.memberEpoch !== generationId) {
      throw new GroupApiError(ErrorCode.ILLEGAL_GENERATION, `The request generation id ${generationId} is not equal to the member epoch ${member.memberEpoch} of member ${member.memberId}.`)
    }
  }

  /** Kafka's `scheduleConsumerGroupJoinTimeoutIfAbsent`. */
  private expectRejoin(group: ConsumerGroup, member: ConsumerGroupMember): void {
    const key = `${group.groupId}\0${member.memberId}`
    if (!this.classicJoinDeadlines.has(key)) this.classicJoinDeadlines.set(key, this.host.clock() + member.rebalanceTimeoutMs)
  }

  /**
   * Kafka's `classicGroupSyncToConsumerGroup`: the member's current assignment, unless the
   * target moved on and it is not revoking (REBALANCE_IN_PROGRESS: it must rejoin first).
   */
  sync(p: SyncGroupParams): SyncResult {
    try {
      const group = this.host.groups.get(p.groupId)
      if (!group) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Group ${p.groupId} not found.`)
      const member = this.member(group, p.memberId, p.groupInstanceId)
      this.checkGeneration(member, p.generationId)
      const protocolName = member.classicMemberMetadata!.supportedProtocols[0]?.name
      if ((p.protocolType !== null && p.protocolType !== CONSUMER_PROTOCOL_TYPE) || (p.protocolName !== null && p.protocolName !== protocolName)) {
        throw new GroupApiError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `The protocol of member ${member.memberId}'s SyncGroup is not the one of its JoinGroup.`)
      }
      if (group.assignmentEpoch > member.memberEpoch && member.state !== MemberState.UNREVOKED_PARTITIONS) {
        this.expectRejoin(group, member)
        throw new GroupApiError(ErrorCode.REBALANCE_IN_PROGRESS, `A new rebalance is triggered in group ${group.groupId} and member ${member.memberId} should rejoin to catch up.`)
      }
      const key = `${group.groupId}\0${member.memberId}`
      this.classicSyncDeadlines.delete(key)
      this.host.setSessionDeadline(group.groupId, member.memberId, this.host.clock() + member.classicMemberMetadata!.sessionTimeoutMs)
      return { errorCode: ErrorCode.NONE, protocolType: p.protocolType, protocolName: p.protocolName, assignment: classicAssignment(member, member.assignedPartitions, this.host.topics) }
    } catch (err) {
      if (!(err instanceof GroupApiError)) throw err
      return syncError(err.errorCode)
    }
  }

  /**
   * Kafka's `classicGroupHeartbeatToConsumerGroup`: REBALANCE_IN_PROGRESS when the member lags
   * the target assignment, must revoke, or may now take partitions others released.
   */
  heartbeat(groupId: string, memberId: string, generationId: number, instanceId: string | null): number {
    try {
      const group = this.host.groups.get(groupId)
      if (!group) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Group ${groupId} not found.`)
      const member = this.member(group, memberId, instanceId)
      this.checkGeneration(member, generationId)
      this.host.setSessionDeadline(groupId, member.memberId, this.host.clock() + member.classicMemberMetadata!.sessionTimeoutMs)
      if (
        member.memberEpoch < group.assignmentEpoch ||
        member.state === MemberState.UNREVOKED_PARTITIONS ||
        (member.state === MemberState.UNRELEASED_PARTITIONS && !group.waitingOnUnreleasedPartition(member))
      ) {
        this.expectRejoin(group, member)
        return ErrorCode.REBALANCE_IN_PROGRESS
      }
      return ErrorCode.NONE
    } catch (err) {
      if (!(err instanceof GroupApiError)) throw err
      return err.errorCode
    }
  }

  /** Kafka's `classicGroupLeaveToConsumerGroup`: each classic member named leaves (an administrator may name a static one by its instance id alone). */
  leave(groupId: string, members: ReadonlyArray<{ memberId: string; groupInstanceId: string | null }>): Array<{ memberId: string; groupInstanceId: string | null; errorCode: number }> {
    const group = this.host.groups.get(groupId)
    return members.map((m) => {
      try {
        if (!group) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Group ${groupId} not found.`)
        let member: ConsumerGroupMember
        if (m.groupInstanceId !== null && m.memberId === '') {
          const found = group.staticMember(m.groupInstanceId)
          if (!found || found.classicMemberMetadata === null) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${m.groupInstanceId} is unknown.`)
          member = found
        } else member = this.member(group, m.memberId, m.groupInstanceId)
        this.logger.info('classic member left the consumer group', { group: groupId, member: member.memberId })
        this.host.fenceMember(group, member.memberId)
        return { memberId: member.memberId, groupInstanceId: m.groupInstanceId, errorCode: ErrorCode.NONE }
      } catch (err) {
        if (!(err instanceof GroupApiError)) throw err
        return { ...m, errorCode: err.errorCode }
      }
    })
  }

  /** Fences the classic members that missed their join or sync timeout. */
  sweep(now: number): void {
    for (const [deadlines, why] of [
      [this.classicJoinDeadlines, 'the classic member failed to join within the rebalance timeout'],
      [this.classicSyncDeadlines, 'the classic member failed to sync within the rebalance timeout'],
    ] as const) {
      for (const [key, deadline] of deadlines) {
        if (now < deadline) continue
        deadlines.delete(key)
        const [groupId, memberId] = key.split('\0') as [string, string]
        const group = this.host.groups.get(groupId)
        if (!group?.member(memberId)) continue
        this.logger.info(`consumer group member fenced: ${why}`, { group: groupId, member: memberId })
        this.host.fenceMember(group, memberId)
      }
    }
  }

  /** The member (`groupId\0memberId`) left or was fenced. */
  cancelTimers(key: string): void {
    this.classicJoinDeadlines.delete(key)
    this.classicSyncDeadlines.delete(key)
  }

  /** Forgets every deadline (the coordinator resigned). */
  unload(): void {
    this.classicJoinDeadlines.clear()
    this.classicSyncDeadlines.clear()
  }
}
