/**
 * Topic administration on etcd, usable from any broker (Kafka's CreateTopics, DeleteTopics,
 * CreatePartitions and AlterConfigs as the controller applies them; here each is one etcd
 * transaction, so two brokers racing to create a topic get one winner and TOPIC_ALREADY_EXISTS).
 *
 * New partitions: replicas by Kafka's placement (ts/cluster/replica-placement.ts) over the live
 * brokers, or an explicit assignment (every broker in it live, no duplicates, the same count for
 * every partition); ISR = replicas, leader = the first replica not shutting down, epochs 0.
 * Errors: ClusterMetadataError with Kafka's codes (INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS,
 * INVALID_REPLICATION_FACTOR, INVALID_REPLICA_ASSIGNMENT, TOPIC_ALREADY_EXISTS,
 * UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG).
 *
 * etcd limits a transaction to 128 operations (`--max-txn-ops`): a topic with more partitions is
 * written as its topic key with the first 127 partitions, then the rest in further transactions
 * that each compare the topic key's create revision (so they never land on a successor).
 */
import { randomBytes } from 'node:crypto'
import { ErrorCode } from '../protocol/error-codes.js'
import type { PartitionRegistration } from '../replica/partition-registration.js'
import { ClusterMetadataError } from './errors.js'
import { BROKERS, SHUTDOWN, decode, encode, partitionKey, partitionsPrefix, topicIdString, topicKey, type BrokerRecord, type ShutdownRecord, type TopicRecord } from './keys.js'
import { MAX_TXN_OPS, compare, op, type KeyValue, type MetadataStore, type TxnOp } from './metadata-store.js'
import { assignReplicasToBrokers, type BrokerPlacement } from './replica-placement.js'

const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/

export interface CreateTopicRequest {
  name: string
  /** Partition count; -1 / absent: `defaultPartitions`. Ignored with `assignment`. */
  numPartitions?: number
  /** -1 / absent: `defaultReplicationFactor`. Ignored with `assignment`. */
  replicationFactor?: number
  /** Explicit replicas per partition (assignment[p], preferred leader first). */
  assignment?: number[][]
  configs?: Record<string, string>
  /** Check everything, write nothing (CreateTopics' validate_only). */
  validateOnly?: boolean
}

export interface CreatedTopic {
  topicId: Buffer
  assignment: number[][]
  /** The etcd revision of the write (0 with validateOnly); `MetadataCache.waitForRevision` takes it. */
  revision: bigint
}

export interface TopicAdminOptions {
  store: MetadataStore
  /** Kafka's `num.partitions`. Default 1. */
  defaultPartitions?: number
  /** Kafka's `default.replication.factor`. Default 1. */
  defaultReplicationFactor?: number
}

export class TopicAdmin {
  private readonly store: MetadataStore
  private readonly defaultPartitions: number
  private readonly defaultReplicationFactor: number

  constructor(options: TopicAdminOptions) {
    this.store = options.store
    this.defaultPartitions = options.defaultPartitions ?? 1
    this.defaultReplicationFactor = options.defaultReplicationFactor ?? 1
  }

