/**
 * Kafka's CommitRequestManager, for a member of a KIP-848 consumer group (group.protocol=consumer):
 * OffsetCommit and OffsetFetch carry the member id and member epoch (OffsetCommit's
 * generationIdOrMemberEpoch, v9's memberId/memberEpoch in OffsetFetch) while the member is in the
 * group, and -1 / none once it is out of it (the coordinator then takes the commit only while the
 * group has no members, as a "simple" consumer's).
 *
 * Errors, as Java's:
 * - NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE (and a lost connection): the coordinator is found
 *   again and the request retried; COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT and
 *   UNSTABLE_OFFSET_COMMIT (OffsetFetch, requireStable) are retried, every retry.backoff.ms until
 *   the deadline.
 * - STALE_MEMBER_EPOCH: the member's epoch moved on between the request and its answer (a
 *   heartbeat brought a new one). The commit before a revocation and OffsetFetch retry with the
 *   epoch known now, while the member has one; an application's commit fails with
 *   CommitFailedError STALE_MEMBER_EPOCH (Java's CommitFailedException).
 * - UNKNOWN_MEMBER_ID: the member is out of the group (CommitFailedError).
 */
import { ZERO_UUID } from '../protocol/apis/common.js'
import { offsetCommitCodec } from '../protocol/apis/offset-commit.js'
import { offsetFetchCodec, type OffsetFetchResponseTopic } from '../protocol/apis/offset-fetch.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { CoordinatorRequestManager } from './coordinator-request-manager.js'
import { CommitFailedError, KafkaClientError } from './errors.js'
import { tpKey, type TopicPartition } from './fetch-session-handler.js'
import type { NetworkClient } from './network-client.js'

export interface OffsetToCommit extends TopicPartition {
  offset: bigint
  metadata?: string | null
}

/** The member id and epoch to send (Kafka's MemberInfo): null when the member is not in the group. */
export interface MemberInfo {
  memberId: string
  memberEpoch: number
}

const COORDINATOR_ERRORS = new Set<number>([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR])
const RETRIABLE_COMMIT = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.REQUEST_TIMED_OUT])

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export class CommitRequestManager {
  constructor(
    private readonly client: NetworkClient,
    private readonly coordinators: CoordinatorRequestManager,
    private readonly memberInfo: () => MemberInfo | null,
    private readonly options: { groupInstanceId: string | null; retryBackoffMs: number; requireStable: boolean },
  ) {}

  private get groupId(): string {
    return this.coordinators.groupId
  }

  /**
   * OffsetCommit of `offsets` with the member's id and epoch. `retryStaleEpoch`: a
   * STALE_MEMBER_EPOCH is retried with the newer epoch (the commit before a revocation).
   */
  async commit(offsets: Iterable<OffsetToCommit>, deadline: number, retryStaleEpoch = false): Promise<void> {
    const byTopic = new Map<string, Array<{ partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }>>()
    for (const o of offsets) {
      let list = byTopic.get(o.topic)
      if (!list) byTopic.set(o.topic, (list = []))
      list.push({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: -1, committedMetadata: o.metadata ?? '' })
    }
    if (byTopic.size === 0) return
    for (;;) {
      const nodeId = await this.coordinators.ensureCoordinatorReady(deadline)
      const member = this.memberInfo()
      let retry = false
      try {
        const res = await this.client.request(nodeId, offsetCommitCodec, {
          groupId: this.groupId,
          generationIdOrMemberEpoch: member?.memberEpoch ?? -1,
          memberId: member?.memberId ?? '',
          groupInstanceId: this.options.groupInstanceId,
          retentionTimeMs: -1n,
          topics: [...byTopic].map(([name, partitions]) => ({ name, topicId: ZERO_UUID, partitions })),
        })
        for (const t of res.topics) {
          for (const p of t.partitions) {
            const code = p.errorCode
            const what = `OffsetCommit ${this.groupId} ${t.name}-${p.partitionIndex}`
            if (code === ErrorCode.NONE) continue
            if (COORDINATOR_ERRORS.has(code)) {
              this.coordinators.markCoordinatorUnknown()
              retry = true
            } else if (RETRIABLE_COMMIT.has(code)) retry = true
            else if (code === ErrorCode.STALE_MEMBER_EPOCH && retryStaleEpoch && this.memberInfo() !== null) retry = true
            else if (code === ErrorCode.STALE_MEMBER_EPOCH || code === ErrorCode.UNKNOWN_MEMBER_ID) throw CommitFailedError.fromErrorCode(code, what)
            else throw KafkaClientError.fromErrorCode(code, what)
          }
        }
        if (!retry) return
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        this.coordinators.markCoordinatorUnknown()
      }
      if (Date.now() >= deadline) throw new KafkaClientError('REQUEST_TIMED_OUT', `OffsetCommit ${this.groupId} did not complete in time`)
      await sleep(this.options.retryBackoffMs)
    }
  }

  /** The group's committed offsets of `partitions` (tpKey -> offset; those without one left out). */
  async fetchCommittedOffsets(partitions: TopicPartition[], deadline: number): Promise<Map<string, bigint>> {
    const byTopic = new Map<string, number[]>()
    for (const tp of partitions) {
      let list = byTopic.get(tp.topic)
      if (!list) byTopic.set(tp.topic, (list = []))
      list.push(tp.partition)
    }
    const topics = [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes }))
    for (;;) {
      const nodeId = await this.coordinators.ensureCoordinatorReady(deadline)
      const member = this.memberInfo()
      let retry = false
      try {
        const res = await this.client.request(nodeId, offsetFetchCodec, (v) =>
          v >= 8
            ? {
                groupId: '',
                topics: [],
                groups: [{ groupId: this.groupId, memberId: member?.memberId ?? null, memberEpoch: member?.memberEpoch ?? -1, topics: topics.map((t) => ({ ...t, topicId: ZERO_UUID })) }],
                requireStable: this.options.requireStable,
              }
            : { groupId: this.groupId, topics, groups: [], requireStable: this.options.requireStable },
        )
        const errorCode = res.groups.length > 0 ? res.groups[0]!.errorCode : res.errorCode
        const resTopics: OffsetFetchResponseTopic[] = res.groups.length > 0 ? res.groups[0]!.topics : res.topics
        if (COORDINATOR_ERRORS.has(errorCode)) {
          this.coordinators.markCoordinatorUnknown()
          retry = true
        } else if (errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) retry = true
        else if (errorCode === ErrorCode.STALE_MEMBER_EPOCH && this.memberInfo() !== null) retry = true
        else if (errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(errorCode, `OffsetFetch ${this.groupId}`)
        const out = new Map<string, bigint>()
        for (const t of retry ? [] : resTopics) {
          for (const p of t.partitions) {
            if (p.errorCode === ErrorCode.UNSTABLE_OFFSET_COMMIT) retry = true
            else if (p.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(p.errorCode, `OffsetFetch ${this.groupId} ${t.name}-${p.partitionIndex}`)
            else if (p.committedOffset >= 0n) out.set(tpKey(t.name, p.partitionIndex), p.committedOffset)
          }
        }
        if (!retry) return out
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        this.coordinators.markCoordinatorUnknown()
      }
      if (Date.now() >= deadline) throw new KafkaClientError('REQUEST_TIMED_OUT', `OffsetFetch ${this.groupId} did not complete in time`)
      await sleep(this.options.retryBackoffMs)
    }
  }
}
