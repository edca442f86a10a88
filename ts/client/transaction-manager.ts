/**
 * Kafka's TransactionManager: the producer id, epoch and per-partition sequence numbers of an
 * idempotent producer, and, with a transactional.id, the transaction's states and its requests to
 * the transaction coordinator (classic transactions, KIP-98):
 *
 *   UNINITIALIZED -initTransactions-> READY -beginTransaction-> IN_TRANSACTION
 *   IN_TRANSACTION -commitTransaction-> COMMITTING_TRANSACTION -EndTxn-> READY
 *   IN_TRANSACTION | ABORTABLE_ERROR -abortTransaction-> ABORTING_TRANSACTION -EndTxn-> READY
 *   a batch that fails in a transaction: ABORTABLE_ERROR (commit then throws; abort recovers)
 *   fenced (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH), not authorized: FATAL_ERROR (close it)
 *
 * Requests: InitProducerId (to any broker without transactional.id; to the transaction
 * coordinator with one, found by FindCoordinator key type 1), then per transaction version
 * (KIP-890; the cluster's finalized `transaction.version`, read from ApiVersions when the
 * transactions are initialized and again when each one begins, as Kafka's
 * `maybeUpdateTransactionV2Enabled`):
 *
 * - version 1 (a level below 2, or a broker without features): AddPartitionsToTxn v0-v3 for each
 *   partition before its first batch of the transaction goes (the Sender waits for it),
 *   AddOffsetsToTxn then TxnOffsetCommit v0-v4 (to the group's coordinator) for
 *   sendOffsetsToTransaction, EndTxn v0-v4 to commit or abort; Produce stays at v11;
 * - version 2 (level 2): the partitions join the transaction through the transactional Produce
 *   v12 itself and the group through TxnOffsetCommit v5 (no AddPartitionsToTxn or
 *   AddOffsetsToTxn), and EndTxn v5 answers the producer id and epoch to go on with: the
 *   coordinator bumps the epoch at every transaction end, so every partition starts again at
 *   sequence 0 (an exhausted epoch comes back as a new producer id). An abort after a batch of
 *   unknown outcome needs no InitProducerId of its own: EndTxn's bump is the new epoch.
 *
 * EndTxn is skipped when nothing joined the transaction. Coordinator errors (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) find
 * the coordinator again; COORDINATOR_LOAD_IN_PROGRESS and CONCURRENT_TRANSACTIONS are retried
 * after retry.backoff.ms, until max.block.ms.
 *
 * Sequences: a batch takes the partition's next sequence when first sent; a batch that fails for
 * good after the broker refused it (it was not appended) gives its range back: the later batches
 * of the partition get sequences lower by its record count (`adjustSequences`, called by the
 * Sender). When the outcome of a failed batch is unknown (a timeout, a lost connection), the
 * producer takes a new epoch (InitProducerId with its current id and epoch, KIP-360) once nothing
 * is in flight, and every partition starts again at sequence 0.
 */
import { addOffsetsToTxnCodec } from '../protocol/apis/add-offsets-to-txn.js'
import { addPartitionsToTxnCodec } from '../protocol/apis/add-partitions-to-txn.js'
import type { ApiCodec } from '../protocol/apis/api.js'
import { ZERO_UUID } from '../protocol/apis/common.js'
import { endTxnCodec } from '../protocol/apis/end-txn.js'
import { CoordinatorType, findCoordinatorCodec } from '../protocol/apis/find-coordinator.js'
import { initProducerIdCodec, type InitProducerIdRequest } from '../protocol/apis/init-producer-id.js'
import { txnOffsetCommitCodec } from '../protocol/apis/txn-offset-commit.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { KafkaClientError } from './errors.js'
import type { NetworkClient } from './network-client.js'
import type { ConsumerGroupMetadata } from './consumer-group-metadata.js'

