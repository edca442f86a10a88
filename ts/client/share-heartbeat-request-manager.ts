/**
 * Kafka's ShareHeartbeatRequestManager: sends a share group member's ShareGroupHeartbeat
 * (share-membership-manager.ts decides what it means) to the group's coordinator
 * (coordinator-request-manager.ts finds it).
 *
 * - When: every heartbeat interval the coordinator gave (group.share.heartbeat.interval.ms), at
 *   once when the member joins; one at a time. After a failure, the next waits retry.backoff.ms
 *   doubling up to retry.backoff.max.ms, with jitter (exponential-backoff.ts), as Java.
 * - What: group id, member id, epoch every time; the rack and the subscribed topic names when
 *   joining, after a failure, or when the subscription changed (null otherwise).
 * - Errors, as the consumer group's heartbeat: NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE and
 *   lost connections find the coordinator again; COORDINATOR_LOAD_IN_PROGRESS retries after the
 *   backoff; FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID rejoin with epoch 0; anything else
 *   (GROUP_AUTHORIZATION_FAILED, GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, UNSUPPORTED_VERSION:
 *   the cluster serves no share groups, ...) is fatal and thrown by the next poll.
 */
import { shareGroupHeartbeatCodec, type ShareGroupHeartbeatResponse } from '../protocol/apis/share-group-heartbeat.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { CoordinatorRequestManager } from './coordinator-request-manager.js'
import { KafkaClientError } from './errors.js'
import { ExponentialBackoff } from './exponential-backoff.js'
import type { NetworkClient } from './network-client.js'
import type { ShareMembershipManager } from './share-membership-manager.js'

const COORDINATOR_ERRORS = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE])

export class ShareHeartbeatRequestManager {
  heartbeatIntervalMs = 0
  private timer: NodeJS.Timeout | null = null
  private inFlight = false
  private failedAttempts = 0
  private nextHeartbeatAt = 0
  private closed = false
  private readonly backoff: ExponentialBackoff

  constructor(
    private readonly client: NetworkClient,
    private readonly coordinators: CoordinatorRequestManager,
    private readonly membership: ShareMembershipManager,
    private readonly retryBackoffMs: number,
    retryBackoffMaxMs: number,
  ) {
    this.backoff = new ExponentialBackoff(retryBackoffMs, retryBackoffMaxMs)
    membership.heartbeatNow = () => {
      this.nextHeartbeatAt = 0
      this.schedule(0)
    }
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
    if (this.closed || this.inFlight || !m.isInGroup) return
    const now = Date.now()
    if (now < this.nextHeartbeatAt) return this.schedule(this.nextHeartbeatAt - now)
    this.inFlight = true
    try {
      const coordinatorId = await this.coordinators.ensureCoordinatorReady(Date.now() + this.backoff.backoff(this.failedAttempts) + this.retryBackoffMs, () => this.closed)
      if (this.closed || !m.isInGroup) return
      const fields = m.nextHeartbeat()
      this.nextHeartbeatAt = Date.now() + this.heartbeatIntervalMs
      const res = await this.client.request(coordinatorId, shareGroupHeartbeatCodec, { groupId: m.groupId, memberId: m.memberId, ...fields })
      this.onResponse(res)
    } catch (err) {
      this.onFailure(err)
    } finally {
      this.inFlight = false
      this.schedule(this.nextHeartbeatAt - Date.now())
    }
  }

  private onFailedAttempt(): void {
    this.nextHeartbeatAt = Date.now() + this.backoff.backoff(this.failedAttempts++)
    this.membership.onHeartbeatFailure()
  }

  private onFailure(err: unknown): void {
    if (this.closed) return
    this.onFailedAttempt()
    if (err instanceof KafkaClientError && (err.retriable || err.code === 'COORDINATOR_NOT_AVAILABLE')) {
      this.coordinators.markCoordinatorUnknown()
      return
    }
    if (err instanceof KafkaClientError && err.code === 'CLIENT_CLOSED') return
    this.membership.transitionToFatal(err instanceof KafkaClientError ? err : new KafkaClientError('UNKNOWN_SERVER_ERROR', `ShareGroupHeartbeat failed: ${(err as Error).message}`, { cause: err }))
  }

  private onResponse(res: ShareGroupHeartbeatResponse): void {
    const code = res.errorCode
    if (code === ErrorCode.NONE) {
      this.heartbeatIntervalMs = res.heartbeatIntervalMs
      this.nextHeartbeatAt = Date.now() + this.heartbeatIntervalMs
      this.failedAttempts = 0
      this.membership.onHeartbeatSuccess(res)
      return
    }
    this.onFailedAttempt()
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
      this.membership.transitionToFatal(KafkaClientError.fromErrorCode(code, `ShareGroupHeartbeat ${this.membership.groupId}`, res.errorMessage))
    }
  }

  /** Leaves the group (epoch -1) when in it, waiting for the answer (or its failure). */
  async leave(): Promise<void> {
    const m = this.membership
    const coordinatorId = this.coordinators.coordinator
    const leave = m.leave()
    if (!leave || coordinatorId === null) return
    await this.client
      .request(coordinatorId, shareGroupHeartbeatCodec, { groupId: m.groupId, memberId: m.memberId, memberEpoch: leave.memberEpoch, rackId: null, subscribedTopicNames: null })
      .catch(() => undefined)
  }

  /** Stops heartbeating. */
  close(): void {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }
}
