/**
 * Kafka's ConsumerMembershipManager (with the AbstractMembershipManager it extends): a member of a
 * KIP-848 consumer group (group.protocol=consumer). The coordinator computes the assignment; the
 * member keeps its state (member-state.ts), its epoch, and reconciles the target assignment the
 * heartbeats bring (consumer-heartbeat-request-manager.ts sends them) with what it owns.
 *
 * - Member id: generated here once (a random Kafka Uuid, KIP-1082) and kept for the consumer's
 *   life, through fencing and rejoins. Epoch 0 joins, the coordinator answers the member's epoch.
 * - Target assignment: topic ids -> partitions, as the coordinator sent it, with a local epoch
 *   bumped at each change (Kafka's LocalAssignment): an assignment equal to the one owned needs
 *   no reconciliation. Topic ids are resolved to names through Metadata (v10+ topic ids), and a
 *   cache of the names of topics assigned (a topic deleted from Metadata may still be revoked).
 * - Reconciliation (`poll`, on the application's poll, as Kafka runs the callbacks there):
 *   revoked = owned - target, added = target - owned. First the revoked partitions are given up:
 *   their positions are committed (auto-commit) and onPartitionsRevoked runs (`onRevoke`); they
 *   leave the subscription. Then the new assignment takes effect and onPartitionsAssigned runs
 *   with the added partitions (Java calls it even when none were added). Then the member is
 *   ACKNOWLEDGING: the next heartbeat goes out at once with the partitions owned, which tells the
 *   coordinator that the revoked ones are free; only then does it hand them to another member,
 *   so a partition is never owned by two. A reconciliation overtaken by fencing or a rejoin stops
 *   where it is (Kafka's maybeAbortReconciliation).
 * - Fenced (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID): the partitions are lost (onPartitionsLost,
 *   no commit) at the next poll, then the member joins again with epoch 0.
 * - Leaving (close, unsubscribe): the partitions still owned are revoked (or lost when the
 *   member has no epoch), then a heartbeat with epoch -1 (-2 for a static member, whose
 *   assignment the coordinator keeps for its session: a restart with the same group.instance.id
 *   gets it back) leaves. After max.poll.interval.ms without a poll the member leaves the same way
 *   and is STALE: its partitions are lost at the next poll, which rejoins.
 */
import { randomBytes } from 'node:crypto'
import type { ConsumerGroupHeartbeatResponse } from '../protocol/apis/consumer-group-heartbeat.js'
import { KafkaClientError } from './errors.js'
import { tpKey, type TopicPartition } from './fetch-session-handler.js'
import type { RebalanceListener } from './group-membership.js'
import { canHandleNewAssignment, isValidTransition, MemberState } from './member-state.js'
import type { NetworkClient } from './network-client.js'
import type { SubscriptionState } from './subscription-state.js'

/** ConsumerGroupHeartbeatRequest's epochs. */
export const JOIN_GROUP_MEMBER_EPOCH = 0
export const LEAVE_GROUP_MEMBER_EPOCH = -1
export const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

/** A Kafka Uuid as its toString writes it: 16 random bytes in URL-safe base64 without padding. */
export function randomKafkaUuid(): string {
  return randomBytes(16).toString('base64url')
}

/** An assignment by topic id (hex) -> sorted partitions, with its local epoch (Kafka's LocalAssignment). */
export class LocalAssignment {
  static readonly NONE_EPOCH = -1
  static readonly NONE = new LocalAssignment(LocalAssignment.NONE_EPOCH, new Map())

  constructor(
    readonly localEpoch: number,
    readonly partitions: ReadonlyMap<string, readonly number[]>,
  ) {}

  get isNone(): boolean {
    return this.localEpoch === LocalAssignment.NONE_EPOCH
  }

  static samePartitions(a: ReadonlyMap<string, readonly number[]>, b: ReadonlyMap<string, readonly number[]>): boolean {
    if (a.size !== b.size) return false
    for (const [id, ps] of a) {
      const other = b.get(id)
      if (!other || other.length !== ps.length || ps.some((p, i) => p !== other[i])) return false
    }
    return true
  }

