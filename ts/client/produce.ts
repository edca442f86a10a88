/**
 * A simple produce: sends a list of records to a topic and tells, record by record, where each
 * was acknowledged (no background sender, no linger: what `ferrolog produce` needs, and a
 * library user who has records in hand).
 *
 * Partitions: `partition` when given, else Kafka's default partitioner (partitioner.ts):
 * murmur2 of the key, and for records without a key one partition per batch.size (16384 bytes)
 * of records, then the next. Each partition's records go in order as magic-2 batches of at most
 * `batchBytes` (built by ts/protocol/batch-builder.ts, compressed with its codecs), one batch
 * per partition per Produce request (Kafka's rule from v3), the partitions of one leader
 * together.
 *
 * With acks=-1 (all) the producer is idempotent, as Kafka's default: it takes a producer id
 * from InitProducerId and numbers its batches, so a batch retried after a lost answer is not
 * appended twice. Retriable errors (a leader change, a connection lost, a timeout) refresh the
 * metadata and resend after a backoff (Kafka's retry.backoff.ms 100 doubling to
 * retry.backoff.max.ms 1000), as Kafka's producer does until `delivery.timeout.ms` (120 s) has
 * passed or `retries` (unbounded by default, as Kafka's) are used up: a broker restarting or a
 * leader being elected is waited out. Anything else, or the time or retries used up, leaves the
 * batch's records unacknowledged and `produce` rejects with a ProduceError that lists them. acks=0 has no acknowledgement: a record counts once written to the socket (offset -1).
 */
import { initProducerIdCodec } from '../protocol/apis/init-producer-id.js'
import { produceCodec, type PartitionProduceResponse } from '../protocol/apis/produce.js'
import { ZERO_UUID } from '../protocol/apis/common.js'
import { buildBatch } from '../protocol/batch-builder.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { CompressionType, ProducerRecord } from '../protocol/record-types.js'
import { KafkaClientError } from './errors.js'
import type { NetworkClient } from './network-client.js'
import { StickyPartitioner, partitionForKey } from './partitioner.js'

/** Kafka's batch.size default: keyless records move to the next partition after this many bytes. */
export const DEFAULT_BATCH_SIZE = 16_384
/** The most record bytes put in one batch (Kafka's max.request.size is 1 MiB). */
export const DEFAULT_BATCH_BYTES = 512 * 1024
/** Kafka's delivery.timeout.ms default. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 120_000
/** Kafka's retry.backoff.ms and retry.backoff.max.ms defaults. */
const RETRY_BACKOFF_MS = 100
const RETRY_BACKOFF_MAX_MS = 1000

export interface ProduceOptions {
  /** 0, 1 or -1 (all, the default). */
  acks?: 0 | 1 | -1
  compression?: CompressionType
  /** Every record to this partition. */
  partition?: number
  /** The broker's wait for acks (Produce timeoutMs), default 30000. */
  timeoutMs?: number
  /** retries: resends of a batch after retriable errors (default unbounded, as Kafka's Integer.MAX_VALUE). */
  retries?: number
  /** delivery.timeout.ms: no resend after this long since `produce` was called (default 120000). */
  deliveryTimeoutMs?: number
  batchBytes?: number
  /** Default true, as a producer's allow.auto.create.topics. */
  allowAutoTopicCreation?: boolean
}

export interface RecordMetadata {
  partition: number
  /** -1 with acks=0. */
  offset: bigint
}

export interface UnacknowledgedRecord {
  /** Index in the records given. */
  index: number
  partition: number
  error: KafkaClientError
}

export class ProduceError extends KafkaClientError {
  readonly unacknowledged: UnacknowledgedRecord[]
  /** Where the acknowledged records went (undefined for the others). */
  readonly acknowledged: Array<RecordMetadata | undefined>

  constructor(unacknowledged: UnacknowledgedRecord[], acknowledged: Array<RecordMetadata | undefined>) {
    const first = unacknowledged[0]!.error
    super(first.code, `${unacknowledged.length} of ${acknowledged.length} records not acknowledged: ${first.message}`)
    this.name = 'ProduceError'
    this.unacknowledged = unacknowledged
    this.acknowledged = acknowledged
  }
}

interface Batch {
  partition: number
  indexes: number[]
  records: ProducerRecord[]
  bytes: number
  /** Built once and resent as is (same sequence numbers) on a retry. */
  built?: Buffer
  attempts: number
}

