/**
 * The group coordinator of one partition of `__consumer_offsets` (Kafka's coordinator shard: the
 * groups whose id hashes to that partition; ./group-coordinator-service.ts routes each request
 * to the one of its group, and is what the request handlers call), answered by its parts:
 *
 * - ./group-metadata-manager.ts: the groups and their members (JoinGroup, SyncGroup, Heartbeat,
 *   LeaveGroup) and the session sweep, which runs here while elected;
 * - ./offset-metadata-manager.ts: OffsetCommit, DeleteGroups and OffsetDelete, written through
 *   ./offset-store.ts;
 * - ./coordinator-runtime.ts: whether this broker coordinates the partition's groups, elected
 *   and resigned with the leadership of that partition, and the load of its log.
 *
 * - ./consumer/consumer-group-manager.ts: KIP-848 consumer groups (ConsumerGroupHeartbeat,
 *   ConsumerGroupDescribe), next to the classic groups: a group id is one or the other. An Empty
 *   classic group (known by its offsets only) becomes a consumer group when a member joins with
 *   ConsumerGroupHeartbeat, an Empty consumer group a classic one when a member joins with
 *   JoinGroup. A live classic group is upgraded when a ConsumerGroupHeartbeat joins it, classic
 *   members join a live consumer group, and a consumer group whose last consumer-protocol member
 *   leaves is downgraded, as group.consumer.migration.policy allows
 *   (./consumer/classic-group-migration.ts). Offset commits of consumer group members are checked
 *   against their member epoch (STALE_MEMBER_EPOCH; a classic member's: ILLEGAL_GENERATION).
 *
 * - ./share/share-group-manager.ts: KIP-932 share groups (ShareGroupHeartbeat,
 *   ShareGroupDescribe), next to the other two kinds: an id held by a group of another kind is
 *   GROUP_ID_NOT_FOUND ("not a share group", "not a consumer group") to the other heartbeats, and
 *   JoinGroup on a share group is INCONSISTENT_GROUP_PROTOCOL, as Kafka 4.4 answers.
 *
 * DescribeGroups and ListGroups read the groups here.
 *
 * The groups of every kind are kept in the partition's log as Kafka's coordinator records
 * (classic groups: ./group-metadata-records.ts; consumer groups: ./consumer/consumer-group-records.ts;
 * share groups: ./share/share-group-records.ts) and come back where they were when the partition
 * is loaded again (a restart, a change of coordinator).
 *
 * Not here yet: group.max.size, JoinGroup v9's skipAssignment for static leaders.
 */
import type { Logger } from '../logger.js'
import type { LeadershipChange } from '../replica/replica-manager.js'
import { CoordinatorRuntime } from './coordinator-runtime.js'
import { GroupState, type GroupMetadata } from './group-metadata.js'
import { GROUP_METADATA_RECORD_TYPE, groupIdOfRecord } from './group-metadata-records.js'
import { GroupMetadataManager, type GroupMetadataManagerConfig, type JoinGroupParams, type SyncGroupParams } from './group-metadata-manager.js'
import type { JoinResult, SyncResult } from './member-metadata.js'
import { OffsetMetadataManager } from './offset-metadata-manager.js'
import type { OffsetStore } from './offset-store.js'
import { OFFSETS_TOPIC, type OffsetCommitEntry } from './offsets-topic.js'
import { CONSUMER_PROTOCOL_TYPE } from '../protocol/consumer-protocol.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { GroupApiError, type ConsumerGroup } from './consumer/consumer-group.js'
import { ConsumerGroupManager, type ConsumerGroupHeartbeatParams, type ConsumerGroupHeartbeatResult, type TopicsImage } from './consumer/consumer-group-manager.js'
import type { ConsumerGroupPartitionAssignor } from './consumer/assignor/partition-assignor.js'
import { CONSUMER_GROUP_RECORD_TYPES } from './consumer/consumer-group-records.js'
import { UniformAssignor } from './consumer/assignor/uniform-assignor.js'
import type { ConsumerGroupMigrationPolicy } from './consumer/classic-group-migration.js'
import { RangeAssignor } from './consumer/assignor/range-assignor.js'
import { ShareGroupManager, type ShareGroupHeartbeatParams, type ShareGroupHeartbeatResult, type ShareOffsetsCheck } from './share/share-group-manager.js'
import { SHARE_GROUP_RECORD_TYPES } from './share/share-group-records.js'
import type { ShareGroup } from './share/share-group.js'