  equals(o: LocalAssignment): boolean {
    return this.localEpoch === o.localEpoch && LocalAssignment.samePartitions(this.partitions, o.partitions)
  }

  /** This assignment replaced by `assignment` with the next local epoch; null when nothing changed. */
  updateWith(assignment: ReadonlyMap<string, readonly number[]>): LocalAssignment | null {
    if (!this.isNone && LocalAssignment.samePartitions(assignment, this.partitions)) return null
    return new LocalAssignment(this.localEpoch + 1, assignment)
  }
}

export interface MembershipOptions {
  groupId: string
  groupInstanceId: string | null
  /** group.remote.assignor (null: the coordinator's default). */
  serverAssignor: string | null
  /** max.poll.interval.ms: how long the coordinator waits for a revocation. */
  rebalanceTimeoutMs: number
  rackId: string | null
}

const byTopicPartition = (a: TopicPartition, b: TopicPartition) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition)

export class ConsumerMembershipManager {
  readonly memberId = randomKafkaUuid()
  memberEpoch = JOIN_GROUP_MEMBER_EPOCH
  private memberState = MemberState.UNSUBSCRIBED
  /** The assignment reconciled last (the partitions owned), by topic id. */
  private current = LocalAssignment.NONE
  /** The assignment the coordinator sent last. */
  private target = LocalAssignment.NONE
  private readonly assignedTopicNames = new Map<string, string>()
  private reconciliationInProgress = false
  private rejoinedWhileReconciliationInProgress = false
  private subscriptionUpdated = false
  private pollTimerExpired = false
  /** The partitions to give up as lost at the next poll (FENCED, STALE). */
  private lostPending = false
  private leaveInProgress: { promise: Promise<void>; resolve: () => void } | null = null
  private fatalError: KafkaClientError | null = null
  /** Called when the next heartbeat should go out now (ACKNOWLEDGING, LEAVING, JOINING). */
  heartbeatNow: () => void = () => undefined

  constructor(
    readonly options: MembershipOptions,
    private readonly subscriptions: SubscriptionState,
    /** The consumer's main client: its Metadata names the topic ids. */
    private readonly metadataClient: NetworkClient,
    private readonly listener: RebalanceListener,
  ) {}

  get groupId(): string {
    return this.options.groupId
  }

  get state(): MemberState {
    return this.memberState
  }

  get currentAssignment(): LocalAssignment {
    return this.current
  }

  get fatal(): KafkaClientError | null {
    return this.fatalError
  }

  private transitionTo(next: MemberState): void {
    if (!isValidTransition(this.memberState, next)) throw new KafkaClientError('INVALID_REQUEST', `invalid member state transition from ${this.memberState} to ${next}`)
    this.memberState = next
    if (this.shouldHeartbeatNow) this.heartbeatNow()
  }

  /** Not a member of the group now (Kafka's isNotInGroup). */
  get isNotInGroup(): boolean {
    const s = this.memberState
    return s === MemberState.UNSUBSCRIBED || s === MemberState.FENCED || s === MemberState.FATAL || s === MemberState.STALE
  }

  get shouldHeartbeatNow(): boolean {
    const s = this.memberState
    return s === MemberState.ACKNOWLEDGING || s === MemberState.LEAVING || s === MemberState.JOINING
  }

  get shouldSkipHeartbeat(): boolean {
    const s = this.memberState
    return s === MemberState.UNSUBSCRIBED || s === MemberState.FATAL || s === MemberState.STALE || s === MemberState.FENCED
  }

  get isLeavingGroup(): boolean {
    return this.memberState === MemberState.PREPARE_LEAVING || this.memberState === MemberState.LEAVING
  }

  /** A reconciliation, a rejoin or a release of lost partitions waits for the next poll. */
  get pollNeeded(): boolean {
    const s = this.memberState
    return s === MemberState.RECONCILING || s === MemberState.FENCED || s === MemberState.STALE || (this.subscriptionUpdated && s === MemberState.UNSUBSCRIBED)
  }

