/**
 * Kafka's `TransactionCoordinator` (KIP-98): what the transactional request handlers call.
 * The transactional ids and their writes are ./transaction-state-manager.ts; the markers
 * ./transaction-marker-channel-manager.ts. This broker coordinates the transactional ids of
 * each partition of `__transaction_state` it leads (./transaction-log.ts; an id's partition is
 * Kafka's `partitionFor`, ./transaction-state-manager.ts).
 *
 * - InitProducerId (`handleInitProducerId`): a new id gets a producer id from the broker's
 *   producer-id manager at epoch 0; a known one has its epoch bumped (fencing the previous
 *   producer: its later requests are PRODUCER_FENCED), or, with the epoch exhausted, a new
 *   producer id. An ongoing transaction is aborted first (the epoch bumped, the markers
 *   written) and the request answered CONCURRENT_TRANSACTIONS, which the client retries;
 *   likewise while a transaction completes. KIP-360 lets the producer send its id and epoch:
 *   a retry of a bump already written gets the same answer, an older epoch PRODUCER_FENCED.
 *   transaction.timeout.ms above transaction.max.timeout.ms is INVALID_TRANSACTION_TIMEOUT.
 * - AddPartitionsToTxn / AddOffsetsToTxn (`handleAddPartitionsToTransaction`): the partitions
 *   join the transaction (Ongoing), written before the answer; a transaction ending (or any
 *   change under way) is CONCURRENT_TRANSACTIONS, checked first (with transaction version 2 the
 *   producer may already use the next producer id of a transaction still completing); an
 *   unknown id or another producer id is INVALID_PRODUCER_ID_MAPPING, another epoch
 *   PRODUCER_FENCED. v4's verifyOnly asks without adding: a partition not in the transaction is
 *   TRANSACTION_ABORTABLE (Kafka 4's answer; the partition leader translates it for older clients).
 *   Transaction version 2's implicit adds (a transactional Produce v12+ or TxnOffsetCommit v5+ at
 *   the partition leader) come as AddPartitionsToTxn v4+ without verifyOnly.
 * - EndTxn (`handleEndTransaction`), per the client's transaction version
 *   (./transaction-version.ts). Version 0/1: PrepareCommit or PrepareAbort is written and
 *   answered; then the markers go to every partition, and CompleteCommit or CompleteAbort is
 *   written. A retry of the same end is NONE; the other end INVALID_TXN_STATE. Version 2 (EndTxn
 *   v5) bumps the epoch with the Prepare* write (the markers carry the bumped epoch) and answers
 *   the producer id and epoch to use next: the bumped epoch, or, the epoch exhausted, a new
 *   producer id at epoch 0 (taken when the transaction completes). Its retries are told by the
 *   epoch (Kafka's table in `endTransactionV2`): the epoch just before the bump retries the end
 *   (NONE once complete, CONCURRENT_TRANSACTIONS meanwhile), the current epoch starts a new end;
 *   an abort is allowed with nothing in the transaction (Empty, Complete*: nothing to mark), a
 *   commit is not (INVALID_TXN_STATE); another epoch is PRODUCER_FENCED.
 * - Timeouts (`abortTimedOutTransactions`, every
 *   transaction.abort.timed.out.transaction.cleanup.interval.ms): a transaction Ongoing longer
 *   than its timeout is aborted with the epoch bumped, fencing its producer.
 * - Expiration (`removeExpiredTransactionalIds`, every
 *   transaction.remove.expired.transaction.cleanup.interval.ms): an id with no transaction
 *   running, not used for transactional.id.expiration.ms, is removed (a tombstone).
 * - On election, after the load, transactions found in PrepareCommit or PrepareAbort have their
 *   markers written and are completed; Ongoing ones are left to their timeout.
 *
 * Partition leaders verify a transactional Produce with `handleVerifyPartitionsInTransaction`
 * (KIP-890 part 1, ts/server/add-partitions-to-txn-manager.ts).
 *
 * Aborts the coordinator starts itself (timeouts, fencing) follow this cluster's transaction
 * version (2): the epoch is bumped to fence the producer and bumped again for the end, so that
 * the fenced producer's own EndTxn retries cannot pass for a retry of that end (PRODUCER_FENCED).
 */