export const DEFAULT_SWEEP_INTERVAL_MS = 100
/** offsets.retention.check.interval.ms (Kafka: 600000): how often Empty groups without offsets are forgotten. */
export const DEFAULT_OFFSETS_RETENTION_CHECK_INTERVAL_MS = 600_000

export interface GroupCoordinatorConfig extends GroupMetadataManagerConfig {
  /** The period of the session and rebalance sweep (while elected); 0 starts no timer (tests call `sweep`). */
  sweepIntervalMs?: number
  /** offsets.retention.check.interval.ms: the period of Kafka's group metadata cleanup (run by the sweep). */
  offsetsRetentionCheckIntervalMs?: number
  /** Milliseconds now; Date.now by default. */
  clock?: () => number
  /** group.consumer.assignors: the server-side assignors of consumer groups, the first the default (uniform, range). */
  consumerGroupAssignors?: readonly ConsumerGroupPartitionAssignor[]
  /** group.consumer.session.timeout.ms: the sessions of consumer group members a load brings back. */
  consumerGroupSessionTimeoutMs?: number
  /** group.consumer.max.size (Kafka: Integer.MAX_VALUE). */
  consumerGroupMaxSize?: number
  /** group.consumer.migration.policy (Kafka 4.4: bidirectional). */
  consumerGroupMigrationPolicy?: ConsumerGroupMigrationPolicy
  /** group.consumer.regex.refresh.interval.ms (Kafka: 600000): how long a consumer group's regex resolution stands without new topics. */
  consumerGroupRegexRefreshIntervalMs?: number
  /** group.share.session.timeout.ms: the sessions of share group members a load brings back. */
  shareGroupSessionTimeoutMs?: number
  /** group.share.max.size (Kafka: 200). */
  shareGroupMaxSize?: number
  /** A share group's last member left (Kafka's `ShareGroupListener.onGroupEmpty`). */
  onShareGroupEmpty?: (groupId: string) => void
  /** The topics, as the subscriptions of consumer groups resolve them; none known without it. */
  topics?: TopicsImage
}

/** The assignors of group.consumer.assignors' default: uniform, then range. */
export function defaultConsumerGroupAssignors(): ConsumerGroupPartitionAssignor[] {
  return [new UniformAssignor(), new RangeAssignor()]
}

const NO_TOPICS: TopicsImage = { byName: () => undefined, byId: () => undefined, names: () => [] }

export interface GroupDescription {
  groupId: string
  state: GroupState
  protocolType: string
  protocolName: string
  members: Array<{ memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; metadata: Buffer; assignment: Buffer }>
}

const EMPTY = Buffer.alloc(0)
/** The protocol type ListGroups gives share groups (Kafka's ShareGroup.PROTOCOL_TYPE). */
export const SHARE_PROTOCOL_TYPE = 'share'

export class GroupCoordinator {
  readonly offsets: OffsetStore
  private readonly config: GroupCoordinatorConfig
  private readonly runtime: CoordinatorRuntime
  private readonly groupManager: GroupMetadataManager
  private readonly offsetManager: OffsetMetadataManager
  private readonly consumerGroups: ConsumerGroupManager
  private readonly shareGroups: ShareGroupManager
  /** The sweep, while elected. */
  private timer: NodeJS.Timeout | null = null
  /** When the next group metadata cleanup is due (the clock's ms); counted from the load of the groups. */
  private nextCleanupMs: number | null = null

