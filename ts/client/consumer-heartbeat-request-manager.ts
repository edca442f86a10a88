/**
 * Kafka's ConsumerHeartbeatRequestManager (with AbstractHeartbeatRequestManager): sends a KIP-848
 * member's ConsumerGroupHeartbeat (consumer-membership-manager.ts decides what it means).
 *
 * - When: every heartbeat interval, the one the coordinator gave in its last answer
 *   (group.consumer.heartbeat.interval.ms; 0 before the first, so the join goes out at once), and
 *   at once when the member is JOINING, ACKNOWLEDGING or LEAVING. One heartbeat in flight at a
 *   time, except a leave. After a failure, the next waits retry.backoff.ms doubling up to
 *   retry.backoff.max.ms (1 s), with jitter, as Java's RequestState.
 * - What (Kafka's HeartbeatState and its SentFields): group id, member id, member epoch and the
 *   group.instance.id every time; the rest in full when JOINING and after any error, else only
 *   what changed since the last heartbeat sent (null otherwise): rebalance timeout
 *   (max.poll.interval.ms), the subscribed topic names and SubscriptionPattern, group.remote.assignor, the owned
 *   partitions by topic id (the acknowledgement of a reconciliation), client.rack on joining.
 * - Errors: NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE and lost connections find the coordinator
 *   again; COORDINATOR_LOAD_IN_PROGRESS retries after the backoff; FENCED_MEMBER_EPOCH and
 *   UNKNOWN_MEMBER_ID fence the member (its partitions are lost, it rejoins with epoch 0);
 *   everything else is fatal (FENCED_INSTANCE_ID, UNRELEASED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED,
 *   UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION, INVALID_REQUEST, GROUP_AUTHORIZATION_FAILED, and UNSUPPORTED_VERSION:
 *   the cluster does not speak the consumer group protocol) and thrown by the next poll.
 * - max.poll.interval.ms: when the application has not polled for that long, the member leaves
 *   with a heartbeat whose answer is not waited for, and is STALE until it polls again.
 */
import { consumerGroupHeartbeatCodec, type ConsumerGroupHeartbeatRequest, type ConsumerGroupHeartbeatResponse } from '../protocol/apis/consumer-group-heartbeat.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { CoordinatorRequestManager } from './coordinator-request-manager.js'
import { KafkaClientError } from './errors.js'
import { ExponentialBackoff } from './exponential-backoff.js'
import { type ConsumerMembershipManager, LocalAssignment } from './consumer-membership-manager.js'
import { MemberState } from './member-state.js'
import type { NetworkClient } from './network-client.js'
import type { SubscriptionState } from './subscription-state.js'

export interface HeartbeatOptions {
  /** max.poll.interval.ms. */
  maxPollIntervalMs: number
  retryBackoffMs: number
  /** retry.backoff.max.ms (1000). */
  retryBackoffMaxMs: number
}

/** What the last heartbeat sent, to send only what changed (Kafka's SentFields). */
class SentFields {
  rebalanceTimeoutMs = -1
  subscribedTopicNames: string | null = null
  subscribedTopicRegex: string | null = null
  serverAssignor: string | null = null
  localAssignment: LocalAssignment | null = null

  reset(): void {
    this.rebalanceTimeoutMs = -1
    this.subscribedTopicNames = null
    this.subscribedTopicRegex = null
    this.serverAssignor = null
    this.localAssignment = null
  }
}

/** Kafka's HeartbeatState: the next request, full or incremental. */
export class HeartbeatState {
  private readonly sent = new SentFields()

  constructor(
    private readonly subscriptions: SubscriptionState,
    private readonly membership: ConsumerMembershipManager,
  ) {}

  reset(): void {
    this.sent.reset()
  }