/**
 * The newest versions this producer sends while it speaks transaction version 1: Produce v12,
 * TxnOffsetCommit v5 and EndTxn v5 mean version 2 to a broker (it adds partitions itself and
 * bumps the epoch at every transaction end), so, as Kafka's producer does when transaction
 * version 2 is not in use, it stays below them.
 */
export const TRANSACTION_V1_MAX_VERSIONS = { produce: 11, txnOffsetCommit: 4, endTxn: 4 } as const

/** The feature whose finalized level says which transaction protocol the cluster speaks (KIP-890). */
const TRANSACTION_VERSION_FEATURE = 'transaction.version'

export type TransactionState = 'UNINITIALIZED' | 'INITIALIZING' | 'READY' | 'IN_TRANSACTION' | 'COMMITTING_TRANSACTION' | 'ABORTING_TRANSACTION' | 'ABORTABLE_ERROR' | 'FATAL_ERROR'

export interface OffsetToCommit {
  topic: string
  partition: number
  /** The next offset to read (the last one processed + 1). */
  offset: bigint
  leaderEpoch?: number
  metadata?: string | null
}

export interface TransactionManagerOptions {
  transactionalId: string | null
  transactionTimeoutMs: number
  retryBackoffMs: number
  maxBlockMs: number
}

/** Errors that end the producer (it must be closed), as Kafka's fatal transactional errors. */
const FATAL = new Set<number>([
  ErrorCode.PRODUCER_FENCED,
  ErrorCode.INVALID_PRODUCER_EPOCH,
  ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ErrorCode.INVALID_PRODUCER_ID_MAPPING,
  ErrorCode.INVALID_TXN_STATE,
  ErrorCode.UNSUPPORTED_VERSION,
  ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
])

/** Errors after which the coordinator is looked up again. */
const COORDINATOR_MOVED = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE])
/** Errors retried as they are after a backoff. */
const RETRY = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION])

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const tpKey = (topic: string, partition: number) => `${topic}\u0000${partition}`

export class TransactionManager {
  producerId = -1n
  producerEpoch = -1
  state: TransactionState = 'UNINITIALIZED'
  /** Set by a batch whose outcome is unknown: the Sender bumps the epoch once nothing is in flight. */
  epochBumpNeeded = false
  private lastError: KafkaClientError | null = null
  private readonly nextSequences = new Map<string, number>()
  /** Partitions where a batch of the current epoch was acknowledged. */
  private readonly ackedPartitions = new Set<string>()
  private readonly partitionsInTransaction = new Set<string>()
  private readonly pendingPartitions = new Map<string, { topic: string; partition: number }>()
  private adding: Promise<void> | null = null
  private offsetsAdded = false
  private coordinators = new Map<string, number>()
  /** Transaction version 2 in use (Kafka's `isTransactionV2Enabled`). */
  private transactionV2 = false
  /** The finalized features' epoch `transactionV2` was decided at. */
  private featuresEpoch = -1n

  constructor(
    private readonly client: NetworkClient,
    private readonly options: TransactionManagerOptions,
  ) {}

  get transactionalId(): string | null {
    return this.options.transactionalId
  }

  get isTransactional(): boolean {
    return this.options.transactionalId !== null
  }

  get hasProducerId(): boolean {
    return this.producerId >= 0n
  }

  get error(): KafkaClientError | null {
    return this.lastError
  }

  /** Whether this producer speaks transaction version 2 (KIP-890 part 2) now. */
  get isTransactionV2Enabled(): boolean {
    return this.transactionV2
  }

  /** The newest Produce version to send: v12 is transaction version 2 for a transactional producer. */
  get produceMaxVersion(): number | undefined {
    return this.transactionV2 ? undefined : TRANSACTION_V1_MAX_VERSIONS.produce
  }

  /**
   * Kafka's `maybeUpdateTransactionV2Enabled`: the version follows the finalized
   * `transaction.version` seen last, decided only between transactions (at initTransactions and
   * beginTransaction), never in the middle of one.
   */
  private maybeUpdateTransactionV2Enabled(): void {
    const epoch = this.client.finalizedFeaturesEpoch
    if (epoch <= this.featuresEpoch) return
    this.featuresEpoch = epoch
    this.transactionV2 = (this.client.finalizedFeatureLevel(TRANSACTION_VERSION_FEATURE) ?? 0) >= 2
  }

