/**
 * The KIP-932 part of Kafka's `GroupMetadataManager`: ShareGroupHeartbeat (join, heartbeat,
 * leave), the members' sessions, and the share groups ShareGroupDescribe reads.
 *
 * A heartbeat (Kafka's `shareGroupHeartbeat`):
 * 1. the member is created (epoch 0) or found and its epoch checked (FENCED_MEMBER_EPOCH unless
 *    it is the member's epoch or the previous one: the answer that bumped it may have been lost);
 *    a new member, a changed subscription, or a change of the subscribed topics (created,
 *    deleted, more partitions: looked up at every heartbeat) bumps the group epoch;
 * 2. when the group epoch is newer than the target assignment and the last assignment is at
 *    least group.share.assignment.interval.ms old (share.assignment.interval.ms of the group, 1 s
 *    by default), the simple assignor (./simple-assignor.ts) computes every member's target from
 *    the partitions whose share state is initialized;
 * 3. the member takes its target at once, with the target's epoch (Kafka's
 *    `ShareGroupAssignmentBuilder`): a member that joins while the target is not recomputed yet
 *    gets the current assignment epoch and nothing;
 * 4. subscribed partitions whose share state is not initialized are initialized, which bumps
 *    the group epoch (Kafka's share coordinator answers InitializeShareGroupState and the group
 *    coordinator records the topics and bumps the epoch): as on Kafka 4.4, the first member of a
 *    group joins at epoch 2 with no partitions and gets them at epoch 3. ferrolog has no share
 *    coordinator yet (no share-partition state to initialize), so this step completes at once.
 * The answer carries the member's epoch, the heartbeat interval, and its assignment when the
 * request carries the subscription (a join does) or the assignment changed, as Kafka 4.4 answers.
 *
 * Leaving (epoch -1) or a session that expires (no heartbeat for the session timeout): the
 * member is removed, the group epoch bumped; the others get the partitions at a later heartbeat.
 *
 * Every change is written as Kafka's coordinator records (./share-group-records.ts) and replayed
 * when the offsets log is loaded, so a restart or a new coordinator resumes each group.
 */
import type { Logger } from '../../logger.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { assignmentEquals, type Assignment } from '../consumer/assignment.js'
import { GroupApiError, type SubscribedTopic } from '../consumer/consumer-group.js'
import type { CoordinatorRecord } from '../coordinator-record.js'
import { canComputeNextTargetAssignment, type TopicsImage } from '../consumer/consumer-group-manager.js'
import { SimpleAssignor } from './simple-assignor.js'
import { LEAVE_GROUP_MEMBER_EPOCH, newShareGroupMember, ShareGroup, type ShareGroupMember } from './share-group.js'
import {
  replayShareGroupRecord,
  shareCurrentAssignmentRecord,
  shareGroupEpochRecord,
  shareMemberSubscriptionRecord,
  shareStatePartitionMetadataRecord,
  shareTargetAssignmentEpochRecord,
  shareTargetAssignmentRecord,
} from './share-group-records.js'

export interface ShareGroupManagerConfig {
  /** group.share.max.size. */
  maxSize: number
  topics: TopicsImage
  clock: () => number
  /** group.share.session.timeout.ms: the sessions of the members a load brings back. */
  sessionTimeoutMs: number
  /** Writes coordinator records to the offsets log, in order; the group changes at once. */
  writeRecords: (records: CoordinatorRecord[]) => void
  /** Kafka's `ShareGroupListener.onGroupEmpty`: the last member left (the share partitions of the group are dropped, read afresh at the next fetch). */
  onGroupEmpty?: (groupId: string) => void
}

/** Kafka's `Errors.NON_EMPTY_GROUP` message. */
const NON_EMPTY_GROUP_MESSAGE = 'The group is not empty.'

/** Whether a group's share offsets may be altered or deleted: NONE, or the error and its message. */
export interface ShareOffsetsCheck {
  errorCode: number
  errorMessage: string | null
}

export interface ShareGroupHeartbeatParams {
  groupId: string
  memberId: string
  memberEpoch: number
  rackId: string | null
  subscribedTopicNames: string[] | null
  clientId: string
  clientHost: string
  /** The group's session timeout, heartbeat interval and assignment interval (group config, else the broker's). */
  sessionTimeoutMs: number
  heartbeatIntervalMs: number
  assignmentIntervalMs: number
}

