/**
 * Kafka's Sender: takes ready batches from the RecordAccumulator and sends them in Produce
 * requests (v3-v11, one batch per partition, the partitions of one leader together, at most
 * max.request.size), at most max.in.flight.requests.per.connection requests per broker, and
 * completes, retries or fails each batch from the answer. It runs when woken (a record appended,
 * an answer, a metadata update) and on a timer for linger.ms, retry backoffs and expiry.
 *
 * Per batch, from the answer of its partition:
 *   NONE, DUPLICATE_SEQUENCE_NUMBER   complete: each record's offset is baseOffset + its index
 *   MESSAGE_TOO_LARGE / RECORD_LIST_TOO_LARGE with more than one record: split in two halves,
 *                                     resent (Kafka's splitAndReenqueue); with one record, that
 *                                     record fails with RecordTooLargeError
 *   retriable (errors.ts), a lost connection, a timeout: sent again after retry.backoff.ms
 *                                     doubling to retry.backoff.max.ms, while `retries` and
 *                                     delivery.timeout.ms allow; metadata refreshed for leader errors
 *   OUT_OF_ORDER_SEQUENCE_NUMBER      retried when an earlier batch of the partition is being
 *                                     retried or failed (its sequence moved); else it fails
 *   anything else                     the batch fails with Kafka's error, per record for
 *                                     INVALID_RECORD (the batch's recordErrors)
 *
 * Ordering (idempotent producer, max.in.flight <= 5): batches of a partition are numbered in the
 * order they are sent; the first of a producer epoch goes alone (the broker takes a producer's
 * first sequence as it comes, so a later batch must not overtake it); when one is retried, the partition sends nothing else until the requests in
 * flight for it are answered, then resends its batches one at a time in sequence order, so the log
 * keeps the order of `send`, and the broker's sequence check drops a batch it already appended
 * (an answer lost to a broker's crash). Without idempotence and with max.in.flight 1, a partition
 * has at most one batch in flight (Kafka's guaranteeMessageOrder).
 *
 * acks=0: the request is written and not answered; its records complete with offset -1.
 */
import { ZERO_UUID } from '../protocol/apis/common.js'
import { produceCodec, type PartitionProduceResponse, type ProduceRequest, type ProduceResponse } from '../protocol/apis/produce.js'
import type { Compressor } from '../protocol/compression.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { CompressionType } from '../protocol/record-types.js'
import { KafkaClientError, RecordTooLargeError } from './errors.js'
import type { NetworkClient } from './network-client.js'
import type { ProducerBatch } from './producer-batch.js'
import type { ProducerMetadata } from './producer-metadata.js'
import type { RecordAccumulator, TopicPartitionQueue } from './record-accumulator.js'
import { TRANSACTION_V1_MAX_VERSIONS, type TransactionManager } from './transaction-manager.js'

export interface SenderConfig {
  acks: 0 | 1 | -1
  idempotent: boolean
  maxInFlight: number
  requestTimeoutMs: number
  retries: number
  retryBackoffMs: number
  retryBackoffMaxMs: number
  deliveryTimeoutMs: number
  maxRequestSize: number
  compression: CompressionType
  compressor: Compressor | undefined
  /** CRC-32C of a batch (the Rust binding's when it loads). */
  checksum: ((data: Uint8Array) => number) | undefined
}

/** Errors after which the leaders are looked up again. */
const METADATA_ERRORS = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.NETWORK_EXCEPTION,
])

/** Answers after which the batch may be in the log although it failed (its outcome is unknown). */
const MAYBE_APPENDED = new Set<number>([ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NETWORK_EXCEPTION, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND])

const tpKey = (topic: string, partition: number) => `${topic}\u0000${partition}`

export class Sender {
  private scheduled = false
  private timer: NodeJS.Timeout | null = null
  private timerAt = Infinity
  private readonly inFlightRequests = new Map<number, number>()
  private readonly inFlightBatches = new Map<string, Set<ProducerBatch>>()
  private totalInFlight = 0
  private initializing = false
  private closed = false
  /** Why the producer cannot send any more (its producer id could not be had); fails new batches. */
  fatalError: KafkaClientError | null = null

  constructor(
    private readonly client: NetworkClient,
    private readonly accumulator: RecordAccumulator,
    private readonly metadata: ProducerMetadata,
    private readonly transactions: TransactionManager | null,
    private readonly config: SenderConfig,
  ) {}

  get inFlightCount(): number {
    return this.totalInFlight
  }

