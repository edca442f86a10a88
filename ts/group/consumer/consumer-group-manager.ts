/**
 * The KIP-848 part of Kafka's `GroupMetadataManager`: ConsumerGroupHeartbeat (join, heartbeat,
 * leave, static leave), the members' session and rebalance timeouts, and ConsumerGroupDescribe.
 *
 * A heartbeat (Kafka's `consumerGroupHeartbeat`):
 * 1. the member is created (epoch 0) or found and its epoch checked (FENCED_MEMBER_EPOCH unless
 *    it is the member's epoch, or the previous one with owned partitions within its assignment:
 *    the answer that bumped it may have been lost); its subscription, rack, assignor, rebalance
 *    timeout are updated; a changed subscription, or a change of the subscribed topics (created,
 *    deleted, more partitions, a partition's racks: looked up at every heartbeat and compared by
 *    the group's metadata hash, which is persisted with the group epoch, so a change while the
 *    group was not loaded is seen at its first heartbeat), bumps the group epoch; the group's
 *    regular expressions are resolved again when due (below);
 * 2. when the group epoch is newer than the target assignment, the assignor computes the next
 *    target for every member (./target-assignment-builder.ts), at most once per assignment
 *    interval (group.consumer.assignment.interval.ms, 1 s, as Kafka 4.4): a change within a second
 *    of the last target waits for a heartbeat after the interval, so members that join together
 *    get one target, and a member given partitions has time to take them (and to report them
 *    owned) before the next target moves some away;
 * 3. the member is reconciled one step (./current-assignment-builder.ts): a partition moves to
 *    it only once its previous owner reported it revoked.
 * The answer carries the member's epoch, the heartbeat interval, and its assignment when the
 * request was full (joining, or every field given) or the assignment changed.
 *
 * Racks (KIP-881's rack-aware assignment on the server side, as Kafka 4.4 has it): a member's
 * rack is its heartbeat's RackId, a partition's racks those of the brokers holding its replicas
 * (`TopicImage.partitionRacks`). Both reach the assignor (`rackId`, `racksForPartition`), but
 * Kafka 4.4's uniform and range assignors do not use them, nor do ferrolog's: the assignment is
 * the same with racks or without. A change of a subscribed partition's racks bumps the group
 * epoch (Kafka 4.4 hashes them into the group's metadata hash, KIP-1101), so a new target
 * assignment is computed; a member changing its rack only rewrites its member record.
 *
 * Leaving (epoch -1), a session that expires (no heartbeat for the session timeout), or a
 * member that does not revoke its partitions within its rebalance timeout: the member is
 * removed (fenced), its partitions are free, and the group epoch is bumped so the others
 * get them. A static member leaving with epoch -2 keeps its partitions until its session
 * expires; a member with the same instance id joining meanwhile takes its place and partitions.
 *
 * Regular expressions (`subscribedTopicRegex`, RE2 syntax, ./topic-regex-resolver.ts; a bad one
 * is INVALID_REGULAR_EXPRESSION): a member subscribes to the topics its regex matches besides
 * those it names. Kafka's `maybeUpdateRegularExpressions`: the group's regexes are resolved
 * against the topics at a heartbeat, when at least 10 s (REGEX_BATCH_REFRESH_MIN_INTERVAL_MS)
 * passed since the last resolution, and a regex is not resolved yet, or topics were created since
 * (the resolution finds a different set), or group.consumer.regex.refresh.interval.ms passed.
 * Each resolution is written as the group's ConsumerGroupRegularExpression record, and a change
 * of the matched topics bumps the group epoch: a topic created later reaches the members at a
 * heartbeat 10 s after the previous resolution at the latest. The last member of a regex leaving
 * tombstones it. Unlike Kafka, which resolves on its executor and applies the result in a later
 * write, ferrolog resolves in the heartbeat itself (the topics are in memory): the member that
 * brings a new regex gets its topics in that heartbeat's target assignment.
 *
 * Members of the classic protocol are in the same groups (a live classic group upgraded, or a
 * classic consumer joining; the group downgraded when its last consumer-protocol member leaves):
 * ./classic-group-migration.ts converts, ./classic-member-protocol.ts serves their JoinGroup,
 * SyncGroup, Heartbeat and LeaveGroup through the same steps 1 to 3.
 *
 * Every change is written as Kafka's coordinator records to `__consumer_offsets`
 * (./consumer-group-records.ts) and replayed when the offsets log is loaded (`replay`, then
 * `onLoaded`), so a restart or a new coordinator resumes each group where it was. Unlike
 * Kafka, the answer does not wait for the records to reach the ISR: a record lost with the
 * coordinator brings the group back a step earlier, where a member's newer epoch is fenced
 * (FENCED_MEMBER_EPOCH) and it rejoins; never two owners of one partition.
 */