  constructor(offsets: OffsetStore, config: GroupCoordinatorConfig, logger: Logger) {
    this.offsets = offsets
    this.config = config
    const statusError = () => this.runtime.statusError()
    this.groupManager = new GroupMetadataManager(config, config.clock ?? Date.now, offsets, statusError, logger)
    this.offsetManager = new OffsetMetadataManager(this.groupManager, offsets, statusError, logger)
    this.consumerGroups = new ConsumerGroupManager(
      {
        assignors: config.consumerGroupAssignors ?? defaultConsumerGroupAssignors(),
        maxSize: config.consumerGroupMaxSize ?? 2_147_483_647,
        topics: config.topics ?? NO_TOPICS,
        clock: config.clock ?? Date.now,
        sessionTimeoutMs: config.consumerGroupSessionTimeoutMs ?? 45_000,
        regexRefreshIntervalMs: config.consumerGroupRegexRefreshIntervalMs,
        migrationPolicy: config.consumerGroupMigrationPolicy ?? 'bidirectional',
        writeRecords: (records) => {
          void this.offsets.appendGroupRecords(records).then((errorCode) => {
            if (errorCode !== ErrorCode.NONE) logger.warn('consumer group records not written', { records: records.length, errorCode })
          })
        },
      },
      {
        state: (groupId) => {
          if (this.shareGroups.groups.has(groupId)) return 'live'
          const group = this.groupManager.groups.get(groupId)
          if (!group || group.is(GroupState.Dead)) return 'none'
          return group.is(GroupState.Empty) ? 'empty' : 'live'
        },
        drop: (groupId) => {
          this.groupManager.groups.get(groupId)?.transitionTo(GroupState.Dead)
          this.groupManager.groups.delete(groupId)
        },
        live: (groupId) => {
          const group = this.groupManager.groups.get(groupId)
          return group && !group.is(GroupState.Empty) && !group.is(GroupState.Dead) ? group : undefined
        },
        remove: (groupId) => this.groupManager.removeUpgradedGroup(groupId),
        adopt: (group, reason) => this.groupManager.adoptDowngradedGroup(group, reason),
      },
      logger,
    )
    this.shareGroups = new ShareGroupManager(
      {
        maxSize: config.shareGroupMaxSize ?? 200,
        topics: config.topics ?? NO_TOPICS,
        clock: config.clock ?? Date.now,
        sessionTimeoutMs: config.shareGroupSessionTimeoutMs ?? 45_000,
        writeRecords: (records) => {
          void this.offsets.appendGroupRecords(records).then((errorCode) => {
            if (errorCode !== ErrorCode.NONE) logger.warn('share group records not written', { records: records.length, errorCode })
          })
        },
        onGroupEmpty: config.onShareGroupEmpty,
      },
      (groupId) => this.consumerGroups.groups.has(groupId) || (this.groupManager.groups.has(groupId) && !this.groupManager.groups.get(groupId)!.is(GroupState.Dead)),
      logger,
    )
    this.offsets.groupRecords = {
      types: new Set([GROUP_METADATA_RECORD_TYPE, ...CONSUMER_GROUP_RECORD_TYPES, ...SHARE_GROUP_RECORD_TYPES]),
      replay: (key, value) => {
        const type = key.readInt16BE(0)
        if (type === GROUP_METADATA_RECORD_TYPE) return this.replayClassicGroup(key, value)
        return SHARE_GROUP_RECORD_TYPES.has(type) ? this.shareGroups.replay(key, value) : this.consumerGroups.replay(key, value)
      },
    }
    this.runtime = new CoordinatorRuntime(
      {
        load: (leaderEpoch) => {
          this.groupManager.unload()
          this.consumerGroups.unload()
          this.shareGroups.unload()
          this.nextCleanupMs = this.now() + this.cleanupIntervalMs()
          this.startSweep()
          return this.offsets.load(leaderEpoch)
        },
        loaded: () => {
          this.consumerGroups.onLoaded()
          this.shareGroups.onLoaded()
          this.groupManager.onLoaded()
          this.groupManager.loadGroups(this.offsets.groupIds().filter((g) => !this.consumerGroups.groups.has(g) && !this.shareGroups.groups.has(g)))
        },
        unload: () => {
          this.stopSweep()
          this.groupManager.unload()
          this.consumerGroups.unload()
          this.shareGroups.unload()
          this.offsets.unload()
        },
        groupCount: () => this.groupManager.groups.size + this.consumerGroups.groups.size + this.shareGroups.groups.size,
      },
      logger,
      offsets.topicPartition.partition,
    )
  }

  /**
   * A classic group's record in the load; the group takes the place of a consumer group by its
   * id, as in Kafka (whose conversions write the other kind's tombstones first).
   */
  private replayClassicGroup(key: Buffer, value: Buffer | null): void {
    this.groupManager.replay(key, value)
    if (value !== null) this.consumerGroups.groups.delete(groupIdOfRecord(key))
  }

  /** The partition of `__consumer_offsets` whose groups this coordinator serves. */
  get partition(): number {
    return this.offsets.topicPartition.partition
  }

  /** NONE while this broker coordinates the groups, else the error for every group request (./coordinator-runtime.ts). */
  statusError(): number {
    return this.runtime.statusError()
  }