  /** The subscription changed: a member out of the group joins at the next poll; one in it sends the topics with its next heartbeat. */
  onSubscriptionUpdated(): void {
    this.subscriptionUpdated = true
  }

  /** A heartbeat answered NONE. */
  onHeartbeatSuccess(res: ConsumerGroupHeartbeatResponse): void {
    const state = this.memberState
    if (state === MemberState.LEAVING) return
    if (state === MemberState.UNSUBSCRIBED && this.maybeCompleteLeaveInProgress()) return
    if (this.isNotInGroup) return
    this.memberEpoch = res.memberEpoch
    if (res.assignment === null) return
    if (!canHandleNewAssignment(state)) return
    const assignment = new Map<string, number[]>()
    for (const tp of res.assignment.topicPartitions)
      assignment.set(
        tp.topicId.toString('hex'),
        [...tp.partitions].sort((a, b) => a - b),
      )
    this.processAssignmentReceived(assignment)
  }

  /** A heartbeat failed (an error, or no answer). */
  onHeartbeatFailure(): void {
    if (this.memberState === MemberState.UNSUBSCRIBED) this.maybeCompleteLeaveInProgress()
  }

  private processAssignmentReceived(assignment: Map<string, number[]>): void {
    const updated = this.target.updateWith(assignment)
    if (updated) this.target = updated
    if (!this.targetAssignmentReconciled) {
      this.transitionTo(MemberState.RECONCILING)
      this.listener.onRejoinNeeded()
    } else if (this.memberState === MemberState.RECONCILING || this.memberState === MemberState.JOINING) {
      this.transitionTo(MemberState.STABLE)
    }
  }

  private get targetAssignmentReconciled(): boolean {
    return this.current.equals(this.target)
  }

  /** FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: the partitions are lost (at the next poll), then the member rejoins. */
  transitionToFenced(): void {
    if (this.memberState === MemberState.PREPARE_LEAVING) {
      this.transitionToSendingLeaveGroup(false)
      this.transitionTo(MemberState.UNSUBSCRIBED)
      this.maybeCompleteLeaveInProgress()
      return
    }
    if (this.memberState === MemberState.LEAVING) {
      this.transitionTo(MemberState.UNSUBSCRIBED)
      this.maybeCompleteLeaveInProgress()
      return
    }
    if (this.memberState === MemberState.UNSUBSCRIBED) return
    this.transitionTo(MemberState.FENCED)
    this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH
    this.lostPending = true
    this.listener.onRejoinNeeded()
  }

  /** An error no retry mends: heartbeats stop, the next poll throws it. */
  transitionToFatal(err: KafkaClientError): void {
    const previous = this.memberState
    this.fatalError = err
    this.transitionTo(MemberState.FATAL)
    this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH
    if (previous !== MemberState.UNSUBSCRIBED) this.lostPending = true
    this.maybeCompleteLeaveInProgress()
    this.listener.onRejoinNeeded()
  }

  transitionToJoining(): void {
    if (this.memberState === MemberState.FATAL) return
    if (this.reconciliationInProgress) this.rejoinedWhileReconciliationInProgress = true
    this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH
    this.target = LocalAssignment.NONE
    this.assignedTopicNames.clear()
    this.transitionTo(MemberState.JOINING)
  }

  /** The next heartbeat leaves the group (epoch -1, or -2 for a static member). */
  transitionToSendingLeaveGroup(dueToExpiredPollTimer: boolean): void {
    if (this.memberState === MemberState.FATAL || this.memberState === MemberState.UNSUBSCRIBED) return
    if (dueToExpiredPollTimer) {
      this.pollTimerExpired = true
      this.transitionTo(MemberState.PREPARE_LEAVING)
    }
    this.memberEpoch = this.options.groupInstanceId !== null ? LEAVE_GROUP_STATIC_MEMBER_EPOCH : LEAVE_GROUP_MEMBER_EPOCH
    this.current = LocalAssignment.NONE
    this.transitionTo(MemberState.LEAVING)
  }