import type { Logger } from '../../logger.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { LeadershipChange } from '../../replica/replica-manager.js'
import { OFFSETS_TOPIC } from '../../group/offsets-topic.js'
import type { TransactionMarkerChannelManager } from './transaction-marker-channel-manager.js'
import { TRANSACTION_STATE_TOPIC } from './transaction-log.js'
import { isEpochExhausted, MAX_EPOCH, NO_PRODUCER_EPOCH, TransactionMetadata, type TxnTransitMetadata } from './transaction-metadata.js'
import { TransactionState, transactionStateName, transactionStateOf } from './transaction-state.js'
import type { TransactionStateManager } from './transaction-state-manager.js'
import { DEFAULT_TRANSACTION_VERSION, supportsEpochBump, transactionVersionOf, TransactionVersion, type TransactionVersionLevel } from './transaction-version.js'

export interface TransactionConfig {
  /** transaction.max.timeout.ms (900000). */
  transactionMaxTimeoutMs: number
  /** transactional.id.expiration.ms (604800000, 7 days). */
  transactionalIdExpirationMs: number
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms (10000); 0: no timer. */
  abortTimedOutTransactionsIntervalMs: number
  /** transaction.remove.expired.transaction.cleanup.interval.ms (3600000); 0: no timer. */
  removeExpiredTransactionalIdsIntervalMs: number
  /** The cluster's finalized transaction.version (Kafka's `transactionVersionLevel()`); default DEFAULT_TRANSACTION_VERSION. */
  transactionVersionLevel?: () => TransactionVersionLevel
}

export const DEFAULT_TRANSACTION_CONFIG: TransactionConfig = {
  transactionMaxTimeoutMs: 900_000,
  transactionalIdExpirationMs: 604_800_000,
  abortTimedOutTransactionsIntervalMs: 10_000,
  removeExpiredTransactionalIdsIntervalMs: 3_600_000,
}

type Tp = { topic: string; partition: number }

export interface InitProducerIdResult {
  errorCode: number
  producerId: bigint
  producerEpoch: number
}

export interface TransactionDescription {
  errorCode: number
  transactionalId: string
  transactionState: string
  transactionTimeoutMs: number
  transactionStartTimeMs: bigint
  producerId: bigint
  producerEpoch: number
  topics: Array<{ topic: string; partitions: number[] }>
}

/** EndTxn's answer: with transaction version 2, the producer id and epoch to use next (else -1). */
export interface EndTxnResult {
  errorCode: number
  producerId: bigint
  producerEpoch: number
}

const failed = (errorCode: number): InitProducerIdResult => ({ errorCode, producerId: -1n, producerEpoch: -1 })
const endFailed = (errorCode: number): EndTxnResult => ({ errorCode, producerId: -1n, producerEpoch: -1 })

export class TransactionCoordinator {
  readonly stateManager: TransactionStateManager
  private readonly markers: TransactionMarkerChannelManager
  private readonly generateProducerId: () => Promise<bigint>
  private readonly config: TransactionConfig
  private readonly logger: Logger
  private readonly clock: () => number
  private timers: NodeJS.Timeout[] = []
  /** Endings under way (markers, then Complete*), for `idle`. */
  private readonly completing = new Set<Promise<void>>()

  constructor(
    stateManager: TransactionStateManager,
    markers: TransactionMarkerChannelManager,
    generateProducerId: () => Promise<bigint>,
    config: TransactionConfig,
    logger: Logger,
    clock: () => number = Date.now,
  ) {
    this.stateManager = stateManager
    this.markers = markers
    this.generateProducerId = generateProducerId
    this.config = config
    this.logger = logger
    this.clock = clock
  }

