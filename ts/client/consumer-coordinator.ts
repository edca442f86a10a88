/**
 * Kafka's ConsumerCoordinator (with the AbstractCoordinator it extends): a consumer's membership
 * in a classic group (protocolType "consumer") and its committed offsets.
 *
 * - The coordinator is found with FindCoordinator (key type 0) and talked to over a connection of
 *   its own (Kafka uses node id MAX_VALUE - id for the same reason): a JoinGroup that waits out a
 *   rebalance or a heartbeat is not queued behind a long-polling Fetch.
 * - Joining (eager protocol): before a JoinGroup the consumer gives up every partition it holds
 *   (`onRevoke`: the Consumer commits their positions there when auto-commit is on). JoinGroup
 *   offers the assignors by preference, each with the subscription (consumer-protocol.ts, v3:
 *   topics, owned partitions (none, being eager), generation, client.rack). MEMBER_ID_REQUIRED
 *   rejoins with the id given. The leader runs the chosen assignor (assignors.ts) over the
 *   members' subscriptions and the partition counts it reads from Metadata, and sends the
 *   assignments in SyncGroup; the others send none. The assignment read back from SyncGroup
 *   becomes the consumer's (`onAssign`).
 * - Heartbeats every heartbeat.interval.ms while a member (Kafka's heartbeat thread, here a
 *   timer: an application that blocks the event loop stops them, and the broker drops it after
 *   session.timeout.ms). REBALANCE_IN_PROGRESS makes the next `poll()` rejoin, and the heartbeats
 *   go on until it does (the broker keeps a member that heartbeats through the rebalance
 *   timeout); ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID forget the generation (its partitions are
 *   lost, not revoked: no commit); NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE or a lost
 *   connection find the coordinator again, and the member keeps its generation (a coordinator
 *   restarted or moved loads the group, as Kafka's does); FENCED_INSTANCE_ID (another process
 *   took our group.instance.id) is fatal.
 * - max.poll.interval.ms: `poll()` restarts the poll timer. When it runs out (the application
 *   has not come back for records in time), the heartbeat leaves the group as Kafka's does
 *   ("consumer poll timeout has expired."): LeaveGroup, generation and member id forgotten; the
 *   group hands the partitions to the others at once, and the next `poll()` rejoins.
 * - Leaving (`maybeLeaveGroup`: poll timeout, unsubscribe, close): a dynamic member sends
 *   LeaveGroup; a static one (group.instance.id) does not, so that its restart within
 *   session.timeout.ms gets its partitions back without a rebalance. Both forget the generation.
 * - Offsets: OffsetFetch (requireStable with READ_COMMITTED) for the partitions assigned,
 *   OffsetCommit with the generation and member id. A subscribed consumer with no generation
 *   (it left, or was dropped) does not send the commit: CommitFailedError ILLEGAL_GENERATION, as
 *   Kafka's CommitFailedException. A commit the coordinator refuses because the group moved on
 *   throws CommitFailedError with its code (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID: the generation
 *   is forgotten; REBALANCE_IN_PROGRESS, Kafka's RebalanceInProgressException: a rejoin).
 */
