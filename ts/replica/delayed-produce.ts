/**
 * Kafka's `DelayedProduce`: a Produce with acks=-1 (all) whose records are appended on the
 * leader and wait, at most the request's timeoutMs, for the ISR to hold them. Parked in the
 * replica manager's produce purgatory (`delayedProducePurgatory`) under every topic-partition it
 * appended to, and woken by whatever moves a partition's high watermark or changes its leadership:
 * a follower's fetch, an ISR change, an append of the partition's leader, a leadership change,
 * the deletion of the log.
 *
 * Each partition starts with its local append's answer. One that failed is done already; one that
 * succeeded waits (`acksPending`) with REQUEST_TIMED_OUT as its answer until one of Kafka's cases
 * in `DelayedProduce.tryComplete` settles it:
 *
 * - A: the partition is gone (UNKNOWN_TOPIC_OR_PARTITION: deleted), or another one holds its name
 *   now (deleted and created again) or its leader changed since the append (its leader epoch
 *   moved: this broker became a follower or was elected again; the records may be truncated):
 *   NOT_LEADER_OR_FOLLOWER;
 * - B / C: the partition's high watermark reached the required offset (the last appended
 *   offset + 1: `Partition.checkEnoughReplicasReachOffset`): NONE, or
 *   NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below min.insync.replicas meanwhile (the
 *   records are appended, and on the remaining ISR, but not as safe as asked).
 *
 * It completes when no partition is pending; at timeoutMs the pending ones answer
 * REQUEST_TIMED_OUT (their records stay appended, as in Kafka: a retry of an idempotent producer
 * is answered as a duplicate). `onExpiration` counts the partitions that expired (Kafka's
 * `DelayedProduceMetrics`).
 *
 * It lives beside the replica manager that parks it, as Kafka's `kafka.server.DelayedProduce` beside
 * `ReplicaManager`; ts/purgatory holds only the generic purgatory and timer, which know nothing
 * of replicas.
 */
import type { TopicPartition } from './fetch-params.js'
import type { Partition } from './partition.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { DelayedOperation } from '../purgatory/delayed-operation.js'
import { topicPartitionOperationKey } from '../purgatory/purgatory.js'

/** One partition of a produce waiting for acks (Kafka's `ProducePartitionStatus`). */
export interface ProducePartitionStatus extends TopicPartition {
  /** The last appended offset + 1: the high watermark it waits for. */
  readonly requiredOffset: bigint
  /** The partition the records were appended to, and its leader epoch then. */
  readonly appendedTo: ProduceAcksPartition
  readonly leaderEpoch: number
  /** Still waiting for the ISR. */
  acksPending: boolean
  /** The answer so far: the append's error, REQUEST_TIMED_OUT while pending, then the outcome. */
  errorCode: number
}

export type ProduceAcksPartition = Pick<Partition, 'leaderEpoch' | 'checkEnoughReplicasReachOffset'>

/** What a delayed produce needs of the replica manager. */
export interface ProduceAcksReader {
  getPartition(tp: TopicPartition): ProduceAcksPartition | undefined
}

/** Kafka's `DelayedProduceMetrics`: partitions whose acks did not come in time. */
export interface DelayedProduceMetrics {
  expiredPartitions: number
}

export function newDelayedProduceMetrics(): DelayedProduceMetrics {
  return { expiredPartitions: 0 }
}

/** A partition's local append as the produce waiting for acks starts from it. */
export function producePartitionStatus(tp: TopicPartition, appendedTo: ProduceAcksPartition, leaderEpoch: number, appendErrorCode: number, lastOffset: bigint): ProducePartitionStatus {
  const acksPending = appendErrorCode === ErrorCode.NONE
  return {
    topic: tp.topic,
    partition: tp.partition,
    requiredOffset: lastOffset + 1n,
    appendedTo,
    leaderEpoch,
    acksPending,
    // The timeout's answer, cleared when the acks come in.
    errorCode: acksPending ? ErrorCode.REQUEST_TIMED_OUT : appendErrorCode,
  }
}

/**
 * Kafka's cases A-C of `DelayedProduce.tryComplete` (see the module comment) for every pending
 * partition: a settled one gets its answer and stops pending. True when none is pending any more.
 * The replica manager asks this before it makes a `DelayedProduce` at all: a partition whose
 * high watermark moved with the append (an ISR of the leader alone) settles here at once.
 */
export function settleProduceStatuses(statuses: readonly ProducePartitionStatus[], reader: ProduceAcksReader): boolean {
  let pending = false
  for (const status of statuses) {
    if (!status.acksPending) continue
    const { hasEnough, errorCode } = checkStatus(status, reader)
    if (errorCode !== ErrorCode.NONE || hasEnough) {
      status.acksPending = false
      status.errorCode = errorCode
    } else {
      pending = true
    }
  }
  return !pending
}

function checkStatus(status: ProducePartitionStatus, reader: ProduceAcksReader): { hasEnough: boolean; errorCode: number } {
  const partition = reader.getPartition(status)
  if (partition === undefined) return { hasEnough: false, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION }
  if (partition !== status.appendedTo || partition.leaderEpoch !== status.leaderEpoch) return { hasEnough: false, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }
  try {
    return partition.checkEnoughReplicasReachOffset(status.requiredOffset)
  } catch {
    // A log closed under us: this broker no longer holds the records as the leader.
    return { hasEnough: false, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }
  }
}

export class DelayedProduce extends DelayedOperation {
  constructor(
    timeoutMs: number,
    readonly produceStatus: readonly ProducePartitionStatus[],
    private readonly reader: ProduceAcksReader,
    private readonly responseCallback: (statuses: readonly ProducePartitionStatus[]) => void,
    private readonly metrics: DelayedProduceMetrics = newDelayedProduceMetrics(),
  ) {
    super(Math.max(0, timeoutMs))
  }

  /** The purgatory keys to watch: one per partition appended to. */
  watchKeys(): string[] {
    return [...new Set(this.produceStatus.map((s) => topicPartitionOperationKey(s.topic, s.partition)))]
  }

  tryComplete(): boolean {
    return settleProduceStatuses(this.produceStatus, this.reader) ? this.forceComplete() : false
  }

  onComplete(): void {
    this.responseCallback(this.produceStatus)
  }

  onExpiration(): void {
    for (const status of this.produceStatus) if (status.acksPending) this.metrics.expiredPartitions++
  }
}