  private transactionVersionLevel(): TransactionVersionLevel {
    return transactionVersionOf(this.config.transactionVersionLevel?.() ?? DEFAULT_TRANSACTION_VERSION)
  }

  private now(): bigint {
    return BigInt(this.clock())
  }

  // ---- Election ----

  /** The replica manager's `onLeadershipChange`, for `__transaction_state`. */
  onLeadershipChange(leaders: readonly LeadershipChange[], followers: readonly LeadershipChange[]): void {
    for (const p of leaders) if (p.topic === TRANSACTION_STATE_TOPIC) void this.onElection(p.partition, p.leaderEpoch)
    for (const p of followers) if (p.topic === TRANSACTION_STATE_TOPIC) this.onResignation(p.partition, p.leaderEpoch)
  }

  /** Loads the partition's log, then completes the transactions it left half-ended and starts the timers. */
  async onElection(partition: number, leaderEpoch: number): Promise<void> {
    if (!(await this.stateManager.load(partition, leaderEpoch))) return
    this.startTimers()
    for (const txn of this.stateManager.transactionsOf(partition)) {
      if (txn.state === TransactionState.PrepareCommit || txn.state === TransactionState.PrepareAbort) this.completeTransaction(txn)
    }
  }

  onResignation(partition: number, leaderEpoch?: number): void {
    this.stateManager.unload(partition, leaderEpoch)
    if (this.stateManager.statusError() === ErrorCode.NOT_COORDINATOR) this.stopTimers()
  }

  private startTimers(): void {
    if (this.timers.length > 0) return
    const every = (ms: number, run: () => void) => {
      if (ms <= 0) return
      const t = setInterval(run, ms)
      t.unref()
      this.timers.push(t)
    }
    every(this.config.abortTimedOutTransactionsIntervalMs, () => this.abortTimedOutTransactions())
    every(this.config.removeExpiredTransactionalIdsIntervalMs, () => void this.removeExpiredTransactionalIds())
  }

  private stopTimers(): void {
    for (const t of this.timers) clearInterval(t)
    this.timers = []
  }

  /**
   * No more requests served (NOT_COORDINATOR); endings under way stop at their next step (a
   * transaction left in PrepareCommit or PrepareAbort is completed by the next coordinator's load).
   */
  async stop(): Promise<void> {
    this.stopTimers()
    this.stateManager.stop()
    await this.markers.stop()
  }