import type { Logger } from '../../logger.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { assignmentEquals, assignmentToString, EMPTY_ASSIGNMENT, type Assignment } from './assignment.js'
import { ConsumerGroup, GroupApiError, subscriptionMetadataHash, type SubscribedTopic } from './consumer-group.js'
import {
  LEAVE_GROUP_MEMBER_EPOCH,
  LEAVE_GROUP_STATIC_MEMBER_EPOCH,
  MemberState,
  isReconciledTo,
  memberEquals,
  newMember,
  normalizeTopicNames,
  regexOf,
  sameTopicNames,
  updateMember,
  type ConsumerGroupMember,
} from './consumer-group-member.js'
import { buildCurrentAssignment } from './current-assignment-builder.js'
import { resolveRegularExpressions, sameTopics, throwIfRegularExpressionIsInvalid } from './topic-regex-resolver.js'
import { buildTargetAssignment } from './target-assignment-builder.js'
import {
  currentAssignmentRecord,
  groupEpochRecord,
  memberRemovalRecords,
  groupEpochTombstone,
  memberSubscriptionRecord,
  regularExpressionRecord,
  replayConsumerGroupRecord,
  targetAssignmentEpochRecord,
  targetAssignmentEpochTombstone,
  targetAssignmentRecord,
} from './consumer-group-records.js'
import type { CoordinatorRecord } from '../coordinator-record.js'
import type { GroupMetadata } from '../group-metadata.js'
import { CONSUMER_PROTOCOL_TYPE } from '../../protocol/consumer-protocol.js'
import { groupMetadataRecord, groupMetadataTombstone } from '../group-metadata-records.js'
import { classicGroupFromConsumerGroup, consumerGroupFromClassicGroup, isDowngradeEnabled, isUpgradeEnabled, type ConsumerGroupMigrationPolicy } from './classic-group-migration.js'
import { ClassicMemberProtocol } from './classic-member-protocol.js'
import type { ConsumerGroupPartitionAssignor } from './assignor/partition-assignor.js'

/** What the coordinator knows of a topic: its id and partition count, and where its replicas are. */
export interface TopicImage {
  readonly name: string
  readonly topicId: Buffer
  readonly numPartitions: number
  /**
   * Kafka's `TopicMetadata.partitionRacks`: the racks (broker.rack) of the brokers holding the
   * partition's replicas, one per replica whose broker has a rack; none known when absent.
   */
  partitionRacks?(partition: number): readonly string[]
}

/** The topics as the broker's metadata has them now. */
export interface TopicsImage {
  byName(name: string): TopicImage | undefined
  /** `topicId`: the id's hex. */
  byId(topicId: string): TopicImage | undefined
  /** Every topic's name (regular expressions are resolved against them). */
  names(): Iterable<string>
}

/** Kafka's REGEX_BATCH_REFRESH_MIN_INTERVAL_MS: a group's regexes are resolved at most this often. */
export const REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000
/** group.consumer.regex.refresh.interval.ms' default: resolved again after this long even without new topics. */
export const DEFAULT_REGEX_REFRESH_INTERVAL_MS = 600_000

export interface ConsumerGroupManagerConfig {
  /** group.consumer.assignors, in order: the first is the default. */
  assignors: readonly ConsumerGroupPartitionAssignor[]
  /** group.consumer.max.size. */
  maxSize: number
  topics: TopicsImage
  clock: () => number
  /** group.consumer.session.timeout.ms: the sessions of the members a load brings back. */
  sessionTimeoutMs: number
  /** group.consumer.migration.policy: whether live groups convert between the two protocols (./classic-group-migration.ts). */
  migrationPolicy: ConsumerGroupMigrationPolicy
  /** group.consumer.regex.refresh.interval.ms (DEFAULT_REGEX_REFRESH_INTERVAL_MS when not given). */
  regexRefreshIntervalMs?: number
  /**
   * Writes coordinator records (./consumer-group-records.ts) to the offsets log, in the order
   * given; the group's state changes at once (the answer does not wait for the write).
   */
  writeRecords: (records: CoordinatorRecord[]) => void
}

export interface ConsumerGroupHeartbeatParams {
  groupId: string
  memberId: string
  memberEpoch: number
  instanceId: string | null
  rackId: string | null
  rebalanceTimeoutMs: number
  subscribedTopicNames: string[] | null
  subscribedTopicRegex: string | null
  serverAssignor: string | null
  topicPartitions: ReadonlyArray<{ topicId: Buffer; partitions: number[] }> | null
  clientId: string
  clientHost: string
  apiVersion: number
  /** The group's session timeout and heartbeat interval (group config, else the broker's). */
  sessionTimeoutMs: number
  heartbeatIntervalMs: number
  /**
   * The least time between two target assignments (consumer.assignment.interval.ms, else
   * group.consumer.assignment.interval.ms); 0 when not given: any heartbeat may compute one.
   */
  assignmentIntervalMs?: number
  /** Whether the member may DESCRIBE a topic (its regex resolves only to those); all when not given. */
  mayDescribeTopic?: (topic: string) => boolean
}

export interface ConsumerGroupHeartbeatResult {
  errorCode: number
  errorMessage: string | null
  memberId: string | null
  memberEpoch: number
  heartbeatIntervalMs: number
  /** Partitions by topic id (hex); null when not sent. */
  assignment: Assignment | null
}

/** What the classic groups say of a group id: none by that id, an Empty one, or a live one. */
export interface ClassicGroups {
  state(groupId: string): 'none' | 'empty' | 'live'
  /** Forgets an Empty classic group that becomes a consumer group (its offsets stay). */
  drop(groupId: string): void
  /** The live classic group by that id (not a share group), for an upgrade. */
  live(groupId: string): GroupMetadata | undefined
  /** Forgets a live classic group upgraded to a consumer group; the JoinGroup and SyncGroup answers it holds go out REBALANCE_IN_PROGRESS. */
  remove(groupId: string): void
  /** Takes a consumer group downgraded to a classic group, which rebalances at once. */
  adopt(group: GroupMetadata, reason: string): void
}

export class ConsumerGroupManager {
  readonly groups = new Map<string, ConsumerGroup>()
  private readonly config: ConsumerGroupManagerConfig
  private readonly classic: ClassicGroups
  private readonly logger: Logger
  /** `groupId\0memberId` → when the member's session ends. */
  private readonly sessionDeadlines = new Map<string, number>()
  /** `groupId\0memberId` → when the member must have revoked its partitions, at which epoch. */
  private readonly rebalanceDeadlines = new Map<string, { deadline: number; memberEpoch: number }>()
  /** JoinGroup, SyncGroup, Heartbeat and LeaveGroup of the classic members of consumer groups. */
  readonly classicMembers: ClassicMemberProtocol