  // --- sequences -------------------------------------------------------------------------------

  /** The sequence for the next batch of a partition, and moves it past `count` records. */
  takeSequence(topic: string, partition: number, count: number): number {
    const key = tpKey(topic, partition)
    const seq = this.nextSequences.get(key) ?? 0
    this.nextSequences.set(key, (seq + count) % 0x80000000)
    return seq
  }

  /** A batch of `count` records from `baseSequence` failed unappended: its range is given back. */
  giveBackSequences(topic: string, partition: number, count: number): void {
    const key = tpKey(topic, partition)
    this.nextSequences.set(key, Math.max(0, (this.nextSequences.get(key) ?? 0) - count))
  }

  /** Every partition starts again at sequence 0 (a new producer id or epoch). */
  resetSequences(): void {
    this.nextSequences.clear()
    this.ackedPartitions.clear()
  }

  /** A batch of the partition was acknowledged with the current epoch. */
  onAcked(topic: string, partition: number): void {
    this.ackedPartitions.add(tpKey(topic, partition))
  }

  /**
   * Whether the broker acknowledged a batch of this epoch on the partition: until then it knows no
   * sequence of ours there and takes a first batch at any sequence (Kafka's
   * ProducerAppendInfo accepts a new producer's first sequence as it comes), so a later batch
   * must not go before the first one is answered.
   */
  hasAcked(topic: string, partition: number): boolean {
    return this.ackedPartitions.has(tpKey(topic, partition))
  }

  // --- producer id -----------------------------------------------------------------------------

  /**
   * InitProducerId: a producer id (or, with `bump`, the same id with the next epoch, KIP-360). For
   * a transactional producer it goes to the transaction coordinator and fences older instances of
   * the same transactional.id.
   */
  async initProducerId(bump = false): Promise<void> {
    const deadline = Date.now() + this.options.maxBlockMs
    const request = {
      transactionalId: this.options.transactionalId,
      transactionTimeoutMs: this.options.transactionTimeoutMs,
      producerId: bump ? this.producerId : -1n,
      producerEpoch: bump ? this.producerEpoch : -1,
      enable2Pc: false,
      keepPreparedTxn: false,
    }
    const res = this.isTransactional
      ? await this.coordinatorRequest(CoordinatorType.TRANSACTION, this.options.transactionalId!, initProducerIdCodec, request, (r) => r.errorCode, 'InitProducerId', deadline)
      : await this.anyNodeRequest(request, deadline)
    this.producerId = res.producerId
    this.producerEpoch = res.producerEpoch
    this.resetSequences()
    this.epochBumpNeeded = false
  }

  private async anyNodeRequest(request: InitProducerIdRequest, deadline: number) {
    for (let attempt = 0; ; attempt++) {
      let problem: KafkaClientError
      try {
        const nodeId = this.client.candidateNodes()[0]!
        const res = await this.client.request(nodeId, initProducerIdCodec, request)
        if (res.errorCode === ErrorCode.NONE) return res
        problem = KafkaClientError.fromErrorCode(res.errorCode, 'InitProducerId')
        if (!problem.retriable && !RETRY.has(res.errorCode)) throw problem
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        problem = err
      }
      if (Date.now() >= deadline) throw problem
      await sleep(Math.min(1000, this.options.retryBackoffMs * 2 ** attempt))
    }
  }

  // --- transactions ----------------------------------------------------------------------------

  private illegal(what: string): KafkaClientError {
    return new KafkaClientError('ILLEGAL_STATE', `cannot ${what} in state ${this.state}`)
  }

  private checkNotFatal(): void {
    if (this.state === 'FATAL_ERROR') throw this.lastError ?? this.illegal('continue')
  }

