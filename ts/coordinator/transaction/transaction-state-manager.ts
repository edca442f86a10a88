/**
 * Kafka's `TransactionStateManager`: the transactional ids this broker coordinates (their
 * ./transaction-metadata.ts), kept in memory per partition of `__transaction_state` (Kafka's
 * `transactionMetadataCache`), written through to the partition of each id (`partitionFor`,
 * Kafka's `Utils.abs(transactionalId.hashCode()) % numPartitions`: ts/coordinator/partition-for.ts)
 * as its leader, and loaded from it when this broker becomes that partition's leader.
 *
 * Election and resignation (Kafka's `loadTransactionsForTxnTopicPartition` and
 * `removeTransactionsForTxnTopicPartition`, driven by the replica manager's leadership changes;
 * a standalone broker elects itself for every partition at start), each partition on its own:
 * elected in a leader epoch newer than any seen for it, the manager replays that partition's log
 * (records past the high watermark included: on the leader they are on their way to the ISR), a
 * chunk at a time; meanwhile every request for one of its ids is answered
 * COORDINATOR_LOAD_IN_PROGRESS, and before any election or after a resignation NOT_COORDINATOR
 * (`statusError`). The partition's leader epoch is the coordinator epoch written in the markers
 * of its transactions, so that a partition leader refuses markers from a coordinator that has
 * since been replaced.
 *
 * The partition count (`numPartitions`) is the topic's as it exists, else
 * transaction.state.log.num.partitions (Kafka never changes the count of an existing
 * `__transaction_state`: a topic of one partition keeps every id in partition 0).
 *
 * Writes (`appendTransactionToLog`): one record in one batch to the id's partition, a leader
 * append with acks=all, answered when the ISR holds it (or it failed, or the timeout passed);
 * only then does the metadata take the new state. A write answered after its partition was
 * unloaded or reloaded changes nothing (NOT_COORDINATOR). The append errors map to the
 * coordinator's as Kafka maps them: NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT,
 * UNKNOWN_TOPIC_OR_PARTITION -> COORDINATOR_NOT_AVAILABLE; NOT_LEADER_OR_FOLLOWER,
 * KAFKA_STORAGE_ERROR -> NOT_COORDINATOR; others UNKNOWN_SERVER_ERROR.
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
import { loadCoordinatorLog } from '../coordinator-loader.js'
import { partitionFor } from '../partition-for.js'
import type { LogRecord, RecordBatch } from '../../protocol/record-types.js'
import { DEFAULT_TRANSACTION_VERSION, transactionLogValueVersion, type TransactionVersionLevel } from './transaction-version.js'
import { decodeTxnLogKey, decodeTxnLogValue, encodeTxnLogKey, encodeTxnLogValue, TRANSACTION_STATE_TOPIC } from './transaction-log.js'
import { TransactionMetadata, type TxnTransitMetadata } from './transaction-metadata.js'
import { TransactionState } from './transaction-state.js'

/** How long a write waits for the ISR (Kafka uses request.timeout.ms, 30 s). */
export const DEFAULT_TRANSACTION_LOG_APPEND_TIMEOUT_MS = 30_000

export type TxnStateReplicaManager = Pick<ReplicaManager, 'appendRecords' | 'maybeAddDelayedProduce' | 'getLog'>

/** One partition of `__transaction_state` as this broker knows it (Kafka's cache entry and loading state). */
class TxnPartition {
  status: 'inactive' | 'loading' | 'active' = 'inactive'
  /** The newest leader epoch of the partition seen; the coordinator epoch while active. */
  epoch: number | null = null
  /** Bumped by every load and unload: work begun under an older one changes nothing. */
  generation = 0
  readonly transactions = new Map<string, TransactionMetadata>()
  /** Waits for acks not answered yet: an unload answers them. */
  readonly waiting = new Set<(errorCode: number) => void>()
}