  constructor(config: ConsumerGroupManagerConfig, classic: ClassicGroups, logger: Logger) {
    this.config = config
    this.classic = classic
    this.logger = logger
    this.classicMembers = new ClassicMemberProtocol(
      {
        groups: this.groups,
        clock: config.clock,
        maxSize: config.maxSize,
        migrationPolicy: config.migrationPolicy,
        topics: config.topics,
        updateAndReconcile: (group, member, subscribed, owned, records, now, assignmentIntervalMs) =>
          this.updateAndReconcile(group, member, subscribed, owned, records, now, assignmentIntervalMs, () => true),
        cancelTimers: (groupId, memberId) => this.cancelTimers(groupId, memberId),
        setSessionDeadline: (groupId, memberId, deadline) => this.sessionDeadlines.set(`${groupId}\0${memberId}`, deadline),
        fenceMember: (group, memberId) => this.fenceMember(group, memberId),
        writeRecords: (records) => this.config.writeRecords(records),
      },
      logger,
    )
  }

  /** ConsumerGroupHeartbeat: Kafka's answer, or its error code and message. */
  heartbeat(p: ConsumerGroupHeartbeatParams): ConsumerGroupHeartbeatResult {
    try {
      this.validateRequest(p)
      if (p.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH || p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) return this.leave(p)
      return this.memberHeartbeat(p)
    } catch (err) {
      if (!(err instanceof GroupApiError)) throw err
      return { errorCode: err.errorCode, errorMessage: err.message, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null }
    }
  }

  /** Kafka's `throwIfConsumerGroupHeartbeatRequestIsInvalid`. */
  private validateRequest(p: ConsumerGroupHeartbeatParams): void {
    const invalid = (message: string) => new GroupApiError(ErrorCode.INVALID_REQUEST, message)
    if (p.groupId === '') throw invalid("GroupId can't be empty.")
    if (p.instanceId === '') throw invalid("InstanceId can't be empty.")
    if (p.rackId === '') throw invalid("RackId can't be empty.")
    // From v1 the member id is generated by the consumer, for every epoch.
    if (p.apiVersion >= 1 && p.memberId === '') throw invalid("MemberId can't be empty.")
    if (p.memberEpoch > 0 || p.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH) {
      if (p.memberId === '') throw invalid("MemberId can't be empty.")
    } else if (p.memberEpoch === 0) {
      if (p.rebalanceTimeoutMs === -1) throw invalid('RebalanceTimeoutMs must be provided in first request.')
      if (p.topicPartitions === null || p.topicPartitions.length > 0) throw invalid('TopicPartitions must be empty when (re-)joining.')
      // An empty list of names or an empty regex joins without subscribing to any topic.
      if (p.subscribedTopicNames === null && p.subscribedTopicRegex === null) throw invalid('Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.')
    } else if (p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      if (p.memberId === '') throw invalid("MemberId can't be empty.")
      if (p.instanceId === null) throw invalid("InstanceId can't be null.")
    } else {
      throw invalid('MemberEpoch is invalid.')
    }
    if (p.serverAssignor !== null && !this.config.assignors.some((a) => a.name === p.serverAssignor)) {
      throw new GroupApiError(ErrorCode.UNSUPPORTED_ASSIGNOR, `ServerAssignor ${p.serverAssignor} is not supported. Supported assignors: ${this.config.assignors.map((a) => a.name).join(', ')}.`)
    }
  }

  /**
   * The consumer group by that id; when `create`, an Empty classic group becomes one, and a live
   * classic group is upgraded when the policy allows it (its records added to `records`).
   */
  private consumerGroup(groupId: string, create: boolean, records: CoordinatorRecord[] = []): ConsumerGroup {
    const group = this.groups.get(groupId)
    if (group) return group
    const classic = this.classic.state(groupId)
    if (classic === 'live') {
      const live = create ? this.classic.live(groupId) : undefined
      if (!live) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`)
      return this.convertToConsumerGroup(live, records)
    }
    if (!create) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`)
    if (classic === 'empty') {
      // Kafka's `maybeDeleteEmptyClassicGroup`: the classic group's tombstone.
      this.classic.drop(groupId)
      records.push(groupMetadataTombstone(groupId))
    }
    const created = new ConsumerGroup(groupId)
    this.groups.set(groupId, created)
    this.logger.info('created consumer group', { group: groupId })
    return created
  }

  private memberHeartbeat(p: ConsumerGroupHeartbeatParams): ConsumerGroupHeartbeatResult {
    const records: CoordinatorRecord[] = []
    try {
      return this.memberHeartbeatRecorded(p, records)
    } finally {
      // An upgrade done before the heartbeat failed stays done: its records go out too.
      if (records.length > 0) this.config.writeRecords(records)
    }
  }

