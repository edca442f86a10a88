/**
 * How a coordinator answers a write to its log that failed: the append's error (the leader
 * append's own, or its acks=all wait's) becomes an error the clients know how to handle, as
 * Kafka's GroupMetadataManager maps them after `appendForGroup` (and its newer
 * GroupCoordinatorService, for the timeout) and its TransactionStateManager after
 * `appendTransactionToLog`:
 *
 * | the append's error | OffsetCommit | DeleteGroups, OffsetDelete, a classic group's record, `__share_group_state` | `__transaction_state` |
 * |---|---|---|---|
 * | UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT | COORDINATOR_NOT_AVAILABLE | COORDINATOR_NOT_AVAILABLE | COORDINATOR_NOT_AVAILABLE |
 * | NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR | NOT_COORDINATOR | NOT_COORDINATOR | NOT_COORDINATOR |
 * | MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE | INVALID_COMMIT_OFFSET_SIZE | UNKNOWN_SERVER_ERROR | UNKNOWN_SERVER_ERROR |
 * | any other | itself | itself | UNKNOWN_SERVER_ERROR |
 *
 * COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR send clients to look the coordinator up again
 * and retry; a timed-out write may still reach the ISR later (its records stay appended), and
 * is then seen after the next load, as in Kafka.
 */
import { ErrorCode } from '../protocol/error-codes.js'

/**
 * What is being written: offset commits, tombstones (DeleteGroups, OffsetDelete), a classic
 * group's GroupMetadata record (Kafka's `appendGroupMetadataErrorToResponseError`), a share
 * partition's state, or a transaction's state.
 */
export type CoordinatorWriteKind = 'commit' | 'tombstones' | 'group' | 'share' | 'transaction'

export function coordinatorErrorOf(appendError: number, kind: CoordinatorWriteKind): number {
  switch (appendError) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return kind === 'commit' ? ErrorCode.INVALID_COMMIT_OFFSET_SIZE : ErrorCode.UNKNOWN_SERVER_ERROR
    default:
      return kind === 'transaction' ? ErrorCode.UNKNOWN_SERVER_ERROR : appendError
  }
}