  /**
   * The replica manager's `onLeadershipChange`: an election for each offsets partition this
   * broker now leads, a resignation for each it no longer does.
   */
  onLeadershipChange(leaders: readonly LeadershipChange[], followers: readonly LeadershipChange[]): void {
    for (const p of leaders) if (p.topic === OFFSETS_TOPIC) void this.onElection(p.partition, p.leaderEpoch)
    for (const p of followers) if (p.topic === OFFSETS_TOPIC) this.onResignation(p.partition, p.leaderEpoch)
  }

  /** Kafka's `onElection` (./coordinator-runtime.ts): resolves once the load under way ended. */
  onElection(partition: number, leaderEpoch: number): Promise<void> {
    return this.runtime.onElection(partition, leaderEpoch)
  }

  /** Kafka's `onResignation` (./coordinator-runtime.ts). */
  onResignation(partition: number, leaderEpoch?: number): void {
    this.runtime.onResignation(partition, leaderEpoch)
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
    this.runtime.stop()
    this.stopSweep()
    this.groupManager.completeHeldRequests()
    this.offsets.unload()
  }

  group(groupId: string): GroupMetadata | undefined {
    return this.groupManager.groups.get(groupId)
  }

  // ---- The groups and their members (./group-metadata-manager.ts) ----

  /**
   * JoinGroup. A consumer group by that id: Empty, it goes and a classic group takes its place
   * (its offsets stay); with members, the classic member joins it (./consumer/classic-group-migration.ts),
   * unless group.consumer.migration.policy is disabled (INCONSISTENT_GROUP_PROTOCOL).
   */
  joinGroup(p: JoinGroupParams): Promise<JoinResult> {
    if (this.statusError() === ErrorCode.NONE && this.shareGroups.groups.has(p.groupId)) {
      return Promise.resolve({ errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId: p.memberId, members: [] })
    }
    const consumerGroup = this.statusError() === ErrorCode.NONE ? this.consumerGroups.groups.get(p.groupId) : undefined
    if (consumerGroup) {
      if (consumerGroup.members.size > 0) return Promise.resolve(this.consumerGroups.classicMembers.join(p))
      // Kafka's `maybeDeleteEmptyConsumerGroup`: the Empty consumer group goes, with its tombstones.
      this.consumerGroups.deleteGroup(p.groupId)
    }
    return this.groupManager.joinGroup(p)
  }

  /** SyncGroup; a classic member of a consumer group gets its current assignment. */
  syncGroup(p: SyncGroupParams): Promise<SyncResult> {
    const consumerGroup = this.statusError() === ErrorCode.NONE ? this.consumerGroups.groups.get(p.groupId) : undefined
    if (consumerGroup) return Promise.resolve(this.consumerGroups.classicMembers.sync(p))
    return this.groupManager.syncGroup(p)
  }

  heartbeat(groupId: string, memberId: string, generationId: number, groupInstanceId: string | null = null): number {
    const consumerGroup = this.statusError() === ErrorCode.NONE ? this.consumerGroups.groups.get(groupId) : undefined
    if (consumerGroup) return this.consumerGroups.classicMembers.heartbeat(groupId, memberId, generationId, groupInstanceId)
    return this.groupManager.heartbeat(groupId, memberId, generationId, groupInstanceId)
  }

  /** Removes members; a group-level error code and one per member. */
  leaveGroup(groupId: string, members: Array<{ memberId: string; groupInstanceId: string | null }>): ReturnType<GroupMetadataManager['leaveGroup']> {
    const consumerGroup = this.statusError() === ErrorCode.NONE ? this.consumerGroups.groups.get(groupId) : undefined
    if (consumerGroup) return { errorCode: ErrorCode.NONE, members: this.consumerGroups.classicMembers.leave(groupId, members) }
    return this.groupManager.leaveGroup(groupId, members)
  }

  /**
   * Expires sessions and pending member ids, and ends join phases whose time has come; every
   * offsets.retention.check.interval.ms, forgets the Empty groups without offsets.
   */
  sweep(): void {
    this.groupManager.sweep()
    this.consumerGroups.sweep()
    this.shareGroups.sweep()
    const now = this.now()
    if (this.nextCleanupMs === null || now < this.nextCleanupMs) return
    this.nextCleanupMs = now + this.cleanupIntervalMs()
    this.groupManager.cleanupGroupMetadata()
  }

  private now(): number {
    return (this.config.clock ?? Date.now)()
  }

