/**
 * Kafka's ShareMembershipManager: a member of a KIP-932 share group. Simpler than a consumer
 * group member (consumer-membership-manager.ts, whose member id, epochs and states it shares):
 * partitions are shared, not owned, so there is nothing to revoke or acknowledge to the
 * coordinator. The assignment a heartbeat brings takes effect at once; the share consume request
 * manager fetches from the partitions it names.
 *
 * - Member id: a random Kafka Uuid, kept for the consumer's life. Epoch 0 joins; the coordinator
 *   answers the member's epoch, and the assignment (topic ids -> partitions) when it changed.
 * - FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: the assignment is dropped and the member joins again
 *   with epoch 0. A fatal error stops heartbeats; the next poll throws it.
 * - Leaving (close, unsubscribe): a heartbeat with epoch -1.
 */
import type { ShareGroupHeartbeatResponse } from '../protocol/apis/share-group-heartbeat.js'
import { JOIN_GROUP_MEMBER_EPOCH, LEAVE_GROUP_MEMBER_EPOCH, randomKafkaUuid } from './consumer-membership-manager.js'
import type { KafkaClientError } from './errors.js'
import { MemberState } from './member-state.js'

export class ShareMembershipManager {
  readonly memberId = randomKafkaUuid()
  memberEpoch = JOIN_GROUP_MEMBER_EPOCH
  state = MemberState.UNSUBSCRIBED
  /** Topic id (hex) -> partitions, as the coordinator sent them last. */
  assignment: ReadonlyMap<string, readonly number[]> = new Map()
  /** Bumped at each change of `assignment`. */
  assignmentVersion = 0
  fatal: KafkaClientError | null = null
  subscription: string[] = []
  /** The topic names the next heartbeat sends (null: unchanged since the last one). */
  private subscriptionToSend: string[] | null = null
  /** Called when a heartbeat should go out now (join, leave). */
  heartbeatNow: () => void = () => undefined
  /** Called when the assignment or the state changed (a poll waiting for records looks again). */
  onChange: () => void = () => undefined

  constructor(
    readonly groupId: string,
    readonly rackId: string | null,
  ) {}

  subscribe(topics: string[]): void {
    this.subscription = [...new Set(topics)].sort()
    this.subscriptionToSend = this.subscription
    if (this.state === MemberState.UNSUBSCRIBED) this.transitionToJoining()
    else this.heartbeatNow()
  }

  get isInGroup(): boolean {
    return this.state === MemberState.JOINING || this.state === MemberState.STABLE
  }

  /** The request fields the next heartbeat carries. */
  nextHeartbeat(): { memberEpoch: number; rackId: string | null; subscribedTopicNames: string[] | null } {
    const joining = this.memberEpoch === JOIN_GROUP_MEMBER_EPOCH
    const topics = joining ? this.subscription : this.subscriptionToSend
    this.subscriptionToSend = null
    return { memberEpoch: this.memberEpoch, rackId: joining ? this.rackId : null, subscribedTopicNames: topics }
  }

  onHeartbeatSuccess(res: ShareGroupHeartbeatResponse): void {
    if (!this.isInGroup) return
    this.memberEpoch = res.memberEpoch
    this.state = MemberState.STABLE
    if (res.assignment !== null) {
      this.assignment = new Map(res.assignment.topicPartitions.map((tp) => [tp.topicId.toString('hex'), [...tp.partitions].sort((a, b) => a - b)]))
      this.assignmentVersion++
    }
    this.onChange()
  }

  /** A heartbeat failed: the next one sends everything again. */
  onHeartbeatFailure(): void {
    if (this.subscription.length > 0) this.subscriptionToSend = this.subscription
  }

  private clearAssignment(): void {
    this.assignment = new Map()
    this.assignmentVersion++
  }

  transitionToJoining(): void {
    if (this.fatal) return
    this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH
    this.state = MemberState.JOINING
    this.heartbeatNow()
    this.onChange()
  }

  transitionToFenced(): void {
    if (!this.isInGroup) return
    this.clearAssignment()
    this.transitionToJoining()
  }

  transitionToFatal(err: KafkaClientError): void {
    this.fatal = err
    this.state = MemberState.FATAL
    this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH
    this.clearAssignment()
    this.onChange()
  }

  /** The fields of the leave heartbeat; the member is out of the group after it. */
  leave(): { memberEpoch: number } | null {
    const wasIn = this.isInGroup && this.memberEpoch > 0
    this.state = MemberState.UNSUBSCRIBED
    this.subscription = []
    this.clearAssignment()
    this.memberEpoch = JOIN_GROUP_MEMBER_EPOCH
    this.onChange()
    return wasIn ? { memberEpoch: LEAVE_GROUP_MEMBER_EPOCH } : null
  }
}
