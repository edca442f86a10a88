/**
 * Kafka's `DelayedFetch`: a fetch that found fewer than minBytes and waits, at most maxWaitMs,
 * parked in the replica manager's fetch purgatory under every topic-partition it reads.
 *
 * Each partition keeps the offset metadata of its first read (`fetchOffsetMetadata`: offset,
 * segment base offset, position in that segment). `tryComplete` runs on every wake-up of one of
 * its keys (an append, a high watermark or log start offset change) and compares it with the end
 * the fetch may read to, per isolation: the log end offset for a follower, the high watermark for
 * READ_UNCOMMITTED, the last stable offset for READ_COMMITTED. The end's position comes from a
 * zero-byte read at the end offset (a read at its bound answers the bound's metadata), made only
 * when the end is not the fetch offset: a fetch over many partitions is woken by an append to
 * any of them, and the others, with nothing new, then cost no read.
 *
 * It completes when, for any partition (Kafka's cases in `DelayedFetch.tryComplete`):
 *
 * - A-D: the log is gone (unknown partition, deleted topic) or erred (storage error, closed),
 *   the fetch's currentLeaderEpoch is no longer the leader's (fenced), or this broker stopped
 *   leading a partition that the fetch may read only from the leader (became a follower);
 * - I: the fetcher sent a lastFetchedEpoch and its log now diverges from ours;
 * - the fetch offset left the log: below the log start offset (DeleteRecords, retention) or past
 *   the log end offset (the log was truncated below it); the re-read answers the error;
 * - F: the end is on an older segment than the fetch offset (truncation), or the fetch offset is
 *   on an older segment than the end (a roll, or a fetch that fell behind): positions of two
 *   segments cannot be subtracted, so the re-read decides;
 *
 * and, over all partitions (case G), when the bytes between each fetch offset and its end (the
 * position difference in one segment, at most the partition's maxBytes) add up to minBytes.
 *
 * When the fetch offset and the end are the same offset, only G applies: a roll moves the end to
 * a new segment at the same offset, which is not new data (Kafka's comment on case F). A fetch
 * offset above the end but not above the log end (a consumer at an offset the HW has not reached)
 * waits rather than completing, or it would be answered empty at once, over and over.
 *
 * `onComplete` re-reads every partition through `readFromLocalLog` with the fetch's own limits (a
 * re-read from the purgatory: a follower's fetch state is not updated again) and hands the
 * result to the callback; `onExpiration` only counts (the answer is the same re-read).
 *
 * It lives beside the replica manager that parks it, as Kafka's `kafka.server.DelayedFetch` beside
 * `ReplicaManager`; ts/purgatory holds only the generic purgatory and timer, which know nothing
 * of replicas.
 */
import { fetchIsolation, type DelayedFetchParams, type FetchParams, type FetchPartitionRequest, type FetchPartitionResult, type TopicPartition } from './fetch-params.js'
import { divergingEpochOf, NO_EPOCH } from './leader-epoch.js'
import type { Partition } from './partition.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { Log } from '../storage/log.js'
import type { LogOffsetMetadata } from '../storage/types.js'
import { DelayedOperation } from '../purgatory/delayed-operation.js'
import { topicPartitionOperationKey } from '../purgatory/purgatory.js'

/** One partition of a parked fetch: what to re-read, and where its first read started. */
export interface FetchPartitionStatus {
  fetchInfo: FetchPartitionRequest
  /** From the first read's `FetchDataInfo.fetchOffsetMetadata`. */
  fetchOffsetMetadata: LogOffsetMetadata
}

export type { DelayedFetchParams }

/** What a delayed fetch needs of the replica manager. */
export interface FetchReader {
  getPartition(tp: TopicPartition): Pick<Partition, 'log' | 'leaderEpoch' | 'checkLeaderEpoch' | 'isLeader'> | undefined
  readFromLocalLog(params: FetchParams, partitions: readonly FetchPartitionRequest[], readFromPurgatory?: boolean): FetchPartitionResult[]
}

/** Kafka's `DelayedFetchMetrics`: expirations, split by who fetched. */
export interface DelayedFetchMetrics {
  followerExpired: number
  consumerExpired: number
}