  async initTransactions(): Promise<void> {
    if (!this.isTransactional) throw new KafkaClientError('ILLEGAL_STATE', 'initTransactions needs a transactional.id')
    this.checkNotFatal()
    if (this.state !== 'UNINITIALIZED') throw this.illegal('initTransactions')
    this.state = 'INITIALIZING'
    try {
      await this.initProducerId()
      this.maybeUpdateTransactionV2Enabled()
      this.state = 'READY'
    } catch (err) {
      this.fail(err)
      throw err
    }
  }

  beginTransaction(): void {
    this.checkNotFatal()
    if (this.state !== 'READY') throw this.illegal('beginTransaction')
    this.maybeUpdateTransactionV2Enabled()
    this.state = 'IN_TRANSACTION'
  }

  /** Why a send may not go now (null: it may). */
  sendError(): KafkaClientError | null {
    if (!this.isTransactional) return null
    if (this.state === 'IN_TRANSACTION') return null
    if (this.state === 'ABORTABLE_ERROR' || this.state === 'FATAL_ERROR') return this.lastError ?? this.illegal('send')
    return this.illegal('send (no transaction begun)')
  }

  /**
   * Whether batches of the partition may be sent: outside transactions always; in one, once
   * added (version 2: at once, its Produce adds it).
   */
  isPartitionAdded(topic: string, partition: number): boolean {
    if (!this.isTransactional) return true
    const key = tpKey(topic, partition)
    if (this.partitionsInTransaction.has(key)) return true
    if (this.transactionV2 && (this.state === 'IN_TRANSACTION' || this.state === 'COMMITTING_TRANSACTION')) {
      this.partitionsInTransaction.add(key)
      return true
    }
    if (this.state === 'IN_TRANSACTION' || this.state === 'COMMITTING_TRANSACTION') this.pendingPartitions.set(key, { topic, partition })
    return false
  }

  get hasPendingPartitions(): boolean {
    return this.pendingPartitions.size > 0 && this.adding === null
  }

