/**
 * Kafka's KafkaProducer for Node: sends records to topics, batched per partition, with a promise
 * per record that resolves to where it was written.
 *
 *   const producer = new Producer({ bootstrapServers: 'localhost:9092', 'linger.ms': 5, 'compression.type': 'lz4' })
 *   const { partition, offset } = await producer.send({ topic: 'orders', key: 'k', value: 'v' })
 *   await producer.close()
 *
 * Configuration by Kafka's names or in camelCase (producer-config.ts); defaults are Kafka's:
 * acks=all and idempotence on, linger.ms 5, batch.size 16384, buffer.memory 32 MiB.
 *
 * `send` does at once what Kafka's send does before it returns its Future: it checks the
 * record's size (larger than max.request.size or buffer.memory: RecordTooLargeError on that
 * record alone), waits for the topic's metadata (up to max.block.ms; an unknown topic, or a
 * partition the topic does not have, fails that record alone with UNKNOWN_TOPIC_OR_PARTITION),
 * picks the partition (built-in-partitioner.ts) and appends the record to its partition's batch
 * (record-accumulator.ts). Records of one topic keep their order through these waits. When
 * buffer.memory is used up, records wait (in order) until batches complete and free it, each at
 * most max.block.ms (then it fails with REQUEST_TIMED_OUT, Kafka's BufferExhaustedException).
 * A caller that produces from a stream awaits `waitForBufferSpace()` to be paced by it, as a
 * Java caller is by send blocking. The Sender (sender.ts) sends batches as they fill or linger.ms
 * passes and retries them until delivery.timeout.ms; the promise resolves to the RecordMetadata
 * (topic, partition, offset, timestamp) or rejects with a KafkaClientError with Kafka's code.
 *
 * flush() sends everything sent so far at once and waits for it; close() flushes, then closes
 * the connections (close({ timeoutMs: 0 }) fails what is not sent instead).
 *
 * Transactions (transactional.id): initTransactions() once, then beginTransaction(), sends,
 * sendOffsetsToTransaction(offsets, groupId or group metadata), commitTransaction() or
 * abortTransaction() (transaction-manager.ts). A record that fails in a transaction makes commit
 * throw; abort then starts over.
 */
import type { Compressor } from '../protocol/compression.js'
import { loadNative } from '../native/binding.js'
import { BuiltInPartitioner } from './built-in-partitioner.js'
import { KafkaClientError, RecordTooLargeError } from './errors.js'
import { NetworkClient } from './network-client.js'
import { producerConfigFrom, type ProducerConfig, type ProducerOptions } from './producer-config.js'
import { releaseClientSecurity } from './client-options.js'
import { estimateRecordSize, type AppendedRecord, type RecordCallback, type RecordMetadata } from './producer-batch.js'
import { ProducerMetadata } from './producer-metadata.js'
import { RecordAccumulator } from './record-accumulator.js'
import { Sender } from './sender.js'
import type { ConsumerGroupMetadata } from './consumer-group-metadata.js'
import { TransactionManager, type OffsetToCommit } from './transaction-manager.js'

export type { RecordMetadata } from './producer-batch.js'
export type { ConsumerGroupMetadata } from './consumer-group-metadata.js'
export type { OffsetToCommit } from './transaction-manager.js'

/** A record to send (Kafka's ProducerRecord). */
export interface ProducerRecord {
  topic: string
  /** A partition of the topic; else the partitioner chooses. */
  partition?: number
  key?: Buffer | string | null
  value: Buffer | string | null
  headers?: Array<{ key: string; value: Buffer | string | null }>
  /** Milliseconds since the epoch (CreateTime); default the time of `send`. */
  timestamp?: number | bigint
}

interface PendingSend {
  topic: string
  partition: number | undefined
  record: AppendedRecord
  size: number
  callback: RecordCallback
  since: number
}

/** The native codecs when the Rust binding loads (the TypeScript ones otherwise); its CRC-32C likewise (`checksum`). */
function nativeCompressor(): Compressor | undefined {
  const native = loadNative()
  if (native === null) return undefined
  return (type, data) => (type === 'none' ? data : native.compress(type, data))
}

export class Producer {
  readonly config: ProducerConfig
  private readonly client: NetworkClient
  private readonly accumulator: RecordAccumulator
  private readonly metadata: ProducerMetadata
  private readonly transactions: TransactionManager | null
  private readonly sender: Sender
  private readonly partitioner: BuiltInPartitioner
  /** Sends waiting for their topic's metadata, per topic, in order. */
  private readonly waitingForMetadata = new Map<string, PendingSend[]>()
  /** Sends waiting for buffer.memory, in order. */
  private readonly waitingForMemory: PendingSend[] = []
  private waitingCount = 0
  private readonly spaceWaiters: Array<() => void> = []
  private waitTimer: NodeJS.Timeout | null = null
  private closed = false
  private closing: Promise<void> | null = null