const byteLength = (x: Buffer | string | null | undefined): number => (x == null ? 0 : typeof x === 'string' ? Buffer.byteLength(x) : x.length)
const keyBytes = (key: Buffer | string): Buffer => (typeof key === 'string' ? Buffer.from(key, 'utf8') : key)
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

function sizeOf(r: ProducerRecord): number {
  let n = 20 + byteLength(r.key) + byteLength(r.value)
  for (const h of r.headers ?? []) n += 4 + Buffer.byteLength(h.key) + byteLength(h.value)
  return n
}

/** Waits for the topic's metadata with a leader for every partition (it may be just created). */
async function topicReady(client: NetworkClient, topic: string, autoCreate: boolean, deadline: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    let problem: KafkaClientError
    try {
      const md = await client.refreshMetadata([topic], { allowAutoTopicCreation: autoCreate })
      const t = md.topic(topic)
      if (t && t.errorCode === ErrorCode.NONE && t.partitions.length > 0 && t.partitions.every((p) => md.leaderFor(topic, p.partition))) return t.partitions.length
      const code = t?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
      problem = KafkaClientError.fromErrorCode(code === ErrorCode.NONE ? ErrorCode.LEADER_NOT_AVAILABLE : code, `topic ${topic}`)
    } catch (err) {
      if (!(err instanceof KafkaClientError) || !err.retriable) throw err
      problem = err
    }
    if (!problem.retriable || Date.now() >= deadline) throw problem
    await sleep(Math.min(1000, 50 * 2 ** attempt))
  }
}