  private cleanupIntervalMs(): number {
    return this.config.offsetsRetentionCheckIntervalMs ?? DEFAULT_OFFSETS_RETENTION_CHECK_INTERVAL_MS
  }

  // ---- Offsets (./offset-metadata-manager.ts) ----

  /**
   * OffsetCommit. For a consumer group, Kafka's `ConsumerGroup.validateOffsetCommit` (member,
   * OffsetCommit v9+, its current member epoch: STALE_MEMBER_EPOCH), then the commit is written;
   * otherwise the classic checks (./offset-metadata-manager.ts).
   */
  async commitOffsets(
    groupId: string,
    memberId: string,
    generationId: number,
    entries: readonly OffsetCommitEntry[],
    groupInstanceId: string | null = null,
    apiVersion = Number.MAX_SAFE_INTEGER,
  ): Promise<number> {
    const group = this.statusError() === ErrorCode.NONE ? this.consumerGroups.groups.get(groupId) : undefined
    if (!group) return this.offsetManager.commitOffsets(groupId, memberId, generationId, entries, groupInstanceId)
    const invalid = groupError(() => group.validateOffsetCommit(memberId, generationId, false, apiVersion, this.committedPartitions(entries)))
    if (invalid !== ErrorCode.NONE) return invalid
    return this.offsetManager.commitConsumerGroupOffsets(groupId, entries, () => this.consumerGroups.groups.get(groupId) === group)
  }

  /** The partitions of a commit with their topics' ids (KIP-1251's check of older member epochs). */
  private committedPartitions(entries: readonly OffsetCommitEntry[]): Array<{ topicId: string | undefined; partition: number; topic: string }> {
    const topics = this.config.topics ?? NO_TOPICS
    return entries.map((e) => ({ topic: e.topic, partition: e.partition, topicId: topics.byName(e.topic)?.topicId.toString('hex') }))
  }

  /**
   * OffsetFetch's member check for a consumer group (Kafka's `validateOffsetFetch`): NONE when
   * the group is not one, or the fetch has no member (null id, epoch < 0), or the member fetches
   * in its current epoch; else UNKNOWN_MEMBER_ID or STALE_MEMBER_EPOCH.
   */
  validateOffsetFetch(groupId: string, memberId: string | null, memberEpoch: number): number {
    const group = this.consumerGroups.groups.get(groupId)
    if (!group) return ErrorCode.NONE
    return groupError(() => group.validateOffsetFetch(memberId, memberEpoch))
  }

  /** TxnOffsetCommit (./offset-metadata-manager.ts): one error code for every partition. */
  async commitTransactionalOffsets(
    groupId: string,
    producerId: bigint,
    producerEpoch: number,
    memberId: string,
    generationId: number,
    groupInstanceId: string | null,
    entries: readonly OffsetCommitEntry[],
  ): Promise<number> {
    const group = this.statusError() === ErrorCode.NONE ? this.consumerGroups.groups.get(groupId) : undefined
    if (group && memberId !== '') {
      // Kafka's `validateTransactionalCommit`: a known member in its current epoch (generation -1: not checked).
      const invalid = groupError(() => generationId >= 0 && group.validateOffsetCommit(memberId, generationId, true, Number.MAX_SAFE_INTEGER, this.committedPartitions(entries)))
      if (invalid !== ErrorCode.NONE) return invalid === ErrorCode.STALE_MEMBER_EPOCH ? ErrorCode.ILLEGAL_GENERATION : invalid
    }
    return this.offsetManager.commitTransactionalOffsets(groupId, producerId, producerEpoch, memberId, generationId, groupInstanceId, entries, group !== undefined)
  }

  /**
   * Kafka's `onTransactionCompleted`: a transaction marker of `producerId` is on the ISR of the
   * offsets partition; its transactional commits become visible (commit) or are dropped.
   */
  onTransactionCompleted(producerId: bigint, commit: boolean): void {
    this.offsets.completeTransaction(producerId, commit)
  }