  async createTopic(request: CreateTopicRequest): Promise<CreatedTopic> {
    const { name } = request
    validateTopicName(name)
    const configs = validateConfigs(request.configs ?? {})
    const { brokers, shuttingDown } = await this.liveBrokers()
    let assignment: number[][]
    if (request.assignment) {
      assignment = validateAssignment(request.assignment, brokers, null)
    } else {
      const n = request.numPartitions === undefined || request.numPartitions === -1 ? this.defaultPartitions : request.numPartitions
      const rf = request.replicationFactor === undefined || request.replicationFactor === -1 ? this.defaultReplicationFactor : request.replicationFactor
      assignment = assignReplicasToBrokers(brokers, n, rf)
    }
    const topicId = newTopicId()
    const existing = await this.store.get(topicKey(name))
    if (existing) throw new ClusterMetadataError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`)
    if (request.validateOnly) return { topicId, assignment, revision: 0n }
    const record: TopicRecord = { topicId: topicIdString(topicId), configs, assignment }
    const puts = assignment.map((replicas, p) => op.put(partitionKey(topicId, p), encode(initialRegistration(replicas, shuttingDown))))
    const first = await this.store.txn({
      compare: [compare.createRevision(topicKey(name), '==', 0)],
      success: [op.put(topicKey(name), encode(record)), ...puts.slice(0, MAX_TXN_OPS - 1)],
    })
    if (!first.succeeded) throw new ClusterMetadataError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`)
    const revision = await this.writeRest(name, first.revision, puts.slice(MAX_TXN_OPS - 1))
    return { topicId, assignment, revision: revision ?? first.revision }
  }

  /** Deletes the topic and all its partitions in one transaction; resolves to the revision. */
  async deleteTopic(name: string): Promise<bigint> {
    for (;;) {
      const { kv, record } = await this.readTopic(name)
      const res = await this.store.txn({
        compare: [compare.modRevision(topicKey(name), '==', kv.modRevision)],
        success: [op.delete(topicKey(name)), op.deletePrefix(partitionsPrefix(Buffer.from(record.topicId, 'base64url')))],
      })
      if (res.succeeded) return res.revision
    }
  }

  /**
   * Raises the topic's partition count to `totalCount` (Kafka's CreatePartitions): the new
   * partitions get `assignment` or Kafka's placement continuing the topic's (same replication
   * factor, start index at partition 0's first replica). Resolves to the revision.
   */
  async createPartitions(name: string, totalCount: number, assignment?: number[][]): Promise<bigint> {
    for (;;) {
      const { kv, record } = await this.readTopic(name)
      const current = record.assignment.length
      if (!Number.isInteger(totalCount) || totalCount <= current) {
        throw new ClusterMetadataError(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${current} partitions, which is higher than or equal to the requested ${totalCount}.`)
      }
      const { brokers, shuttingDown } = await this.liveBrokers()
      const rf = record.assignment[0]!.length
      let added: number[][]
      if (assignment) {
        if (assignment.length !== totalCount - current) {
          throw new ClusterMetadataError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Increasing the number of partitions by ${totalCount - current} but ${assignment.length} assignments provided.`)
        }
        added = validateAssignment(assignment, brokers, rf)
      } else {
        const ids = brokers.map((b) => b.id).sort((a, b) => a - b)
        const startIndex = Math.max(
          0,
          ids.findIndex((id) => id >= record.assignment[0]![0]!),
        )
        added = assignReplicasToBrokers(brokers, totalCount - current, rf, startIndex, current)
      }
      const topicId = Buffer.from(record.topicId, 'base64url')
      const next: TopicRecord = { ...record, assignment: [...record.assignment, ...added] }
      const puts = added.map((replicas, i) => op.put(partitionKey(topicId, current + i), encode(initialRegistration(replicas, shuttingDown))))
      const res = await this.store.txn({
        compare: [compare.modRevision(topicKey(name), '==', kv.modRevision)],
        success: [op.put(topicKey(name), encode(next)), ...puts.slice(0, MAX_TXN_OPS - 1)],
      })
      if (!res.succeeded) continue
      return (await this.writeRest(name, kv.createRevision, puts.slice(MAX_TXN_OPS - 1))) ?? res.revision
    }
  }

  /**
   * Changes the topic's configs (Kafka's IncrementalAlterConfigs: a value sets, null deletes; with
   * `replace`, AlterConfigs: the given set replaces all). Resolves to the revision.
   */
  async alterTopicConfigs(name: string, changes: Record<string, string | null>, options: { replace?: boolean } = {}): Promise<bigint> {
    for (;;) {
      const { kv, record } = await this.readTopic(name)
      const configs: Record<string, string> = options.replace ? {} : { ...record.configs }
      for (const [k, v] of Object.entries(changes)) {
        if (v === null) delete configs[k]
        else configs[k] = v
      }
      const next: TopicRecord = { ...record, configs: validateConfigs(configs) }
      const res = await this.store.txn({ compare: [compare.modRevision(topicKey(name), '==', kv.modRevision)], success: [op.put(topicKey(name), encode(next))] })
      if (res.succeeded) return res.revision
    }
  }

  private async readTopic(name: string): Promise<{ kv: KeyValue; record: TopicRecord }> {
    const kv = await this.store.get(topicKey(name))
    if (!kv) throw new ClusterMetadataError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${name}' does not exist.`)
    return { kv, record: decode<TopicRecord>(kv.value) }
  }

  private async writeRest(name: string, createRevision: bigint, puts: TxnOp[]): Promise<bigint | null> {
    let revision: bigint | null = null
    for (let i = 0; i < puts.length; i += MAX_TXN_OPS) {
      const res = await this.store.txn({ compare: [compare.createRevision(topicKey(name), '==', createRevision)], success: puts.slice(i, i + MAX_TXN_OPS) })
      if (!res.succeeded) throw new ClusterMetadataError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${name}' was deleted while its partitions were written.`)
      revision = res.revision
    }
    return revision
  }

  private async liveBrokers(): Promise<{ brokers: BrokerPlacement[]; shuttingDown: Set<number> }> {
    const [brokers, shutdowns] = await Promise.all([this.store.range(BROKERS), this.store.range(SHUTDOWN)])
    const records = brokers.kvs.map((kv) => decode<BrokerRecord>(kv.value))
    const shuttingDown = new Set(
      shutdowns.kvs
        .map((kv) => decode<ShutdownRecord>(kv.value))
        .filter((s) => records.some((r) => r.id === s.brokerId && r.incarnationId === s.incarnationId))
        .map((s) => s.brokerId),
    )
    return { brokers: records.map((r) => ({ id: r.id, rack: r.rack ?? null })), shuttingDown }
  }
}