  /** Resolves once no ending is under way (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.completing.size > 0) await Promise.allSettled([...this.completing])
  }

  // ---- InitProducerId ----

  async handleInitProducerId(transactionalId: string, transactionTimeoutMs: number, expected: { producerId: bigint; producerEpoch: number } | null): Promise<InitProducerIdResult> {
    if (transactionalId === '') return failed(ErrorCode.INVALID_REQUEST)
    if (transactionTimeoutMs <= 0 || transactionTimeoutMs > this.config.transactionMaxTimeoutMs) return failed(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
    const status = this.stateManager.statusError(transactionalId)
    if (status !== ErrorCode.NONE) return failed(status)
    let txn = this.stateManager.transactions.get(transactionalId)
    if (!txn) {
      const producerId = await this.generateProducerId()
      if (this.stateManager.statusError(transactionalId) !== ErrorCode.NONE) return failed(this.stateManager.statusError(transactionalId))
      txn = this.stateManager.transactions.get(transactionalId)
      if (!txn) {
        const now = this.now()
        txn = new TransactionMetadata(transactionalId, {
          producerId,
          lastProducerId: -1n,
          producerEpoch: NO_PRODUCER_EPOCH,
          lastProducerEpoch: NO_PRODUCER_EPOCH,
          txnTimeoutMs: transactionTimeoutMs,
          state: TransactionState.Empty,
          txnStartTimestamp: -1n,
          txnLastUpdateTimestamp: now,
        })
        this.stateManager.transactions.set(transactionalId, txn)
      }
    }
    if (txn.pendingState !== null) return failed(ErrorCode.CONCURRENT_TRANSACTIONS)
    if (expected !== null && !isEpochExhausted(txn.producerEpoch) && !this.isValidProducerId(txn, expected)) return failed(ErrorCode.PRODUCER_FENCED)
    let next: TxnTransitMetadata
    switch (txn.state) {
      case TransactionState.PrepareCommit:
      case TransactionState.PrepareAbort:
      case TransactionState.PrepareEpochFence:
      case TransactionState.Dead:
        return failed(ErrorCode.CONCURRENT_TRANSACTIONS)
      case TransactionState.Ongoing:
        // Kafka's fence-and-abort: the epoch bumped, the markers written; the client retries.
        this.abortTransaction(txn, true)
        return failed(ErrorCode.CONCURRENT_TRANSACTIONS)
      default: {
        if (isEpochExhausted(txn.producerEpoch) && (expected === null || expected.producerEpoch === txn.producerEpoch)) {
          const producerId = await this.generateProducerId()
          if (txn.pendingState !== null) return failed(ErrorCode.CONCURRENT_TRANSACTIONS)
          next = txn.prepareProducerIdRotation(producerId, transactionTimeoutMs, this.now(), expected !== null)
        } else {
          const prepared = txn.prepareIncrementProducerEpoch(transactionTimeoutMs, expected?.producerEpoch ?? null, this.now())
          if (prepared === 'PRODUCER_FENCED') return failed(ErrorCode.PRODUCER_FENCED)
          next = prepared
        }
      }
    }
    const errorCode = await this.stateManager.appendTransactionToLog(txn, next)
    if (errorCode !== ErrorCode.NONE) return failed(errorCode)
    this.logger.debug('initialized transactional producer', { transactionalId, producerId: next.producerId, producerEpoch: next.producerEpoch })
    return { errorCode: ErrorCode.NONE, producerId: next.producerId, producerEpoch: next.producerEpoch }
  }

  /**
   * Kafka's `isValidProducerId`: the transactional id has no producer yet (its metadata was just
   * created: a producer recovering from UNKNOWN_PRODUCER_ID, or a client that sends its id and
   * epoch as 0 on its first init, as @platformatic/kafka does), or the producer's id and epoch
   * are the current ones, or the ones before the last bump.
   */
  private isValidProducerId(txn: TransactionMetadata, expected: { producerId: bigint; producerEpoch: number }): boolean {
    if (txn.producerEpoch === NO_PRODUCER_EPOCH) return true
    if (expected.producerId === txn.producerId) return expected.producerEpoch === txn.producerEpoch || (txn.lastProducerEpoch !== NO_PRODUCER_EPOCH && expected.producerEpoch === txn.lastProducerEpoch)
    return expected.producerId === txn.lastProducerId && expected.producerEpoch === txn.lastProducerEpoch
  }

  // ---- AddPartitionsToTxn, AddOffsetsToTxn ----

  /** The check every transactional request of a producer makes of its id, producer id and epoch. */
  private producerError(transactionalId: string, producerId: bigint, producerEpoch: number): { errorCode: number; txn?: TransactionMetadata } {
    if (transactionalId === '') return { errorCode: ErrorCode.INVALID_REQUEST }
    const status = this.stateManager.statusError(transactionalId)
    if (status !== ErrorCode.NONE) return { errorCode: status }
    const txn = this.stateManager.transactions.get(transactionalId)
    if (!txn) return { errorCode: ErrorCode.INVALID_PRODUCER_ID_MAPPING }
    if (txn.producerId !== producerId) return { errorCode: ErrorCode.INVALID_PRODUCER_ID_MAPPING }
    if (txn.producerEpoch !== producerEpoch) return { errorCode: ErrorCode.PRODUCER_FENCED }
    return { errorCode: ErrorCode.NONE, txn }
  }