  /** DeleteGroups: an Empty consumer group goes with its offsets; one with members is NON_EMPTY_GROUP. */
  async deleteGroups(groupIds: readonly string[]): Promise<Array<{ groupId: string; errorCode: number }>> {
    const consumer = new Map<string, number>()
    if (this.statusError() === ErrorCode.NONE) {
      for (const groupId of new Set(groupIds)) if (this.consumerGroups.groups.has(groupId)) consumer.set(groupId, this.consumerGroups.deleteGroup(groupId))
      for (const groupId of new Set(groupIds)) if (this.shareGroups.groups.has(groupId)) consumer.set(groupId, this.shareGroups.deleteGroup(groupId))
    }
    const classic = await this.offsetManager.deleteGroups(groupIds.filter((g) => !consumer.has(g)))
    const deleted = await Promise.all(
      [...consumer].map(async ([groupId, errorCode]) => ({ groupId, errorCode: errorCode === ErrorCode.NONE ? await this.offsetManager.deleteOffsetsOf(groupId) : errorCode })),
    )
    return [...classic, ...deleted]
  }

  deleteOffsets(groupId: string, partitions: ReadonlyArray<{ topic: string; partition: number }>): ReturnType<OffsetMetadataManager['deleteOffsets']> {
    const group = this.statusError() === ErrorCode.NONE ? this.consumerGroups.groups.get(groupId) : undefined
    if (group) return this.offsetManager.deleteConsumerGroupOffsets(groupId, partitions, (topic) => group.isSubscribedToTopic(topic))
    return this.offsetManager.deleteOffsets(groupId, partitions)
  }

  // ---- KIP-848 consumer groups (./consumer/consumer-group-manager.ts) ----

  /** ConsumerGroupHeartbeat; the coordinator's status error first (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS). */
  consumerGroupHeartbeat(p: ConsumerGroupHeartbeatParams): ConsumerGroupHeartbeatResult {
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return { errorCode: status, errorMessage: null, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null }
    return this.consumerGroups.heartbeat(p)
  }

  consumerGroup(groupId: string): ConsumerGroup | undefined {
    return this.consumerGroups.groups.get(groupId)
  }

  /** The assignor a consumer group's target assignment uses now. */
  consumerGroupAssignorName(group: ConsumerGroup): string {
    return this.consumerGroups.assignorName(group)
  }

  // ---- KIP-932 share groups (./share/share-group-manager.ts) ----

  /** ShareGroupHeartbeat; the coordinator's status error first (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS). */
  shareGroupHeartbeat(p: ShareGroupHeartbeatParams): ShareGroupHeartbeatResult {
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return { errorCode: status, errorMessage: null, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null }
    return this.shareGroups.heartbeat(p)
  }

  shareGroup(groupId: string): ShareGroup | undefined {
    return this.shareGroups.groups.get(groupId)
  }

  /** Whether a share group's offsets may be altered (`create`) or deleted; the coordinator's status error first. */
  checkShareOffsetsChangeable(groupId: string, create: boolean): ShareOffsetsCheck {
    const status = this.statusError()
    if (status !== ErrorCode.NONE) return { errorCode: status, errorMessage: null }
    return this.shareGroups.checkOffsetsChangeable(groupId, create)
  }

  shareStateEpochOf(groupId: string): number {
    return this.shareGroups.stateEpochOf(groupId)
  }

  markShareInitialized(groupId: string, topics: Parameters<ShareGroupManager['markInitialized']>[1]): void {
    if (this.statusError() === ErrorCode.NONE) this.shareGroups.markInitialized(groupId, topics)
  }

  forgetShareInitialized(groupId: string, topicIds: readonly string[]): void {
    if (this.statusError() === ErrorCode.NONE) this.shareGroups.forgetInitialized(groupId, topicIds)
  }

  // ---- DescribeGroups, ListGroups ----

  describeGroup(groupId: string): GroupDescription | null {
    const group = this.groupManager.groups.get(groupId)
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

  /** Every group: the classic ones, the consumer groups (protocol type `consumer`; `consumerGroup` tells them apart), the share groups (`share`). */
  listGroups(): Array<{ groupId: string; protocolType: string; state: string }> {
    return [
      ...[...this.shareGroups.groups.values()].map((g) => ({ groupId: g.groupId, protocolType: SHARE_PROTOCOL_TYPE, state: g.state() })),
      ...[...this.groupManager.groups.values()].map((g) => ({ groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state })),
      ...[...this.consumerGroups.groups.values()].map((g) => ({ groupId: g.groupId, protocolType: CONSUMER_PROTOCOL_TYPE, state: g.state() })),
    ]
  }
}

/** The error code of a group check that throws GroupApiError; NONE when it passes. */
function groupError(check: () => unknown): number {
  try {
    check()
    return ErrorCode.NONE
  } catch (err) {
    if (err instanceof GroupApiError) return err.errorCode
    throw err
  }
}
