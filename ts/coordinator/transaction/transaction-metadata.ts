/**
 * Kafka's `TransactionMetadata`: what the coordinator knows of one transactional id (its
 * producer id and epoch, the state of its transaction, the partitions in it, its timeout and
 * times), and `TxnTransitMetadata`, the next state it is written as. A change is prepared
 * (`prepare*`, which sets `pendingState`: no other change may start meanwhile, requests meet
 * CONCURRENT_TRANSACTIONS), written to `__transaction_state`, and applied once the log's ISR
 * holds it (`completeTransitionTo`), or dropped if the write failed (`abortTransition`).
 */
import { isValidTransition, TransactionState, transactionStateName, type TransactionStateId } from './transaction-state.js'

export const NO_PRODUCER_ID = -1n
export const NO_PRODUCER_EPOCH = -1
/** Short.MaxValue: an epoch at `MAX_EPOCH - 1` cannot be bumped again (Kafka's `isEpochExhausted`). */
export const MAX_EPOCH = 32767

export function isEpochExhausted(epoch: number): boolean {
  return epoch >= MAX_EPOCH - 1
}

/** A state to write (Kafka's `TxnTransitMetadata`). */
export interface TxnTransitMetadata {
  producerId: bigint
  lastProducerId: bigint
  producerEpoch: number
  lastProducerEpoch: number
  txnTimeoutMs: number
  state: TransactionStateId
  partitions: Map<string, Set<number>>
  txnStartTimestamp: bigint
  txnLastUpdateTimestamp: bigint
}

export class TransactionMetadata {
  readonly transactionalId: string
  producerId: bigint
  /** The producer id before the last rotation (epoch exhaustion), for a retried InitProducerId. */
  lastProducerId: bigint
  producerEpoch: number
  /** The epoch before the last bump by InitProducerId, for its retry; -1 none. */
  lastProducerEpoch: number
  txnTimeoutMs: number
  state: TransactionStateId
  readonly topicPartitions = new Map<string, Set<number>>()
  txnStartTimestamp: bigint
  txnLastUpdateTimestamp: bigint
  /** The state being written, while a change is under way. */
  pendingState: TransactionStateId | null = null

  constructor(transactionalId: string, v: Omit<TxnTransitMetadata, 'partitions'> & { partitions?: Map<string, Set<number>> }) {
    this.transactionalId = transactionalId
    this.producerId = v.producerId
    this.lastProducerId = v.lastProducerId
    this.producerEpoch = v.producerEpoch
    this.lastProducerEpoch = v.lastProducerEpoch
    this.txnTimeoutMs = v.txnTimeoutMs
    this.state = v.state
    for (const [topic, ps] of v.partitions ?? []) this.topicPartitions.set(topic, new Set(ps))
    this.txnStartTimestamp = v.txnStartTimestamp
    this.txnLastUpdateTimestamp = v.txnLastUpdateTimestamp
  }

  get stateName(): string {
    return transactionStateName(this.state)
  }

  /** Whether the offsets topic's partition is in the transaction (AddOffsetsToTxn). */
  hasPartition(topic: string, partition: number): boolean {
    return this.topicPartitions.get(topic)?.has(partition) ?? false
  }

  partitionList(): Array<{ topic: string; partition: number }> {
    const out: Array<{ topic: string; partition: number }> = []
    for (const [topic, ps] of this.topicPartitions) for (const partition of ps) out.push({ topic, partition })
    return out
  }

  /** The current state as a transit to change. */
  private transit(): TxnTransitMetadata {
    const partitions = new Map<string, Set<number>>()
    for (const [topic, ps] of this.topicPartitions) partitions.set(topic, new Set(ps))
    return {
      producerId: this.producerId,
      lastProducerId: this.lastProducerId,
      producerEpoch: this.producerEpoch,
      lastProducerEpoch: this.lastProducerEpoch,
      txnTimeoutMs: this.txnTimeoutMs,
      state: this.state,
      partitions,
      txnStartTimestamp: this.txnStartTimestamp,
      txnLastUpdateTimestamp: this.txnLastUpdateTimestamp,
    }
  }

  /** Kafka's `prepareTransitionTo`: checks the transition and marks it pending. */
  private prepareTransitionTo(next: TxnTransitMetadata): TxnTransitMetadata {
    if (this.pendingState !== null) throw new Error(`${this.transactionalId}: a change to ${transactionStateName(this.pendingState)} is under way`)
    if (!isValidTransition(this.state, next.state)) {
      throw new Error(`${this.transactionalId}: ${this.stateName} cannot become ${transactionStateName(next.state)}`)
    }
    this.pendingState = next.state
    return next
  }