  constructor(options: ProducerOptions) {
    const c = (this.config = producerConfigFrom(options))
    this.client = new NetworkClient({
      bootstrapServers: c.bootstrapServers,
      clientId: c.clientId,
      requestTimeoutMs: c.requestTimeoutMs,
      maxInFlight: c.maxInFlightRequestsPerConnection,
      security: c.security,
    })
    this.accumulator = new RecordAccumulator({
      batchSize: c.batchSize,
      compressed: c.compressionType !== 'none',
      lingerMs: c.lingerMs,
      bufferMemory: c.bufferMemory,
      deliveryTimeoutMs: c.deliveryTimeoutMs,
    })
    this.accumulator.onFree = () => this.processWaiting()
    this.metadata = new ProducerMetadata(this.client, { retryBackoffMs: c.retryBackoffMs, metadataMaxAgeMs: c.metadataMaxAgeMs }, () => this.onMetadataUpdate())
    this.transactions = c.enableIdempotence
      ? new TransactionManager(this.client, { transactionalId: c.transactionalId, transactionTimeoutMs: c.transactionTimeoutMs, retryBackoffMs: c.retryBackoffMs, maxBlockMs: c.maxBlockMs })
      : null
    this.sender = new Sender(this.client, this.accumulator, this.metadata, this.transactions, {
      acks: c.acks,
      idempotent: c.enableIdempotence,
      maxInFlight: c.maxInFlightRequestsPerConnection,
      requestTimeoutMs: c.requestTimeoutMs,
      retries: c.retries,
      retryBackoffMs: c.retryBackoffMs,
      retryBackoffMaxMs: c.retryBackoffMaxMs,
      deliveryTimeoutMs: c.deliveryTimeoutMs,
      maxRequestSize: c.maxRequestSize,
      compression: c.compressionType,
      compressor: nativeCompressor(),
      checksum: loadNative()?.crc32c,
    })
    this.partitioner = new BuiltInPartitioner(c.batchSize, c.partitionerIgnoreKeys)
  }

  /**
   * Sends a record: resolves once it is acknowledged (acks) with its partition, offset and
   * timestamp; rejects with a KafkaClientError for this record alone.
   */
  send(record: ProducerRecord): Promise<RecordMetadata> {
    return new Promise<RecordMetadata>((resolve, reject) => {
      const refused = this.refusal(record)
      if (refused !== null) return reject(refused)
      const size = estimateRecordSize(record)
      const c = this.config
      if (size > c.maxRequestSize || size > c.bufferMemory) {
        const limit =
          size > c.maxRequestSize ? `${c.maxRequestSize}, which is the value of the max.request.size configuration` : `${c.bufferMemory}, which is the value of the buffer.memory configuration`
        return reject(new RecordTooLargeError(`The message is ${size} bytes when serialized which is larger than ${limit}.`))
      }
      const appended: AppendedRecord = { key: record.key ?? null, value: record.value, headers: record.headers, timestamp: record.timestamp ?? Date.now() }
      const pending: PendingSend = { topic: record.topic, partition: record.partition, record: appended, size, callback: { resolve, reject }, since: Date.now() }
      const waiting = this.waitingForMetadata.get(record.topic)
      if (waiting !== undefined) {
        waiting.push(pending)
        this.waitingCount++
      } else if (this.metadata.partitionsFor(record.topic) === undefined) {
        this.waitingForMetadata.set(record.topic, [pending])
        this.waitingCount++
        this.metadata.add(record.topic)
        this.metadata.requestUpdate()
        this.armWaitTimer()
      } else this.appendOrWait(pending)
    })
  }

  private refusal(record: ProducerRecord): KafkaClientError | null {
    if (this.closed) return new KafkaClientError('ILLEGAL_STATE', 'Cannot perform operation after producer has been closed')
    const txnError = this.transactions?.sendError() ?? null
    if (txnError !== null) return txnError
    if (this.sender.fatalError !== null) return this.sender.fatalError
    if (typeof record.topic !== 'string' || record.topic === '') return new KafkaClientError('INVALID_TOPIC_EXCEPTION', 'a record needs a topic')
    return null
  }