export function newDelayedFetchMetrics(): DelayedFetchMetrics {
  return { followerExpired: 0, consumerExpired: 0 }
}

export class DelayedFetch extends DelayedOperation {
  constructor(
    readonly params: DelayedFetchParams,
    readonly fetchPartitionStatus: readonly FetchPartitionStatus[],
    private readonly reader: FetchReader,
    private readonly responseCallback: (results: FetchPartitionResult[]) => void,
    private readonly metrics: DelayedFetchMetrics = newDelayedFetchMetrics(),
  ) {
    super(params.maxWaitMs)
  }

  /** The purgatory keys to watch: one per partition read. */
  watchKeys(): string[] {
    return [...new Set(this.fetchPartitionStatus.map(({ fetchInfo: p }) => topicPartitionOperationKey(p.topic, p.partition)))]
  }

  tryComplete(): boolean {
    let accumulatedSize = 0
    for (const { fetchInfo, fetchOffsetMetadata: fetchOffset } of this.fetchPartitionStatus) {
      const partition = this.reader.getPartition(fetchInfo)
      if (partition === undefined || partition.log.isClosed) return this.forceComplete()
      const log = partition.log
      try {
        const offset = fetchOffset.messageOffset
        const leaderEpoch = partition.leaderEpoch
        if (partition.checkLeaderEpoch(fetchInfo.currentLeaderEpoch) !== ErrorCode.NONE) return this.forceComplete()
        // B: this broker no longer leads a partition the fetch may read only from its leader.
        if (!partition.isLeader && (this.params.replicaId >= 0 || this.params.clientMetadata === undefined)) return this.forceComplete()
        const logEnd = log.logEndOffset()
        if (offset < log.logStartOffset() || offset > logEnd) return this.forceComplete()
        const lastFetchedEpoch = fetchInfo.lastFetchedEpoch ?? NO_EPOCH
        if (lastFetchedEpoch !== NO_EPOCH && divergingEpochOf(log, fetchInfo.fetchOffset, lastFetchedEpoch, leaderEpoch).kind !== 'ok') return this.forceComplete()
        const end = this.endOffset(log, logEnd)
        // The same offset: only case G applies, and it adds nothing (see the module comment).
        if (offset === end) continue
        const endOffset = log.read(end, { maxBytes: 0, isolation: fetchIsolation(this.params), minOneMessage: false }).fetchOffsetMetadata
        if (offset !== endOffset.messageOffset) {
          if (onOlderSegment(endOffset, fetchOffset)) return this.forceComplete()
          if (onOlderSegment(fetchOffset, endOffset)) return this.forceComplete()
          if (offset < endOffset.messageOffset) {
            const positionDiff = endOffset.relativePositionInSegment - fetchOffset.relativePositionInSegment
            accumulatedSize += Math.max(0, Math.min(positionDiff, fetchInfo.partitionMaxBytes))
          }
        }
      } catch {
        // A storage error: the re-read answers it as the partition's error code.
        return this.forceComplete()
      }
    }
    return accumulatedSize >= this.params.minBytes ? this.forceComplete() : false
  }

  onComplete(): void {
    const results = this.reader.readFromLocalLog(
      this.params,
      this.fetchPartitionStatus.map((s) => s.fetchInfo),
      true,
    )
    this.responseCallback(results)
  }

  onExpiration(): void {
    if (this.params.replicaId >= 0) this.metrics.followerExpired++
    else this.metrics.consumerExpired++
  }

  /** The end this fetch may read to (`logEnd`: the log end offset, read already). */
  private endOffset(log: Log, logEnd: bigint): bigint {
    const isolation = fetchIsolation(this.params)
    return isolation === 'LOG_END' ? logEnd : isolation === 'HIGH_WATERMARK' ? log.highWatermark() : log.lastStableOffset()
  }
}

/** Kafka's `LogOffsetMetadata.onOlderSegment`. */
function onOlderSegment(a: LogOffsetMetadata, b: LogOffsetMetadata): boolean {
  return a.segmentBaseOffset < b.segmentBaseOffset
}
