/**
 * Leader epochs on the fetch path, in one place (Kafka's `Partition.getLocalLog` epoch check and
 * `Partition.validateFetchOffsetAndMaybeGetDivergingEpoch`).
 *
 * - `checkCurrentLeaderEpoch`: a request's currentLeaderEpoch (Fetch v9+, and ListOffsets and
 *   OffsetForLeaderEpoch carry the same field) against the partition's leader epoch: older ->
 *   FENCED_LEADER_EPOCH, newer -> UNKNOWN_LEADER_EPOCH, -1 -> no check.
 * - `divergingEpochOf`: a fetcher's lastFetchedEpoch (Fetch v12+) against the log's leader-epoch
 *   cache. The cache answers the largest epoch <= lastFetchedEpoch and where it ends; when that
 *   epoch is older than lastFetchedEpoch, or it ends before the fetch offset, the fetcher's log
 *   diverged from ours and it must truncate to {epoch, endOffset} before fetching on.
 *
 * Every partition is led at epoch `PARTITION_LEADER_EPOCH` by this single broker (Metadata
 * answers it). A log whose cache is still empty (nothing was ever appended) counts as led at that
 * epoch from its log start offset, as Kafka's leader records its epoch at the log end on election.
 * An epoch the cache cannot place (newer than its latest) has no end offset: OFFSET_OUT_OF_RANGE,
 * as Kafka answers when the end offset is undefined.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import type { Log } from '../storage/log.js'

/** The epoch at which this broker leads every partition. */
export const PARTITION_LEADER_EPOCH = 0

/** -1 in a request: no epoch given. */
export const NO_EPOCH = -1

/** Kafka's `FetchResponseData.EpochEndOffset`. */
export interface DivergingEpoch {
  epoch: number
  endOffset: bigint
}

/** ErrorCode.NONE, FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH. */
export function checkCurrentLeaderEpoch(currentLeaderEpoch: number, leaderEpoch: number = PARTITION_LEADER_EPOCH): number {
  if (currentLeaderEpoch === NO_EPOCH) return ErrorCode.NONE
  if (currentLeaderEpoch < leaderEpoch) return ErrorCode.FENCED_LEADER_EPOCH
  if (currentLeaderEpoch > leaderEpoch) return ErrorCode.UNKNOWN_LEADER_EPOCH
  return ErrorCode.NONE
}

export type DivergenceCheck =
  | { kind: 'ok' }
  | { kind: 'diverging'; divergingEpoch: DivergingEpoch }
  /** The cache knows no epoch <= lastFetchedEpoch: Kafka answers OFFSET_OUT_OF_RANGE. */
  | { kind: 'error'; errorCode: number }

/** Kafka's `validateFetchOffsetAndMaybeGetDivergingEpoch`; lastFetchedEpoch -1 is always ok. */
export function divergingEpochOf(
  log: Pick<Log, 'endOffsetForEpoch' | 'latestEpoch' | 'logEndOffset' | 'logStartOffset'>,
  fetchOffset: bigint,
  lastFetchedEpoch: number,
  leaderEpoch: number = PARTITION_LEADER_EPOCH,
): DivergenceCheck {
  if (lastFetchedEpoch < 0) return { kind: 'ok' }
  const end = endOffsetFor(log, lastFetchedEpoch, leaderEpoch)
  if (end === null) return { kind: 'error', errorCode: ErrorCode.OFFSET_OUT_OF_RANGE }
  if (end.epoch < lastFetchedEpoch || end.endOffset < fetchOffset) return { kind: 'diverging', divergingEpoch: end }
  return { kind: 'ok' }
}

function endOffsetFor(log: Pick<Log, 'endOffsetForEpoch' | 'latestEpoch' | 'logEndOffset' | 'logStartOffset'>, epoch: number, leaderEpoch: number): DivergingEpoch | null {
  if (log.latestEpoch() === null) {
    // As a cache holding the one entry (leaderEpoch, logStartOffset) would answer.
    if (epoch === leaderEpoch) return { epoch, endOffset: log.logEndOffset() }
    return epoch > leaderEpoch ? null : { epoch, endOffset: log.logStartOffset() }
  }
  const end = log.endOffsetForEpoch(epoch)
  return end === null || end.epoch < 0 ? null : { epoch: end.epoch, endOffset: end.endOffset }
}