import { findCoordinatorCodec, CoordinatorType } from '../protocol/apis/find-coordinator.js'
import { heartbeatCodec } from '../protocol/apis/heartbeat.js'
import { joinGroupCodec, type JoinGroupResponse } from '../protocol/apis/join-group.js'
import { leaveGroupCodec } from '../protocol/apis/leave-group.js'
import { ZERO_UUID } from '../protocol/apis/common.js'
import { offsetCommitCodec } from '../protocol/apis/offset-commit.js'
import { offsetFetchCodec, type OffsetFetchResponseTopic } from '../protocol/apis/offset-fetch.js'
import { syncGroupCodec } from '../protocol/apis/sync-group.js'
import { CONSUMER_PROTOCOL_TYPE, decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from '../protocol/consumer-protocol.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { partitionsFromMetadata, type PartitionAssignor, type MemberSubscription } from './partition-assignor.js'
import { CommitFailedError, KafkaClientError } from './errors.js'
import { tpKey, type TopicPartition } from './fetch-session-handler.js'
import type { NetworkClient } from './network-client.js'
import type { SubscriptionState } from './subscription-state.js'
import type { GroupMembership, OffsetAndMetadata, RebalanceListener } from './group-membership.js'
import type { ConsumerGroupMetadata } from './consumer-group-metadata.js'

export interface CoordinatorOptions {
  groupId: string
  groupInstanceId: string | null
  sessionTimeoutMs: number
  rebalanceTimeoutMs: number
  heartbeatIntervalMs: number
  /** max.poll.interval.ms: the longest the application may stay away from poll() and keep its membership. */
  maxPollIntervalMs: number
  retryBackoffMs: number
  rackId: string | null
  requireStable: boolean
  assignors: PartitionAssignor[]
}

export type { RebalanceListener, OffsetAndMetadata }

const COORDINATOR_ERRORS = new Set<number>([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR])
const GENERATION_ERRORS = new Set<number>([ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_INSTANCE_ID])

/** Join and sync errors after which Kafka's member joins again without waiting retry.backoff.ms. */
const REJOIN_AT_ONCE = new Set<number>([ErrorCode.MEMBER_ID_REQUIRED, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION, ErrorCode.REBALANCE_IN_PROGRESS])

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export class ConsumerCoordinator implements GroupMembership {
  memberId = ''
  generationId = -1
  protocolName: string | null = null
  private coordinatorId: number | null = null
  private rejoinNeeded = true
  private heartbeatTimer: NodeJS.Timeout | null = null
  /** Bumped when heartbeats start or stop: a beat of an earlier run ends. */
  private heartbeats = 0
  private fatal: KafkaClientError | null = null
  private closed = false
  /** When the application last called poll() (Kafka's Heartbeat.poll timer). */
  private lastPollAt = Date.now()
  private readonly options: CoordinatorOptions

  constructor(
    /** The coordinator's own connection. */
    private readonly client: NetworkClient,
    /** The consumer's main client: its metadata sizes the leader's assignment. */
    private readonly metadataClient: NetworkClient,
    private readonly subscriptions: SubscriptionState,
    private readonly listener: RebalanceListener,
    options: CoordinatorOptions,
  ) {
    this.options = options
  }

  get groupId(): string {
    return this.options.groupId
  }

  /** Whether the next poll must (re)join the group. */
  get needsRejoin(): boolean {
    return this.rejoinNeeded
  }

  requestRejoin(): void {
    this.rejoinNeeded = true
  }

  private throwIfFatal(): void {
    if (this.fatal) throw this.fatal
  }

  /** FindCoordinator until one answers; the coordinator's node id. */
  async ensureCoordinatorReady(deadline: number): Promise<number> {
    while (this.coordinatorId === null) {
      this.throwIfFatal()
      try {
        const nodeId = this.client.candidateNodes()[0]!
        const res = await this.client.request(nodeId, findCoordinatorCodec, (v) =>
          v >= 4 ? { key: '', keyType: CoordinatorType.GROUP, coordinatorKeys: [this.groupId] } : { key: this.groupId, keyType: CoordinatorType.GROUP, coordinatorKeys: [] },
        )
        const c = res.coordinators[0] ?? res
        if (c.errorCode === ErrorCode.NONE) {
          if (!this.client.metadata.node(c.nodeId)) await this.client.refreshMetadata([])
          this.coordinatorId = c.nodeId
          break
        }
        if (c.errorCode !== ErrorCode.COORDINATOR_NOT_AVAILABLE && c.errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && c.errorCode !== ErrorCode.NOT_COORDINATOR) {
          throw KafkaClientError.fromErrorCode(c.errorCode, `FindCoordinator ${this.groupId}`, c.errorMessage)
        }
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
      }
      if (Date.now() >= deadline) throw new KafkaClientError('COORDINATOR_NOT_AVAILABLE', `no coordinator found for group ${this.groupId}`)
      await sleep(this.options.retryBackoffMs)
    }
    return this.coordinatorId
  }

  private markCoordinatorUnknown(): void {
    this.coordinatorId = null
  }

  private resetGeneration(): void {
    this.generationId = -1
    if (this.options.groupInstanceId === null) this.memberId = ''
    this.rejoinNeeded = true
  }

  /** Whether this member has lost its generation (left, or dropped by the coordinator). */
  get generationLost(): boolean {
    return this.generationId < 0
  }

  groupMetadata(): ConsumerGroupMetadata {
    return { groupId: this.groupId, generationId: this.generationId, memberId: this.memberId, groupInstanceId: this.options.groupInstanceId }
  }

  /** The application polled: restarts the max.poll.interval.ms timer. */
  pollTimerReset(): void {
    this.lastPollAt = Date.now()
  }

  /** Joins (again) when needed: revoke (or lose), JoinGroup, SyncGroup, assign. */
  async poll(deadline: number): Promise<void> {
    this.throwIfFatal()
    this.pollTimerReset()
    if (!this.rejoinNeeded) return
    this.stopHeartbeats()
    await this.dropAssignment()
    // As Kafka's joinGroupIfNeeded: a join that failed with MEMBER_ID_REQUIRED, UNKNOWN_MEMBER_ID,
    // ILLEGAL_GENERATION or REBALANCE_IN_PROGRESS is tried again at once; other retriable
    // failures after retry.backoff.ms (a new member's first JoinGroup is always answered
    // MEMBER_ID_REQUIRED: a backoff there delayed every consumer's start by 100 ms).
    let backoff = false
    for (let attempt = 0; this.rejoinNeeded; attempt++) {
      if (this.closed) throw new KafkaClientError('CLIENT_CLOSED', 'the consumer is closed')
      if (attempt > 0 && Date.now() >= deadline) throw new KafkaClientError('REBALANCE_IN_PROGRESS', `could not join group ${this.groupId} in time`)
      if (backoff) await sleep(this.options.retryBackoffMs)
      backoff = true
      const nodeId = await this.ensureCoordinatorReady(deadline)
      let join: JoinGroupResponse
      try {
        join = await this.sendJoinGroup(nodeId)
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        this.markCoordinatorUnknown()
        continue
      }
      if (join.errorCode !== ErrorCode.NONE) {
        this.handleJoinError(join)
        backoff = !REJOIN_AT_ONCE.has(join.errorCode)
        continue
      }
      this.memberId = join.memberId
      this.generationId = join.generationId
      this.protocolName = join.protocolName
      const assignments = join.leader === join.memberId && !join.skipAssignment ? await this.performAssignment(join) : []
      let sync
      try {
        sync = await this.client.request(
          nodeId,
          syncGroupCodec,
          {
            groupId: this.groupId,
            generationId: this.generationId,
            memberId: this.memberId,
            groupInstanceId: this.options.groupInstanceId,
            protocolType: CONSUMER_PROTOCOL_TYPE,
            protocolName: this.protocolName,
            assignments,
          },
          { timeoutMs: this.options.rebalanceTimeoutMs + 5000 },
        )
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        this.markCoordinatorUnknown()
        continue
      }
      if (sync.errorCode !== ErrorCode.NONE) {
        if (COORDINATOR_ERRORS.has(sync.errorCode)) this.markCoordinatorUnknown()
        else if (sync.errorCode === ErrorCode.FENCED_INSTANCE_ID) throw (this.fatal = KafkaClientError.fromErrorCode(sync.errorCode, `SyncGroup ${this.groupId}`))
        else if (GENERATION_ERRORS.has(sync.errorCode)) this.resetGeneration()
        else if (sync.errorCode !== ErrorCode.REBALANCE_IN_PROGRESS) throw KafkaClientError.fromErrorCode(sync.errorCode, `SyncGroup ${this.groupId}`)
        backoff = !REJOIN_AT_ONCE.has(sync.errorCode)
        continue
      }
      const assigned: TopicPartition[] = []
      this.rejoinNeeded = false
      if (sync.assignment.length > 0) {
        const subscribed = new Set(this.subscriptions.subscription)
        for (const tp of decodeAssignment(sync.assignment).value.assignedPartitions) {
          // A topic we no longer subscribe to (the subscription changed during the rebalance) is left for the next one.
          if (!subscribed.has(tp.topic)) {
            this.rejoinNeeded = true
            continue
          }
          for (const partition of tp.partitions) assigned.push({ topic: tp.topic, partition })
        }
      }
      this.subscriptions.assignFromSubscribed(assigned)
      this.startHeartbeats()
      await this.listener.onAssign(assigned)
      return
    }
  }

  /**
   * Gives up every partition held (Kafka's onJoinPrepare / onLeavePrepare): revoked (their
   * positions may be committed) while the generation is ours, lost when it is gone.
   */
  async dropAssignment(): Promise<void> {
    const owned = this.subscriptions.assignedPartitions.map((s) => ({ topic: s.topic, partition: s.partition }))
    if (owned.length === 0) return
    try {
      if (this.generationLost) await this.listener.onLost(owned)
      else await this.listener.onRevoke(owned)
    } finally {
      this.subscriptions.assignFromSubscribed([])
    }
  }

  private handleJoinError(join: JoinGroupResponse): void {
    const code = join.errorCode
    if (code === ErrorCode.MEMBER_ID_REQUIRED) this.memberId = join.memberId
    else if (code === ErrorCode.UNKNOWN_MEMBER_ID) this.memberId = ''
    else if (COORDINATOR_ERRORS.has(code)) this.markCoordinatorUnknown()
    else if (code === ErrorCode.ILLEGAL_GENERATION) this.resetGeneration()
    else if (code === ErrorCode.FENCED_INSTANCE_ID) throw (this.fatal = KafkaClientError.fromErrorCode(code, `JoinGroup ${this.groupId}`))
    else if (code !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS && code !== ErrorCode.REBALANCE_IN_PROGRESS) throw KafkaClientError.fromErrorCode(code, `JoinGroup ${this.groupId}`)
  }

  private sendJoinGroup(nodeId: number): Promise<JoinGroupResponse> {
    const subscription = encodeSubscription({
      topics: this.subscriptions.subscription,
      userData: null,
      ownedPartitions: [],
      generationId: this.generationId,
      rackId: this.options.rackId,
    })
    return this.client.request(
      nodeId,
      joinGroupCodec,
      {
        groupId: this.groupId,
        sessionTimeoutMs: this.options.sessionTimeoutMs,
        rebalanceTimeoutMs: this.options.rebalanceTimeoutMs,
        memberId: this.memberId,
        groupInstanceId: this.options.groupInstanceId,
        protocolType: CONSUMER_PROTOCOL_TYPE,
        protocols: this.options.assignors.map((a) => ({ name: a.name, metadata: subscription })),
        reason: null,
      },
      { timeoutMs: this.options.rebalanceTimeoutMs + 5000 },
    )
  }

  /** The leader's part: the chosen assignor over every member's subscription. */
  private async performAssignment(join: JoinGroupResponse): Promise<Array<{ memberId: string; assignment: Buffer }>> {
    const assignor = this.options.assignors.find((a) => a.name === join.protocolName)
    if (!assignor) throw new KafkaClientError('INCONSISTENT_GROUP_PROTOCOL', `the group chose assignor ${join.protocolName}, which this consumer does not have`)
    const members: MemberSubscription[] = []
    let version = 3
    for (const m of join.members) {
      const sub = decodeSubscription(m.metadata)
      version = Math.min(version, sub.version)
      members.push({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, topics: sub.value.topics, rackId: sub.value.rackId })
    }
    const topics = [...new Set(members.flatMap((m) => m.topics))]
    const md = topics.length > 0 ? await this.metadataClient.refreshMetadata(topics) : this.metadataClient.metadata
    const { partitionsPerTopic, partitionRacks } = partitionsFromMetadata(md, topics)
    const assignment = assignor.assign(partitionsPerTopic, members, partitionRacks)
    return members.map((m) => ({
      memberId: m.memberId,
      assignment: encodeAssignment(
        { assignedPartitions: [...(assignment.get(m.memberId) ?? new Map<string, number[]>())].map(([topic, partitions]) => ({ topic, partitions })), userData: null },
        version,
      ),
    }))
  }

  private startHeartbeats(): void {
    this.stopHeartbeats()
    const heartbeats = ++this.heartbeats
    const beat = async () => {
      this.heartbeatTimer = null
      if (this.closed || this.generationLost || heartbeats !== this.heartbeats) return
      if (this.coordinatorId === null) {
        // Kafka's heartbeat thread looks the coordinator up again and the member keeps its
        // generation: a coordinator that loaded the group (a restart, a failover) answers it.
        try {
          await this.ensureCoordinatorReady(Date.now() + this.options.heartbeatIntervalMs)
        } catch {
          // Not found yet: the next beat looks again.
        }
        if (this.closed || this.generationLost || heartbeats !== this.heartbeats) return
        if (this.coordinatorId === null) {
          this.heartbeatTimer = setTimeout(() => void beat(), this.options.heartbeatIntervalMs)
          return
        }
      }
      const coordinatorId = this.coordinatorId
      if (Date.now() - this.lastPollAt > this.options.maxPollIntervalMs) {
        // The application has not come back for records: leave, so that the others take over now.
        await this.maybeLeaveGroup('consumer poll timeout has expired.')
        this.listener.onRejoinNeeded()
        return
      }
      const generation = this.generationId
      const wasRejoinNeeded = this.rejoinNeeded
      try {
        const res = await this.client.request(coordinatorId, heartbeatCodec, {
          groupId: this.groupId,
          generationId: generation,
          memberId: this.memberId,
          groupInstanceId: this.options.groupInstanceId,
        })
        if (generation !== this.generationId || heartbeats !== this.heartbeats) return
        if (res.errorCode === ErrorCode.REBALANCE_IN_PROGRESS) this.rejoinNeeded = true
        else if (res.errorCode === ErrorCode.FENCED_INSTANCE_ID) this.fatal = KafkaClientError.fromErrorCode(res.errorCode, `Heartbeat ${this.groupId}`)
        else if (GENERATION_ERRORS.has(res.errorCode)) this.resetGeneration()
        else if (COORDINATOR_ERRORS.has(res.errorCode)) this.markCoordinatorUnknown()
        else if (res.errorCode !== ErrorCode.NONE) this.fatal = KafkaClientError.fromErrorCode(res.errorCode, `Heartbeat ${this.groupId}`)
      } catch {
        // A lost connection: the next beat finds the coordinator again.
        this.markCoordinatorUnknown()
      }
      if (this.fatal || this.generationLost) {
        this.listener.onRejoinNeeded()
        return
      }
      // A rebalance: the next poll rejoins; heartbeats go on until it does.
      if (this.rejoinNeeded && !wasRejoinNeeded) this.listener.onRejoinNeeded()
      if (!this.closed && this.heartbeatTimer === null && heartbeats === this.heartbeats) this.heartbeatTimer = setTimeout(() => void beat(), this.options.heartbeatIntervalMs)
    }
    this.heartbeatTimer = setTimeout(() => void beat(), this.options.heartbeatIntervalMs)
  }

  private stopHeartbeats(): void {
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer)
    this.heartbeatTimer = null
    this.heartbeats++
  }

  /** The group's committed offsets of `partitions` (those without one are left out). */
  async fetchCommittedOffsets(partitions: TopicPartition[], deadline: number): Promise<Map<string, bigint>> {
    const byTopic = new Map<string, number[]>()
    for (const tp of partitions) {
      let list = byTopic.get(tp.topic)
      if (!list) byTopic.set(tp.topic, (list = []))
      list.push(tp.partition)
    }
    const topics = [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes }))
    for (;;) {
      const nodeId = await this.ensureCoordinatorReady(deadline)
      let retry = false
      try {
        const res = await this.client.request(nodeId, offsetFetchCodec, (v) =>
          v >= 8
            ? {
                groupId: '',
                topics: [],
                groups: [{ groupId: this.groupId, memberId: null, memberEpoch: -1, topics: topics.map((t) => ({ ...t, topicId: ZERO_UUID })) }],
                requireStable: this.options.requireStable,
              }
            : { groupId: this.groupId, topics, groups: [], requireStable: this.options.requireStable },
        )
        const errorCode = res.groups.length > 0 ? res.groups[0]!.errorCode : res.errorCode
        const resTopics: OffsetFetchResponseTopic[] = res.groups.length > 0 ? res.groups[0]!.topics : res.topics
        if (COORDINATOR_ERRORS.has(errorCode)) {
          this.markCoordinatorUnknown()
          retry = true
        } else if (errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) retry = true
        else if (errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(errorCode, `OffsetFetch ${this.groupId}`)
        const out = new Map<string, bigint>()
        for (const t of resTopics) {
          for (const p of t.partitions) {
            if (p.errorCode === ErrorCode.UNSTABLE_OFFSET_COMMIT) retry = true
            else if (p.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(p.errorCode, `OffsetFetch ${this.groupId} ${t.name}-${p.partitionIndex}`)
            else if (p.committedOffset >= 0n) out.set(tpKey(t.name, p.partitionIndex), p.committedOffset)
          }
        }
        if (!retry) return out
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        this.markCoordinatorUnknown()
      }
      if (Date.now() >= deadline) throw new KafkaClientError('REQUEST_TIMED_OUT', `OffsetFetch ${this.groupId} did not complete in time`)
      await sleep(this.options.retryBackoffMs)
    }
  }

  /** OffsetCommit of `offsets` (tpKey -> offset) with the current generation. */
  async commitOffsets(offsets: Map<string, { topic: string; partition: number } & OffsetAndMetadata>, deadline: number): Promise<void> {
    if (offsets.size === 0) return
    const byTopic = new Map<string, Array<{ partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }>>()
    for (const o of offsets.values()) {
      let list = byTopic.get(o.topic)
      if (!list) byTopic.set(o.topic, (list = []))
      list.push({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: -1, committedMetadata: o.metadata ?? '' })
    }
    for (;;) {
      this.throwIfFatal()
      if (this.subscriptions.subscribed && this.generationLost) {
        throw new CommitFailedError(
          'ILLEGAL_GENERATION',
          `OffsetCommit ${this.groupId}: the consumer is not part of an active group (it left or was dropped, e.g. after max.poll.interval.ms); poll() rejoins`,
        )
      }
      const nodeId = await this.ensureCoordinatorReady(deadline)
      let retry = false
      try {
        const res = await this.client.request(nodeId, offsetCommitCodec, {
          groupId: this.groupId,
          generationIdOrMemberEpoch: this.subscriptions.subscribed ? this.generationId : -1,
          memberId: this.subscriptions.subscribed ? this.memberId : '',
          groupInstanceId: this.subscriptions.subscribed ? this.options.groupInstanceId : null,
          retentionTimeMs: -1n,
          topics: [...byTopic].map(([name, partitions]) => ({ name, topicId: ZERO_UUID, partitions })),
        })
        for (const t of res.topics) {
          for (const p of t.partitions) {
            const code = p.errorCode
            if (code === ErrorCode.NONE) continue
            if (COORDINATOR_ERRORS.has(code)) {
              this.markCoordinatorUnknown()
              retry = true
            } else if (code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || code === ErrorCode.REQUEST_TIMED_OUT) retry = true
            else if (code === ErrorCode.FENCED_INSTANCE_ID) throw (this.fatal = KafkaClientError.fromErrorCode(code, `OffsetCommit ${this.groupId}`))
            else if (GENERATION_ERRORS.has(code) || code === ErrorCode.REBALANCE_IN_PROGRESS) {
              if (code === ErrorCode.REBALANCE_IN_PROGRESS) this.rejoinNeeded = true
              else this.resetGeneration()
              throw CommitFailedError.fromErrorCode(code, `OffsetCommit ${this.groupId} ${t.name}-${p.partitionIndex}`)
            } else throw KafkaClientError.fromErrorCode(code, `OffsetCommit ${this.groupId} ${t.name}-${p.partitionIndex}`)
          }
        }
        if (!retry) return
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        this.markCoordinatorUnknown()
      }
      if (Date.now() >= deadline) throw new KafkaClientError('REQUEST_TIMED_OUT', `OffsetCommit ${this.groupId} did not complete in time`)
      await sleep(this.options.retryBackoffMs)
    }
  }

  /**
   * Leaves the group (Kafka's maybeLeaveGroup): a dynamic member in a generation sends LeaveGroup
   * with `reason` (once; a failure is left to the session timeout); a static one lets its session
   * run. Either forgets its generation and member id, and its next poll rejoins.
   */
  async maybeLeaveGroup(reason: string): Promise<void> {
    this.stopHeartbeats()
    const memberId = this.memberId
    const coordinatorId = this.coordinatorId
    const leave = this.options.groupInstanceId === null && !this.generationLost && memberId !== '' && coordinatorId !== null
    this.generationId = -1
    this.memberId = ''
    this.rejoinNeeded = true
    if (!leave) return
    try {
      await this.client.request(
        coordinatorId,
        leaveGroupCodec,
        (v) => ({
          groupId: this.groupId,
          memberId: v <= 2 ? memberId : '',
          members: v >= 3 ? [{ memberId, groupInstanceId: null, reason }] : [],
        }),
        { timeoutMs: 5000 },
      )
    } catch {
      // The session times out on its own.
    }
  }

  /**
   * Gives the partitions up (onPartitionsRevoked, or onPartitionsLost without a generation: Kafka's
   * onLeavePrepare at close) and leaves the group (a dynamic member sends LeaveGroup; a static one
   * lets its session run).
   */
  async close(): Promise<void> {
    this.closed = true
    this.stopHeartbeats()
    try {
      await this.dropAssignment()
    } finally {
      await this.maybeLeaveGroup('the consumer is being closed')
    }
  }
}