  /** The heartbeat manager built a request: ACKNOWLEDGING and LEAVING end once it is sent. */
  onHeartbeatRequestGenerated(): void {
    if (this.memberState === MemberState.ACKNOWLEDGING) {
      // A newer target came while the last one was reconciled: reconcile again at the next poll.
      const next = this.targetAssignmentReconciled ? MemberState.STABLE : MemberState.RECONCILING
      this.transitionTo(next)
      if (next === MemberState.RECONCILING) this.listener.onRejoinNeeded()
    } else if (this.memberState === MemberState.LEAVING) {
      if (this.pollTimerExpired) {
        this.transitionTo(MemberState.STALE)
        this.lostPending = true
      } else {
        this.transitionTo(MemberState.UNSUBSCRIBED)
      }
    }
  }

  /** No heartbeat could go out (no coordinator): a member about to leave is out anyway. */
  onHeartbeatRequestSkipped(): void {
    if (this.memberState !== MemberState.LEAVING) return
    this.transitionTo(MemberState.UNSUBSCRIBED)
    this.maybeCompleteLeaveInProgress()
  }

  private maybeCompleteLeaveInProgress(): boolean {
    if (!this.leaveInProgress) return false
    this.leaveInProgress.resolve()
    this.leaveInProgress = null
    return true
  }

  /**
   * Leaves the group: the partitions still owned are revoked (lost without an epoch), then the
   * leave heartbeat goes out; resolves when the coordinator answered it (or it could not be sent).
   */
  async leaveGroup(): Promise<void> {
    if (this.isNotInGroup) {
      if (this.memberState === MemberState.FENCED) {
        this.clearAssignment()
        this.transitionTo(MemberState.UNSUBSCRIBED)
      }
      this.subscriptionUpdated = false
      return
    }
    if (this.leaveInProgress) return this.leaveInProgress.promise
    this.transitionTo(MemberState.PREPARE_LEAVING)
    let resolve!: () => void
    const promise = new Promise<void>((r) => (resolve = r))
    this.leaveInProgress = { promise, resolve }
    const owned = this.ownedPartitions()
    try {
      if (owned.length > 0) await (this.memberEpoch > 0 ? this.listener.onRevoke(owned) : this.listener.onLost(owned))
    } finally {
      this.subscriptionUpdated = false
      this.clearAssignment()
      if (this.memberState === MemberState.PREPARE_LEAVING) this.transitionToSendingLeaveGroup(false)
    }
    return promise
  }

  private ownedPartitions(): TopicPartition[] {
    return this.subscriptions.assignedPartitions.map((s) => ({ topic: s.topic, partition: s.partition })).sort(byTopicPartition)
  }

  private clearAssignment(): void {
    this.subscriptions.assignFromSubscribed([])
    this.current = LocalAssignment.NONE
    this.target = LocalAssignment.NONE
    this.assignedTopicNames.clear()
    this.lostPending = false
  }

  /**
   * The application's poll: throws a fatal error; joins after a subscribe; gives up lost
   * partitions (fenced, stale) and rejoins; reconciles a new target assignment.
   */
  async poll(): Promise<void> {
    if (this.lostPending) {
      const owned = this.ownedPartitions()
      try {
        if (owned.length > 0) await this.listener.onLost(owned)
      } finally {
        this.clearAssignment()
      }
      if (this.memberState === MemberState.FENCED || this.memberState === MemberState.STALE) {
        this.pollTimerExpired = false
        this.transitionToJoining()
      }
    }
    if (this.fatalError) throw this.fatalError
    if (this.subscriptionUpdated && this.memberState === MemberState.UNSUBSCRIBED) this.transitionToJoining()
    this.subscriptionUpdated = false
    if (this.memberState === MemberState.RECONCILING) await this.maybeReconcile()
  }