/** Sends `records` to `topic`; resolves with each record's partition and offset, in order. */
export async function produce(client: NetworkClient, topic: string, records: readonly ProducerRecord[], options: ProduceOptions = {}): Promise<RecordMetadata[]> {
  const acks = options.acks ?? -1
  const timeoutMs = options.timeoutMs ?? 30_000
  const retries = options.retries ?? Number.MAX_SAFE_INTEGER
  const deliveryDeadline = Date.now() + (options.deliveryTimeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS)
  const batchBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES
  const deadline = Date.now() + Math.max(timeoutMs, client.requestTimeoutMs)
  const numPartitions = await topicReady(client, topic, options.allowAutoTopicCreation ?? true, deadline)
  if (options.partition !== undefined && (options.partition < 0 || options.partition >= numPartitions)) {
    throw new KafkaClientError('UNKNOWN_TOPIC_OR_PARTITION', `topic ${topic} has partitions 0-${numPartitions - 1}, not ${options.partition}`)
  }

  // Partition every record, then cut each partition's records into batches.
  const sticky = new StickyPartitioner()
  let keylessBytes = 0
  const perPartition = new Map<number, Batch[]>()
  records.forEach((r, index) => {
    let partition: number
    if (options.partition !== undefined) partition = options.partition
    else if (r.key != null) partition = partitionForKey(keyBytes(r.key), numPartitions)
    else {
      partition = sticky.partition(topic, numPartitions)
      keylessBytes += sizeOf(r)
      if (keylessBytes >= DEFAULT_BATCH_SIZE) {
        sticky.onNewBatch(topic, numPartitions)
        keylessBytes = 0
      }
    }
    let batches = perPartition.get(partition)
    if (!batches) perPartition.set(partition, (batches = []))
    let last = batches.at(-1)
    const size = sizeOf(r)
    if (!last || last.bytes + size > batchBytes) batches.push((last = { partition, indexes: [], records: [], bytes: 0, attempts: 0 }))
    last.indexes.push(index)
    last.records.push(r)
    last.bytes += size
  })

  // Idempotence (acks=all): a producer id and a sequence per partition.
  let producerId = -1n
  let producerEpoch = -1
  if (acks === -1) {
    const nodeId = client.candidateNodes()[0]!
    try {
      const res = await client.request(nodeId, initProducerIdCodec, {
        transactionalId: null,
        transactionTimeoutMs: 60_000,
        producerId: -1n,
        producerEpoch: -1,
        enable2Pc: false,
        keepPreparedTxn: false,
      })
      if (res.errorCode === ErrorCode.NONE) {
        producerId = res.producerId
        producerEpoch = res.producerEpoch
      }
    } catch (err) {
      if (!(err instanceof KafkaClientError) || err.code !== 'UNSUPPORTED_VERSION') throw err
    }
  }
  const sequences = new Map<number, number>()
  const build = (b: Batch): Buffer => {
    if (b.built) return b.built
    const baseSequence = producerId >= 0n ? (sequences.get(b.partition) ?? 0) : -1
    if (producerId >= 0n) sequences.set(b.partition, (baseSequence + b.records.length) & 0x7fffffff)
    b.built = buildBatch(b.records, { compression: options.compression ?? 'none', producerId, producerEpoch, baseSequence })
    return b.built
  }

  const results: Array<RecordMetadata | undefined> = new Array(records.length)
  const failed: UnacknowledgedRecord[] = []
  const fail = (b: Batch, error: KafkaClientError) => b.indexes.forEach((index) => failed.push({ index, partition: b.partition, error }))
  const acknowledge = (b: Batch, baseOffset: bigint) => b.indexes.forEach((index, i) => (results[index] = { partition: b.partition, offset: acks === 0 ? -1n : baseOffset + BigInt(i) }))

  // Rounds: the next batch of every partition, grouped by leader; a failed batch is retried
  // before its partition's later batches go.
  const queues = [...perPartition.values()]
  while (queues.some((q) => q.length > 0)) {
    const round = queues.filter((q) => q.length > 0).map((q) => q[0]!)
    let needMetadata = false
    const retryOrFail = (b: Batch, error: KafkaClientError) => {
      if (error.retriable && ++b.attempts <= retries && Date.now() < deliveryDeadline) return
      fail(b, error)
      queues.find((q) => q[0] === b)!.shift()
    }
    const byLeader = new Map<number, Batch[]>()
    for (const b of round) {
      const leader = client.metadata.leaderFor(topic, b.partition)
      if (!leader) {
        needMetadata = true
        retryOrFail(b, new KafkaClientError('LEADER_NOT_AVAILABLE', `produce to ${topic}-${b.partition}: the partition has no leader`))
        continue
      }
      let list = byLeader.get(leader.nodeId)
      if (!list) byLeader.set(leader.nodeId, (list = []))
      list.push(b)
    }
    await Promise.all(
      [...byLeader].map(async ([nodeId, batches]) => {
        const request = {
          transactionalId: null,
          acks,
          timeoutMs,
          topicData: [{ name: topic, topicId: ZERO_UUID, partitionData: batches.map((b) => ({ index: b.partition, records: build(b) })) }],
        }
        try {
          if (acks === 0) {
            await client.requestOneWay(nodeId, produceCodec, request)
            for (const b of batches) {
              acknowledge(b, -1n)
              queues.find((q) => q[0] === b)!.shift()
            }
            return
          }
          const res = await client.request(nodeId, produceCodec, request, { timeoutMs: timeoutMs + client.requestTimeoutMs })
          const answers = new Map<number, PartitionProduceResponse>()
          for (const t of res.responses) if (t.name === topic) for (const p of t.partitionResponses) answers.set(p.index, p)
          for (const b of batches) {
            const p = answers.get(b.partition)
            if (!p) {
              retryOrFail(b, new KafkaClientError('INVALID_RESPONSE', `the Produce response has no partition ${topic}-${b.partition}`))
              continue
            }
            if (p.errorCode === ErrorCode.NONE || p.errorCode === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
              acknowledge(b, p.baseOffset)
              queues.find((q) => q[0] === b)!.shift()
              continue
            }
            const err = KafkaClientError.fromErrorCode(p.errorCode, `produce to ${topic}-${b.partition}`, p.errorMessage ?? p.recordErrors[0]?.batchIndexErrorMessage)
            if (err.retriable) needMetadata = true
            retryOrFail(b, err)
          }
        } catch (err) {
          if (!(err instanceof KafkaClientError)) throw err
          needMetadata = true
          for (const b of batches) retryOrFail(b, err)
        }
      }),
    )
    if (needMetadata) {
      const attempts = Math.max(1, ...round.map((b) => b.attempts))
      await sleep(Math.min(RETRY_BACKOFF_MAX_MS, RETRY_BACKOFF_MS * 2 ** Math.min(attempts - 1, 10)))
      try {
        await client.refreshMetadata([topic])
      } catch (err) {
        if (!(err instanceof KafkaClientError) || !err.retriable) throw err
      }
    }
  }
  if (failed.length > 0) {
    failed.sort((a, b) => a.index - b.index)
    throw new ProduceError(failed, results)
  }
  return results as RecordMetadata[]
}