function initialRegistration(replicas: number[], shuttingDown: Set<number>): PartitionRegistration {
  return { replicas, isr: [...replicas], leader: replicas.find((b) => !shuttingDown.has(b)) ?? replicas[0]!, leaderEpoch: 0, partitionEpoch: 0 }
}

/** A random Kafka Uuid, never the reserved zero or "metadata topic" (1) ids. */
function newTopicId(): Buffer {
  for (;;) {
    const id = randomBytes(16)
    const hi = id.readBigUInt64BE(0)
    const lo = id.readBigUInt64BE(8)
    if (!(hi === 0n && (lo === 0n || lo === 1n))) return id
  }
}

export function validateTopicName(name: string): void {
  if (!LEGAL_TOPIC.test(name) || name === '.' || name === '..') {
    throw new ClusterMetadataError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic name "${name}" is illegal: 1 to 249 of [a-zA-Z0-9._-], not "." or "..".`)
  }
}

function validateConfigs(configs: Record<string, string>): Record<string, string> {
  for (const [k, v] of Object.entries(configs)) {
    if (k.length === 0 || typeof v !== 'string') throw new ClusterMetadataError(ErrorCode.INVALID_CONFIG, `Invalid config ${k}=${String(v)}`)
  }
  return configs
}

function validateAssignment(assignment: number[][], brokers: BrokerPlacement[], replicationFactor: number | null): number[][] {
  if (assignment.length === 0) throw new ClusterMetadataError(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.')
  const live = new Set(brokers.map((b) => b.id))
  const rf = replicationFactor ?? assignment[0]!.length
  assignment.forEach((replicas, p) => {
    if (replicas.length === 0) throw new ClusterMetadataError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partition ${p} has no replicas.`)
    if (new Set(replicas).size !== replicas.length) throw new ClusterMetadataError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Duplicate brokers in the replicas of partition ${p}: [${replicas}].`)
    if (replicas.length !== rf)
      throw new ClusterMetadataError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `All partitions should have the same number of replicas (${rf}); partition ${p} has ${replicas.length}.`)
    const unknown = replicas.filter((b) => !live.has(b))
    if (unknown.length > 0) throw new ClusterMetadataError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partition ${p} names brokers that are not alive: [${unknown}].`)
  })
  return assignment.map((r) => [...r])
}
