/**
 * Kafka's `TransactionMetadata`: what the coordinator knows of one transactional id (its
 * producer id and epoch, the state of its transaction, the partitions in it, its timeout and
 * times), and `TxnTransitMetadata`, the next state it is written as. A change is prepared
 * (`prepare*`, which sets `pendingState`: no other change may start meanwhile, requests meet
 * CONCURRENT_TRANSACTIONS), written to `__transaction_state`, and applied once the log's ISR
 * holds it (`completeTransitionTo`), or dropped if the write failed (`abortTransition`).
 */
import { isValidTransition, TransactionState, transactionStateName, type TransactionStateId } from './transaction-state.js'
import { supportsEpochBump, TransactionVersion, type TransactionVersionLevel } from './transaction-version.js'

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
  /** Transaction version 2: the producer id the ending transaction moves to (its epoch exhausted); -1 none. */
  nextProducerId: bigint
  /** The transaction version of the client's last change (./transaction-version.ts). */
  clientTransactionVersion: TransactionVersionLevel
}

/** A new transactional id's metadata: the fields it has before any change. */
type InitialMetadata = Omit<TxnTransitMetadata, 'partitions' | 'nextProducerId' | 'clientTransactionVersion'> &
  Partial<Pick<TxnTransitMetadata, 'partitions' | 'nextProducerId' | 'clientTransactionVersion'>>

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
  /** Transaction version 2: the producer id to move to once the ending transaction completes (epoch exhausted); -1 none. */
  nextProducerId: bigint
  clientTransactionVersion: TransactionVersionLevel
  /** The state being written, while a change is under way. */
  pendingState: TransactionStateId | null = null

  constructor(transactionalId: string, v: InitialMetadata) {
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
    this.nextProducerId = v.nextProducerId ?? -1n
    this.clientTransactionVersion = v.clientTransactionVersion ?? TransactionVersion.TV_0
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
      nextProducerId: this.nextProducerId,
      clientTransactionVersion: this.clientTransactionVersion,
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
    if (expectedEpoch === null || expectedEpoch === this.producerEpoch || this.producerEpoch === NO_PRODUCER_EPOCH) {
      // A new producer (or one bumping its own epoch, or the first producer of a new id whatever
      // epoch it expects): the next epoch; remember the last for its retry.
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

  /** AddPartitionsToTxn / AddOffsetsToTxn (or, transaction version 2, the Produce adding them): Ongoing with these partitions added. */
  prepareAddPartitions(add: ReadonlyArray<{ topic: string; partition: number }>, now: bigint, tv: TransactionVersionLevel): TxnTransitMetadata {
    const t = this.transit()
    const starting = this.state === TransactionState.Empty || this.state === TransactionState.CompleteCommit || this.state === TransactionState.CompleteAbort
    if (starting) t.partitions = new Map()
    for (const { topic, partition } of add) {
      let set = t.partitions.get(topic)
      if (!set) t.partitions.set(topic, (set = new Set()))
      set.add(partition)
    }
    return this.prepareTransitionTo({
      ...t,
      state: TransactionState.Ongoing,
      txnStartTimestamp: starting ? now : this.txnStartTimestamp,
      txnLastUpdateTimestamp: now,
      clientTransactionVersion: tv,
    })
  }

  /**
   * EndTxn (or an abort on timeout or fencing): PrepareCommit or PrepareAbort. `fence` bumps
   * the epoch, so that the producer of the transaction is fenced (Kafka's
   * `prepareFenceProducerEpoch` followed by the abort). Transaction version 2 bumps it (again)
   * for the transaction's end: the markers carry the bumped epoch, and with
   * `nextProducerId` (the epoch exhausted) the producer moves to that id at epoch 0 once the
   * transaction completes. `noPartitionAdded`: version 2's abort of a transaction that added
   * nothing (from Empty or Complete*), started now.
   */
  prepareAbortOrCommit(
    state: typeof TransactionState.PrepareCommit | typeof TransactionState.PrepareAbort,
    now: bigint,
    opts: { tv: TransactionVersionLevel; fence?: boolean; nextProducerId?: bigint; noPartitionAdded?: boolean },
  ): TxnTransitMetadata {
    const t = this.transit()
    const tv = opts.tv
    if (opts.fence) {
      if (!isEpochExhausted(this.producerEpoch)) t.producerEpoch = this.producerEpoch + 1
      t.lastProducerEpoch = NO_PRODUCER_EPOCH
    }
    if (supportsEpochBump(tv) && t.producerEpoch < MAX_EPOCH) {
      t.lastProducerEpoch = t.producerEpoch
      t.producerEpoch += 1
    }
    return this.prepareTransitionTo({
      ...t,
      state,
      txnStartTimestamp: opts.noPartitionAdded ? now : this.txnStartTimestamp,
      txnLastUpdateTimestamp: now,
      nextProducerId: opts.nextProducerId ?? -1n,
      clientTransactionVersion: tv,
    })
  }

  /**
   * What the producer is once the ending transaction completes (the EndTxn v5 answer): the
   * next producer id at epoch 0 when transaction version 2 rotated it, else the current ones.
   */
  completedProducer(): { producerId: bigint; producerEpoch: number } {
    if (supportsEpochBump(this.clientTransactionVersion) && this.nextProducerId !== -1n) return { producerId: this.nextProducerId, producerEpoch: 0 }
    return { producerId: this.producerId, producerEpoch: this.producerEpoch }
  }

  /**
   * Once every marker is written: CompleteCommit or CompleteAbort, no partitions; for
   * transaction version 2 with a next producer id, that id at epoch 0 (the last epoch, the one
   * the client saw before, kept for its retries).
   */
  prepareComplete(now: bigint): TxnTransitMetadata {
    const state = this.state === TransactionState.PrepareCommit ? TransactionState.CompleteCommit : TransactionState.CompleteAbort
    const { producerId, producerEpoch } = this.completedProducer()
    const rotated = producerId !== this.producerId
    return this.prepareTransitionTo({
      ...this.transit(),
      state,
      producerId,
      producerEpoch,
      lastProducerId: rotated ? this.producerId : this.lastProducerId,
      nextProducerId: -1n,
      partitions: new Map(),
      txnLastUpdateTimestamp: now,
    })
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
    this.nextProducerId = next.nextProducerId
    this.clientTransactionVersion = next.clientTransactionVersion
    this.pendingState = null
  }

  /** The write failed: nothing changes. */
  abortTransition(): void {
    this.pendingState = null
  }
}