  buildRequestData(): ConsumerGroupHeartbeatRequest {
    const m = this.membership
    const sendAll = m.state === MemberState.JOINING
    const request: ConsumerGroupHeartbeatRequest = {
      groupId: m.groupId,
      memberId: m.memberId,
      memberEpoch: m.memberEpoch,
      instanceId: m.options.groupInstanceId,
      rackId: sendAll ? m.options.rackId : null,
      rebalanceTimeoutMs: -1,
      subscribedTopicNames: null,
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: null,
    }
    const rebalanceTimeoutMs = m.options.rebalanceTimeoutMs
    if (sendAll || this.sent.rebalanceTimeoutMs !== rebalanceTimeoutMs) {
      request.rebalanceTimeoutMs = rebalanceTimeoutMs
      this.sent.rebalanceTimeoutMs = rebalanceTimeoutMs
    }
    const topics = this.subscriptions.subscription
    const topicsKey = topics.join('\u0000')
    if (sendAll || this.sent.subscribedTopicNames !== topicsKey) {
      request.subscribedTopicNames = topics
      this.sent.subscribedTopicNames = topicsKey
    }
    // A SubscriptionPattern when it changed; '' once after it is dropped (the coordinator then forgets it).
    const regex = this.subscriptions.subscribedBrokerPattern?.pattern ?? null
    if (regex !== null && (sendAll || this.sent.subscribedTopicRegex !== regex)) request.subscribedTopicRegex = regex
    else if (regex === null && this.sent.subscribedTopicRegex !== null) request.subscribedTopicRegex = ''
    this.sent.subscribedTopicRegex = regex
    const assignor = m.options.serverAssignor
    if (assignor !== null && (sendAll || this.sent.serverAssignor !== assignor)) {
      request.serverAssignor = assignor
      this.sent.serverAssignor = assignor
    }
    const local = m.currentAssignment
    if (sendAll || this.sent.localAssignment === null || !local.equals(this.sent.localAssignment)) {
      request.topicPartitions = [...local.partitions].map(([id, partitions]) => ({ topicId: Buffer.from(id, 'hex'), partitions: [...partitions] }))
      this.sent.localAssignment = local
    }
    return request
  }
}

/** Errors after which Java finds the coordinator again, with no backoff. */
const COORDINATOR_ERRORS = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE])

export class ConsumerHeartbeatRequestManager {
  /** The interval the coordinator gave; 0 until it answered. */
  heartbeatIntervalMs = 0
  readonly heartbeatState: HeartbeatState
  private timer: NodeJS.Timeout | null = null
  private inFlight = false
  private failedAttempts = 0
  /** No heartbeat before this time (the interval, or the backoff after a failure). */
  private nextHeartbeatAt = 0
  private lastPollAt = Date.now()
  private closed = false
  private readonly backoff: ExponentialBackoff

  constructor(
    private readonly client: NetworkClient,
    private readonly coordinators: CoordinatorRequestManager,
    subscriptions: SubscriptionState,
    private readonly membership: ConsumerMembershipManager,
    private readonly options: HeartbeatOptions,
  ) {
    this.heartbeatState = new HeartbeatState(subscriptions, membership)
    this.backoff = new ExponentialBackoff(options.retryBackoffMs, options.retryBackoffMaxMs)
    membership.heartbeatNow = () => this.wakeup()
  }

  /** The application polled: restarts the max.poll.interval.ms timer. */
  resetPollTimer(): void {
    this.lastPollAt = Date.now()
  }

  /** Looks again at once whether a heartbeat is due (a state change). */
  wakeup(): void {
    this.schedule(0)
  }

  private schedule(delayMs: number): void {
    if (this.closed) return
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(
      () => {
        this.timer = null
        void this.tick()
      },
      Math.max(0, delayMs),
    )
  }

  private async tick(): Promise<void> {
    const m = this.membership
    if (this.closed) return
    if (m.shouldSkipHeartbeat) {
      m.onHeartbeatRequestSkipped()
      return // a state change wakes us up
    }
    if (this.coordinators.coordinator === null) {
      if (m.state === MemberState.LEAVING) {
        m.onHeartbeatRequestSkipped()
        return
      }
      try {
        await this.coordinators.ensureCoordinatorReady(Date.now() + this.options.retryBackoffMaxMs, () => this.closed)
      } catch (err) {
        if (err instanceof KafkaClientError && !err.retriable && err.code !== 'COORDINATOR_NOT_AVAILABLE' && err.code !== 'CLIENT_CLOSED') m.transitionToFatal(err)
        else this.schedule(this.options.retryBackoffMs)
        return
      }
    }
    const now = Date.now()
    if (now - this.lastPollAt > this.options.maxPollIntervalMs && !m.isLeavingGroup) {
      // The application has not come back for records: leave, so that the others take over now.
      m.transitionToSendingLeaveGroup(true)
      this.send(true)
      this.heartbeatState.reset()
      return
    }
    const heartbeatNow = m.state === MemberState.LEAVING || (m.shouldHeartbeatNow && !this.inFlight)
    if (!heartbeatNow && (this.inFlight || now < this.nextHeartbeatAt)) {
      if (!this.inFlight) this.schedule(this.nextHeartbeatAt - now)
      return
    }
    this.send(false)
  }