/**
 * The transactional ids of every partition this broker coordinates now (loaded), as one map: an
 * id is read and added in the partition it hashes to; ids of a partition still loading are not
 * seen (the coordinator checks `statusError` first).
 */
export class TransactionMetadataCache {
  private readonly manager: TransactionStateManager

  constructor(manager: TransactionStateManager) {
    this.manager = manager
  }

  get(transactionalId: string): TransactionMetadata | undefined {
    return this.manager.activePartitionOf(transactionalId)?.transactions.get(transactionalId)
  }

  has(transactionalId: string): boolean {
    return this.get(transactionalId) !== undefined
  }

  /** Adds an id to its partition, when that partition is loaded here (else nothing). */
  set(transactionalId: string, metadata: TransactionMetadata): this {
    this.manager.activePartitionOf(transactionalId)?.transactions.set(transactionalId, metadata)
    return this
  }

  delete(transactionalId: string): boolean {
    return this.manager.activePartitionOf(transactionalId)?.transactions.delete(transactionalId) ?? false
  }

  *values(): IterableIterator<TransactionMetadata> {
    for (const p of this.manager.activePartitions()) yield* p.transactions.values()
  }

  get size(): number {
    let n = 0
    for (const p of this.manager.activePartitions()) n += p.transactions.size
    return n
  }
}

export interface TransactionStateManagerOptions {
  /** How long a write waits for the ISR; default DEFAULT_TRANSACTION_LOG_APPEND_TIMEOUT_MS. */
  appendTimeoutMs?: number
  /** The partitions of `__transaction_state`: the topic's own count once it exists, else transaction.state.log.num.partitions; default 1. */
  numPartitions?: () => number
  /** The cluster's finalized transaction.version, which decides the value version written; default DEFAULT_TRANSACTION_VERSION. */
  transactionVersionLevel?: () => TransactionVersionLevel
}

export class TransactionStateManager {
  private readonly replicas: TxnStateReplicaManager
  private readonly logger: Logger
  private readonly appendTimeoutMs: number
  private readonly numPartitions: () => number
  private readonly transactionVersionLevel: () => TransactionVersionLevel
  private readonly partitions = new Map<number, TxnPartition>()
  private stopped = false
  /** The loaded transactional ids of every partition coordinated here. */
  readonly transactions = new TransactionMetadataCache(this)

  constructor(replicas: TxnStateReplicaManager, logger: Logger, options: TransactionStateManagerOptions = {}) {
    this.replicas = replicas
    this.logger = logger
    this.appendTimeoutMs = options.appendTimeoutMs ?? DEFAULT_TRANSACTION_LOG_APPEND_TIMEOUT_MS
    this.numPartitions = options.numPartitions ?? (() => 1)
    this.transactionVersionLevel = options.transactionVersionLevel ?? (() => DEFAULT_TRANSACTION_VERSION)
  }

  /** Kafka's `partitionFor`: the partition of `__transaction_state` that holds the id's state. */
  partitionFor(transactionalId: string): number {
    return partitionFor(transactionalId, this.numPartitions())
  }

  private partition(partition: number): TxnPartition {
    let p = this.partitions.get(partition)
    if (!p) this.partitions.set(partition, (p = new TxnPartition()))
    return p
  }

  /** The id's partition, when it is loaded here. */
  activePartitionOf(transactionalId: string): TxnPartition | undefined {
    const p = this.partitions.get(this.partitionFor(transactionalId))
    return p?.status === 'active' && !this.stopped ? p : undefined
  }

  /** The partitions loaded here. */
  activePartitions(): TxnPartition[] {
    return this.stopped ? [] : [...this.partitions.values()].filter((p) => p.status === 'active')
  }

