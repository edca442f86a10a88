/**
 * The classic group coordinator (Kafka's `GroupCoordinator`, before KIP-848): what the request
 * handlers call, answered by its parts:
 *
 * - ./group-metadata-manager.ts: the groups and their members (JoinGroup, SyncGroup, Heartbeat,
 *   LeaveGroup) and the session sweep, which runs here while elected;
 * - ./offset-metadata-manager.ts: OffsetCommit, DeleteGroups and OffsetDelete, written through
 *   ./offset-store.ts;
 * - ./coordinator-runtime.ts: whether this broker coordinates the groups, elected and resigned
 *   with the leadership of `__consumer_offsets-0`, and the load of the offsets log.
 *
 * DescribeGroups and ListGroups read the groups here.
 *
 * Not here yet: group.max.size, persisting group metadata (generations restart after a broker
 * restart or a change of coordinator; committed offsets do not), JoinGroup v9's skipAssignment
 * for static leaders.
 */
import type { Logger } from '../logger.js'
import type { LeadershipChange } from '../replica/replica-manager.js'
import { CoordinatorRuntime } from './coordinator-runtime.js'
import { GroupState, type GroupMetadata } from './group-metadata.js'
import { GroupMetadataManager, type GroupMetadataManagerConfig, type JoinGroupParams, type SyncGroupParams } from './group-metadata-manager.js'
import type { JoinResult, SyncResult } from './member-metadata.js'
import { OffsetMetadataManager } from './offset-metadata-manager.js'
import type { OffsetStore } from './offset-store.js'
import { OFFSETS_TOPIC, type OffsetCommitEntry } from './offsets-topic.js'

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
  private readonly config: GroupCoordinatorConfig
  private readonly runtime: CoordinatorRuntime
  private readonly groupManager: GroupMetadataManager
  private readonly offsetManager: OffsetMetadataManager
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
    this.runtime = new CoordinatorRuntime(
      {
        load: (leaderEpoch) => {
          this.nextCleanupMs = this.now() + this.cleanupIntervalMs()
          this.startSweep()
          return this.offsets.load(leaderEpoch)
        },
        loaded: () => this.groupManager.loadGroups(this.offsets.groupIds()),
        unload: () => {
          this.stopSweep()
          this.groupManager.unload()
          this.offsets.unload()
        },
        groupCount: () => this.groupManager.groups.size,
      },
      logger,
    )
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

  joinGroup(p: JoinGroupParams): Promise<JoinResult> {
    return this.groupManager.joinGroup(p)
  }

  syncGroup(p: SyncGroupParams): Promise<SyncResult> {
    return this.groupManager.syncGroup(p)
  }

  heartbeat(groupId: string, memberId: string, generationId: number, groupInstanceId: string | null = null): number {
    return this.groupManager.heartbeat(groupId, memberId, generationId, groupInstanceId)
  }

  /** Removes members; a group-level error code and one per member. */
  leaveGroup(groupId: string, members: Array<{ memberId: string; groupInstanceId: string | null }>): ReturnType<GroupMetadataManager['leaveGroup']> {
    return this.groupManager.leaveGroup(groupId, members)
  }

  /**
   * Expires sessions and pending member ids, and ends join phases whose time has come; every
   * offsets.retention.check.interval.ms, forgets the Empty groups without offsets.
   */
  sweep(): void {
    this.groupManager.sweep()
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

  commitOffsets(groupId: string, memberId: string, generationId: number, entries: readonly OffsetCommitEntry[], groupInstanceId: string | null = null): Promise<number> {
    return this.offsetManager.commitOffsets(groupId, memberId, generationId, entries, groupInstanceId)
  }

  /** TxnOffsetCommit (./offset-metadata-manager.ts): one error code for every partition. */
  commitTransactionalOffsets(
    groupId: string,
    producerId: bigint,
    producerEpoch: number,
    memberId: string,
    generationId: number,
    groupInstanceId: string | null,
    entries: readonly OffsetCommitEntry[],
  ): Promise<number> {
    return this.offsetManager.commitTransactionalOffsets(groupId, producerId, producerEpoch, memberId, generationId, groupInstanceId, entries)
  }

  /**
   * Kafka's `onTransactionCompleted`: a transaction marker of `producerId` is on the ISR of the
   * offsets partition; its transactional commits become visible (commit) or are dropped.
   */
  onTransactionCompleted(producerId: bigint, commit: boolean): void {
    this.offsets.completeTransaction(producerId, commit)
  }

  deleteGroups(groupIds: readonly string[]): Promise<Array<{ groupId: string; errorCode: number }>> {
    return this.offsetManager.deleteGroups(groupIds)
  }

  deleteOffsets(groupId: string, partitions: ReadonlyArray<{ topic: string; partition: number }>): ReturnType<OffsetMetadataManager['deleteOffsets']> {
    return this.offsetManager.deleteOffsets(groupId, partitions)
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

  listGroups(): Array<{ groupId: string; protocolType: string; state: GroupState }> {
    return [...this.groupManager.groups.values()].map((g) => ({ groupId: g.groupId, protocolType: g.protocolType ?? '', state: g.state }))
  }
}