  /** Appends now when memory allows and nothing waits before it; else queues it for memory. */
  private appendOrWait(p: PendingSend): void {
    if (this.waitingForMemory.length === 0 && this.accumulator.hasRoom(p.size)) {
      this.append(p)
      return
    }
    this.waitingForMemory.push(p)
    this.waitingCount++
    this.accumulator.memoryWaiters = true
    this.sender.wakeup()
    this.armWaitTimer()
  }

  private append(p: PendingSend): void {
    const info = this.metadata.partitionsFor(p.topic)!
    let partition = p.partition
    if (partition !== undefined && (partition < 0 || partition >= info.numPartitions || !Number.isInteger(partition))) {
      p.callback.reject(new KafkaClientError('UNKNOWN_TOPIC_OR_PARTITION', `Partition ${partition} of topic ${p.topic} with partition count ${info.numPartitions} is not present in metadata`))
      return
    }
    const key = p.record.key
    const keyBytes = key == null ? null : typeof key === 'string' ? Buffer.from(key, 'utf8') : key
    partition ??= this.partitioner.partition(p.topic, keyBytes, info.numPartitions, info.available)
    this.accumulator.append(p.topic, partition, p.record, p.size, p.callback, Date.now())
    if (p.partition === undefined && (keyBytes === null || this.config.partitionerIgnoreKeys)) this.partitioner.onAppend(p.topic, partition, p.size, info.numPartitions, info.available)
    this.sender.wakeup()
  }

  private onMetadataUpdate(): void {
    const authentication = this.metadata.fatalError()
    for (const [topic, list] of this.waitingForMetadata) {
      const fatal = authentication ?? this.metadata.fatalTopicError(topic)
      if (fatal !== undefined) {
        this.waitingForMetadata.delete(topic)
        this.waitingCount -= list.length
        for (const p of list) p.callback.reject(fatal)
        continue
      }
      if (this.metadata.partitionsFor(topic) === undefined) continue
      this.waitingForMetadata.delete(topic)
      this.waitingCount -= list.length
      for (const p of list) this.appendOrWait(p)
    }
    if (this.waitingForMetadata.size > 0) this.metadata.requestUpdate()
    this.notifySpace()
    this.sender.wakeup()
  }

  /** Appends the sends waiting for memory that now fit, in order. */
  private processWaiting(): void {
    const q = this.waitingForMemory
    let n = 0
    while (n < q.length && this.accumulator.hasRoom(q[n]!.size)) this.append(q[n++]!)
    if (n > 0) {
      q.splice(0, n)
      this.waitingCount -= n
    }
    this.accumulator.memoryWaiters = q.length > 0
    this.notifySpace()
  }

  private notifySpace(): void {
    if (this.waitingCount > 0 || this.spaceWaiters.length === 0) return
    for (const w of this.spaceWaiters.splice(0)) w()
  }

  /** Fails the sends that waited max.block.ms, every retry.backoff.ms while some wait. */
  private armWaitTimer(): void {
    if (this.waitTimer !== null || this.closed) return
    this.waitTimer = setTimeout(
      () => {
        this.waitTimer = null
        this.expireWaiting()
        if (this.waitingCount > 0) this.armWaitTimer()
      },
      Math.max(10, Math.min(this.config.maxBlockMs, this.config.retryBackoffMs)),
    )
  }

  private expireWaiting(): void {
    const now = Date.now()
    const maxBlock = this.config.maxBlockMs
    for (const [topic, list] of this.waitingForMetadata) {
      while (list.length > 0 && now - list[0]!.since >= maxBlock) {
        const p = list.shift()!
        this.waitingCount--
        const cause = this.metadata.lastError ? ` (${this.metadata.lastError.message})` : ''
        p.callback.reject(new KafkaClientError('UNKNOWN_TOPIC_OR_PARTITION', `Topic ${topic} not present in metadata after ${maxBlock} ms${cause}`))
      }
      if (list.length === 0) this.waitingForMetadata.delete(topic)
    }
    const q = this.waitingForMemory
    let n = 0
    while (n < q.length && now - q[n]!.since >= maxBlock) {
      q[n++]!.callback.reject(
        new KafkaClientError('REQUEST_TIMED_OUT', `Failed to allocate ${q[n - 1]!.size} bytes within the configured max blocking time ${maxBlock} ms (buffer.memory ${this.config.bufferMemory})`),
      )
    }
    if (n > 0) {
      q.splice(0, n)
      this.waitingCount -= n
      this.accumulator.memoryWaiters = q.length > 0
    }
    this.notifySpace()
    if (this.waitingForMetadata.size > 0) this.metadata.requestUpdate()
  }