  private memberHeartbeatRecorded(p: ConsumerGroupHeartbeatParams, records: CoordinatorRecord[]): ConsumerGroupHeartbeatResult {
    const now = this.config.clock()
    const joining = p.memberEpoch === 0
    const group = this.consumerGroup(p.groupId, joining, records)
    const memberId = p.memberId === '' ? crypto.randomUUID() : p.memberId
    if (group.members.size >= this.config.maxSize && !group.members.has(memberId) && !(p.instanceId !== null && group.staticMember(p.instanceId))) {
      throw new GroupApiError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${this.config.maxSize} members.`)
    }
    // A regex new to the group is compiled before anything changes (Kafka: when it is first subscribed).
    if (p.subscribedTopicRegex !== null && p.subscribedTopicRegex !== '' && group.numSubscribedMembers(p.subscribedTopicRegex) === 0) throwIfRegularExpressionIsInvalid(p.subscribedTopicRegex)
    const owned = p.topicPartitions === null ? null : p.topicPartitions.map((t) => ({ topicId: t.topicId.toString('hex'), partitions: t.partitions }))
    let member: ConsumerGroupMember
    if (p.instanceId === null) {
      member = this.dynamicMember(group, memberId, p.memberEpoch, owned, joining)
    } else {
      const existing = group.staticMember(p.instanceId)
      if (joining) {
        if (!existing) member = group.member(memberId) ?? newMember(memberId)
        else if (existing.memberId === memberId) member = existing
        else {
          if (existing.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
            throw new GroupApiError(
              ErrorCode.UNRELEASED_INSTANCE_ID,
              `Static member ${memberId} with instance id ${p.instanceId} cannot join the group because the instance id is owned by ${existing.memberId} member.`,
            )
          }
          // Kafka's `replaceMember`: the new member takes the old one's partitions and target, at epoch 0.
          const target = group.targetAssignmentOf(existing.memberId)
          group.removeMember(existing.memberId)
          this.cancelTimers(group.groupId, existing.memberId)
          member = updateMember(existing, { memberId, memberEpoch: 0, previousMemberEpoch: 0 })
          group.updateMember(member)
          group.targetAssignment.set(memberId, target)
          records.push(...memberRemovalRecords(group.groupId, existing.memberId))
          records.push(
            memberSubscriptionRecord(group.groupId, memberId, member),
            targetAssignmentRecord(group.groupId, memberId, target),
            currentAssignmentRecord(group.groupId, memberId, member, epochsOf(group, memberId)),
          )
          this.logger.info('static member rejoins the consumer group', { group: group.groupId, member: memberId, replaced: existing.memberId, instanceId: p.instanceId })
        }
      } else {
        if (!existing) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${p.instanceId} is unknown.`)
        if (existing.memberId !== memberId)
          throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${p.instanceId} was fenced by member ${existing.memberId}.`)
        this.checkMemberEpoch(existing, p.memberEpoch, owned)
        member = existing
      }
    }

    // 1. The member's subscription; a change bumps the group epoch.
    const subscribed = updateMember(member, {
      instanceId: p.instanceId ?? member.instanceId,
      rackId: p.rackId ?? member.rackId,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs !== -1 ? p.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
      serverAssignorName: p.serverAssignor ?? member.serverAssignorName,
      subscribedTopicNames: p.subscribedTopicNames !== null ? normalizeTopicNames(p.subscribedTopicNames) : member.subscribedTopicNames,
      subscribedTopicRegex: p.subscribedTopicRegex ?? member.subscribedTopicRegex,
      clientId: p.clientId,
      clientHost: p.clientHost,
    })
    const updated = this.updateAndReconcile(group, member, subscribed, owned, records, now, p.assignmentIntervalMs ?? 0, p.mayDescribeTopic ?? (() => true))
    const key = `${group.groupId}\0${memberId}`
    if (updated.state === MemberState.UNREVOKED_PARTITIONS) {
      const pending = this.rebalanceDeadlines.get(key)
      if (!pending || pending.memberEpoch !== updated.memberEpoch) this.rebalanceDeadlines.set(key, { deadline: now + updated.rebalanceTimeoutMs, memberEpoch: updated.memberEpoch })
    } else this.rebalanceDeadlines.delete(key)
    this.sessionDeadlines.set(key, now + p.sessionTimeoutMs)

    const isFullRequest = joining || (p.rebalanceTimeoutMs !== -1 && (p.subscribedTopicNames !== null || p.subscribedTopicRegex !== null) && p.topicPartitions !== null)
    const assignmentChanged = !assignmentEquals(member.assignedPartitions, updated.assignedPartitions)
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId,
      memberEpoch: updated.memberEpoch,
      heartbeatIntervalMs: p.heartbeatIntervalMs,
      assignment: isFullRequest || assignmentChanged ? updated.assignedPartitions : null,
    }
  }

  /**
   * Steps 1 to 3 of a member's heartbeat (module doc), for a member of either protocol: `member`
   * as the group knows it (or new), `subscribed` with its new subscription; writes the member's
   * records and returns it reconciled one step. `owned`: the partitions it reports owning (null:
   * not reported).
   */
  private updateAndReconcile(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    subscribed: ConsumerGroupMember,
    owned: ReadonlyArray<{ topicId: string; partitions: readonly number[] }> | null,
    records: CoordinatorRecord[],
    now: number,
    assignmentIntervalMs: number,
    mayDescribe: (topic: string) => boolean,
  ): ConsumerGroupMember {
    const memberId = subscribed.memberId
    if (!group.members.has(memberId) || !memberEquals(member, subscribed)) records.push(memberSubscriptionRecord(group.groupId, memberId, subscribed))
    const known = group.members.has(memberId)
    const regexUpdated = this.maybeUpdateRegularExpressions(group, known ? member : null, subscribed, mayDescribe, records, now)
    // Kafka's hasSubscriptionChanged: the topic names, the regex, or what the regex resolves to.
    const hasSubscriptionChanged = known && (!sameTopicNames(member.subscribedTopicNames, subscribed.subscribedTopicNames) || regexOf(member) !== regexOf(subscribed) || regexUpdated)
    // A new member, a changed subscription, or a change of the group's preferred assignor bumps the epoch.
    let bumpGroupEpoch = !known || hasSubscriptionChanged || this.assignor(group, null, null).name !== this.assignor(group, subscribed, null).name
    const subscriptionMetadata = this.subscriptionMetadata(group, subscribed, null)
    const metadataHash = subscriptionMetadataHash(subscriptionMetadata)
    if (metadataHash !== group.metadataHash) bumpGroupEpoch = true
    let groupEpoch = group.groupEpoch
    if (bumpGroupEpoch) {
      groupEpoch++
      group.groupEpoch = groupEpoch
      group.subscriptionMetadata = subscriptionMetadata
      group.metadataHash = metadataHash
      records.push(groupEpochRecord(group.groupId, groupEpoch, metadataHash))
      this.logger.debug('bumped consumer group epoch', { group: group.groupId, groupEpoch, member: memberId })
    }

    // 2. The target assignment, when older than the group epoch and the assignment interval has
    // passed since the last one; until then the members reconcile towards the last target.
    if (groupEpoch > group.assignmentEpoch && canComputeNextTargetAssignment(group.assignmentTimestamp, assignmentIntervalMs, now)) {
      records.push(...this.updateTargetAssignment(group, { updatedMember: subscribed }))
    }

    // 3. Reconcile the member towards its target; a changed subscription revokes the topics it left at once.
    let updated = subscribed
    const before = updated
    if (hasSubscriptionChanged || !isReconciledTo(updated, group.assignmentEpoch)) {
      updated = buildCurrentAssignment(updated, {
        targetAssignmentEpoch: group.assignmentEpoch,
        targetAssignment: group.targetAssignmentOf(memberId),
        currentPartitionEpoch: (topicId, partition) => group.currentPartitionEpoch(topicId, partition),
        ownedTopicPartitions: owned,
        subscribedTopicIds: this.subscribedTopicIds(group, updated),
        hasSubscriptionChanged,
      })
    }
    if (!group.members.has(memberId) || !memberEquals(group.member(memberId)!, updated)) {
      group.updateMember(updated)
      records.push(currentAssignmentRecord(group.groupId, memberId, updated, epochsOf(group, memberId)))
      if (!memberEquals(before, updated)) {
        this.logger.debug('consumer group member assignment', {
          group: group.groupId,
          member: memberId,
          epoch: updated.memberEpoch,
          state: updated.state,
          assigned: assignmentToString(updated.assignedPartitions),
          revoking: assignmentToString(updated.partitionsPendingRevocation),
        })
      }
    }
    return updated
  }

  private dynamicMember(
    group: ConsumerGroup,
    memberId: string,
    memberEpoch: number,
    owned: ReadonlyArray<{ topicId: string; partitions: readonly number[] }> | null,
    joining: boolean,
  ): ConsumerGroupMember {
    const member = group.member(memberId)
    if (!member) {
      if (!joining) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${group.groupId}.`)
      this.logger.info('member joins the consumer group', { group: group.groupId, member: memberId })
      return newMember(memberId)
    }
    this.checkMemberEpoch(member, memberEpoch, owned)
    return member
  }

  /** Kafka's `throwIfConsumerGroupMemberEpochIsInvalid`. */
  private checkMemberEpoch(member: ConsumerGroupMember, received: number, owned: ReadonlyArray<{ topicId: string; partitions: readonly number[] }> | null): void {
    if (received > member.memberEpoch) {
      throw new GroupApiError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        `The consumer group member has a greater member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      )
    }
    if (received < member.memberEpoch && (received !== member.previousMemberEpoch || !isSubset(owned, member.assignedPartitions))) {
      throw new GroupApiError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        `The consumer group member has a smaller member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      )
    }
  }

  /**
   * Kafka's `maybeUpdateRegularExpressions` with the resolution done at once (module doc):
   * `member` is the member before this heartbeat (null when it joins), `updated` after it.
   * The records of the resolved regexes are added to `records`, and the group's resolved
   * regexes updated; true when the group epoch must be bumped (the member took a regex the group
   * already resolved, or a resolution changed a regex's topics).
   */
  private maybeUpdateRegularExpressions(
    group: ConsumerGroup,
    member: ConsumerGroupMember | null,
    updated: ConsumerGroupMember,
    mayDescribe: (topic: string) => boolean,
    records: CoordinatorRecord[],
    now: number,
  ): boolean {
    const oldRegex = member === null ? null : regexOf(member)
    const newRegex = regexOf(updated)
    let bumpGroupEpoch = false
    let requireRefresh = false
    if (oldRegex !== newRegex) {
      this.logger.debug('consumer group member updated its subscribed regex', { group: group.groupId, member: updated.memberId, regex: newRegex })
      if (oldRegex !== null && group.numSubscribedMembers(oldRegex) === 1) {
        // The member was the last one subscribed to it.
        records.push(regularExpressionRecord(group.groupId, oldRegex, null))
        group.resolvedRegularExpressions.delete(oldRegex)
      }
      if (newRegex !== null) {
        if (group.numSubscribedMembers(newRegex) === 0) requireRefresh = true
        else bumpGroupEpoch = group.resolvedRegularExpressions.has(newRegex)
      }
    }
    // The refresh is due when: the group has regexes, the last one is 10 s old or more, and a
    // regex is unresolved, or topics changed, or the refresh interval passed.
    if (!requireRefresh && group.subscribedRegularExpressions().size === 0) return bumpGroupEpoch
    const lastRefreshMs = group.lastResolvedRegularExpressionRefreshTimeMs()
    if (now <= lastRefreshMs + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS) return bumpGroupEpoch
    const subscribed = group.subscribedRegularExpressions()
    if (oldRegex !== null) {
      const n = (subscribed.get(oldRegex) ?? 0) - 1
      if (n > 0) subscribed.set(oldRegex, n)
      else subscribed.delete(oldRegex)
    }
    if (newRegex !== null) subscribed.set(newRegex, (subscribed.get(newRegex) ?? 0) + 1)
    if (subscribed.size === 0) return bumpGroupEpoch
    requireRefresh ||= subscribed.size !== group.resolvedRegularExpressions.size
    requireRefresh ||= now > lastRefreshMs + (this.config.regexRefreshIntervalMs ?? DEFAULT_REGEX_REFRESH_INTERVAL_MS)
    const resolved = resolveRegularExpressions(subscribed.keys(), this.config.topics.names(), mayDescribe, now)
    // Topics created (or deleted) since: a regex resolves to other topics than it did.
    requireRefresh ||= [...resolved].some(([regex, r]) => !sameTopics(r.topics, group.resolvedRegularExpressions.get(regex)?.topics ?? new Set()))
    if (!requireRefresh) return bumpGroupEpoch
    // Kafka's `handleRegularExpressionsResult`.
    for (const [regex, r] of resolved) {
      const old = group.resolvedRegularExpressions.get(regex)
      if (!old || !sameTopics(old.topics, r.topics)) bumpGroupEpoch = true
      records.push(regularExpressionRecord(group.groupId, regex, r))
      group.resolvedRegularExpressions.set(regex, r)
    }
    this.logger.info('resolved consumer group regular expressions', { group: group.groupId, regexes: [...resolved.keys()].join(', ') })
    return bumpGroupEpoch
  }

  /** The subscribed topics that exist, with `updated` replacing its old self (or `removedMemberId` left out). */
  private subscriptionMetadata(group: ConsumerGroup, updated: ConsumerGroupMember | null, removedMemberId: string | null): Map<string, SubscribedTopic> {
    const names = new Set<string>()
    for (const m of group.members.values()) if (m.memberId !== updated?.memberId && m.memberId !== removedMemberId) for (const t of group.memberTopicNames(m)) names.add(t)
    if (updated) for (const t of group.memberTopicNames(updated)) names.add(t)
    const out = new Map<string, SubscribedTopic>()
    for (const name of [...names].sort()) {
      const topic = this.config.topics.byName(name)
      if (!topic) continue
      const partitionRacks = Array.from({ length: topic.numPartitions }, (_, p) => [...(topic.partitionRacks?.(p) ?? [])].sort())
      out.set(name, { topicId: topic.topicId.toString('hex'), numPartitions: topic.numPartitions, partitionRacks })
    }
    return out
  }

  /** The group's preferred assignor (Kafka's `computePreferredServerAssignor`): the most asked for, else the default. */
  private assignor(group: ConsumerGroup, updated: ConsumerGroupMember | null, removedMemberId: string | null): ConsumerGroupPartitionAssignor {
    const counts = new Map<string, number>()
    for (const m of group.members.values()) {
      if (m.memberId === updated?.memberId || m.memberId === removedMemberId || m.serverAssignorName === null) continue
      counts.set(m.serverAssignorName, (counts.get(m.serverAssignorName) ?? 0) + 1)
    }
    if (updated?.serverAssignorName) counts.set(updated.serverAssignorName, (counts.get(updated.serverAssignorName) ?? 0) + 1)
    let best: string | null = null
    for (const [name, n] of counts) if (best === null || n > counts.get(best)! || (n === counts.get(best)! && name < best)) best = name
    return this.config.assignors.find((a) => a.name === best) ?? this.config.assignors[0]!
  }

  /** The ids (hex) of the existing topics the member subscribes to, by name or through its regex. */
  private subscribedTopicIds(group: ConsumerGroup, member: ConsumerGroupMember): Set<string> {
    const ids = new Set<string>()
    for (const name of group.memberTopicNames(member)) {
      const topic = this.config.topics.byName(name)
      if (topic) ids.add(topic.topicId.toString('hex'))
    }
    return ids
  }

  /** Computes the group's next target assignment; its records (the members' changed targets, then the epoch). */
  private updateTargetAssignment(group: ConsumerGroup, change: { updatedMember?: ConsumerGroupMember; removedMemberId?: string }): CoordinatorRecord[] {
    const assignor = this.assignor(group, change.updatedMember ?? null, change.removedMemberId ?? null)
    const target = buildTargetAssignment(group, assignor, group.subscriptionMetadata, change)
    const records: CoordinatorRecord[] = []
    for (const [memberId, assignment] of target) {
      const old = group.targetAssignment.get(memberId)
      if (!old || !assignmentEquals(old, assignment)) records.push(targetAssignmentRecord(group.groupId, memberId, assignment))
    }
    group.targetAssignment.clear()
    for (const [memberId, assignment] of target) group.targetAssignment.set(memberId, assignment)
    group.assignmentEpoch = group.groupEpoch
    group.assignmentTimestamp = this.config.clock()
    records.push(targetAssignmentEpochRecord(group.groupId, group.assignmentEpoch, group.assignmentTimestamp))
    this.logger.debug('computed consumer group target assignment', { group: group.groupId, epoch: group.assignmentEpoch, assignor: assignor.name, members: target.size })
    return records
  }

  private leave(p: ConsumerGroupHeartbeatParams): ConsumerGroupHeartbeatResult {
    const group = this.consumerGroup(p.groupId, false)
    let member: ConsumerGroupMember
    if (p.instanceId === null) {
      const found = group.member(p.memberId)
      if (!found) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${p.memberId} is not a member of group ${group.groupId}.`)
      member = found
    } else {
      const found = group.staticMember(p.instanceId)
      if (!found) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${p.instanceId} is unknown.`)
      if (found.memberId !== p.memberId) throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${p.memberId} with instance id ${p.instanceId} was fenced by member ${found.memberId}.`)
      member = found
      if (p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
        // Leaves for a while: keeps its partitions until its session ends or its instance rejoins.
        const left = updateMember(member, { memberEpoch: LEAVE_GROUP_STATIC_MEMBER_EPOCH, partitionsPendingRevocation: EMPTY_ASSIGNMENT })
        group.updateMember(left)
        this.config.writeRecords([currentAssignmentRecord(group.groupId, left.memberId, left, epochsOf(group, left.memberId))])
        this.rebalanceDeadlines.delete(`${group.groupId}\0${member.memberId}`)
        this.logger.info('static member left the consumer group for now', { group: group.groupId, member: member.memberId, instanceId: p.instanceId })
        return { errorCode: ErrorCode.NONE, errorMessage: null, memberId: member.memberId, memberEpoch: LEAVE_GROUP_STATIC_MEMBER_EPOCH, heartbeatIntervalMs: 0, assignment: null }
      }
    }
    this.logger.info('member left the consumer group', { group: group.groupId, member: member.memberId })
    this.fenceMember(group, member.memberId)
    return { errorCode: ErrorCode.NONE, errorMessage: null, memberId: p.memberId, memberEpoch: p.memberEpoch, heartbeatIntervalMs: 0, assignment: null }
  }

  /**
   * Kafka's `consumerGroupFenceMember`: the member goes, its partitions are free, the group epoch
   * is bumped; or, when it was the last member of the consumer protocol, the group is downgraded.
   */
  private fenceMember(group: ConsumerGroup, memberId: string): void {
    if (this.validateOnlineDowngrade(group, memberId)) return this.convertToClassicGroup(group, memberId)
    const records = memberRemovalRecords(group.groupId, memberId)
    // Kafka's `maybeDeleteResolvedRegularExpressions`: the last member of a regex takes it along.
    const regex = regexOf(group.member(memberId)!)
    if (regex !== null && group.numSubscribedMembers(regex) === 1) {
      records.push(regularExpressionRecord(group.groupId, regex, null))
      group.resolvedRegularExpressions.delete(regex)
    }
    group.subscriptionMetadata = this.subscriptionMetadata(group, null, memberId)
    group.metadataHash = subscriptionMetadataHash(group.subscriptionMetadata)
    group.removeMember(memberId)
    this.cancelTimers(group.groupId, memberId)
    group.groupEpoch++
    records.push(groupEpochRecord(group.groupId, group.groupEpoch, group.metadataHash))
    // Kafka computes the new target on the next heartbeat; with no member left there is none.
    if (group.members.size === 0) {
      group.targetAssignment.clear()
      group.assignmentEpoch = group.groupEpoch
      group.assignmentTimestamp = this.config.clock()
      records.push(targetAssignmentEpochRecord(group.groupId, group.assignmentEpoch, group.assignmentTimestamp))
    }
    this.config.writeRecords(records)
  }

  private cancelTimers(groupId: string, memberId: string): void {
    const key = `${groupId}\0${memberId}`
    this.sessionDeadlines.delete(key)
    this.rebalanceDeadlines.delete(key)
    this.classicMembers.cancelTimers(key)
  }

  /** Fences the members whose session expired, and those that did not revoke in their rebalance timeout. */
  sweep(): void {
    const now = this.config.clock()
    for (const [key, deadline] of this.sessionDeadlines) {
      if (now < deadline) continue
      const [groupId, memberId] = key.split('\0') as [string, string]
      const group = this.groups.get(groupId)
      this.sessionDeadlines.delete(key)
      if (!group?.member(memberId)) continue
      this.logger.info('consumer group member session expired', { group: groupId, member: memberId })
      this.fenceMember(group, memberId)
    }
    for (const [key, { deadline, memberEpoch }] of this.rebalanceDeadlines) {
      if (now < deadline) continue
      const [groupId, memberId] = key.split('\0') as [string, string]
      const group = this.groups.get(groupId)
      this.rebalanceDeadlines.delete(key)
      const member = group?.member(memberId)
      if (!group || !member || member.state !== MemberState.UNREVOKED_PARTITIONS || member.memberEpoch !== memberEpoch) continue
      this.logger.info('consumer group member did not revoke its partitions in its rebalance timeout', { group: groupId, member: memberId })
      this.fenceMember(group, memberId)
    }
    this.classicMembers.sweep(now)
  }

  /** Forgets every group (the coordinator resigned). */
  unload(): void {
    this.groups.clear()
    this.sessionDeadlines.clear()
    this.rebalanceDeadlines.clear()
    this.classicMembers.unload()
  }

  /** Deletes an Empty consumer group (its offsets are the caller's); NON_EMPTY_GROUP while it has members. */
  deleteGroup(groupId: string): number {
    const group = this.groups.get(groupId)
    if (!group) return ErrorCode.GROUP_ID_NOT_FOUND
    if (group.members.size > 0) return ErrorCode.NON_EMPTY_GROUP
    this.groups.delete(groupId)
    const regexes = [...group.resolvedRegularExpressions.keys()].map((regex) => regularExpressionRecord(groupId, regex, null))
    this.config.writeRecords([...regexes, targetAssignmentEpochTombstone(groupId), groupEpochTombstone(groupId)])
    return ErrorCode.NONE
  }

  /** One coordinator record of the offsets log being loaded (./consumer-group-records.ts). */
  replay(key: Buffer, value: Buffer | null): void {
    replayConsumerGroupRecord(this.groups, key, value)
  }

  /**
   * The load ended: every member brought back gets a new session (Kafka schedules them at the
   * load too), and a member that was revoking partitions a new rebalance timeout.
   */
  onLoaded(): void {
    const now = this.config.clock()
    for (const group of this.groups.values()) {
      for (const m of group.members.values()) {
        this.sessionDeadlines.set(`${group.groupId}\0${m.memberId}`, now + (m.classicMemberMetadata?.sessionTimeoutMs ?? this.config.sessionTimeoutMs))
        if (m.state === MemberState.UNREVOKED_PARTITIONS) this.rebalanceDeadlines.set(`${group.groupId}\0${m.memberId}`, { deadline: now + m.rebalanceTimeoutMs, memberEpoch: m.memberEpoch })
      }
      // Subscribed topics are looked up again; the next heartbeat bumps the epoch if their hash is not the record's (they changed meanwhile).
      group.subscriptionMetadata = this.subscriptionMetadata(group, null, null)
    }
    if (this.groups.size > 0) this.logger.info('loaded consumer groups', { groups: this.groups.size })
  }

  // ---- Conversions (./classic-group-migration.ts) ----

  /** Kafka's `validateOnlineUpgrade` then `convertToConsumerGroup`: GROUP_ID_NOT_FOUND with Kafka's reason when refused. */
  private convertToConsumerGroup(classic: GroupMetadata, records: CoordinatorRecord[]): ConsumerGroup {
    const groupId = classic.groupId
    const refuse = (why: string) => {
      this.logger.info(`cannot upgrade classic group to consumer group: ${why}`, { group: groupId })
      return new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Cannot upgrade classic group ${groupId} to consumer group because ${why}.`)
    }
    if (!isUpgradeEnabled(this.config.migrationPolicy)) throw refuse('online upgrade is disabled')
    if (classic.protocolType !== CONSUMER_PROTOCOL_TYPE) throw refuse('the group does not use the consumer embedded protocol')
    if (classic.members.size > this.config.maxSize) throw refuse('the group size exceeds the consumer group maximum size')
    const group = consumerGroupFromClassicGroup(classic, this.config.topics)
    this.classic.remove(groupId)
    group.subscriptionMetadata = this.subscriptionMetadata(group, null, null)
    group.metadataHash = subscriptionMetadataHash(group.subscriptionMetadata)
    this.groups.set(groupId, group)
    // The classic group's tombstone, then Kafka's `createConsumerGroupRecords`.
    records.push(groupMetadataTombstone(groupId))
    for (const m of group.members.values()) records.push(memberSubscriptionRecord(groupId, m.memberId, m))
    records.push(groupEpochRecord(groupId, group.groupEpoch, group.metadataHash))
    for (const m of group.members.values()) records.push(targetAssignmentRecord(groupId, m.memberId, group.targetAssignmentOf(m.memberId)))
    records.push(targetAssignmentEpochRecord(groupId, group.assignmentEpoch, group.assignmentTimestamp))
    for (const m of group.members.values()) records.push(currentAssignmentRecord(groupId, m.memberId, m, epochsOf(group, m.memberId)))
    const now = this.config.clock()
    for (const m of group.members.values()) this.sessionDeadlines.set(`${groupId}\0${m.memberId}`, now + m.classicMemberMetadata!.sessionTimeoutMs)
    this.logger.info('upgraded classic group to consumer group', { group: groupId, generation: classic.generationId, members: group.members.size })
    return group
  }

  /** Kafka's `validateOnlineDowngradeWithFencedMembers`: `memberId` is the last member of the consumer protocol, others remain, the policy allows it. */
  private validateOnlineDowngrade(group: ConsumerGroup, memberId: string): boolean {
    if (!group.allMembersUseClassicProtocolExcept(memberId) || group.members.size <= 1) return false
    if (!isDowngradeEnabled(this.config.migrationPolicy)) {
      this.logger.info('cannot downgrade consumer group to classic group because the online downgrade is disabled', { group: group.groupId })
      return false
    }
    return true
  }

  /** Kafka's `convertToClassicGroup`: the consumer group's tombstones, then the classic group takes its place and rebalances. */
  private convertToClassicGroup(group: ConsumerGroup, leavingMemberId: string): void {
    const groupId = group.groupId
    const classic = classicGroupFromConsumerGroup(group, leavingMemberId, this.config.topics, this.config.clock())
    // Kafka's `createGroupTombstoneRecords`.
    const records: CoordinatorRecord[] = []
    for (const memberId of group.members.keys()) records.push(currentAssignmentRecord(groupId, memberId, null))
    for (const memberId of group.members.keys()) records.push(targetAssignmentRecord(groupId, memberId, null))
    records.push(targetAssignmentEpochTombstone(groupId))
    for (const memberId of group.members.keys()) records.push(memberSubscriptionRecord(groupId, memberId, null))
    for (const regex of group.resolvedRegularExpressions.keys()) records.push(regularExpressionRecord(groupId, regex, null))
    records.push(groupEpochTombstone(groupId))
    // Kafka's `createClassicGroupRecords`: the classic group with its members' assignments.
    records.push(groupMetadataRecord(classic))
    for (const memberId of group.members.keys()) this.cancelTimers(groupId, memberId)
    this.groups.delete(groupId)
    this.config.writeRecords(records)
    this.logger.info('downgraded consumer group to classic group', { group: groupId, generation: classic.generationId, members: classic.members.size })
    this.classic.adopt(classic, `Downgrade group ${groupId} from consumer to classic.`)
  }

  /** The name of the assignor the group's target assignment uses now. */
  assignorName(group: ConsumerGroup): string {
    return this.assignor(group, null, null).name
  }
}

/** The member's assignment epochs, for its current assignment record. */
function epochsOf(group: ConsumerGroup, memberId: string): (topicId: string, partition: number) => number | undefined {
  return (topicId, partition) => group.partitionAssignmentEpoch(memberId, topicId, partition)
}

/** Whether the reported owned partitions are all in `assigned` (none reported: yes). */
function isSubset(owned: ReadonlyArray<{ topicId: string; partitions: readonly number[] }> | null, assigned: Assignment): boolean {
  if (owned === null) return true
  return owned.every((t) => t.partitions.every((p) => assigned.get(t.topicId)?.has(p) === true))
}

/**
 * Kafka's `canComputeNextTargetAssignment`: a group that never had a target assignment, or no
 * interval, may compute one now; otherwise once `intervalMs` has passed since the last.
 */
export function canComputeNextTargetAssignment(lastAssignmentTimestamp: number, intervalMs: number, now: number): boolean {
  return lastAssignmentTimestamp === 0 || intervalMs === 0 || now >= lastAssignmentTimestamp + intervalMs
}
