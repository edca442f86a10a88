/**
 * Kafka's `TransactionStateManager`: the transactional ids this broker coordinates (their
 * ./transaction-metadata.ts), kept in memory, written through to `__transaction_state-0`
 * (./transaction-log.ts) as its leader, and loaded from it when this broker becomes that
 * partition's leader.
 *
 * Election and resignation (Kafka's `loadTransactionsForTxnTopicPartition` and
 * `removeTransactionsForTxnTopicPartition`, driven by the replica manager's leadership changes;
 * a standalone broker elects itself at start): elected in a leader epoch newer than any seen,
 * the manager replays the log (records past the high watermark included: on the leader they are
 * on their way to the ISR), a chunk at a time; meanwhile every request is answered
 * COORDINATOR_LOAD_IN_PROGRESS, and before any election or after a resignation NOT_COORDINATOR.
 * The leader epoch is the coordinator epoch written in every marker, so that a partition leader
 * refuses markers from a coordinator that has since been replaced.
 *
 * Writes (`appendTransactionToLog`): one record in one batch, a leader append with acks=all,
 * answered when the ISR holds it (or it failed, or the timeout passed); only then does the
 * metadata take the new state. A write answered after the manager was unloaded or reloaded
 * changes nothing (NOT_COORDINATOR). The append errors map to the coordinator's as Kafka maps
 * them: NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, UNKNOWN_TOPIC_OR_PARTITION ->
 * COORDINATOR_NOT_AVAILABLE; NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> NOT_COORDINATOR;
 * others UNKNOWN_SERVER_ERROR.
 *
 * Compaction: the log is an ordinary compacted topic (./transaction-log.ts
 * `transactionLogConfig`), cleaned by the broker's log cleaner on every replica; the load reads
 * each batch from its own offsets (a cleaned log has gaps), and a tombstone still there removes
 * its id as when it was written.
 */
import { coordinatorErrorOf } from '../coordinator-errors.js'
import type { Logger } from '../../logger.js'
import { buildBatch } from '../../protocol/batch-builder.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { ACKS_ALL } from '../../replica/partition.js'
import type { AppendRecordsResult, ReplicaManager } from '../../replica/replica-manager.js'
import { kafkaErrorCodeOf } from '../../storage/errors.js'
import { decodeTxnLogKey, decodeTxnLogValue, encodeTxnLogKey, encodeTxnLogValue, TRANSACTION_STATE_PARTITION, TRANSACTION_STATE_TOPIC_PARTITION } from './transaction-log.js'
import { TransactionMetadata, type TxnTransitMetadata } from './transaction-metadata.js'
import { TransactionState } from './transaction-state.js'

const REPLAY_READ_BYTES = 1024 * 1024
/** How long a write waits for the ISR (Kafka uses request.timeout.ms, 30 s). */
export const DEFAULT_TRANSACTION_LOG_APPEND_TIMEOUT_MS = 30_000

export type TxnStateReplicaManager = Pick<ReplicaManager, 'appendRecords' | 'maybeAddDelayedProduce' | 'getLog'>

export class TransactionStateManager {
  private readonly replicas: TxnStateReplicaManager
  private readonly logger: Logger
  private readonly appendTimeoutMs: number
  readonly transactions = new Map<string, TransactionMetadata>()
  private status: 'inactive' | 'loading' | 'active' = 'inactive'
  private stopped = false
  /** The newest leader epoch of the partition seen; the coordinator epoch while active. */
  private epoch: number | null = null
  /** Bumped by every load and unload: work begun under an older one changes nothing. */
  private generation = 0
  /** Waits for acks not answered yet: an unload answers them. */
  private readonly waiting = new Set<(errorCode: number) => void>()

  constructor(replicas: TxnStateReplicaManager, logger: Logger, appendTimeoutMs = DEFAULT_TRANSACTION_LOG_APPEND_TIMEOUT_MS) {
    this.replicas = replicas
    this.logger = logger
    this.appendTimeoutMs = appendTimeoutMs
  }

  /** NONE while coordinating; COORDINATOR_LOAD_IN_PROGRESS while loading; else NOT_COORDINATOR. */
  statusError(): number {
    if (this.stopped || this.status === 'inactive') return ErrorCode.NOT_COORDINATOR
    return this.status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE
  }

  /** The coordinator epoch (the partition's leader epoch) while coordinating. */
  get coordinatorEpoch(): number {
    return this.epoch ?? -1
  }

  /** The generation of the current load: work begun in it checks it is still current. */
  get currentGeneration(): number {
    return this.generation
  }

  /**
   * Elected in `leaderEpoch`: replays the log unless an election in a newer epoch came first.
   * Resolves true once loaded (then the caller completes the transactions left half-ended),
   * false when it was not (an older epoch, a resignation meanwhile, or the log unreadable).
   */
  async load(partition: number, leaderEpoch: number): Promise<boolean> {
    if (partition !== TRANSACTION_STATE_PARTITION || this.stopped) return false
    if (this.epoch !== null && leaderEpoch <= this.epoch) {
      if (this.status !== 'inactive' || leaderEpoch < this.epoch) return false
    }
    // Elected again in a newer epoch while loaded or loading: only the epoch moves (markers
    // carry the newer one), as the group coordinator's runtime does.
    if (this.status !== 'inactive') {
      this.epoch = leaderEpoch
      return false
    }
    this.epoch = leaderEpoch
    const generation = this.drop()
    this.status = 'loading'
    const started = Date.now()
    let records = 0
    try {
      const log = this.replicas.getLog(TRANSACTION_STATE_TOPIC_PARTITION)
      if (log !== undefined) {
        let offset = log.logStartOffset()
        while (offset < log.logEndOffset()) {
          const batches = log.readBatches(offset, { maxBytes: REPLAY_READ_BYTES, isolation: 'LOG_END' })
          if (batches.length === 0) break
          for (const batch of batches) {
            for (const record of batch.records) {
              if (record.offset < offset || batch.isControl || record.key === null) continue
              this.replay(record.key, record.value)
              records++
            }
            offset = batch.lastOffset + 1n
          }
          await new Promise((resolve) => setImmediate(resolve))
          if (generation !== this.generation) return false
        }
      }
    } catch (err) {
      if (generation !== this.generation) return false
      this.logger.error('cannot load the transaction log: not coordinating transactions', { leaderEpoch, error: (err as Error).message })
      this.status = 'inactive'
      this.drop()
      return false
    }
    if (generation !== this.generation) return false
    this.status = 'active'
    this.logger.info('loaded the transaction log', { records, transactionalIds: this.transactions.size, leaderEpoch, ms: Date.now() - started })
    return true
  }

