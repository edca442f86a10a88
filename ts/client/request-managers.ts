/**
 * Kafka's RequestManagers for group.protocol=consumer (KIP-848): the pieces of a consumer group
 * member wired together, behind the GroupMembership the Consumer speaks to (group-membership.ts):
 *
 *   CoordinatorRequestManager         coordinator-request-manager.ts   FindCoordinator
 *   ConsumerMembershipManager         consumer-membership-manager.ts   state, epoch, reconciliation
 *   ConsumerHeartbeatRequestManager   consumer-heartbeat-request-manager.ts   ConsumerGroupHeartbeat
 *   CommitRequestManager              commit-request-manager.ts        OffsetCommit / OffsetFetch
 *
 * The coordinator has a connection of its own (`client`), so that a heartbeat is never queued
 * behind a long-polling Fetch.
 */
import { CommitRequestManager } from './commit-request-manager.js'
import { ConsumerHeartbeatRequestManager } from './consumer-heartbeat-request-manager.js'
import { ConsumerMembershipManager, type MembershipOptions } from './consumer-membership-manager.js'
import { CoordinatorRequestManager } from './coordinator-request-manager.js'
import type { TopicPartition } from './fetch-session-handler.js'
import type { GroupMembership, OffsetAndMetadata, RebalanceListener } from './group-membership.js'
import { MemberState } from './member-state.js'
import type { NetworkClient } from './network-client.js'
import type { SubscriptionState } from './subscription-state.js'
import type { ConsumerGroupMetadata } from './consumer-group-metadata.js'

export interface RequestManagersOptions extends MembershipOptions {
  maxPollIntervalMs: number
  retryBackoffMs: number
  retryBackoffMaxMs: number
  requireStable: boolean
  /** The longest a close waits for the leave heartbeat's answer. */
  closeTimeoutMs: number
}

export class RequestManagers implements GroupMembership {
  readonly coordinatorRequestManager: CoordinatorRequestManager
  readonly membershipManager: ConsumerMembershipManager
  readonly heartbeatRequestManager: ConsumerHeartbeatRequestManager
  readonly commitRequestManager: CommitRequestManager
  private readonly closeTimeoutMs: number

  constructor(
    /** The coordinator's own connection. */
    client: NetworkClient,
    /** The consumer's main client (its Metadata names topic ids). */
    metadataClient: NetworkClient,
    subscriptions: SubscriptionState,
    listener: RebalanceListener,
    options: RequestManagersOptions,
  ) {
    this.closeTimeoutMs = options.closeTimeoutMs
    this.coordinatorRequestManager = new CoordinatorRequestManager(client, options.groupId, options.retryBackoffMs)
    this.membershipManager = new ConsumerMembershipManager(options, subscriptions, metadataClient, listener)
    this.heartbeatRequestManager = new ConsumerHeartbeatRequestManager(client, this.coordinatorRequestManager, subscriptions, this.membershipManager, options)
    const m = this.membershipManager
    this.commitRequestManager = new CommitRequestManager(client, this.coordinatorRequestManager, () => (m.memberEpoch > 0 ? { memberId: m.memberId, memberEpoch: m.memberEpoch } : null), {
      groupInstanceId: options.groupInstanceId,
      retryBackoffMs: options.retryBackoffMs,
      requireStable: options.requireStable,
    })
  }

  get groupId(): string {
    return this.membershipManager.groupId
  }

  get needsRejoin(): boolean {
    const m = this.membershipManager
    return m.pollNeeded || m.state === MemberState.JOINING || m.state === MemberState.FATAL
  }

  get generationLost(): boolean {
    return this.membershipManager.memberEpoch <= 0
  }

  /** The member epoch is the generation (Kafka's AsyncKafkaConsumer.groupMetadata). */
  groupMetadata(): ConsumerGroupMetadata {
    const m = this.membershipManager
    return { groupId: m.groupId, generationId: m.memberEpoch, memberId: m.memberId, groupInstanceId: m.options.groupInstanceId }
  }

  requestRejoin(): void {
    this.membershipManager.onSubscriptionUpdated()
  }

  async poll(): Promise<void> {
    this.heartbeatRequestManager.resetPollTimer()
    await this.membershipManager.poll()
    if (!this.membershipManager.shouldSkipHeartbeat) this.heartbeatRequestManager.wakeup()
  }

  async maybeLeaveGroup(): Promise<void> {
    await this.leave()
  }

  /** Leaves (callbacks, then the leave heartbeat), waiting at most closeTimeoutMs for its answer. */
  private async leave(): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.closeTimeoutMs)))
    try {
      await Promise.race([this.membershipManager.leaveGroup(), timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  fetchCommittedOffsets(partitions: TopicPartition[], deadline: number): Promise<Map<string, bigint>> {
    return this.commitRequestManager.fetchCommittedOffsets(partitions, deadline)
  }

  commitOffsets(offsets: Map<string, TopicPartition & OffsetAndMetadata>, deadline: number, beforeRevocation = false): Promise<void> {
    return this.commitRequestManager.commit(offsets.values(), deadline, beforeRevocation)
  }

  async close(): Promise<void> {
    try {
      await this.leave()
    } finally {
      this.heartbeatRequestManager.close()
    }
  }
}