  /** Sends the next heartbeat; `ignoreResponse`: a leave whose answer changes nothing. */
  private send(ignoreResponse: boolean): void {
    const coordinatorId = this.coordinators.coordinator
    if (coordinatorId === null) return
    const request = this.heartbeatState.buildRequestData()
    const leaving = request.memberEpoch < 0
    this.membership.onHeartbeatRequestGenerated()
    this.nextHeartbeatAt = Date.now() + this.heartbeatIntervalMs
    if (!leaving) this.inFlight = true
    void (async () => {
      try {
        const res = await this.client.request(coordinatorId, consumerGroupHeartbeatCodec, request)
        if (!ignoreResponse) this.onResponse(res)
        else if (res.errorCode === ErrorCode.NONE || this.membership.state === MemberState.UNSUBSCRIBED) this.membership.onHeartbeatSuccess(res)
      } catch (err) {
        if (!ignoreResponse) this.onFailure(err)
        else this.membership.onHeartbeatFailure()
      } finally {
        if (!leaving) this.inFlight = false
        if (!ignoreResponse && !this.closed) this.schedule(this.membership.shouldHeartbeatNow ? 0 : this.nextHeartbeatAt - Date.now())
      }
    })()
  }

  private onFailedAttempt(): void {
    this.heartbeatState.reset()
    this.nextHeartbeatAt = Date.now() + this.backoff.backoff(this.failedAttempts++)
    this.membership.onHeartbeatFailure()
  }

  private onFailure(err: unknown): void {
    this.onFailedAttempt()
    if (err instanceof KafkaClientError && err.retriable) {
      this.coordinators.markCoordinatorUnknown()
      return
    }
    const e =
      err instanceof KafkaClientError && err.code === 'UNSUPPORTED_VERSION'
        ? new KafkaClientError(
            'UNSUPPORTED_VERSION',
            "The cluster doesn't yet support the new consumer group protocol. Set group.protocol=classic to revert to the classic protocol until the cluster is upgraded.",
          )
        : err instanceof KafkaClientError
          ? err
          : new KafkaClientError('UNKNOWN_SERVER_ERROR', `ConsumerGroupHeartbeat failed: ${(err as Error).message}`, { cause: err })
    if (e.code === 'CLIENT_CLOSED') return
    this.membership.transitionToFatal(e)
  }

  private onResponse(res: ConsumerGroupHeartbeatResponse): void {
    if (res.errorCode === ErrorCode.NONE) {
      this.heartbeatIntervalMs = res.heartbeatIntervalMs
      this.nextHeartbeatAt = Date.now() + this.heartbeatIntervalMs
      this.failedAttempts = 0
      this.membership.onHeartbeatSuccess(res)
      return
    }
    this.onFailedAttempt()
    const code = res.errorCode
    if (COORDINATOR_ERRORS.has(code)) {
      this.coordinators.markCoordinatorUnknown()
      this.failedAttempts = 0
      this.nextHeartbeatAt = 0
    } else if (code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) {
      // retried after the backoff
    } else if (code === ErrorCode.FENCED_MEMBER_EPOCH || code === ErrorCode.UNKNOWN_MEMBER_ID) {
      this.failedAttempts = 0
      this.nextHeartbeatAt = 0
      this.membership.transitionToFenced()
    } else {
      this.membership.transitionToFatal(KafkaClientError.fromErrorCode(code, `ConsumerGroupHeartbeat ${this.membership.groupId}`, res.errorMessage))
    }
  }

  /** Stops heartbeating (after the leave heartbeat, at close). */
  close(): void {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }
}
