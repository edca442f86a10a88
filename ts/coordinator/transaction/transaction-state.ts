/**
 * Kafka's `TransactionState`: the states of a transactional id at its coordinator, their ids in
 * `__transaction_state` (./transaction-log.ts) and their names (DescribeTransactions,
 * ListTransactions), and which state may follow which (`validPreviousStates`):
 *
 *   Empty -> Ongoing (AddPartitionsToTxn, AddOffsetsToTxn)
 *   Ongoing -> PrepareCommit | PrepareAbort (EndTxn; a timeout or a new InitProducerId aborts)
 *   PrepareCommit -> CompleteCommit, PrepareAbort -> CompleteAbort (once every marker is written)
 *   Complete* -> Ongoing (the next transaction), Empty (InitProducerId), Dead (expired id)
 *   Empty | Complete* -> PrepareAbort (transaction version 2: a client unsure whether its
 *     transaction started aborts it anyway; ./transaction-version.ts)
 *
 * PrepareEpochFence (7) is Kafka's transient state while it fences a producer; this coordinator
 * goes from Ongoing to PrepareAbort at the bumped epoch in one write instead, so it never stores it.
 */
export const TransactionState = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
} as const

export type TransactionStateId = (typeof TransactionState)[keyof typeof TransactionState]

const NAMES = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'] as const

/** Kafka's `TransactionState.stateName`, as DescribeTransactions and ListTransactions answer it. */
export function transactionStateName(state: TransactionStateId): string {
  return NAMES[state]
}

/** The state of a name given in a ListTransactions filter; undefined for an unknown one. */
export function transactionStateOf(name: string): TransactionStateId | undefined {
  const i = (NAMES as readonly string[]).indexOf(name)
  return i < 0 ? undefined : (i as TransactionStateId)
}

export function isTransactionStateId(id: number): id is TransactionStateId {
  return Number.isInteger(id) && id >= 0 && id < NAMES.length
}

const VALID_PREVIOUS: Record<TransactionStateId, readonly TransactionStateId[]> = {
  [TransactionState.Empty]: [TransactionState.Empty, TransactionState.CompleteCommit, TransactionState.CompleteAbort],
  [TransactionState.Ongoing]: [TransactionState.Ongoing, TransactionState.Empty, TransactionState.CompleteCommit, TransactionState.CompleteAbort],
  [TransactionState.PrepareCommit]: [TransactionState.Ongoing],
  [TransactionState.PrepareAbort]: [TransactionState.Ongoing, TransactionState.PrepareEpochFence, TransactionState.Empty, TransactionState.CompleteCommit, TransactionState.CompleteAbort],
  [TransactionState.CompleteCommit]: [TransactionState.PrepareCommit],
  [TransactionState.CompleteAbort]: [TransactionState.PrepareAbort],
  [TransactionState.Dead]: [TransactionState.Empty, TransactionState.CompleteCommit, TransactionState.CompleteAbort],
  [TransactionState.PrepareEpochFence]: [TransactionState.Ongoing],
}

/** Whether `to` may follow `from` (Kafka's `validPreviousStates`). */
export function isValidTransition(from: TransactionStateId, to: TransactionStateId): boolean {
  return VALID_PREVIOUS[to].includes(from)
}