  /** Topic id -> name, from Metadata or the names of topics assigned (Kafka's findTopicNameInGlobalOrLocalCache). */
  private topicName(idHex: string): string | undefined {
    const name = this.metadataClient.metadata.topicById(Buffer.from(idHex, 'hex'))?.name
    if (name !== undefined) {
      this.assignedTopicNames.set(idHex, name)
      return name
    }
    return this.assignedTopicNames.get(idHex)
  }

  /** The part of the target assignment whose topic names are known; asks Metadata once for the others. */
  private async resolvableAssignment(): Promise<Map<string, readonly number[]>> {
    const unresolved = () => [...this.target.partitions.keys()].filter((id) => this.topicName(id) === undefined)
    if (unresolved().length > 0) {
      // With a pattern the names are not known here: every topic's metadata (as Kafka's ConsumerMetadata).
      const pattern = this.subscriptions.subscribedPattern ?? this.subscriptions.subscribedBrokerPattern
      await this.metadataClient.refreshMetadata(pattern ? null : this.subscriptions.subscription).catch(() => undefined)
    }
    const out = new Map<string, readonly number[]>()
    for (const [id, partitions] of this.target.partitions) if (this.topicName(id) !== undefined) out.set(id, partitions)
    return out
  }

  private maybeAbortReconciliation(): boolean {
    const abort = this.memberState !== MemberState.RECONCILING || this.rejoinedWhileReconciliationInProgress
    if (abort) this.markReconciliationCompleted()
    return abort
  }

  private markReconciliationCompleted(): void {
    this.reconciliationInProgress = false
    this.rejoinedWhileReconciliationInProgress = false
  }

  /** Revoke, then assign, then acknowledge (Kafka's maybeReconcile and revokeAndAssign). */
  async maybeReconcile(): Promise<void> {
    if (this.targetAssignmentReconciled || this.reconciliationInProgress) return
    this.reconciliationInProgress = true
    this.rejoinedWhileReconciliationInProgress = false
    try {
      const targetEpoch = this.target.localEpoch
      const resolved = await this.resolvableAssignment()
      if (this.maybeAbortReconciliation()) return
      // The target moved on while Metadata answered: the next poll takes the newer one.
      if (this.target.localEpoch !== targetEpoch) return this.markReconciliationCompleted()
      const resolvedAssignment = new LocalAssignment(targetEpoch, resolved)
      if (!this.current.isNone && LocalAssignment.samePartitions(resolved, this.current.partitions)) {
        // Topics not resolvable yet, and the rest is what we own: acknowledge that much.
        this.current = resolvedAssignment
        this.markReconciliationCompleted()
        this.transitionTo(MemberState.ACKNOWLEDGING)
        return
      }
      const assigned: TopicPartition[] = []
      for (const [id, partitions] of resolved) for (const partition of partitions) assigned.push({ topic: this.topicName(id)!, partition })
      assigned.sort(byTopicPartition)
      const assignedKeys = new Set(assigned.map((tp) => tpKey(tp.topic, tp.partition)))
      const owned = this.ownedPartitions()
      const ownedKeys = new Set(owned.map((tp) => tpKey(tp.topic, tp.partition)))
      const revoked = owned.filter((tp) => !assignedKeys.has(tpKey(tp.topic, tp.partition)))
      const added = assigned.filter((tp) => !ownedKeys.has(tpKey(tp.topic, tp.partition)))
      if (revoked.length > 0) {
        await this.listener.onRevoke(revoked)
        if (this.maybeAbortReconciliation()) return
      }
      this.subscriptions.assignFromSubscribed(assigned)
      await this.listener.onAssign(added)
      for (const id of [...this.assignedTopicNames.keys()]) if (!resolved.has(id)) this.assignedTopicNames.delete(id)
      if (this.maybeAbortReconciliation()) return
      this.current = resolvedAssignment
      this.markReconciliationCompleted()
      this.transitionTo(MemberState.ACKNOWLEDGING)
    } catch (err) {
      // A callback failed: the reconciliation is tried again at the next poll, and this one throws.
      this.markReconciliationCompleted()
      throw err
    }
  }
}