export interface ShareGroupHeartbeatResult {
  errorCode: number
  errorMessage: string | null
  memberId: string | null
  memberEpoch: number
  heartbeatIntervalMs: number
  /** Partitions by topic id (hex); null when not sent. */
  assignment: Assignment | null
}

/** What the other kinds of groups say of an id: whether a group of another type has it. */
export type OtherGroups = (groupId: string) => boolean

export class ShareGroupManager {
  readonly groups = new Map<string, ShareGroup>()
  readonly assignor = new SimpleAssignor()
  private readonly config: ShareGroupManagerConfig
  private readonly otherGroup: OtherGroups
  private readonly logger: Logger
  /** `groupId\0memberId` → when the member's session ends. */
  private readonly sessionDeadlines = new Map<string, number>()

  constructor(config: ShareGroupManagerConfig, otherGroup: OtherGroups, logger: Logger) {
    this.config = config
    this.otherGroup = otherGroup
    this.logger = logger
  }

  /** ShareGroupHeartbeat: Kafka's answer, or its error code and message. */
  heartbeat(p: ShareGroupHeartbeatParams): ShareGroupHeartbeatResult {
    try {
      validateRequest(p)
      const records: CoordinatorRecord[] = []
      const result = p.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH ? this.leave(p, records) : this.memberHeartbeat(p, records)
      if (records.length > 0) this.config.writeRecords(records)
      return result
    } catch (err) {
      if (!(err instanceof GroupApiError)) throw err
      return { errorCode: err.errorCode, errorMessage: err.message === '' ? null : err.message, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null }
    }
  }

