/**
 * The group coordinator of a broker over every partition of `__consumer_offsets` (Kafka's
 * `GroupCoordinatorService` in front of its `CoordinatorRuntime`): one ./group-coordinator.ts
 * per partition (Kafka's coordinator shard: its groups, its committed offsets in that
 * partition's log, its own election and load), and the routing of every group request to the
 * one of `partitionFor(groupId)` (ts/coordinator/partition-for.ts: Kafka's
 * `Utils.abs(groupId.hashCode()) % numPartitions`).
 *
 * Leadership (Kafka's `onElection` / `onResignation`): the replica manager's
 * `onLeadershipChange` elects the coordinator of each partition this broker now leads, which
 * loads that partition's log (COORDINATOR_LOAD_IN_PROGRESS meanwhile), and resigns those of the
 * partitions it no longer leads, which drop their groups; a standalone broker elects itself for
 * every partition at start. A request for a group of a partition not led here is answered by
 * that partition's coordinator, inactive: NOT_COORDINATOR, and the client asks FindCoordinator
 * again (ts/server/handlers/find-coordinator.ts answers the partition's leader).
 *
 * The partition count (`numPartitions`) is the topic's as it exists (Kafka never changes the
 * count of an existing internal topic: a data dir or cluster whose `__consumer_offsets` has one
 * partition keeps hashing every group to partition 0), else offsets.topic.num.partitions.
 *
 * One timer sweeps the sessions of every loaded partition (the coordinators start none of their own).
 */
import type { ShareGroupHeartbeatParams, ShareGroupHeartbeatResult, ShareOffsetsCheck } from './share/share-group-manager.js'
import type { ShareGroup } from './share/share-group.js'
import type { Logger } from '../logger.js'
import { partitionFor } from '../coordinator/partition-for.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { LeadershipChange } from '../replica/replica-manager.js'
import type { ConsumerGroup } from './consumer/consumer-group.js'
import type { ConsumerGroupHeartbeatParams, ConsumerGroupHeartbeatResult } from './consumer/consumer-group-manager.js'
import { DEFAULT_SWEEP_INTERVAL_MS, GroupCoordinator, type GroupCoordinatorConfig, type GroupDescription } from './group-coordinator.js'
import type { GroupMetadata } from './group-metadata.js'
import type { JoinGroupParams, SyncGroupParams } from './group-metadata-manager.js'
import type { JoinResult, SyncResult } from './member-metadata.js'
import { OffsetStore, type OffsetsReplicaManager } from './offset-store.js'
import { OFFSETS_TOPIC, type CommittedOffset, type OffsetCommitEntry } from './offsets-topic.js'

export interface GroupCoordinatorServiceConfig extends GroupCoordinatorConfig {
  /** The partitions of `__consumer_offsets`: the topic's own count once it exists, else offsets.topic.num.partitions. */
  numPartitions: () => number
  /** offsets.commit.timeout.ms. */
  commitTimeoutMs?: number
}

/** The committed offsets of any group, read from the coordinator of its partition. */
export interface OffsetsView {
  get(group: string, topic: string, partition: number): CommittedOffset | undefined
  all(group: string): OffsetCommitEntry[]
  hasPendingTransactionalOffsets(group: string, topic: string, partition: number): boolean
}

export class GroupCoordinatorService {
  private readonly replicas: OffsetsReplicaManager
  private readonly config: GroupCoordinatorServiceConfig
  private readonly logger: Logger
  /** The coordinator of each partition ever elected or asked for, by partition. */
  private readonly shards = new Map<number, GroupCoordinator>()
  private timer: NodeJS.Timeout | null = null
  private stopped = false

  constructor(replicas: OffsetsReplicaManager, config: GroupCoordinatorServiceConfig, logger: Logger) {
    this.replicas = replicas
    this.config = config
    this.logger = logger
  }

  /** The partitions of `__consumer_offsets` groups are hashed over. */
  get numPartitions(): number {
    return this.config.numPartitions()
  }

  /** Kafka's `partitionFor`: the partition of `__consumer_offsets` that holds the group. */
  partitionFor(groupId: string): number {
    return partitionFor(groupId, this.numPartitions)
  }