  /**
   * InitProducerId for an id with no transaction running: the epoch bumped (or, for a retry
   * whose bump was written already, kept), the state Empty.
   */
  prepareIncrementProducerEpoch(txnTimeoutMs: number, expectedEpoch: number | null, now: bigint): TxnTransitMetadata | 'PRODUCER_FENCED' {
    const t = this.transit()
    if (expectedEpoch === null || expectedEpoch === this.producerEpoch) {
      // A new producer (or one bumping its own epoch): the next epoch; remember the last for its retry.
      t.producerEpoch = this.producerEpoch + 1
      t.lastProducerEpoch = expectedEpoch === null ? NO_PRODUCER_EPOCH : this.producerEpoch
    } else if (expectedEpoch === this.lastProducerEpoch) {
      // A retry of a bump already written: answered with the epoch it got then.
    } else {
      return 'PRODUCER_FENCED'
    }
    return this.prepareTransitionTo({ ...t, txnTimeoutMs, state: TransactionState.Empty, partitions: new Map(), txnStartTimestamp: -1n, txnLastUpdateTimestamp: now })
  }

  /** InitProducerId when the epoch is exhausted: a new producer id at epoch 0. */
  prepareProducerIdRotation(newProducerId: bigint, txnTimeoutMs: number, now: bigint, recordLastEpoch: boolean): TxnTransitMetadata {
    return this.prepareTransitionTo({
      ...this.transit(),
      producerId: newProducerId,
      lastProducerId: this.producerId,
      producerEpoch: 0,
      lastProducerEpoch: recordLastEpoch ? this.producerEpoch : NO_PRODUCER_EPOCH,
      txnTimeoutMs,
      state: TransactionState.Empty,
      partitions: new Map(),
      txnStartTimestamp: -1n,
      txnLastUpdateTimestamp: now,
    })
  }

  /** AddPartitionsToTxn / AddOffsetsToTxn: Ongoing with these partitions added. */
  prepareAddPartitions(add: ReadonlyArray<{ topic: string; partition: number }>, now: bigint): TxnTransitMetadata {
    const t = this.transit()
    const starting = this.state === TransactionState.Empty || this.state === TransactionState.CompleteCommit || this.state === TransactionState.CompleteAbort
    if (starting) t.partitions = new Map()
    for (const { topic, partition } of add) {
      let set = t.partitions.get(topic)
      if (!set) t.partitions.set(topic, (set = new Set()))
      set.add(partition)
    }
    return this.prepareTransitionTo({ ...t, state: TransactionState.Ongoing, txnStartTimestamp: starting ? now : this.txnStartTimestamp, txnLastUpdateTimestamp: now })
  }

  /**
   * EndTxn (or an abort on timeout or fencing): PrepareCommit or PrepareAbort; `fence` bumps
   * the epoch, so that the producer of the transaction is fenced (Kafka's
   * `prepareFenceProducerEpoch` followed by the abort).
   */
  prepareAbortOrCommit(state: typeof TransactionState.PrepareCommit | typeof TransactionState.PrepareAbort, now: bigint, fence = false): TxnTransitMetadata {
    const t = this.transit()
    if (fence && !isEpochExhausted(this.producerEpoch)) t.producerEpoch = this.producerEpoch + 1
    return this.prepareTransitionTo({ ...t, state, lastProducerEpoch: fence ? NO_PRODUCER_EPOCH : t.lastProducerEpoch, txnLastUpdateTimestamp: now })
  }

  /** Once every marker is written: CompleteCommit or CompleteAbort, no partitions. */
  prepareComplete(now: bigint): TxnTransitMetadata {
    const state = this.state === TransactionState.PrepareCommit ? TransactionState.CompleteCommit : TransactionState.CompleteAbort
    return this.prepareTransitionTo({ ...this.transit(), state, partitions: new Map(), txnLastUpdateTimestamp: now })
  }

  /** Transactional id expiration: Dead, then removed (a tombstone in the log). */
  prepareDead(): TxnTransitMetadata {
    return this.prepareTransitionTo({ ...this.transit(), state: TransactionState.Dead, partitions: new Map() })
  }

  /** Kafka's `completeTransitionTo`: the write is on the ISR; the state is now `next`. */
  completeTransitionTo(next: TxnTransitMetadata): void {
    this.producerId = next.producerId
    this.lastProducerId = next.lastProducerId
    this.producerEpoch = next.producerEpoch
    this.lastProducerEpoch = next.lastProducerEpoch
    this.txnTimeoutMs = next.txnTimeoutMs
    this.state = next.state
    this.topicPartitions.clear()
    for (const [topic, ps] of next.partitions) this.topicPartitions.set(topic, new Set(ps))
    this.txnStartTimestamp = next.txnStartTimestamp
    this.txnLastUpdateTimestamp = next.txnLastUpdateTimestamp
    this.pendingState = null
  }

  /** The write failed: nothing changes. */
  abortTransition(): void {
    this.pendingState = null
  }
}