  /** The share group by that id; created when `create` (GROUP_ID_NOT_FOUND when another kind of group has the id). */
  private shareGroup(groupId: string, create: boolean): ShareGroup {
    const group = this.groups.get(groupId)
    if (group) return group
    if (this.otherGroup(groupId)) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a share group.`)
    if (!create) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`)
    const created = new ShareGroup(groupId)
    this.groups.set(groupId, created)
    this.logger.info('created share group', { group: groupId })
    return created
  }

  private memberHeartbeat(p: ShareGroupHeartbeatParams, records: CoordinatorRecord[]): ShareGroupHeartbeatResult {
    const now = this.config.clock()
    const joining = p.memberEpoch === 0
    const group = this.shareGroup(p.groupId, joining)
    let member = group.members.get(p.memberId)
    if (!member) {
      if (!joining) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${p.memberId} is not a member of group ${group.groupId}.`)
      if (group.members.size >= this.config.maxSize) throw new GroupApiError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The share group has reached its maximum capacity of ${this.config.maxSize} members.`)
      this.logger.info('member joins the share group', { group: group.groupId, member: p.memberId })
      member = newShareGroupMember(p.memberId)
    } else if (!joining) {
      checkMemberEpoch(member, p.memberEpoch)
    }
    const isNew = !group.members.has(p.memberId)

    // 1. The member's subscription; a change bumps the group epoch.
    const subscribed = p.subscribedTopicNames !== null ? [...new Set(p.subscribedTopicNames)].sort() : member.subscribedTopicNames
    let updated: ShareGroupMember = { ...member, rackId: p.rackId ?? member.rackId, subscribedTopicNames: subscribed, clientId: p.clientId, clientHost: p.clientHost }
    if (isNew || !sameSubscription(member, updated)) records.push(shareMemberSubscriptionRecord(group.groupId, updated.memberId, updated))
    let bump = isNew || !sameNames(member.subscribedTopicNames, updated.subscribedTopicNames)
    group.members.set(updated.memberId, updated)
    const metadata = this.subscriptionMetadata(group)
    if (!sameMetadata(metadata, group.subscriptionMetadata)) bump = true
    if (bump) {
      group.groupEpoch++
      group.subscriptionMetadata = metadata
      records.push(shareGroupEpochRecord(group.groupId, group.groupEpoch))
    }

    // 2. The target assignment, when older than the group epoch and the interval passed.
    if (group.groupEpoch > group.assignmentEpoch && canComputeNextTargetAssignment(group.lastAssignmentMs, p.assignmentIntervalMs, now)) records.push(...this.updateTargetAssignment(group, now))

    // 3. The member takes its target.
    const target = group.targetAssignmentOf(updated.memberId)
    if (updated.memberEpoch !== group.assignmentEpoch || !assignmentEquals(updated.assignedPartitions, target)) {
      updated = { ...updated, memberEpoch: group.assignmentEpoch, previousMemberEpoch: updated.memberEpoch, assignedPartitions: target }
    }
    if (isNew || updated.memberEpoch !== member.memberEpoch || !assignmentEquals(updated.assignedPartitions, member.assignedPartitions)) {
      records.push(shareCurrentAssignmentRecord(group.groupId, updated.memberId, updated))
    }
    group.members.set(updated.memberId, updated)

    // 4. Partitions not initialized yet are initialized; the group epoch is bumped for them.
    if (this.initializeSubscribedPartitions(group)) {
      group.groupEpoch++
      records.push(shareStatePartitionMetadataRecord(group.groupId, group), shareGroupEpochRecord(group.groupId, group.groupEpoch))
    }

    this.sessionDeadlines.set(`${group.groupId}\0${updated.memberId}`, now + p.sessionTimeoutMs)
    const changed = !assignmentEquals(member.assignedPartitions, updated.assignedPartitions)
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId: updated.memberId,
      memberEpoch: updated.memberEpoch,
      heartbeatIntervalMs: p.heartbeatIntervalMs,
      assignment: p.subscribedTopicNames !== null || changed ? updated.assignedPartitions : null,
    }
  }

  /** The subscribed topics that exist, by name. */
  private subscriptionMetadata(group: ShareGroup): Map<string, SubscribedTopic> {
    const out = new Map<string, SubscribedTopic>()
    for (const name of [...group.subscribedTopicNames()].sort()) {
      const topic = this.config.topics.byName(name)
      if (!topic) continue
      // The replicas' racks, as for consumer groups: in the group's metadata hash, unused by the simple assignor.
      const partitionRacks = Array.from({ length: topic.numPartitions }, (_, p) => [...(topic.partitionRacks?.(p) ?? [])].sort())
      out.set(name, { topicId: topic.topicId.toString('hex'), numPartitions: topic.numPartitions, partitionRacks })
    }
    return out
  }

  /** Marks the subscribed partitions initialized (and forgets topics no longer there); true when something changed. */
  private initializeSubscribedPartitions(group: ShareGroup): boolean {
    let changed = false
    for (const [topicId, t] of group.initializedTopics) {
      if (this.config.topics.byId(topicId)?.name === t.topicName) continue
      group.initializedTopics.delete(topicId)
      changed = true
    }
    for (const [name, t] of group.subscriptionMetadata) {
      const have = group.initializedTopics.get(t.topicId)?.partitions ?? new Set<number>()
      if (have.size >= t.numPartitions) continue
      const partitions = new Set(have)
      for (let p = 0; p < t.numPartitions; p++) partitions.add(p)
      group.initializedTopics.set(t.topicId, { topicName: name, partitions })
      changed = true
    }
    return changed
  }

  private updateTargetAssignment(group: ShareGroup, now: number): CoordinatorRecord[] {
    const byId = new Map([...group.subscriptionMetadata.values()].map((t) => [t.topicId, t]))
    const members = [...group.members.values()]
      .sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0))
      .map((m) => ({
        memberId: m.memberId,
        instanceId: null,
        rackId: m.rackId,
        subscribedTopicIds: new Set(m.subscribedTopicNames.flatMap((n) => group.subscriptionMetadata.get(n)?.topicId ?? [])),
        assignment: group.targetAssignmentOf(m.memberId),
      }))
    const target = this.assignor.assign(
      { members },
      { numPartitions: (topicId) => byId.get(topicId)?.numPartitions ?? -1, racksForPartition: (topicId, p) => new Set(byId.get(topicId)?.partitionRacks[p] ?? []) },
      (topicId, p) => group.isInitialized(topicId, p),
    )
    const records: CoordinatorRecord[] = []
    for (const [memberId, assignment] of target) {
      const old = group.targetAssignment.get(memberId)
      if (!old || !assignmentEquals(old, assignment)) records.push(shareTargetAssignmentRecord(group.groupId, memberId, assignment))
      group.targetAssignment.set(memberId, assignment)
    }
    group.assignmentEpoch = group.groupEpoch
    group.lastAssignmentMs = now
    records.push(shareTargetAssignmentEpochRecord(group.groupId, group.assignmentEpoch, now))
    return records
  }

  private leave(p: ShareGroupHeartbeatParams, records: CoordinatorRecord[]): ShareGroupHeartbeatResult {
    const group = this.shareGroup(p.groupId, false)
    if (!group.members.has(p.memberId)) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${p.memberId} is not a member of group ${group.groupId}.`)
    this.logger.info('member left the share group', { group: group.groupId, member: p.memberId })
    records.push(...this.fenceMember(group, p.memberId))
    return { errorCode: ErrorCode.NONE, errorMessage: null, memberId: p.memberId, memberEpoch: LEAVE_GROUP_MEMBER_EPOCH, heartbeatIntervalMs: 0, assignment: null }
  }

  /** Kafka's `shareGroupFenceMember`: the member goes, the group epoch is bumped. */
  private fenceMember(group: ShareGroup, memberId: string): CoordinatorRecord[] {
    group.removeMember(memberId)
    this.sessionDeadlines.delete(`${group.groupId}\0${memberId}`)
    group.groupEpoch++
    group.subscriptionMetadata = this.subscriptionMetadata(group)
    const records = [
      shareCurrentAssignmentRecord(group.groupId, memberId, null),
      shareTargetAssignmentRecord(group.groupId, memberId, null),
      shareMemberSubscriptionRecord(group.groupId, memberId, null),
      shareGroupEpochRecord(group.groupId, group.groupEpoch),
    ]
    if (group.members.size === 0) {
      group.targetAssignment.clear()
      group.assignmentEpoch = group.groupEpoch
      records.push(shareTargetAssignmentEpochRecord(group.groupId, group.assignmentEpoch, this.config.clock()))
      this.config.onGroupEmpty?.(group.groupId)
    }
    return records
  }

  /** Fences the members whose session expired. */
  sweep(): void {
    const now = this.config.clock()
    for (const [key, deadline] of this.sessionDeadlines) {
      if (now < deadline) continue
      this.sessionDeadlines.delete(key)
      const [groupId, memberId] = key.split('\0') as [string, string]
      const group = this.groups.get(groupId)
      if (!group?.members.has(memberId)) continue
      this.logger.info('share group member session expired', { group: groupId, member: memberId })
      this.config.writeRecords(this.fenceMember(group, memberId))
    }
  }

  /** Deletes an Empty share group; NON_EMPTY_GROUP while it has members. */
  deleteGroup(groupId: string): number {
    const group = this.groups.get(groupId)
    if (!group) return ErrorCode.GROUP_ID_NOT_FOUND
    if (group.members.size > 0) return ErrorCode.NON_EMPTY_GROUP
    this.groups.delete(groupId)
    this.config.writeRecords([shareStatePartitionMetadataRecord(groupId, null), shareTargetAssignmentEpochRecord(groupId, null), shareGroupEpochRecord(groupId, null)])
    return ErrorCode.NONE
  }

  /**
   * Whether the share-partition start offsets of a group may be altered (AlterShareGroupOffsets,
   * `create`: an unknown group is made, as Kafka 4.4's `getOrMaybeCreateShareGroup`) or deleted
   * (DeleteShareGroupOffsets, DeleteGroups): GROUP_ID_NOT_FOUND for an unknown group or one of
   * another kind, NON_EMPTY_GROUP while it has members.
   */
  checkOffsetsChangeable(groupId: string, create: boolean): ShareOffsetsCheck {
    const group = this.groups.get(groupId)
    if (!group) {
      if (this.otherGroup(groupId)) return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} is not a share group.` }
      return create ? { errorCode: ErrorCode.NONE, errorMessage: null } : { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} not found.` }
    }
    if (group.members.size > 0) return { errorCode: ErrorCode.NON_EMPTY_GROUP, errorMessage: NON_EMPTY_GROUP_MESSAGE }
    return { errorCode: ErrorCode.NONE, errorMessage: null }
  }

  /** The state epoch AlterShareGroupOffsets initializes share partitions with: the group epoch (0 for a group not made yet). */
  stateEpochOf(groupId: string): number {
    return this.groups.get(groupId)?.groupEpoch ?? 0
  }

  /**
   * The share coordinator initialized these partitions (AlterShareGroupOffsets): they are the
   * group's initialized ones (ShareGroupStatePartitionMetadata); the group is made if absent.
   */
  markInitialized(groupId: string, topics: ReadonlyArray<{ topicId: string; topicName: string; partitions: readonly number[] }>): void {
    if (topics.length === 0) return
    let group = this.groups.get(groupId)
    const records: CoordinatorRecord[] = []
    if (!group) {
      group = new ShareGroup(groupId)
      this.groups.set(groupId, group)
      this.logger.info('created share group', { group: groupId })
      records.push(shareGroupEpochRecord(groupId, group.groupEpoch))
    }
    for (const t of topics) {
      const partitions = new Set(group.initializedTopics.get(t.topicId)?.partitions ?? [])
      for (const p of t.partitions) partitions.add(p)
      group.initializedTopics.set(t.topicId, { topicName: t.topicName, partitions })
    }
    records.push(shareStatePartitionMetadataRecord(groupId, group))
    this.config.writeRecords(records)
  }

  /** The share coordinator deleted these topics' states (DeleteShareGroupOffsets): they are no longer initialized. */
  forgetInitialized(groupId: string, topicIds: readonly string[]): void {
    const group = this.groups.get(groupId)
    if (!group || topicIds.length === 0) return
    for (const topicId of topicIds) group.initializedTopics.delete(topicId)
    this.config.writeRecords([shareStatePartitionMetadataRecord(groupId, group)])
  }

  /** Forgets every group (the coordinator resigned). */
  unload(): void {
    this.groups.clear()
    this.sessionDeadlines.clear()
  }

  replay(key: Buffer, value: Buffer | null): void {
    replayShareGroupRecord(this.groups, key, value)
  }

  /** The load ended: every member brought back gets a new session. */
  onLoaded(): void {
    const now = this.config.clock()
    for (const group of this.groups.values()) {
      for (const m of group.members.values()) this.sessionDeadlines.set(`${group.groupId}\0${m.memberId}`, now + this.config.sessionTimeoutMs)
      group.subscriptionMetadata = this.subscriptionMetadata(group)
    }
    if (this.groups.size > 0) this.logger.info('loaded share groups', { groups: this.groups.size })
  }
}

/** Kafka's `throwIfShareGroupHeartbeatRequestIsInvalid`. */
function validateRequest(p: ShareGroupHeartbeatParams): void {
  const invalid = (message: string) => new GroupApiError(ErrorCode.INVALID_REQUEST, message)
  if (p.groupId === '') throw invalid("GroupId can't be empty.")
  // Kafka 4.4 answers an empty member id INVALID_REQUEST without a message.
  if (p.memberId === '') throw invalid('')
  if (p.rackId === '') throw invalid("RackId can't be empty.")
  if (p.memberEpoch === 0) {
    if (p.subscribedTopicNames === null || p.subscribedTopicNames.length === 0) throw invalid('SubscribedTopicNames must be set in first request.')
  } else if (p.memberEpoch < LEAVE_GROUP_MEMBER_EPOCH) {
    throw invalid('MemberEpoch is invalid.')
  }
}

/** Kafka's `throwIfShareGroupMemberEpochIsInvalid`. */
function checkMemberEpoch(member: ShareGroupMember, received: number): void {
  if (received > member.memberEpoch) {
    throw new GroupApiError(
      ErrorCode.FENCED_MEMBER_EPOCH,
      `The share group member has a greater member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
    )
  }
  if (received < member.memberEpoch && received !== member.previousMemberEpoch) {
    throw new GroupApiError(
      ErrorCode.FENCED_MEMBER_EPOCH,
      `The share group member has a smaller member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}), and it does not match the previous member epoch (${member.previousMemberEpoch}). The member must abandon all its partitions and rejoin.`,
    )
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i])
}

function sameSubscription(a: ShareGroupMember, b: ShareGroupMember): boolean {
  return a.rackId === b.rackId && a.clientId === b.clientId && a.clientHost === b.clientHost && sameNames(a.subscribedTopicNames, b.subscribedTopicNames)
}

function sameMetadata(a: ReadonlyMap<string, SubscribedTopic>, b: ReadonlyMap<string, SubscribedTopic>): boolean {
  if (a.size !== b.size) return false
  for (const [name, t] of a) {
    const o = b.get(name)
    if (!o || o.topicId !== t.topicId || o.numPartitions !== t.numPartitions) return false
  }
  return true
}