  /** AddPartitionsToTxn for the partitions waiting; `onDone` once they are in (or it failed). */
  addPendingPartitions(onDone: () => void): void {
    if (this.pendingPartitions.size === 0 || this.adding !== null) return
    const adding = new Map(this.pendingPartitions)
    this.pendingPartitions.clear()
    const byTopic = new Map<string, number[]>()
    for (const { topic, partition } of adding.values()) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition])
    const request = {
      transactions: [],
      v3AndBelowTransactionalId: this.options.transactionalId!,
      v3AndBelowProducerId: this.producerId,
      v3AndBelowProducerEpoch: this.producerEpoch,
      v3AndBelowTopics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
    }
    const errorOf = (r: { resultsByTopicV3AndBelow: Array<{ resultsByPartition: Array<{ partitionErrorCode: number }> }> }) => {
      for (const t of r.resultsByTopicV3AndBelow)
        for (const p of t.resultsByPartition) if (p.partitionErrorCode !== ErrorCode.NONE && p.partitionErrorCode !== ErrorCode.OPERATION_NOT_ATTEMPTED) return p.partitionErrorCode
      return ErrorCode.NONE
    }
    this.adding = this.coordinatorRequest(
      CoordinatorType.TRANSACTION,
      this.options.transactionalId!,
      addPartitionsToTxnCodec,
      request,
      errorOf,
      'AddPartitionsToTxn',
      Date.now() + this.options.maxBlockMs,
      {
        maxVersion: 3,
        retryBackoffMs: 20,
      },
    ).then(
      () => {
        for (const key of adding.keys()) this.partitionsInTransaction.add(key)
      },
      (err: unknown) => this.fail(err),
    )
    void this.adding.finally(() => {
      this.adding = null
      onDone()
    })
  }

  /** A batch of the transaction failed: the transaction can only be aborted now. */
  batchFailed(error: KafkaClientError): void {
    if (FATAL.has(error.errorCode)) this.fail(error)
    else if (this.isTransactional && this.state !== 'FATAL_ERROR' && this.state !== 'ABORTING_TRANSACTION') {
      this.lastError ??= error
      this.state = 'ABORTABLE_ERROR'
    }
  }

  private fail(err: unknown): void {
    const e = err instanceof KafkaClientError ? err : new KafkaClientError('UNKNOWN_SERVER_ERROR', String(err))
    this.lastError = e
    this.state = FATAL.has(e.errorCode) || this.state === 'INITIALIZING' ? 'FATAL_ERROR' : this.isTransactional ? 'ABORTABLE_ERROR' : this.state
  }

  async sendOffsetsToTransaction(offsets: readonly OffsetToCommit[], group: ConsumerGroupMetadata): Promise<void> {
    this.checkNotFatal()
    if (this.state !== 'IN_TRANSACTION') throw this.state === 'ABORTABLE_ERROR' ? this.lastError! : this.illegal('sendOffsetsToTransaction')
    const deadline = Date.now() + this.options.maxBlockMs
    try {
      if (!this.transactionV2) {
        await this.coordinatorRequest(
          CoordinatorType.TRANSACTION,
          this.options.transactionalId!,
          addOffsetsToTxnCodec,
          { transactionalId: this.options.transactionalId!, producerId: this.producerId, producerEpoch: this.producerEpoch, groupId: group.groupId },
          (r) => r.errorCode,
          'AddOffsetsToTxn',
          deadline,
        )
      }
      // Version 2: TxnOffsetCommit v5 adds the group's partition itself; the transaction has begun.
      this.offsetsAdded = true
      const byTopic = new Map<string, OffsetToCommit[]>()
      for (const o of offsets) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o])
      await this.coordinatorRequest(
        CoordinatorType.GROUP,
        group.groupId,
        txnOffsetCommitCodec,
        {
          transactionalId: this.options.transactionalId!,
          groupId: group.groupId,
          producerId: this.producerId,
          producerEpoch: this.producerEpoch,
          generationIdOrMemberEpoch: group.generationId ?? -1,
          memberId: group.memberId ?? '',
          groupInstanceId: group.groupInstanceId ?? null,
          topics: [...byTopic].map(([name, list]) => ({
            name,
            topicId: ZERO_UUID,
            partitions: list.map((o) => ({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch ?? -1, committedMetadata: o.metadata ?? '' })),
          })),
        },
        (r) => {
          for (const t of r.topics) for (const p of t.partitions) if (p.errorCode !== ErrorCode.NONE) return p.errorCode
          return ErrorCode.NONE
        },
        'TxnOffsetCommit',
        deadline,
        { maxVersion: this.transactionV2 ? undefined : TRANSACTION_V1_MAX_VERSIONS.txnOffsetCommit },
      )
    } catch (err) {
      this.fail(err)
      throw err
    }
  }

  /** Commit: from IN_TRANSACTION; the caller flushes, then `endTransaction(true)`. */
  beginCommit(): void {
    this.checkNotFatal()
    if (this.state === 'ABORTABLE_ERROR') throw this.lastError!
    if (this.state !== 'IN_TRANSACTION') throw this.illegal('commitTransaction')
    this.state = 'COMMITTING_TRANSACTION'
  }

  beginAbort(): void {
    this.checkNotFatal()
    if (this.state !== 'IN_TRANSACTION' && this.state !== 'ABORTABLE_ERROR' && this.state !== 'COMMITTING_TRANSACTION') throw this.illegal('abortTransaction')
    this.state = 'ABORTING_TRANSACTION'
  }

  /** A commit whose flush saw a batch fail: the transaction must be aborted. */
  commitFailed(): KafkaClientError | null {
    if (this.state === 'ABORTABLE_ERROR' || this.state === 'FATAL_ERROR') return this.lastError
    return null
  }

  /** EndTxn (skipped when nothing joined the transaction), then READY. */
  async endTransaction(commit: boolean): Promise<void> {
    if (this.adding) await this.adding
    const joined = this.partitionsInTransaction.size > 0 || this.offsetsAdded
    try {
      if (joined) {
        const res = await this.coordinatorRequest(
          CoordinatorType.TRANSACTION,
          this.options.transactionalId!,
          endTxnCodec,
          { transactionalId: this.options.transactionalId!, producerId: this.producerId, producerEpoch: this.producerEpoch, committed: commit },
          (r) => r.errorCode,
          commit ? 'EndTxn (commit)' : 'EndTxn (abort)',
          Date.now() + this.options.maxBlockMs,
          { maxVersion: this.transactionV2 ? undefined : TRANSACTION_V1_MAX_VERSIONS.endTxn },
        )
        // EndTxn v5 (version 2): the coordinator bumped the epoch (or moved to a new producer id).
        if (this.transactionV2 && res.producerId >= 0n && res.producerEpoch >= 0) {
          this.producerId = res.producerId
          this.producerEpoch = res.producerEpoch
          this.resetSequences()
          this.epochBumpNeeded = false
        }
      }
      if (!commit && this.epochBumpNeeded) await this.initProducerId(true)
    } catch (err) {
      this.fail(err)
      throw err
    }
    this.partitionsInTransaction.clear()
    this.pendingPartitions.clear()
    this.offsetsAdded = false
    this.lastError = null
    this.state = 'READY'
  }

  // --- coordinators ----------------------------------------------------------------------------

  private async findCoordinator(keyType: number, key: string, deadline: number): Promise<number> {
    const cacheKey = `${keyType}:${key}`
    for (let attempt = 0; ; attempt++) {
      const known = this.coordinators.get(cacheKey)
      if (known !== undefined) return known
      let problem: KafkaClientError
      try {
        const nodeId = this.client.candidateNodes()[0]!
        const res = await this.client.request(nodeId, findCoordinatorCodec, (v) => (v >= 4 ? { key: '', keyType, coordinatorKeys: [key] } : { key, keyType, coordinatorKeys: [] }))
        const c = res.coordinators[0] ?? res
        if (c.errorCode === ErrorCode.NONE) {
          if (!this.client.metadata.node(c.nodeId)) await this.client.refreshMetadata([])
          this.coordinators.set(cacheKey, c.nodeId)
          return c.nodeId
        }
        problem = KafkaClientError.fromErrorCode(c.errorCode, `FindCoordinator ${key}`, c.errorMessage)
        if (!COORDINATOR_MOVED.has(c.errorCode) && !RETRY.has(c.errorCode)) throw problem
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        problem = err
      }
      if (Date.now() >= deadline) throw problem
      await sleep(Math.min(1000, this.options.retryBackoffMs * 2 ** attempt))
    }
  }

  /** A request to the coordinator of `key`, retried as the class comment says until `deadline`. */
  private async coordinatorRequest<Req, Res>(
    keyType: number,
    key: string,
    codec: ApiCodec<Req, Res>,
    request: Req,
    errorOf: (res: Res) => number,
    what: string,
    deadline: number,
    options: { maxVersion?: number; retryBackoffMs?: number } = {},
  ): Promise<Res> {
    const backoff = options.retryBackoffMs ?? this.options.retryBackoffMs
    for (let attempt = 0; ; attempt++) {
      const nodeId = await this.findCoordinator(keyType, key, deadline)
      let problem: KafkaClientError
      try {
        const res = await this.client.request(nodeId, codec, request, { maxVersion: options.maxVersion })
        const code = errorOf(res)
        if (code === ErrorCode.NONE) return res
        problem = KafkaClientError.fromErrorCode(code, what)
        if (COORDINATOR_MOVED.has(code)) this.coordinators.delete(`${keyType}:${key}`)
        else if (!RETRY.has(code)) throw problem
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
        this.coordinators.delete(`${keyType}:${key}`)
        problem = err
      }
      if (Date.now() >= deadline) throw problem
      await sleep(Math.min(1000, backoff * 2 ** Math.min(attempt, 6)))
    }
  }
}