  /** The coordinator of a partition (made on first use: until elected it answers NOT_COORDINATOR). */
  coordinatorOf(partition: number): GroupCoordinator {
    let shard = this.shards.get(partition)
    if (!shard) {
      const offsets = new OffsetStore(this.replicas, this.logger, { commitTimeoutMs: this.config.commitTimeoutMs, partition })
      shard = new GroupCoordinator(offsets, { ...this.config, sweepIntervalMs: 0 }, this.logger)
      if (this.stopped) shard.stop()
      this.shards.set(partition, shard)
    }
    return shard
  }

  private shardOf(groupId: string): GroupCoordinator {
    return this.coordinatorOf(this.partitionFor(groupId))
  }

  /** The coordinators that serve now (elected and loaded). */
  private active(): GroupCoordinator[] {
    return [...this.shards.values()].filter((s) => s.statusError() === ErrorCode.NONE)
  }

  /** NONE while this broker coordinates the group's partition; else NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS. */
  statusError(groupId: string): number {
    return this.shards.get(this.partitionFor(groupId))?.statusError() ?? ErrorCode.NOT_COORDINATOR
  }

  /** Whether a partition led here is still loading (ListGroups answers COORDINATOR_LOAD_IN_PROGRESS, as Kafka). */
  loadInProgress(): boolean {
    return [...this.shards.values()].some((s) => s.statusError() === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
  }

  /** The partitions whose groups this broker coordinates now. */
  activePartitions(): number[] {
    return this.active()
      .map((s) => s.partition)
      .sort((a, b) => a - b)
  }

  // ---- Leadership ----

  /** The replica manager's `onLeadershipChange`: an election for each offsets partition led now, a resignation for each no longer led. */
  onLeadershipChange(leaders: readonly LeadershipChange[], followers: readonly LeadershipChange[]): void {
    for (const p of leaders) if (p.topic === OFFSETS_TOPIC) void this.onElection(p.partition, p.leaderEpoch)
    for (const p of followers) if (p.topic === OFFSETS_TOPIC) this.onResignation(p.partition, p.leaderEpoch)
  }

  /** Kafka's `onElection` for one partition: resolves once its load ended. */
  onElection(partition: number, leaderEpoch: number): Promise<void> {
    if (this.stopped) return Promise.resolve()
    this.startSweep()
    return this.coordinatorOf(partition).onElection(partition, leaderEpoch)
  }

  /** Kafka's `onResignation` for one partition: its groups and offsets are dropped. */
  onResignation(partition: number, leaderEpoch?: number): void {
    this.coordinatorOf(partition).onResignation(partition, leaderEpoch)
  }

  /** Every coordinator stops (held requests answered NOT_COORDINATOR), and the sweep. */
  stop(): void {
    this.stopped = true
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
    for (const shard of this.shards.values()) shard.stop()
  }

  private startSweep(): void {
    const every = this.config.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS
    if (every <= 0 || this.timer !== null) return
    this.timer = setInterval(() => this.sweep(), every)
    this.timer.unref()
  }

  /** The sweep of every loaded partition (sessions, join phases, group metadata cleanup). */
  sweep(): void {
    for (const shard of this.active()) shard.sweep()
  }

  // ---- Routed by group id ----

  group(groupId: string): GroupMetadata | undefined {
    return this.shards.get(this.partitionFor(groupId))?.group(groupId)
  }

  joinGroup(p: JoinGroupParams): Promise<JoinResult> {
    return this.shardOf(p.groupId).joinGroup(p)
  }

  syncGroup(p: SyncGroupParams): Promise<SyncResult> {
    return this.shardOf(p.groupId).syncGroup(p)
  }

  heartbeat(groupId: string, memberId: string, generationId: number, groupInstanceId: string | null = null): number {
    return this.shardOf(groupId).heartbeat(groupId, memberId, generationId, groupInstanceId)
  }

  leaveGroup(groupId: string, members: Array<{ memberId: string; groupInstanceId: string | null }>): ReturnType<GroupCoordinator['leaveGroup']> {
    return this.shardOf(groupId).leaveGroup(groupId, members)
  }

  commitOffsets(
    groupId: string,
    memberId: string,
    generationId: number,
    entries: readonly OffsetCommitEntry[],
    groupInstanceId: string | null = null,
    apiVersion = Number.MAX_SAFE_INTEGER,
  ): Promise<number> {
    return this.shardOf(groupId).commitOffsets(groupId, memberId, generationId, entries, groupInstanceId, apiVersion)
  }

  validateOffsetFetch(groupId: string, memberId: string | null, memberEpoch: number): number {
    return this.shardOf(groupId).validateOffsetFetch(groupId, memberId, memberEpoch)
  }

  commitTransactionalOffsets(
    groupId: string,
    producerId: bigint,
    producerEpoch: number,
    memberId: string,
    generationId: number,
    groupInstanceId: string | null,
    entries: readonly OffsetCommitEntry[],
  ): Promise<number> {
    return this.shardOf(groupId).commitTransactionalOffsets(groupId, producerId, producerEpoch, memberId, generationId, groupInstanceId, entries)
  }

  /** A transaction marker of `producerId` is on the ISR of `__consumer_offsets-partition` (Kafka's `onTransactionCompleted`). */
  onTransactionCompleted(producerId: bigint, commit: boolean, partition: number): void {
    this.shards.get(partition)?.onTransactionCompleted(producerId, commit)
  }

  /** DeleteGroups, each group by the coordinator of its partition. */
  async deleteGroups(groupIds: readonly string[]): Promise<Array<{ groupId: string; errorCode: number }>> {
    const byShard = new Map<GroupCoordinator, string[]>()
    for (const groupId of groupIds) {
      const shard = this.shardOf(groupId)
      const list = byShard.get(shard)
      if (list) list.push(groupId)
      else byShard.set(shard, [groupId])
    }
    return (await Promise.all([...byShard].map(([shard, ids]) => shard.deleteGroups(ids)))).flat()
  }

  deleteOffsets(groupId: string, partitions: ReadonlyArray<{ topic: string; partition: number }>): ReturnType<GroupCoordinator['deleteOffsets']> {
    return this.shardOf(groupId).deleteOffsets(groupId, partitions)
  }

  consumerGroupHeartbeat(p: ConsumerGroupHeartbeatParams): ConsumerGroupHeartbeatResult {
    return this.shardOf(p.groupId).consumerGroupHeartbeat(p)
  }

  consumerGroup(groupId: string): ConsumerGroup | undefined {
    return this.shards.get(this.partitionFor(groupId))?.consumerGroup(groupId)
  }

  consumerGroupAssignorName(group: ConsumerGroup): string {
    return this.shardOf(group.groupId).consumerGroupAssignorName(group)
  }

  shareGroupHeartbeat(p: ShareGroupHeartbeatParams): ShareGroupHeartbeatResult {
    return this.shardOf(p.groupId).shareGroupHeartbeat(p)
  }

  shareGroup(groupId: string): ShareGroup | undefined {
    return this.shards.get(this.partitionFor(groupId))?.shareGroup(groupId)
  }

  /** Whether a share group's offsets may be altered (`create`: an unknown group is made) or deleted (./share/share-group-manager.ts). */
  checkShareOffsetsChangeable(groupId: string, create: boolean): ShareOffsetsCheck {
    return this.shardOf(groupId).checkShareOffsetsChangeable(groupId, create)
  }

  shareStateEpochOf(groupId: string): number {
    return this.shardOf(groupId).shareStateEpochOf(groupId)
  }

  markShareInitialized(groupId: string, topics: Parameters<GroupCoordinator['markShareInitialized']>[1]): void {
    this.shardOf(groupId).markShareInitialized(groupId, topics)
  }

  forgetShareInitialized(groupId: string, topicIds: readonly string[]): void {
    this.shardOf(groupId).forgetShareInitialized(groupId, topicIds)
  }

  describeGroup(groupId: string): GroupDescription | null {
    return this.shards.get(this.partitionFor(groupId))?.describeGroup(groupId) ?? null
  }

  /** The groups of every partition this broker coordinates now. */
  listGroups(): ReturnType<GroupCoordinator['listGroups']> {
    return this.active().flatMap((s) => s.listGroups())
  }

  /** Committed offsets, each group's from the coordinator of its partition. */
  readonly offsets: OffsetsView = {
    get: (group, topic, partition) => this.shards.get(this.partitionFor(group))?.offsets.get(group, topic, partition),
    all: (group) => this.shards.get(this.partitionFor(group))?.offsets.all(group) ?? [],
    hasPendingTransactionalOffsets: (group, topic, partition) => this.shards.get(this.partitionFor(group))?.offsets.hasPendingTransactionalOffsets(group, topic, partition) ?? false,
  }

  /** Resolves once no offsets write is under way in any partition (shutdown, tests). */
  async idle(): Promise<void> {
    await Promise.all([...this.shards.values()].map((s) => s.offsets.idle()))
  }
}