  /**
   * Adds partitions to the transaction (`tv`: the client's transaction version); one error code
   * for all of them.
   */
  async handleAddPartitionsToTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly Tp[], tv: TransactionVersionLevel): Promise<number> {
    if (transactionalId === '') return ErrorCode.INVALID_REQUEST
    const status = this.stateManager.statusError()
    if (status !== ErrorCode.NONE) return status
    const txn = this.stateManager.transactions.get(transactionalId)
    if (!txn) return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    // First, as Kafka 4: with transaction version 2 the producer may already use the producer id
    // the completing transaction moves to.
    if (txn.pendingState !== null || txn.state === TransactionState.PrepareCommit || txn.state === TransactionState.PrepareAbort) return ErrorCode.CONCURRENT_TRANSACTIONS
    if (txn.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING
    if (txn.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED
    if (txn.state === TransactionState.Ongoing && partitions.every((p) => txn.hasPartition(p.topic, p.partition))) return ErrorCode.NONE
    const next = txn.prepareAddPartitions(partitions, this.now(), tv)
    return this.stateManager.appendTransactionToLog(txn, next)
  }

  /**
   * Kafka's `handleVerifyPartitionsInTransaction` (AddPartitionsToTxn v4 verifyOnly, a partition
   * leader verifying a transactional Produce): per partition, NONE if it is in the producer's
   * transaction, else TRANSACTION_ABORTABLE; CONCURRENT_TRANSACTIONS while the transaction ends.
   */
  handleVerifyPartitionsInTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly Tp[]): Array<Tp & { errorCode: number }> {
    const { errorCode, txn } = this.producerError(transactionalId, producerId, producerEpoch)
    const ending = txn !== undefined && (txn.state === TransactionState.PrepareCommit || txn.state === TransactionState.PrepareAbort)
    return partitions.map((p) => ({
      ...p,
      errorCode: !txn ? errorCode : ending ? ErrorCode.CONCURRENT_TRANSACTIONS : txn.hasPartition(p.topic, p.partition) ? ErrorCode.NONE : ErrorCode.TRANSACTION_ABORTABLE,
    }))
  }

  /** AddOffsetsToTxn: the group's `__consumer_offsets` partition (the group coordinator's `partitionFor`) joins the transaction. */
  handleAddOffsetsToTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, offsetsPartition: number): Promise<number> {
    // Only transaction version 0/1 clients send it (version 2 adds the partition with TxnOffsetCommit).
    return this.handleAddPartitionsToTransaction(transactionalId, producerId, producerEpoch, [{ topic: OFFSETS_TOPIC, partition: offsetsPartition }], TransactionVersion.TV_0)
  }

  // ---- EndTxn ----

  /** EndTxn of a client of transaction version `tv` (v5+: version 2). */
  async handleEndTransaction(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean, tv: TransactionVersionLevel): Promise<EndTxnResult> {
    if (supportsEpochBump(tv)) return this.endTransactionV2(transactionalId, producerId, producerEpoch, commit, tv)
    return endFailed(await this.endTransactionV1(transactionalId, producerId, producerEpoch, commit))
  }

  /** Kafka's `endTransactionWithTV1`. */
  private async endTransactionV1(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean): Promise<number> {
    const { errorCode, txn } = this.producerError(transactionalId, producerId, producerEpoch)
    if (!txn) return errorCode
    if (txn.pendingState !== null) return ErrorCode.CONCURRENT_TRANSACTIONS
    switch (txn.state) {
      case TransactionState.Ongoing:
        return this.writeEnd(txn, txn.prepareAbortOrCommit(commit ? TransactionState.PrepareCommit : TransactionState.PrepareAbort, this.now(), { tv: TransactionVersion.TV_0 }))
      case TransactionState.CompleteCommit:
        return commit ? ErrorCode.NONE : ErrorCode.INVALID_TXN_STATE
      case TransactionState.CompleteAbort:
        return commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.NONE
      case TransactionState.PrepareCommit:
        return commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE
      case TransactionState.PrepareAbort:
        return commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS
      default:
        return ErrorCode.INVALID_TXN_STATE
    }
  }

  /**
   * Kafka's `endTransaction` for transaction version 2. With R the epoch just before the
   * current one (a retry of the end that bumped it) and C the current epoch:
   *
   *                    Abort R   Abort C   Commit R   Commit C
   *   Empty            FENCED    end       FENCED     INVALID_TXN_STATE
   *   CompleteAbort    NONE      end       INVALID    INVALID
   *   CompleteCommit   INVALID   end       NONE       INVALID
   *   Ongoing          FENCED    end       FENCED     end
   *   Prepare*         (retry: CONCURRENT_TRANSACTIONS for the same end, else INVALID_TXN_STATE)
   *
   * A retry across a producer id rotation (the old id at the exhausted epoch, the new one at 0)
   * counts as R.
   */
  private async endTransactionV2(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean, tv: TransactionVersionLevel): Promise<EndTxnResult> {
    if (transactionalId === '') return endFailed(ErrorCode.INVALID_REQUEST)
    const status = this.stateManager.statusError()
    if (status !== ErrorCode.NONE) return endFailed(status)
    const txn = this.stateManager.transactions.get(transactionalId)
    if (!txn) return endFailed(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    const retryOnOverflow = txn.lastProducerId === producerId && producerEpoch === MAX_EPOCH - 1 && txn.producerEpoch === 0
    const retryOnEpochBump = txn.producerEpoch === producerEpoch + 1
    const isRetry = retryOnEpochBump || retryOnOverflow
    let validEpoch: boolean
    switch (txn.state) {
      case TransactionState.PrepareCommit:
      case TransactionState.PrepareAbort:
        validEpoch = retryOnEpochBump
        break
      case TransactionState.CompleteCommit:
      case TransactionState.CompleteAbort:
        validEpoch = isRetry || producerEpoch === txn.producerEpoch
        break
      default:
        validEpoch = producerEpoch === txn.producerEpoch
    }
    if (txn.producerId !== producerId && !retryOnOverflow) return endFailed(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
    if (!validEpoch) return endFailed(ErrorCode.PRODUCER_FENCED)
    if (txn.pendingState !== null) return endFailed(ErrorCode.CONCURRENT_TRANSACTIONS)
    const current = { errorCode: ErrorCode.NONE, producerId: txn.producerId, producerEpoch: txn.producerEpoch }
    const end = async (state: typeof TransactionState.PrepareCommit | typeof TransactionState.PrepareAbort, noPartitionAdded: boolean): Promise<EndTxnResult> => {
      // The epoch exhausted: the producer moves to a new id once this transaction completes.
      let nextProducerId = -1n
      if (isEpochExhausted(txn.producerEpoch)) {
        const [observedState, observedEpoch] = [txn.state, txn.producerEpoch]
        nextProducerId = await this.generateProducerId()
        if (txn.pendingState !== null || txn.state !== observedState || txn.producerEpoch !== observedEpoch) return endFailed(ErrorCode.CONCURRENT_TRANSACTIONS)
      }
      const errorCode = await this.writeEnd(txn, txn.prepareAbortOrCommit(state, this.now(), { tv, nextProducerId, noPartitionAdded }))
      return errorCode === ErrorCode.NONE ? { errorCode, ...txn.completedProducer() } : endFailed(errorCode)
    }
    const invalid = endFailed(ErrorCode.INVALID_TXN_STATE)
    switch (txn.state) {
      case TransactionState.Ongoing:
        return end(commit ? TransactionState.PrepareCommit : TransactionState.PrepareAbort, false)
      case TransactionState.CompleteCommit:
        if (commit) return isRetry ? current : invalid
        return isRetry ? invalid : end(TransactionState.PrepareAbort, true)
      case TransactionState.CompleteAbort:
        if (!commit) return isRetry ? current : end(TransactionState.PrepareAbort, true)
        return invalid
      case TransactionState.PrepareCommit:
        return commit ? endFailed(ErrorCode.CONCURRENT_TRANSACTIONS) : invalid
      case TransactionState.PrepareAbort:
        return commit ? invalid : endFailed(ErrorCode.CONCURRENT_TRANSACTIONS)
      case TransactionState.Empty:
        return commit ? invalid : end(TransactionState.PrepareAbort, true)
      default:
        return invalid
    }
  }

  /** Writes Prepare*, then (written) sends the markers and completes the transaction. */
  private async writeEnd(txn: TransactionMetadata, next: TxnTransitMetadata): Promise<number> {
    const written = await this.stateManager.appendTransactionToLog(txn, next)
    if (written === ErrorCode.NONE) this.completeTransaction(txn)
    return written
  }

  /**
   * Aborts an ongoing transaction from the coordinator's side (a timeout, a new InitProducerId):
   * PrepareAbort at the bumped epoch (`fence`), then the markers and CompleteAbort.
   */
  private abortTransaction(txn: TransactionMetadata, fence: boolean): void {
    if (txn.pendingState !== null || txn.state !== TransactionState.Ongoing) return
    // The cluster's transaction version (Kafka's `transactionVersionLevel()`): not the client's request.
    const next = txn.prepareAbortOrCommit(TransactionState.PrepareAbort, this.now(), { tv: this.transactionVersionLevel(), fence })
    const run = this.stateManager.appendTransactionToLog(txn, next).then((errorCode) => {
      if (errorCode === ErrorCode.NONE) this.completeTransaction(txn)
      else this.logger.warn('cannot abort a transaction', { transactionalId: txn.transactionalId, errorCode })
    })
    this.track(run)
  }

  /** Kafka's `sendTxnMarkersCallback`: the markers, then Complete* (retried until written, while coordinating). */
  private completeTransaction(txn: TransactionMetadata): void {
    const generation = this.stateManager.generationOf(txn.transactionalId)
    const stillCurrent = () => this.stateManager.generationOf(txn.transactionalId) === generation && this.stateManager.transactions.get(txn.transactionalId) === txn
    const commit = txn.state === TransactionState.PrepareCommit
    const run = async () => {
      const sent = await this.markers.sendMarkers(
        {
          transactionalId: txn.transactionalId,
          producerId: txn.producerId,
          producerEpoch: txn.producerEpoch,
          commit,
          coordinatorEpoch: this.stateManager.coordinatorEpochOf(txn.transactionalId),
          transactionVersion: txn.clientTransactionVersion,
          partitions: txn.partitionList(),
        },
        stillCurrent,
      )
      if (!sent) return
      for (;;) {
        if (!stillCurrent()) return
        if (txn.pendingState !== null) {
          await new Promise((resolve) => setTimeout(resolve, 50).unref())
          continue
        }
        const errorCode = await this.stateManager.appendTransactionToLog(txn, txn.prepareComplete(this.now()))
        if (errorCode === ErrorCode.NONE) {
          this.logger.debug('completed transaction', { transactionalId: txn.transactionalId, state: txn.stateName })
          return
        }
        if (errorCode === ErrorCode.NOT_COORDINATOR) return
        await new Promise((resolve) => setTimeout(resolve, 100).unref())
      }
    }
    this.track(run())
  }

  private track(run: Promise<void>): void {
    const tracked = run.catch((err: Error) => this.logger.error('transaction completion failed', { error: err.message })).finally(() => this.completing.delete(tracked))
    this.completing.add(tracked)
  }

  // ---- Timeouts and expiration ----

  /** Kafka's `abortTimedOutTransactions`: Ongoing longer than its timeout -> aborted, its producer fenced. */
  abortTimedOutTransactions(): number {
    if (this.stateManager.statusError() !== ErrorCode.NONE) return 0
    const now = this.now()
    let aborted = 0
    for (const txn of this.stateManager.transactions.values()) {
      if (txn.state !== TransactionState.Ongoing || txn.pendingState !== null) continue
      if (txn.txnStartTimestamp + BigInt(txn.txnTimeoutMs) > now) continue
      this.logger.info('aborting a timed-out transaction', { transactionalId: txn.transactionalId, producerId: txn.producerId, producerEpoch: txn.producerEpoch, timeoutMs: txn.txnTimeoutMs })
      this.abortTransaction(txn, true)
      aborted++
    }
    return aborted
  }

  /** Kafka's `removeExpiredTransactionalIds`: ids with no transaction running, unused for transactional.id.expiration.ms. */
  async removeExpiredTransactionalIds(): Promise<number> {
    if (this.stateManager.statusError() !== ErrorCode.NONE) return 0
    const now = this.now()
    const expired = [...this.stateManager.transactions.values()].filter(
      (txn) =>
        txn.pendingState === null &&
        (txn.state === TransactionState.Empty || txn.state === TransactionState.CompleteCommit || txn.state === TransactionState.CompleteAbort) &&
        txn.txnLastUpdateTimestamp + BigInt(this.config.transactionalIdExpirationMs) <= now,
    )
    let removed = 0
    for (const txn of expired) {
      if ((await this.stateManager.appendTransactionToLog(txn, txn.prepareDead())) === ErrorCode.NONE) removed++
    }
    if (removed > 0) this.logger.info('removed expired transactional ids', { removed })
    return removed
  }

  // ---- DescribeTransactions, ListTransactions ----

  describeTransactions(transactionalIds: readonly string[]): TransactionDescription[] {
    return transactionalIds.map((transactionalId) => {
      const status = this.stateManager.statusError(transactionalId)
      const txn = status === ErrorCode.NONE ? this.stateManager.transactions.get(transactionalId) : undefined
      if (!txn) {
        return {
          errorCode: status !== ErrorCode.NONE ? status : ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
          transactionalId,
          transactionState: '',
          transactionTimeoutMs: 0,
          transactionStartTimeMs: -1n,
          producerId: -1n,
          producerEpoch: -1,
          topics: [],
        }
      }
      return {
        errorCode: ErrorCode.NONE,
        transactionalId,
        transactionState: txn.stateName,
        transactionTimeoutMs: txn.txnTimeoutMs,
        transactionStartTimeMs: txn.txnStartTimestamp,
        producerId: txn.producerId,
        producerEpoch: txn.producerEpoch,
        topics: [...txn.topicPartitions].map(([topic, ps]) => ({ topic, partitions: [...ps].sort((a, b) => a - b) })),
      }
    })
  }

  /**
   * Kafka's `listTransactionStates`: filtered by state names (unknown ones are answered back),
   * producer ids, and (v1) a minimum running time in ms. Not coordinating: the error, no list.
   */
  listTransactions(
    stateFilters: readonly string[],
    producerIdFilters: readonly bigint[],
    durationFilterMs: bigint,
  ): {
    errorCode: number
    unknownStateFilters: string[]
    transactionStates: Array<{ transactionalId: string; producerId: bigint; transactionState: string }>
  } {
    const status = this.stateManager.statusError()
    if (status !== ErrorCode.NONE) return { errorCode: status, unknownStateFilters: [], transactionStates: [] }
    const states = new Set<number>()
    const unknownStateFilters: string[] = []
    for (const name of stateFilters) {
      const s = transactionStateOf(name)
      if (s === undefined) unknownStateFilters.push(name)
      else states.add(s)
    }
    const producerIds = new Set(producerIdFilters)
    const now = this.now()
    const transactionStates = [...this.stateManager.transactions.values()]
      .filter((txn) => (stateFilters.length === 0 || states.has(txn.state)) && (producerIds.size === 0 || producerIds.has(txn.producerId)))
      .filter((txn) => durationFilterMs < 0n || (txn.state === TransactionState.Ongoing && now - txn.txnStartTimestamp >= durationFilterMs))
      .map((txn) => ({ transactionalId: txn.transactionalId, producerId: txn.producerId, transactionState: transactionStateName(txn.state) }))
    return { errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates }
  }
}