  /**
   * Resolves when no send waits for buffer.memory or for its topic's metadata: a caller
   * producing from a stream awaits it between sends to be held back as Kafka's blocking send
   * holds a thread (which blocks for both, up to max.block.ms).
   */
  waitForBufferSpace(): Promise<void> {
    if (this.waitingCount === 0) return Promise.resolve()
    return new Promise((resolve) => this.spaceWaiters.push(resolve))
  }

  /** Bytes of records sent and not yet completed (what buffer.memory bounds). */
  get bufferedBytes(): number {
    return this.accumulator.usedBytes
  }

  /** Sends every record sent so far without waiting for linger.ms, and waits until each completed or failed. */
  async flush(): Promise<void> {
    while (this.waitingCount > 0) {
      await new Promise<void>((resolve) => setTimeout(resolve, 5))
      this.sender.wakeup()
    }
    await this.accumulator.flush(() => this.sender.wakeup())
  }

  // --- transactions ----------------------------------------------------------------------------

  private txn(): TransactionManager {
    if (this.transactions === null || !this.transactions.isTransactional) throw new KafkaClientError('ILLEGAL_STATE', 'a transactional method needs transactional.id')
    if (this.closed) throw new KafkaClientError('ILLEGAL_STATE', 'Cannot perform operation after producer has been closed')
    return this.transactions
  }

  /** Registers the transactional.id with its coordinator, fencing older producers of the same id. */
  async initTransactions(): Promise<void> {
    await this.txn().initTransactions()
    this.sender.wakeup()
  }

  beginTransaction(): void {
    this.txn().beginTransaction()
  }

  /** Commits the consumed offsets (the next offsets to read) of `group` with the transaction. */
  async sendOffsetsToTransaction(offsets: readonly OffsetToCommit[], group: string | ConsumerGroupMetadata): Promise<void> {
    await this.txn().sendOffsetsToTransaction(offsets, typeof group === 'string' ? { groupId: group } : group)
  }

  /** Flushes, then commits; throws when a record of the transaction failed (abort it then). */
  async commitTransaction(): Promise<void> {
    const txn = this.txn()
    txn.beginCommit()
    this.sender.wakeup()
    await this.flush()
    const failed = txn.commitFailed()
    if (failed !== null) throw failed
    await txn.endTransaction(true)
  }

  /** Aborts: records not sent yet fail with TRANSACTION_ABORTED; those sent are aborted by the coordinator. */
  async abortTransaction(): Promise<void> {
    const txn = this.txn()
    txn.beginAbort()
    this.failUnsent(new KafkaClientError('TRANSACTION_ABORTED', 'Failing batch since transaction was aborted'))
    await this.accumulator.flush(() => this.sender.wakeup())
    await txn.endTransaction(false)
  }

  private failUnsent(error: KafkaClientError): void {
    for (const list of this.waitingForMetadata.values()) for (const p of list) p.callback.reject(error)
    for (const p of this.waitingForMemory) p.callback.reject(error)
    this.waitingForMetadata.clear()
    this.waitingForMemory.length = 0
    this.waitingCount = 0
    this.accumulator.memoryWaiters = false
    this.notifySpace()
    for (const b of this.accumulator.drainAll()) this.sender.failBatch(b, error)
  }

  /**
   * Sends what was sent and closes. Within `timeoutMs` (default: no bound) the records complete as
   * usual; past it, or with 0, those not yet acknowledged fail with CLIENT_CLOSED.
   */
  close(options: { timeoutMs?: number } = {}): Promise<void> {
    this.closing ??= this.doClose(options.timeoutMs ?? Infinity)
    return this.closing
  }

  private async doClose(timeoutMs: number): Promise<void> {
    this.closed = true
    this.accumulator.closing = true
    this.sender.wakeup()
    if (timeoutMs > 0) {
      let timer: NodeJS.Timeout | undefined
      const flushed = this.flush().then(() => true)
      const timedOut = timeoutMs === Infinity ? new Promise<boolean>(() => {}) : new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))
      await Promise.race([flushed, timedOut])
      clearTimeout(timer)
    }
    const error = new KafkaClientError('CLIENT_CLOSED', 'The producer was closed before the record was acknowledged')
    this.failUnsent(error)
    if (this.waitTimer !== null) clearTimeout(this.waitTimer)
    this.waitTimer = null
    this.sender.close()
    this.metadata.close()
    await this.client.close()
    releaseClientSecurity(this.config.security)
  }
}