  /**
   * For a transactional id: NONE while its partition is coordinated here; COORDINATOR_LOAD_IN_PROGRESS
   * while it loads; else NOT_COORDINATOR. Without one (ListTransactions, the timers):
   * COORDINATOR_LOAD_IN_PROGRESS while any partition loads (as Kafka's `listTransactionStates`),
   * else NONE when any is coordinated here, else NOT_COORDINATOR.
   */
  statusError(transactionalId?: string): number {
    if (this.stopped) return ErrorCode.NOT_COORDINATOR
    if (transactionalId !== undefined) return statusErrorOf(this.partitions.get(this.partitionFor(transactionalId))?.status ?? 'inactive')
    const all = [...this.partitions.values()]
    if (all.some((p) => p.status === 'loading')) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    return all.some((p) => p.status === 'active') ? ErrorCode.NONE : ErrorCode.NOT_COORDINATOR
  }

  /** The coordinator epoch of the id's partition (its leader epoch) while coordinated here; -1 otherwise. */
  coordinatorEpochOf(transactionalId: string): number {
    return this.partitions.get(this.partitionFor(transactionalId))?.epoch ?? -1
  }

  /** The generation of the load of the id's partition: work begun in it checks it is still current. */
  generationOf(transactionalId: string): number {
    return this.partitions.get(this.partitionFor(transactionalId))?.generation ?? 0
  }

  /** The partitions of `__transaction_state` loaded here. */
  loadedPartitions(): number[] {
    return [...this.partitions]
      .filter(([, p]) => p.status === 'active')
      .map(([n]) => n)
      .sort((a, b) => a - b)
  }

  /** The loaded transactional ids of one partition (the coordinator completes their half-ended transactions after a load). */
  transactionsOf(partition: number): TransactionMetadata[] {
    const p = this.partitions.get(partition)
    return p?.status === 'active' ? [...p.transactions.values()] : []
  }

  /**
   * Elected leader of `partition` in `leaderEpoch`: replays its log unless an election in a
   * newer epoch came first. Resolves true once loaded (then the caller completes the
   * transactions left half-ended), false when it was not (an older epoch, a resignation
   * meanwhile, or the log unreadable).
   */
  async load(partition: number, leaderEpoch: number): Promise<boolean> {
    if (this.stopped) return false
    const state = this.partition(partition)
    if (state.epoch !== null && leaderEpoch <= state.epoch) {
      if (state.status !== 'inactive' || leaderEpoch < state.epoch) return false
    }
    // Elected again in a newer epoch while loaded or loading: only the epoch moves (markers
    // carry the newer one), as the group coordinator's runtime does.
    if (state.status !== 'inactive') {
      state.epoch = leaderEpoch
      return false
    }
    state.epoch = leaderEpoch
    const generation = this.drop(state)
    state.status = 'loading'
    const started = Date.now()
    let records = 0
    try {
      const log = this.replicas.getLog({ topic: TRANSACTION_STATE_TOPIC, partition })
      if (log !== undefined) {
        const replay = (batch: RecordBatch, record: LogRecord) => {
          if (batch.isControl || record.key === null) return
          this.replay(state, record.key, record.value)
          records++
        }
        if (!(await loadCoordinatorLog(log, replay, () => generation === state.generation))) return false
      }
    } catch (err) {
      if (generation !== state.generation) return false
      this.logger.error('cannot load the transaction log: not coordinating its transactions', { partition, leaderEpoch, error: (err as Error).message })
      state.status = 'inactive'
      this.drop(state)
      return false
    }
    if (generation !== state.generation || this.stopped) return false
    state.status = 'active'
    this.logger.info('loaded the transaction log', { partition, records, transactionalIds: state.transactions.size, leaderEpoch, ms: Date.now() - started })
    return true
  }

