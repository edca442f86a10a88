/**
 * The ISR as a partition's leader keeps it (Kafka's `PartitionState`: `CommittedPartitionState`,
 * `PendingExpandIsr`, `PendingShrinkIsr`). `isr` is the ISR the metadata recorded last. With an
 * `AlterPartitionManager` (cluster mode; a standalone broker has none and never changes its ISR)
 * the leader proposes changes, at most one at a time:
 *
 * - expand, on a follower's fetch: a replica of the assignment outside the ISR whose log end
 *   reached the high watermark and the start offset of the leader's epoch (`leaderEpochStartOffset`,
 *   the log end when this broker became leader at that epoch) is proposed as ISR + it;
 * - shrink, from the replica manager's periodic check (every replica.lag.time.max.ms / 2): the
 *   followers of the ISR not caught up within replica.lag.time.max.ms (`Replica.isCaughtUp`) are
 *   proposed out of it.
 *
 * While a change is in flight the high watermark and acks=all use the maximal ISR (`maximalIsr`):
 * current + the new member on expand (a stricter rule if it fails), the current one on shrink (a
 * shrink that failed must not have advanced the high watermark). The answer is applied only if
 * the state is still the one proposed (a leadership change meanwhile commits a new state and the
 * answer is stale): the registration recorded, if its leader epoch is ours and its partition epoch
 * not older than ours, becomes the committed ISR and partition epoch; refusals
 * FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID,
 * INVALID_REQUEST, NEW_LEADER_ELECTED leave the change pending until the metadata delivers the
 * partition's registration (`applyLeaderRegistration` or `makeLeader` commit it);
 * INELIGIBLE_REPLICA goes back to the committed ISR (a later fetch may propose again); any other
 * error (the store unreachable, a timeout) is submitted again after `alterPartitionRetryBackoffMs`.
 * After an ISR change the high watermark may move, and the partition's delayed fetches and
 * produces are checked (`delayedOperations`).
 *
 * This module holds the states and the rules of the answers; `Partition` (ts/replica/partition.ts)
 * makes the proposals and applies the answers.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import type { AlterPartitionRequest } from './partition-registration.js'

/** Kafka's `AlterPartitionListener`: counts of the ISR changes made and refused (the replica manager's metrics). */
export interface AlterPartitionListener {
  markIsrExpand(): void
  markIsrShrink(): void
  markFailed(): void
}

/** What a partition wakes when its high watermark or ISR moved (Kafka's `DelayedOperations`). */
export interface DelayedOperations {
  checkAndCompleteAll(): void
}

/**
 * The ISR as committed, or a change of it in flight (Kafka's `PartitionState`). `isr` is always
 * the last committed one; a pending state keeps what it sent.
 */
export type IsrState =
  | { readonly kind: 'committed'; readonly isr: ReadonlySet<number> }
  | { readonly kind: 'pendingExpand'; readonly isr: ReadonlySet<number>; readonly newInSyncReplicaId: number; readonly sent: AlterPartitionRequest }
  | { readonly kind: 'pendingShrink'; readonly isr: ReadonlySet<number>; readonly outOfSyncReplicaIds: ReadonlySet<number>; readonly sent: AlterPartitionRequest }

export type PendingIsrState = Exclude<IsrState, { kind: 'committed' }>

/** Refusals after which the change stays pending until the metadata delivers the partition's state. */
const AWAIT_METADATA_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.INVALID_UPDATE_VERSION,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.INVALID_REQUEST,
  ErrorCode.NEW_LEADER_ELECTED,
])

/**
 * What a refused or failed change does next (Kafka's `handleAlterPartitionError`): `revert` to
 * the committed ISR (INELIGIBLE_REPLICA: not applied, and the partition epoch is right),
 * `await-metadata` (stay pending until the partition's registration arrives), or `retry`.
 */
export function afterAlterPartitionError(errorCode: number): 'revert' | 'await-metadata' | 'retry' {
  if (errorCode === ErrorCode.INELIGIBLE_REPLICA) return 'revert'
  return AWAIT_METADATA_ERRORS.has(errorCode) ? 'await-metadata' : 'retry'
}

/** Kafka's `maximalIsr`: the committed ISR, with the member being added while an expansion is in flight. */
export function maximalIsr(state: IsrState): ReadonlySet<number> {
  return state.kind === 'pendingExpand' ? new Set([...state.isr, state.newInSyncReplicaId]) : state.isr
}