  private replay(key: Buffer, value: Buffer | null): void {
    let transactionalId: string
    try {
      transactionalId = decodeTxnLogKey(key)
    } catch (err) {
      this.logger.warn('skipped a transaction log record', { error: (err as Error).message })
      return
    }
    if (value === null) {
      this.transactions.delete(transactionalId)
      return
    }
    const v = decodeTxnLogValue(value)
    const partitions = new Map<string, Set<number>>()
    for (const [topic, ps] of v.partitions) partitions.set(topic, new Set(ps))
    this.transactions.set(
      transactionalId,
      new TransactionMetadata(transactionalId, {
        producerId: v.producerId,
        lastProducerId: -1n,
        producerEpoch: v.producerEpoch,
        lastProducerEpoch: -1,
        txnTimeoutMs: v.transactionTimeoutMs,
        state: v.state,
        partitions,
        txnStartTimestamp: v.startTimestampMs,
        txnLastUpdateTimestamp: v.lastUpdateTimestampMs,
        clientTransactionVersion: v.clientTransactionVersion,
      }),
    )
  }

  /** Resigned in `leaderEpoch` (absent: any): unless elected in a newer one, everything is dropped. */
  unload(partition: number, leaderEpoch?: number): void {
    if (partition !== TRANSACTION_STATE_PARTITION || this.stopped) return
    if (leaderEpoch !== undefined && this.epoch !== null && this.epoch > leaderEpoch) return
    if (leaderEpoch !== undefined) this.epoch = leaderEpoch
    if (this.status === 'inactive') return
    this.logger.info('resigned as transaction coordinator', { leaderEpoch, transactionalIds: this.transactions.size })
    this.status = 'inactive'
    this.drop()
  }

  stop(): void {
    this.stopped = true
    this.status = 'inactive'
    this.drop()
  }

  private drop(): number {
    this.transactions.clear()
    for (const answer of [...this.waiting]) answer(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    return ++this.generation
  }

  /**
   * Kafka's `appendTransactionToLog`: writes `next` for `metadata` (prepared: its pendingState
   * is set) and, once the ISR holds it, applies it. Resolves to the coordinator's error code
   * (NONE: applied; else the pending change is dropped).
   */
  async appendTransactionToLog(metadata: TransactionMetadata, next: TxnTransitMetadata): Promise<number> {
    const generation = this.generation
    const value =
      next.state === TransactionState.Dead
        ? null
        : encodeTxnLogValue({
            producerId: next.producerId,
            producerEpoch: next.producerEpoch,
            transactionTimeoutMs: next.txnTimeoutMs,
            state: next.state,
            partitions: new Map([...next.partitions].map(([t, ps]) => [t, [...ps].sort((a, b) => a - b)])),
            lastUpdateTimestampMs: next.txnLastUpdateTimestamp,
            startTimestampMs: next.txnStartTimestamp,
            clientTransactionVersion: next.clientTransactionVersion,
          })
    const appendError = await this.appendAndWait(encodeTxnLogKey(metadata.transactionalId), value, Number(next.txnLastUpdateTimestamp))
    if (generation !== this.generation || this.transactions.get(metadata.transactionalId) !== metadata) {
      metadata.abortTransition()
      return ErrorCode.NOT_COORDINATOR
    }
    if (appendError !== ErrorCode.NONE) {
      metadata.abortTransition()
      this.logger.warn('transaction state not written', { transactionalId: metadata.transactionalId, appendError })
      return coordinatorErrorOf(appendError, 'transaction')
    }
    metadata.completeTransitionTo(next)
    if (next.state === TransactionState.Dead) this.transactions.delete(metadata.transactionalId)
    return ErrorCode.NONE
  }

  private async appendAndWait(key: Buffer, value: Buffer | null, nowMs: number): Promise<number> {
    const tp = TRANSACTION_STATE_TOPIC_PARTITION
    let appended: AppendRecordsResult
    try {
      const batch = buildBatch([{ key, value, timestamp: BigInt(nowMs) }], { nowMs })
      const result = this.replicas.appendRecords(tp, batch, ACKS_ALL, 'COORDINATOR')
      appended = result instanceof Promise ? await result : result
    } catch (err) {
      return kafkaErrorCodeOf(err)
    }
    if (appended.errorCode !== ErrorCode.NONE || appended.info === null) return appended.errorCode
    return new Promise<number>((resolve) => {
      const answer = (code: number) => {
        if (!this.waiting.delete(answer)) return
        resolve(code)
      }
      this.waiting.add(answer)
      this.replicas.maybeAddDelayedProduce(ACKS_ALL, this.appendTimeoutMs, [{ ...tp, result: appended }], (results) => answer(results[0]!.errorCode))
    })
  }
}