  private replay(state: TxnPartition, key: Buffer, value: Buffer | null): void {
    let transactionalId: string
    try {
      transactionalId = decodeTxnLogKey(key)
    } catch (err) {
      this.logger.warn('skipped a transaction log record', { error: (err as Error).message })
      return
    }
    if (value === null) {
      state.transactions.delete(transactionalId)
      return
    }
    const v = decodeTxnLogValue(value)
    const partitions = new Map<string, Set<number>>()
    for (const [topic, ps] of v.partitions) partitions.set(topic, new Set(ps))
    state.transactions.set(
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

  /** Resigned as leader of `partition` in `leaderEpoch` (absent: any): unless elected in a newer one, its ids are dropped. */
  unload(partition: number, leaderEpoch?: number): void {
    const state = this.partitions.get(partition)
    if (!state || this.stopped) return
    if (leaderEpoch !== undefined && state.epoch !== null && state.epoch > leaderEpoch) return
    if (leaderEpoch !== undefined) state.epoch = leaderEpoch
    if (state.status === 'inactive') return
    this.logger.info('resigned as transaction coordinator', { partition, leaderEpoch, transactionalIds: state.transactions.size })
    state.status = 'inactive'
    this.drop(state)
  }

  stop(): void {
    this.stopped = true
    for (const state of this.partitions.values()) {
      state.status = 'inactive'
      this.drop(state)
    }
  }

  private drop(state: TxnPartition): number {
    state.transactions.clear()
    for (const answer of [...state.waiting]) answer(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    return ++state.generation
  }

  /**
   * Kafka's `appendTransactionToLog`: writes `next` for `metadata` (prepared: its pendingState
   * is set) and, once the ISR holds it, applies it. Resolves to the coordinator's error code
   * (NONE: applied; else the pending change is dropped).
   */
  async appendTransactionToLog(metadata: TransactionMetadata, next: TxnTransitMetadata): Promise<number> {
    const partition = this.partitionFor(metadata.transactionalId)
    const state = this.partition(partition)
    const generation = state.generation
    const value =
      next.state === TransactionState.Dead
        ? null
        : encodeTxnLogValue(
            {
              producerId: next.producerId,
              producerEpoch: next.producerEpoch,
              transactionTimeoutMs: next.txnTimeoutMs,
              state: next.state,
              partitions: new Map([...next.partitions].map(([t, ps]) => [t, [...ps].sort((a, b) => a - b)])),
              lastUpdateTimestampMs: next.txnLastUpdateTimestamp,
              startTimestampMs: next.txnStartTimestamp,
              clientTransactionVersion: next.clientTransactionVersion,
            },
            transactionLogValueVersion(this.transactionVersionLevel()),
          )
    const appendError = await this.appendAndWait(state, partition, encodeTxnLogKey(metadata.transactionalId), value, Number(next.txnLastUpdateTimestamp))
    if (generation !== state.generation || state.status !== 'active' || state.transactions.get(metadata.transactionalId) !== metadata) {
      metadata.abortTransition()
      return ErrorCode.NOT_COORDINATOR
    }
    if (appendError !== ErrorCode.NONE) {
      metadata.abortTransition()
      this.logger.warn('transaction state not written', { transactionalId: metadata.transactionalId, appendError })
      return coordinatorErrorOf(appendError, 'transaction')
    }
    metadata.completeTransitionTo(next)
    if (next.state === TransactionState.Dead) state.transactions.delete(metadata.transactionalId)
    return ErrorCode.NONE
  }

  private async appendAndWait(state: TxnPartition, partition: number, key: Buffer, value: Buffer | null, nowMs: number): Promise<number> {
    const tp = { topic: TRANSACTION_STATE_TOPIC, partition }
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
        if (!state.waiting.delete(answer)) return
        resolve(code)
      }
      state.waiting.add(answer)
      this.replicas.maybeAddDelayedProduce(ACKS_ALL, this.appendTimeoutMs, [{ ...tp, result: appended }], (results) => answer(results[0]!.errorCode))
    })
  }
}

function statusErrorOf(status: TxnPartition['status']): number {
  return status === 'active' ? ErrorCode.NONE : status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NOT_COORDINATOR
}