  /** Runs the Sender soon (once per turn of the event loop however often it is woken). */
  wakeup(): void {
    if (this.scheduled || this.closed) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      this.run()
    })
  }

  close(): void {
    this.closed = true
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }

  private schedule(delayMs: number): void {
    if (this.closed || delayMs === Infinity) return
    const at = Date.now() + Math.max(1, delayMs)
    if (this.timer !== null && this.timerAt <= at) return
    if (this.timer !== null) clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => {
      this.timer = null
      this.timerAt = Infinity
      this.run()
    }, at - Date.now())
  }

  private run(): void {
    if (this.closed) return
    const now = Date.now()
    for (const b of this.accumulator.expire(now)) {
      this.failBatch(b, new KafkaClientError('REQUEST_TIMED_OUT', `Expiring ${b.recordCount} record(s) for ${b.topic}-${b.partition}: ${now - b.createdMs} ms has passed since batch creation`))
    }
    if (this.fatalError !== null) {
      this.accumulator.abortQueued(this.fatalError)
      return
    }
    const txn = this.transactions
    if (this.config.idempotent && txn !== null && !txn.isTransactional && (!txn.hasProducerId || txn.epochBumpNeeded)) {
      if (this.accumulator.hasQueued() && !this.initializing && this.totalInFlight === 0) this.initProducerId(txn)
      if (!txn.hasProducerId || txn.epochBumpNeeded) return
    }
    this.metadata.maybeExpire(now)

    // the ready partitions, by leader
    let nextCheck = Infinity
    let unknownLeader = false
    const byNode = new Map<number, TopicPartitionQueue[]>()
    for (const q of this.accumulator.partitions()) {
      const wait = this.accumulator.readyIn(q, now)
      const first = q.batches[0]
      if (first !== undefined) nextCheck = Math.min(nextCheck, first.createdMs + this.config.deliveryTimeoutMs - now)
      if (wait > 0) {
        nextCheck = Math.min(nextCheck, wait)
        continue
      }
      const leader = this.client.metadata.leaderFor(q.topic, q.partition)
      if (leader === undefined) {
        unknownLeader = true
        continue
      }
      let list = byNode.get(leader.nodeId)
      if (list === undefined) byNode.set(leader.nodeId, (list = []))
      list.push(q)
    }
    if (unknownLeader) this.metadata.requestUpdate()
    // as many requests per leader as max.in.flight allows (one batch per partition in each)
    for (const [nodeId, queues] of byNode) {
      while ((this.inFlightRequests.get(nodeId) ?? 0) < this.config.maxInFlight) {
        const batches = this.accumulator.drain(queues, this.config.maxRequestSize, now, (q, first) => this.canDrain(q, first))
        if (batches.length === 0) break
        this.sendProduce(nodeId, batches)
      }
    }
    if (txn?.hasPendingPartitions) txn.addPendingPartitions(() => this.wakeup())
    this.schedule(nextCheck)
  }

  private initProducerId(txn: TransactionManager): void {
    this.initializing = true
    const bump = txn.epochBumpNeeded && txn.hasProducerId
    txn
      .initProducerId(bump)
      .then(
        () => {
          // batches queued for a retry start over with the new epoch's sequences
          for (const q of this.accumulator.partitions()) for (const b of q.batches) if (b.hasSequence) b.setProducerState(-1n, -1, -1, false)
        },
        (err: unknown) => {
          this.fatalError = err instanceof KafkaClientError ? err : new KafkaClientError('UNKNOWN_SERVER_ERROR', String(err))
        },
      )
      .finally(() => {
        this.initializing = false
        this.wakeup()
      })
  }

  private canDrain(q: TopicPartitionQueue, first: ProducerBatch): boolean {
    const txn = this.transactions
    if (txn !== null && !txn.isPartitionAdded(q.topic, q.partition)) return false
    const inFlight = this.inFlightBatches.get(tpKey(q.topic, q.partition))?.size ?? 0
    if (this.config.idempotent) {
      if (txn === null || !txn.hasProducerId) return false
      // a batch to resend goes alone, once the partition has nothing in flight; so does a
      // partition's first batch of the epoch (see TransactionManager.hasAcked)
      if (inFlight > 0 && (first.attempts > 0 || !txn.hasAcked(q.topic, q.partition))) return false
      return true
    }
    return this.config.maxInFlight > 1 || inFlight === 0
  }

  private sendProduce(nodeId: number, batches: ProducerBatch[]): void {
    const txn = this.transactions
    const topics = new Map<string, Array<{ index: number; records: Buffer }>>()
    const sent: ProducerBatch[] = []
    for (const b of batches) {
      if (this.config.idempotent && txn !== null && !b.hasSequence) {
        b.setProducerState(txn.producerId, txn.producerEpoch, txn.takeSequence(b.topic, b.partition, b.recordCount), txn.isTransactional)
      }
      let records: Buffer
      try {
        const fresh = b.builtSize === undefined
        records = b.build(this.config.compression, this.config.compressor, this.config.checksum)
        if (fresh) this.accumulator.observeCompression(b.topic, b.estimatedBytes, records.length)
      } catch (err) {
        b.inFlight = false
        this.failBatch(b, new KafkaClientError('INVALID_RECORD', `${b.topic}-${b.partition}: ${(err as Error).message}`))
        continue
      }
      b.sentSequence = b.baseSequence
      let list = topics.get(b.topic)
      if (list === undefined) topics.set(b.topic, (list = []))
      list.push({ index: b.partition, records })
      sent.push(b)
      const key = tpKey(b.topic, b.partition)
      let set = this.inFlightBatches.get(key)
      if (set === undefined) this.inFlightBatches.set(key, (set = new Set()))
      set.add(b)
    }
    if (sent.length === 0) return
    const request: ProduceRequest = {
      transactionalId: txn?.transactionalId ?? null,
      acks: this.config.acks,
      timeoutMs: this.config.requestTimeoutMs,
      topicData: [...topics].map(([name, partitionData]) => ({ name, topicId: ZERO_UUID, partitionData })),
    }
    this.inFlightRequests.set(nodeId, (this.inFlightRequests.get(nodeId) ?? 0) + 1)
    this.totalInFlight++
    const finish = () => {
      this.inFlightRequests.set(nodeId, this.inFlightRequests.get(nodeId)! - 1)
      this.totalInFlight--
      for (const b of sent) this.inFlightBatches.get(tpKey(b.topic, b.partition))?.delete(b)
    }
    if (this.config.acks === 0) {
      this.client.requestOneWay(nodeId, produceCodec, request, { maxVersion: txn === null ? TRANSACTION_V1_MAX_VERSIONS.produce : txn.produceMaxVersion }).then(
        () => {
          finish()
          for (const b of sent) this.completeBatch(b, -1n, -1n)
          this.wakeup()
        },
        (err: unknown) => this.onRequestError(sent, err, finish),
      )
      return
    }
    this.client.request(nodeId, produceCodec, request, { timeoutMs: this.config.requestTimeoutMs, maxVersion: txn === null ? TRANSACTION_V1_MAX_VERSIONS.produce : txn.produceMaxVersion }).then(
      (res) => {
        finish()
        this.onResponse(sent, res)
        this.wakeup()
      },
      (err: unknown) => this.onRequestError(sent, err, finish),
    )
  }

  private onRequestError(sent: ProducerBatch[], err: unknown, finish: () => void): void {
    finish()
    const e = err instanceof KafkaClientError ? err : new KafkaClientError('NETWORK_EXCEPTION', String(err))
    // a refused connection wrote nothing; anything else may have reached the broker
    for (const b of sent) this.onBatchError(b, e, e.code !== 'CONNECTION_REFUSED')
    this.metadata.requestUpdate()
    this.wakeup()
  }

  private onResponse(sent: ProducerBatch[], res: ProduceResponse): void {
    const answers = new Map<string, PartitionProduceResponse>()
    for (const t of res.responses) for (const p of t.partitionResponses) answers.set(tpKey(t.name, p.index), p)
    let refresh = false
    for (const b of sent) {
      const p = answers.get(tpKey(b.topic, b.partition))
      if (p === undefined) {
        this.onBatchError(b, new KafkaClientError('NETWORK_EXCEPTION', `the Produce response has no partition ${b.topic}-${b.partition}`), true)
        continue
      }
      if (p.errorCode === ErrorCode.NONE || p.errorCode === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
        this.completeBatch(b, p.baseOffset, p.logAppendTimeMs)
        continue
      }
      if (METADATA_ERRORS.has(p.errorCode)) refresh = true
      const what = `produce to ${b.topic}-${b.partition}`
      const err =
        p.errorCode === ErrorCode.MESSAGE_TOO_LARGE || p.errorCode === ErrorCode.RECORD_LIST_TOO_LARGE
          ? new RecordTooLargeError(`${what}: MESSAGE_TOO_LARGE (the broker refused a batch of ${b.recordCount} record(s) as too large${p.errorMessage ? `: ${p.errorMessage}` : ''})`)
          : KafkaClientError.fromErrorCode(p.errorCode, what, p.errorMessage ?? p.recordErrors[0]?.batchIndexErrorMessage)
      this.onBatchError(b, err, MAYBE_APPENDED.has(p.errorCode), p)
    }
    if (refresh) this.metadata.requestUpdate()
  }

  private completeBatch(b: ProducerBatch, baseOffset: bigint, logAppendTime: bigint): void {
    b.inFlight = false
    if (b.hasSequence && b.producerEpoch === this.transactions?.producerEpoch && b.producerId === this.transactions.producerId) this.transactions.onAcked(b.topic, b.partition)
    b.complete(baseOffset, logAppendTime)
    this.accumulator.deallocate(b)
  }

  private backoffMs(attempts: number): number {
    const term = Math.min(this.config.retryBackoffMaxMs, this.config.retryBackoffMs * 2 ** Math.min(attempts - 1, 20))
    return Math.round(term * (0.8 + 0.4 * Math.random()))
  }

  private onBatchError(b: ProducerBatch, err: KafkaClientError, maybeAppended: boolean, answer?: PartitionProduceResponse): void {
    b.inFlight = false
    if (b.isDone) return
    if (err instanceof RecordTooLargeError && b.recordCount > 1) {
      this.accumulator.reenqueueSplit(b, b.split())
      return
    }
    if (this.canRetry(b, err)) {
      b.attempts++
      b.retryAt = Date.now() + this.backoffMs(b.attempts)
      // once unknown, the outcome stays unknown until an answer settles it
      b.unknownOutcome ||= maybeAppended
      this.accumulator.reenqueue(b)
      return
    }
    b.unknownOutcome ||= maybeAppended
    const recordErrors = answer?.recordErrors ?? []
    const errorOf =
      recordErrors.length > 0
        ? (i: number) => {
            const e = recordErrors.find((r) => r.batchIndex === i)
            return e ? KafkaClientError.fromErrorCode(answer!.errorCode, `produce to ${b.topic}-${b.partition} (record ${i} of its batch)`, e.batchIndexErrorMessage) : undefined
          }
        : undefined
    this.failBatch(b, err, errorOf)
  }

  private canRetry(b: ProducerBatch, err: KafkaClientError): boolean {
    if (Date.now() - b.createdMs >= this.config.deliveryTimeoutMs || b.attempts >= this.config.retries) return false
    if (err.errorCode === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER || err.errorCode === ErrorCode.UNKNOWN_PRODUCER_ID) {
      return b.sentSequence !== b.baseSequence || this.hasEarlierUnresolved(b)
    }
    return err.retriable
  }

  /** Whether a batch of the same partition with a lower sequence is queued or in flight. */
  private hasEarlierUnresolved(b: ProducerBatch): boolean {
    for (const o of this.accumulator.queued(b.topic, b.partition)) if (o !== b && o.hasSequence && o.baseSequence < b.sentSequence) return true
    for (const o of this.inFlightBatches.get(tpKey(b.topic, b.partition)) ?? []) if (o !== b && o.baseSequence < b.sentSequence) return true
    return false
  }

  /** Fails a batch for good; gives its sequences back (or asks for a new epoch when it may be in the log). */
  failBatch(b: ProducerBatch, err: KafkaClientError, errorOf?: (index: number) => KafkaClientError | undefined): void {
    const txn = this.transactions
    if (b.hasSequence && txn !== null) {
      if (b.unknownOutcome) txn.epochBumpNeeded = true
      else this.giveBackSequences(b, txn)
    }
    txn?.batchFailed(err)
    b.fail(err, errorOf)
    this.accumulator.deallocate(b)
  }

  private giveBackSequences(failed: ProducerBatch, txn: TransactionManager): void {
    const later = [...this.accumulator.queued(failed.topic, failed.partition), ...(this.inFlightBatches.get(tpKey(failed.topic, failed.partition)) ?? [])]
    for (const o of later) {
      if (o !== failed && o.hasSequence && o.baseSequence > failed.baseSequence) o.setProducerState(o.producerId, o.producerEpoch, o.baseSequence - failed.recordCount, o.isTransactional)
    }
    txn.giveBackSequences(failed.topic, failed.partition, failed.recordCount)
  }
}
