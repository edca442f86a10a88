/**
 * Kafka's Admin (AdminClient) for ferrolog and any Kafka broker: topics, partitions, configs,
 * consumer groups and their offsets, partition offsets and records, the cluster, producers and
 * transactions, by Kafka's method names, each call routed as Kafka's KafkaAdminClient routes it:
 *
 *   the controller (Metadata's controllerId; brokers forward in KRaft)
 *       createTopics, deleteTopics, createPartitions
 *   any node (the least loaded)
 *       listTopics, describeTopics (Metadata), describeCluster, describeConfigs and
 *       incrementalAlterConfigs (a BROKER or BROKER_LOGGER resource goes to that broker)
 *   every broker
 *       listGroups / listConsumerGroups (each broker lists the groups it coordinates)
 *   the group's coordinator (FindCoordinator, key type GROUP)
 *       describeConsumerGroups, deleteConsumerGroups, listConsumerGroupOffsets,
 *       alterConsumerGroupOffsets, deleteConsumerGroupOffsets
 *   the transactional id's coordinator (FindCoordinator, key type TRANSACTION)
 *       describeTransactions
 *   the partition's leader (Metadata)
 *       listOffsets, deleteRecords, describeProducers
 *
 * Each call is bounded by default.api.timeout.ms (or its `timeoutMs` option) and retries its
 * items through retriable errors (admin-call.ts): NOT_CONTROLLER and a lost connection ask again
 * after new metadata, NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE find the coordinator again,
 * COORDINATOR_LOAD_IN_PROGRESS asks it again, LEADER_NOT_AVAILABLE and NOT_LEADER_OR_FOLLOWER
 * ask the partition's new leader. Per-item errors are KafkaClientErrors with Kafka's code
 * (TOPIC_ALREADY_EXISTS, UNKNOWN_TOPIC_OR_PARTITION, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, ...)
 * and fail that item only (admin-result.ts): creating two topics of which one exists creates
 * the other. Calls with one answer (listTopics, describeCluster, listGroups,
 * listConsumerGroupOffsets) resolve to it or reject with the call's error.
 */
import { ZERO_UUID } from '../protocol/apis/common.js'
import { consumerGroupDescribeCodec } from '../protocol/apis/consumer-group-describe.js'
import { createPartitionsCodec } from '../protocol/apis/create-partitions.js'
import { createTopicsCodec } from '../protocol/apis/create-topics.js'
import { deleteGroupsCodec } from '../protocol/apis/delete-groups.js'
import { deleteRecordsCodec } from '../protocol/apis/delete-records.js'
import { deleteTopicsCodec } from '../protocol/apis/delete-topics.js'
import { describeClusterCodec } from '../protocol/apis/describe-cluster.js'
import { ConfigResourceType, describeConfigsCodec } from '../protocol/apis/describe-configs.js'
import { describeGroupsCodec } from '../protocol/apis/describe-groups.js'
import { describeProducersCodec } from '../protocol/apis/describe-producers.js'
import { describeTransactionsCodec } from '../protocol/apis/describe-transactions.js'
import { CoordinatorType, findCoordinatorCodec } from '../protocol/apis/find-coordinator.js'
import { ConfigOperation, incrementalAlterConfigsCodec } from '../protocol/apis/incremental-alter-configs.js'
import { listGroupsCodec } from '../protocol/apis/list-groups.js'
import { listOffsetsCodec } from '../protocol/apis/list-offsets.js'
import { metadataCodec, type MetadataResponse } from '../protocol/apis/metadata.js'
import { offsetCommitCodec } from '../protocol/apis/offset-commit.js'
import { offsetDeleteCodec } from '../protocol/apis/offset-delete.js'
import { offsetFetchCodec, type OffsetFetchResponseTopic } from '../protocol/apis/offset-fetch.js'
import { CONSUMER_PROTOCOL_TYPE, decodeAssignment } from '../protocol/consumer-protocol.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { adminConfigFrom, type AdminConfig, type AdminOptions } from './admin-config.js'
import { releaseClientSecurity } from './client-options.js'
import { runCall, type Attempt, type CallOptions, type Outcomes } from './admin-call.js'
import { AdminResult, topicPartitionKey } from './admin-result.js'
import { KafkaClientError, isRetriable } from './errors.js'
import type { Node } from './metadata.js'
import { NetworkClient } from './network-client.js'

export { AdminResult, topicPartitionKey } from './admin-result.js'
export type { AdminConfig, AdminOptions } from './admin-config.js'

export interface TopicPartition {
  topic: string
  partition: number
}

/** Every call takes `timeoutMs` (default.api.timeout.ms when not given). */
export interface AdminCallOptions {
  timeoutMs?: number
}

/** Kafka's NewTopic: -1 (or absent) partitions and replication factor take the broker's defaults. */
export interface NewTopic {
  name: string
  numPartitions?: number
  replicationFactor?: number
  /** Partition -> the broker ids of its replicas (then no partitions nor replication factor). */
  replicasAssignments?: Record<number, number[]>
  configs?: Record<string, string>
}

export interface CreateTopicResult {
  /** The topic id as Kafka prints it (a UUID), '' from brokers without topic ids. */
  topicId: string
  numPartitions: number
  replicationFactor: number
  configs: ConfigEntry[]
}

export interface TopicListing {
  name: string
  topicId: string
  isInternal: boolean
}

export interface TopicPartitionInfo {
  partition: number
  leader: Node | null
  replicas: Node[]
  isr: Node[]
}

export interface TopicDescription {
  name: string
  topicId: string
  isInternal: boolean
  partitions: TopicPartitionInfo[]
}

/** Kafka's NewPartitions: the topic's new partition count, optionally where the new ones go. */
export interface NewPartitions {
  totalCount: number
  newAssignments?: number[][]
}

export type ConfigResourceTypeName = keyof typeof ConfigResourceType

/** Kafka's ConfigResource: a TOPIC by name, a BROKER by id ('' for the cluster default), ... */
export interface ConfigResource {
  type: ConfigResourceTypeName
  name: string
}

/** Kafka's ConfigEntry.ConfigSource names, by DescribeConfigs' numbers. */
export const CONFIG_SOURCES = [
  'UNKNOWN',
  'DYNAMIC_TOPIC_CONFIG',
  'DYNAMIC_BROKER_CONFIG',
  'DYNAMIC_DEFAULT_BROKER_CONFIG',
  'STATIC_BROKER_CONFIG',
  'DEFAULT_CONFIG',
  'DYNAMIC_BROKER_LOGGER_CONFIG',
  'CLIENT_METRICS_CONFIG',
  'GROUP_CONFIG',
] as const
export type ConfigSource = (typeof CONFIG_SOURCES)[number]

/** Kafka's ConfigEntry.ConfigType names, by DescribeConfigs' numbers. */
export const CONFIG_TYPES = ['UNKNOWN', 'BOOLEAN', 'STRING', 'INT', 'SHORT', 'LONG', 'DOUBLE', 'LIST', 'CLASS', 'PASSWORD'] as const
export type ConfigType = (typeof CONFIG_TYPES)[number]

export interface ConfigEntry {
  name: string
  /** null when sensitive or unset. */
  value: string | null
  source: ConfigSource
  isSensitive: boolean
  isReadOnly: boolean
  isDefault: boolean
  synonyms: Array<{ name: string; value: string | null; source: ConfigSource }>
  type: ConfigType
  documentation: string | null
}

/** Kafka's Config: a resource's entries. */
export interface Config {
  entries: ConfigEntry[]
  get(name: string): ConfigEntry | undefined
}

/** Kafka's AlterConfigOp. */
export interface AlterConfigOp {
  name: string
  value?: string | null
  opType: keyof typeof ConfigOperation
}

export interface GroupListing {
  groupId: string
  protocolType: string
  /** Stable, Empty, PreparingRebalance, ... ('' from brokers before ListGroups v4). */
  groupState: string
  /** classic or consumer ('' from brokers before ListGroups v5). */
  type: string
}

export interface MemberDescription {
  memberId: string
  groupInstanceId: string | null
  clientId: string
  host: string
  assignment: TopicPartition[]
}

export interface ConsumerGroupDescription {
  groupId: string
  /** A group of assign()ed consumers that only commit (no protocol type). */
  isSimpleConsumerGroup: boolean
  members: MemberDescription[]
  partitionAssignor: string
  /** classic or consumer (KIP-848). */
  type: 'classic' | 'consumer'
  groupState: string
  coordinator: Node
  /** The group's epoch (consumer groups; -1 for classic ones). */
  groupEpoch: number
}

export interface OffsetAndMetadata {
  offset: bigint
  /** -1 when unknown. */
  leaderEpoch: number
  metadata: string
}

/** Kafka's OffsetSpec: earliest, latest, the max timestamp's, or the first at or after a timestamp (ms). */
export type OffsetSpec = 'earliest' | 'latest' | 'max-timestamp' | { timestamp: number | bigint }

export interface ListOffsetsResultInfo {
  offset: bigint
  timestamp: bigint
  /** -1 when the broker gave none. */
  leaderEpoch: number
}

export interface DeletedRecords {
  lowWatermark: bigint
}

export interface ClusterDescription {
  clusterId: string | null
  controller: Node | null
  nodes: Node[]
}

export interface ProducerState {
  producerId: bigint
  producerEpoch: number
  lastSequence: number
  lastTimestamp: bigint
  coordinatorEpoch: number
  /** -1 when the producer has no transaction open on the partition. */
  currentTransactionStartOffset: bigint
}

export interface TransactionDescription {
  coordinatorId: number
  state: string
  producerId: bigint
  producerEpoch: number
  transactionTimeoutMs: number
  /** -1 when no transaction is open. */
  transactionStartTimeMs: bigint
  topicPartitions: TopicPartition[]
}

/** The key of a config resource's item: `TYPE:name` (TOPIC:orders, BROKER:1). */
export function configResourceKey(r: ConfigResource): string {
  return `${r.type}:${r.name}`
}

const GROUP_COORDINATOR_ERRORS = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE])
/** ListOffsets' timestamps of the specs that are not a time (Kafka's ListOffsetsRequest.EARLIEST_TIMESTAMP, ...). */
const LIST_OFFSETS_TIMESTAMP = { earliest: -2n, latest: -1n, 'max-timestamp': -3n } as const

/** Kafka's Uuid.toString(): URL-safe base64 without padding ('' for the zero id). */
const idString = (id: Buffer) => (id.equals(ZERO_UUID) ? '' : id.toString('base64url'))

export class Admin {
  readonly config: AdminConfig
  private readonly client: NetworkClient
  private closed = false

  constructor(options: AdminOptions) {
    const c = (this.config = adminConfigFrom(options))
    this.client = new NetworkClient({
      bootstrapServers: c.bootstrapServers,
      clientId: c.clientId,
      requestTimeoutMs: c.requestTimeoutMs,
      reconnectBackoffMs: c.reconnectBackoffMs,
      reconnectBackoffMaxMs: c.reconnectBackoffMaxMs,
      security: c.security,
    })
  }

  /** Kafka's Admin.create(props). */
  static create(options: AdminOptions): Admin {
    return new Admin(options)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.client.close()
    releaseClientSecurity(this.config.security)
  }

  // ---- routing --------------------------------------------------------------------------

  private callOptions(options: AdminCallOptions | undefined, retriable?: (errorCode: number) => boolean): CallOptions {
    if (this.closed) throw new KafkaClientError('CLIENT_CLOSED', 'the admin is closed')
    return { deadline: Date.now() + (options?.timeoutMs ?? this.config.defaultApiTimeoutMs), retryBackoffMs: this.config.retryBackoffMs, retryBackoffMaxMs: this.config.retryBackoffMaxMs, retriable }
  }

  /** A single-answer call: `attempt` until it answers or the deadline passes. */
  private async single<V>(what: string, options: AdminCallOptions | undefined, attempt: () => Promise<V>): Promise<V> {
    return runCall<V>(what, [what], this.callOptions(options), async (_keys, out) => out.ok(what, await attempt())).value(what)
  }

  /** The least loaded node (any broker, or a bootstrap server before the first metadata). */
  private anyNode(): number {
    return this.client.candidateNodes()[0]!
  }

  /** The controller as Metadata names it (brokers forward to the active controller in KRaft). */
  private async controller(): Promise<number> {
    const md = await this.client.refreshMetadata([])
    return md.controllerId >= 0 && md.node(md.controllerId) ? md.controllerId : this.anyNode()
  }

  /** FindCoordinator for `key` (a group id or transactional id): the coordinator's node id. */
  private async findCoordinator(key: string, keyType: number): Promise<number> {
    const res = await this.client.request(this.anyNode(), findCoordinatorCodec, (v) => (v >= 4 ? { key: '', keyType, coordinatorKeys: [key] } : { key, keyType, coordinatorKeys: [] }))
    const c = res.coordinators[0] ?? res
    if (c.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(c.errorCode, `FindCoordinator ${key}`, c.errorMessage)
    if (!this.client.metadata.node(c.nodeId)) await this.client.refreshMetadata([])
    return c.nodeId
  }

  /**
   * Per group: finds the coordinator and runs `send` there; a group whose coordinator moved
   * (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) or is loading is retried.
   */
  private byCoordinator<V>(
    what: string,
    keys: string[],
    keyType: number,
    options: AdminCallOptions | undefined,
    send: (key: string, nodeId: number, out: Outcomes<V>) => Promise<void>,
  ): AdminResult<V> {
    return runCall<V>(what, keys, this.callOptions(options), async (pending, out) => {
      await Promise.all(
        pending.map(async (key) => {
          try {
            await send(key, await this.findCoordinator(key, keyType), out)
          } catch (err) {
            if (!(err instanceof KafkaClientError)) throw err
            if (err.retriable) out.retry(key, err)
            else out.fail(key, err)
          }
        }),
      )
    })
  }

  /**
   * Per partition: refreshes the metadata of their topics, groups the partitions by leader and
   * runs `send` once per leader; a partition without a leader (or whose leader moved) is retried
   * with the next metadata, one whose topic does not exist fails with UNKNOWN_TOPIC_OR_PARTITION.
   */
  private byLeader<V>(
    what: string,
    partitions: TopicPartition[],
    options: AdminCallOptions | undefined,
    send: (nodeId: number, partitions: TopicPartition[], out: Outcomes<V>) => Promise<void>,
  ): AdminResult<V> {
    const byKey = new Map(partitions.map((tp) => [topicPartitionKey(tp), tp]))
    const attempt: Attempt<V> = async (pending, out) => {
      const tps = pending.map((k) => byKey.get(k)!)
      const md = await this.client.refreshMetadata([...new Set(tps.map((tp) => tp.topic))])
      const byNode = new Map<number, TopicPartition[]>()
      for (const tp of tps) {
        const key = topicPartitionKey(tp)
        const topic = md.topic(tp.topic)
        const p = topic?.partitions.find((q) => q.partition === tp.partition)
        if (!topic || (!p && topic.partitions.length > 0)) {
          out.fail(key, new KafkaClientError('UNKNOWN_TOPIC_OR_PARTITION', `${what} ${key}: ${errorTextUnknown(topic === undefined)}`))
          continue
        }
        const leader = md.leaderFor(tp.topic, tp.partition)
        if (!leader) {
          out.retry(key, new KafkaClientError('LEADER_NOT_AVAILABLE', `${what} ${key}: the partition has no leader`))
          continue
        }
        let list = byNode.get(leader.nodeId)
        if (!list) byNode.set(leader.nodeId, (list = []))
        list.push(tp)
      }
      await Promise.all(
        [...byNode].map(async ([nodeId, list]) => {
          try {
            await send(nodeId, list, out)
          } catch (err) {
            if (!(err instanceof KafkaClientError)) throw err
            for (const tp of list) {
              if (err.retriable) out.retry(topicPartitionKey(tp), err)
              else out.fail(topicPartitionKey(tp), err)
            }
          }
        }),
      )
    }
    return runCall<V>(
      what,
      [...byKey.keys()],
      this.callOptions(options, (code) => code === ErrorCode.NOT_CONTROLLER || isRetriable(code)),
      attempt,
    )
  }

  // ---- topics ----------------------------------------------------------------------------

  /** Creates topics (CreateTopics to the controller); TOPIC_ALREADY_EXISTS fails that topic only. */
  createTopics(newTopics: NewTopic[], options: AdminCallOptions & { validateOnly?: boolean } = {}): AdminResult<CreateTopicResult> {
    const byName = new Map(newTopics.map((t) => [t.name, t]))
    const call = this.callOptions(options)
    return runCall<CreateTopicResult>('createTopics', [...byName.keys()], call, async (pending, out) => {
      const res = await this.client.request(await this.controller(), createTopicsCodec, {
        topics: pending.map((name) => {
          const t = byName.get(name)!
          const assignments = Object.entries(t.replicasAssignments ?? {}).map(([partition, brokerIds]) => ({ partitionIndex: Number(partition), brokerIds }))
          return {
            name,
            numPartitions: assignments.length > 0 ? -1 : (t.numPartitions ?? -1),
            replicationFactor: assignments.length > 0 ? -1 : (t.replicationFactor ?? -1),
            assignments,
            configs: Object.entries(t.configs ?? {}).map(([k, value]) => ({ name: k, value })),
          }
        }),
        timeoutMs: Math.max(0, call.deadline - Date.now()),
        validateOnly: options.validateOnly ?? false,
      })
      for (const t of res.topics) {
        if (t.errorCode !== ErrorCode.NONE) out.error(t.name, t.errorCode, `createTopics ${t.name}`, t.errorMessage)
        else
          out.ok(t.name, {
            topicId: idString(t.topicId),
            numPartitions: t.numPartitions,
            replicationFactor: t.replicationFactor,
            configs: (t.configs ?? []).map((c) => configEntry({ ...c, synonyms: [], configType: 0, documentation: null })),
          })
      }
    })
  }

  /** Deletes topics by name (DeleteTopics to the controller). */
  deleteTopics(topics: string[], options: AdminCallOptions = {}): AdminResult<void> {
    const call = this.callOptions(options)
    return runCall<void>('deleteTopics', topics, call, async (pending, out) => {
      const timeoutMs = Math.max(0, call.deadline - Date.now())
      const res = await this.client.request(await this.controller(), deleteTopicsCodec, (v) =>
        v >= 6 ? { topics: pending.map((name) => ({ name, topicId: ZERO_UUID })), topicNames: [], timeoutMs } : { topics: [], topicNames: pending, timeoutMs },
      )
      for (const t of res.responses) {
        const name = t.name ?? ''
        if (t.errorCode !== ErrorCode.NONE) out.error(name, t.errorCode, `deleteTopics ${name}`, t.errorMessage)
        else out.ok(name, undefined)
      }
    })
  }

  /** The topics (Metadata for all), sorted by name; internal ones only with `listInternal`. */
  async listTopics(options: AdminCallOptions & { listInternal?: boolean } = {}): Promise<TopicListing[]> {
    const res = await this.single('listTopics', options, () => this.metadataOf(null))
    return res.topics
      .filter((t) => t.name !== null && t.errorCode === ErrorCode.NONE && (options.listInternal || !t.isInternal))
      .map((t) => ({ name: t.name!, topicId: idString(t.topicId), isInternal: t.isInternal }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  /** Describes topics (Metadata); an unknown topic fails with UNKNOWN_TOPIC_OR_PARTITION. */
  describeTopics(topics: string[], options: AdminCallOptions = {}): AdminResult<TopicDescription> {
    return runCall<TopicDescription>('describeTopics', topics, this.callOptions(options), async (pending, out) => {
      const res = await this.metadataOf(pending)
      const nodes = new Map(res.brokers.map((b) => [b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack }]))
      const node = (id: number): Node => nodes.get(id) ?? { nodeId: id, host: '', port: -1, rack: null }
      for (const t of res.topics) {
        const name = t.name ?? ''
        if (t.errorCode !== ErrorCode.NONE) {
          out.error(name, t.errorCode, `describeTopics ${name}`)
          continue
        }
        if (t.partitions.some((p) => p.errorCode === ErrorCode.LEADER_NOT_AVAILABLE)) {
          out.retry(name, new KafkaClientError('LEADER_NOT_AVAILABLE', `describeTopics ${name}: a partition has no leader`))
          continue
        }
        out.ok(name, {
          name,
          topicId: idString(t.topicId),
          isInternal: t.isInternal,
          partitions: [...t.partitions]
            .sort((a, b) => a.partitionIndex - b.partitionIndex)
            .map((p) => ({ partition: p.partitionIndex, leader: p.leaderId >= 0 ? node(p.leaderId) : null, replicas: p.replicaNodes.map(node), isr: p.isrNodes.map(node) })),
        })
      }
    })
  }

  private async metadataOf(topics: string[] | null): Promise<MetadataResponse> {
    const res = await this.client.request(this.anyNode(), metadataCodec, (v) => ({
      topics: topics === null ? (v === 0 ? [] : null) : topics.map((name) => ({ name, topicId: ZERO_UUID })),
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }))
    this.client.metadata.update(res, topics === null)
    return res
  }

  /** Raises topics' partition counts (CreatePartitions to the controller). */
  createPartitions(newPartitions: Record<string, NewPartitions>, options: AdminCallOptions & { validateOnly?: boolean } = {}): AdminResult<void> {
    const call = this.callOptions(options)
    return runCall<void>('createPartitions', Object.keys(newPartitions), call, async (pending, out) => {
      const res = await this.client.request(await this.controller(), createPartitionsCodec, {
        topics: pending.map((name) => {
          const p = newPartitions[name]!
          return { name, count: p.totalCount, assignments: p.newAssignments ? p.newAssignments.map((brokerIds) => ({ brokerIds })) : null }
        }),
        timeoutMs: Math.max(0, call.deadline - Date.now()),
        validateOnly: options.validateOnly ?? false,
      })
      for (const t of res.results) {
        if (t.errorCode !== ErrorCode.NONE) out.error(t.name, t.errorCode, `createPartitions ${t.name}`, t.errorMessage)
        else out.ok(t.name, undefined)
      }
    })
  }

  // ---- configs ---------------------------------------------------------------------------

  /** Where a config resource's request goes: a broker's own configs to that broker. */
  private configNode(r: ConfigResource): number {
    if ((r.type === 'BROKER' || r.type === 'BROKER_LOGGER') && r.name !== '') {
      const id = Number(r.name)
      if (!Number.isInteger(id)) throw new KafkaClientError('INVALID_REQUEST', `a ${r.type} resource is named by a broker id, not "${r.name}"`)
      return id
    }
    return this.anyNode()
  }

  /** Groups resources by the node their request goes to. */
  private async configNodes(resources: ConfigResource[]): Promise<Map<number, ConfigResource[]>> {
    if (resources.some((r) => r.type === 'BROKER' || r.type === 'BROKER_LOGGER')) await this.client.refreshMetadata([])
    const byNode = new Map<number, ConfigResource[]>()
    for (const r of resources) {
      const nodeId = this.configNode(r)
      let list = byNode.get(nodeId)
      if (!list) byNode.set(nodeId, (list = []))
      list.push(r)
    }
    return byNode
  }

  /** Describes configs (DescribeConfigs); results keyed by `configResourceKey`. */
  describeConfigs(resources: ConfigResource[], options: AdminCallOptions & { includeSynonyms?: boolean; includeDocumentation?: boolean } = {}): AdminResult<Config> {
    const byKey = new Map(resources.map((r) => [configResourceKey(r), r]))
    return runCall<Config>('describeConfigs', [...byKey.keys()], this.callOptions(options), async (pending, out) => {
      for (const [nodeId, list] of await this.configNodes(pending.map((k) => byKey.get(k)!))) {
        const res = await this.client.request(nodeId, describeConfigsCodec, {
          resources: list.map((r) => ({ resourceType: ConfigResourceType[r.type], resourceName: r.name, configurationKeys: null })),
          includeSynonyms: options.includeSynonyms ?? false,
          includeDocumentation: options.includeDocumentation ?? false,
        })
        for (const r of res.results) {
          const key = `${resourceTypeName(r.resourceType)}:${r.resourceName}`
          if (r.errorCode !== ErrorCode.NONE) out.error(key, r.errorCode, `describeConfigs ${key}`, r.errorMessage)
          else out.ok(key, config(r.configs.map(configEntry)))
        }
      }
    })
  }

  /** Sets, deletes, appends to or subtracts from configs (IncrementalAlterConfigs). */
  incrementalAlterConfigs(configs: Iterable<[ConfigResource, AlterConfigOp[]]>, options: AdminCallOptions & { validateOnly?: boolean } = {}): AdminResult<void> {
    const byKey = new Map([...configs].map(([r, ops]) => [configResourceKey(r), { r, ops }]))
    return runCall<void>('incrementalAlterConfigs', [...byKey.keys()], this.callOptions(options), async (pending, out) => {
      for (const [nodeId, list] of await this.configNodes(pending.map((k) => byKey.get(k)!.r))) {
        const res = await this.client.request(nodeId, incrementalAlterConfigsCodec, {
          resources: list.map((r) => ({
            resourceType: ConfigResourceType[r.type],
            resourceName: r.name,
            configs: byKey.get(configResourceKey(r))!.ops.map((op) => ({ name: op.name, configOperation: ConfigOperation[op.opType], value: op.value ?? null })),
          })),
          validateOnly: options.validateOnly ?? false,
        })
        for (const r of res.responses) {
          const key = `${resourceTypeName(r.resourceType)}:${r.resourceName}`
          if (r.errorCode !== ErrorCode.NONE) out.error(key, r.errorCode, `incrementalAlterConfigs ${key}`, r.errorMessage)
          else out.ok(key, undefined)
        }
      }
    })
  }

  // ---- groups ----------------------------------------------------------------------------

  /** Every group of every broker (ListGroups to each), sorted by id; filtered by states and types. */
  async listGroups(options: AdminCallOptions & { states?: string[]; types?: string[] } = {}): Promise<GroupListing[]> {
    const md = await this.single('listGroups', options, () => this.client.refreshMetadata([]))
    const nodes = md.nodes.map((n) => n.nodeId)
    const result = runCall<GroupListing[]>('listGroups', nodes.map(String), this.callOptions(options), async (pending, out) => {
      await Promise.all(
        pending.map(async (key) => {
          try {
            const res = await this.client.request(Number(key), listGroupsCodec, { statesFilter: options.states ?? [], typesFilter: options.types ?? [] })
            if (res.errorCode !== ErrorCode.NONE) out.error(key, res.errorCode, `listGroups of broker ${key}`)
            else
              out.ok(
                key,
                res.groups.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.groupState, type: g.groupType })),
              )
          } catch (err) {
            if (!(err instanceof KafkaClientError)) throw err
            if (err.retriable) out.retry(key, err)
            else out.fail(key, err)
          }
        }),
      )
    })
    const all = [...(await result.all()).values()].flat()
    return all.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0))
  }

  /** The consumer groups (classic groups of protocol type consumer, simple groups, consumer groups). */
  async listConsumerGroups(options: AdminCallOptions & { states?: string[] } = {}): Promise<GroupListing[]> {
    return (await this.listGroups(options)).filter((g) => g.protocolType === CONSUMER_PROTOCOL_TYPE || g.protocolType === '')
  }

  /**
   * Describes consumer groups at their coordinators: ConsumerGroupDescribe (KIP-848 groups) when
   * the coordinator serves it, DescribeGroups for the classic groups it does not know. A group
   * that does not exist fails with GROUP_ID_NOT_FOUND.
   */
  describeConsumerGroups(groupIds: string[], options: AdminCallOptions = {}): AdminResult<ConsumerGroupDescription> {
    return this.byCoordinator<ConsumerGroupDescription>('describeConsumerGroups', groupIds, CoordinatorType.GROUP, options, async (groupId, nodeId, out) => {
      const coordinator = this.client.node(nodeId) ?? { nodeId, host: '', port: -1, rack: null }
      await this.client.ready(nodeId)
      let consumerGroupDescribe = true
      try {
        this.client.versionFor(nodeId, consumerGroupDescribeCodec)
      } catch {
        consumerGroupDescribe = false
      }
      if (consumerGroupDescribe) {
        const res = await this.client.request(nodeId, consumerGroupDescribeCodec, { groupIds: [groupId], includeAuthorizedOperations: false })
        const g = res.groups[0]
        if (!g) throw new KafkaClientError('INVALID_RESPONSE', `ConsumerGroupDescribe of ${groupId} answered no group`)
        if (g.errorCode === ErrorCode.NONE) {
          out.ok(groupId, {
            groupId,
            isSimpleConsumerGroup: false,
            members: g.members.map((m) => ({
              memberId: m.memberId,
              groupInstanceId: m.instanceId,
              clientId: m.clientId,
              host: m.clientHost,
              assignment: m.assignment.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topicName, partition }))),
            })),
            partitionAssignor: g.assignorName,
            type: 'consumer',
            groupState: g.groupState,
            coordinator,
            groupEpoch: g.groupEpoch,
          })
          return
        }
        if (g.errorCode !== ErrorCode.GROUP_ID_NOT_FOUND) return this.groupError(out, groupId, g.errorCode, 'describeConsumerGroups', g.errorMessage)
      }
      const res = await this.client.request(nodeId, describeGroupsCodec, { groups: [groupId], includeAuthorizedOperations: false })
      const g = res.groups[0]
      if (!g) throw new KafkaClientError('INVALID_RESPONSE', `DescribeGroups of ${groupId} answered no group`)
      if (g.errorCode !== ErrorCode.NONE) return this.groupError(out, groupId, g.errorCode, 'describeConsumerGroups', g.errorMessage)
      if (g.groupState === 'Dead') return out.fail(groupId, new KafkaClientError('GROUP_ID_NOT_FOUND', `describeConsumerGroups ${groupId}: GROUP_ID_NOT_FOUND (the group does not exist)`))
      if (g.protocolType !== CONSUMER_PROTOCOL_TYPE && g.protocolType !== '') {
        return out.fail(groupId, new KafkaClientError('INVALID_GROUP_ID', `describeConsumerGroups ${groupId}: the group's protocol type is ${g.protocolType}, not consumer`))
      }
      out.ok(groupId, {
        groupId,
        isSimpleConsumerGroup: g.protocolType === '',
        members: g.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          host: m.clientHost,
          assignment:
            m.memberAssignment.length === 0 ? [] : decodeAssignment(m.memberAssignment).value.assignedPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition }))),
        })),
        partitionAssignor: g.protocolData,
        type: 'classic',
        groupState: g.groupState,
        coordinator,
        groupEpoch: -1,
      })
    })
  }

  /** A group's error at its coordinator: retried when the coordinator moved or is loading. */
  private groupError(out: Outcomes<unknown>, groupId: string, errorCode: number, what: string, message?: string | null): void {
    if (GROUP_COORDINATOR_ERRORS.has(errorCode) || errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS) out.retry(groupId, KafkaClientError.fromErrorCode(errorCode, `${what} ${groupId}`, message))
    else out.error(groupId, errorCode, `${what} ${groupId}`, message)
  }

  /** Deletes groups (DeleteGroups at their coordinators); a group with members fails with NON_EMPTY_GROUP. */
  deleteConsumerGroups(groupIds: string[], options: AdminCallOptions = {}): AdminResult<void> {
    return this.byCoordinator<void>('deleteConsumerGroups', groupIds, CoordinatorType.GROUP, options, async (groupId, nodeId, out) => {
      const res = await this.client.request(nodeId, deleteGroupsCodec, { groupsNames: [groupId] })
      const r = res.results[0]
      if (!r) throw new KafkaClientError('INVALID_RESPONSE', `DeleteGroups of ${groupId} answered no group`)
      if (r.errorCode !== ErrorCode.NONE) this.groupError(out, groupId, r.errorCode, 'deleteConsumerGroups', r.errorMessage)
      else out.ok(groupId, undefined)
    })
  }

  /**
   * A group's committed offsets (OffsetFetch at its coordinator), keyed `topic-partition`: all of
   * them, or those of `topicPartitions` (null for a partition without a committed offset).
   */
  async listConsumerGroupOffsets(groupId: string, options: AdminCallOptions & { topicPartitions?: TopicPartition[]; requireStable?: boolean } = {}): Promise<Map<string, OffsetAndMetadata | null>> {
    const byTopic = new Map<string, number[]>()
    for (const tp of options.topicPartitions ?? []) {
      let list = byTopic.get(tp.topic)
      if (!list) byTopic.set(tp.topic, (list = []))
      list.push(tp.partition)
    }
    const topics = options.topicPartitions ? [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })) : null
    const result = this.byCoordinator<Map<string, OffsetAndMetadata | null>>('listConsumerGroupOffsets', [groupId], CoordinatorType.GROUP, options, async (_key, nodeId, out) => {
      const requireStable = options.requireStable ?? false
      const res = await this.client.request(nodeId, offsetFetchCodec, (v) =>
        v >= 8
          ? { groupId: '', topics: [], groups: [{ groupId, memberId: null, memberEpoch: -1, topics: topics?.map((t) => ({ ...t, topicId: ZERO_UUID })) ?? null }], requireStable }
          : { groupId, topics, groups: [], requireStable },
      )
      const group = res.groups[0]
      const errorCode = group ? group.errorCode : res.errorCode
      const resTopics: OffsetFetchResponseTopic[] = group ? group.topics : res.topics
      if (errorCode !== ErrorCode.NONE) return this.groupError(out, groupId, errorCode, 'listConsumerGroupOffsets')
      const offsets = new Map<string, OffsetAndMetadata | null>()
      for (const t of resTopics) {
        for (const p of t.partitions) {
          const key = topicPartitionKey({ topic: t.name, partition: p.partitionIndex })
          if (p.errorCode === ErrorCode.UNSTABLE_OFFSET_COMMIT) return out.retry(groupId, KafkaClientError.fromErrorCode(p.errorCode, `listConsumerGroupOffsets ${groupId} ${key}`))
          if (p.errorCode !== ErrorCode.NONE) return out.error(groupId, p.errorCode, `listConsumerGroupOffsets ${groupId} ${key}`)
          offsets.set(key, p.committedOffset >= 0n ? { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.metadata ?? '' } : null)
        }
      }
      out.ok(groupId, offsets)
    })
    return result.value(groupId)
  }

  /**
   * Commits offsets for a group that has no active member (OffsetCommit at its coordinator, as
   * no member); a group with members fails with UNKNOWN_MEMBER_ID, as on Kafka.
   */
  alterConsumerGroupOffsets(groupId: string, offsets: Array<TopicPartition & { offset: bigint | number; leaderEpoch?: number; metadata?: string }>, options: AdminCallOptions = {}): AdminResult<void> {
    const partitionKeys = offsets.map(topicPartitionKey)
    const inner = this.byCoordinator<Map<string, number>>('alterConsumerGroupOffsets', [groupId], CoordinatorType.GROUP, options, async (_key, nodeId, out) => {
      const byTopic = new Map<string, typeof offsets>()
      for (const o of offsets) {
        let list = byTopic.get(o.topic)
        if (!list) byTopic.set(o.topic, (list = []))
        list.push(o)
      }
      const res = await this.client.request(nodeId, offsetCommitCodec, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        topics: [...byTopic].map(([name, list]) => ({
          name,
          topicId: ZERO_UUID,
          partitions: list.map((o) => ({ partitionIndex: o.partition, committedOffset: BigInt(o.offset), committedLeaderEpoch: o.leaderEpoch ?? -1, committedMetadata: o.metadata ?? '' })),
        })),
      })
      const codes = new Map<string, number>()
      for (const t of res.topics) for (const p of t.partitions) codes.set(topicPartitionKey({ topic: t.name, partition: p.partitionIndex }), p.errorCode)
      const first = [...codes.values()].find((c) => c !== ErrorCode.NONE)
      // a coordinator that moved answers its error for every partition: the whole commit goes again
      if (first !== undefined && (GROUP_COORDINATOR_ERRORS.has(first) || first === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)) return this.groupError(out, groupId, first, 'alterConsumerGroupOffsets')
      out.ok(groupId, codes)
    })
    return perPartition('alterConsumerGroupOffsets', groupId, partitionKeys, inner.value(groupId))
  }

  /** Deletes a group's committed offsets of partitions (OffsetDelete); GROUP_SUBSCRIBED_TO_TOPIC fails those partitions. */
  deleteConsumerGroupOffsets(groupId: string, partitions: TopicPartition[], options: AdminCallOptions = {}): AdminResult<void> {
    const inner = this.byCoordinator<Map<string, number>>('deleteConsumerGroupOffsets', [groupId], CoordinatorType.GROUP, options, async (_key, nodeId, out) => {
      const byTopic = new Map<string, number[]>()
      for (const tp of partitions) {
        let list = byTopic.get(tp.topic)
        if (!list) byTopic.set(tp.topic, (list = []))
        list.push(tp.partition)
      }
      const res = await this.client.request(nodeId, offsetDeleteCodec, { groupId, topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps.map((partitionIndex) => ({ partitionIndex })) })) })
      if (res.errorCode !== ErrorCode.NONE) return this.groupError(out, groupId, res.errorCode, 'deleteConsumerGroupOffsets')
      const codes = new Map<string, number>()
      for (const t of res.topics) for (const p of t.partitions) codes.set(topicPartitionKey({ topic: t.name, partition: p.partitionIndex }), p.errorCode)
      out.ok(groupId, codes)
    })
    return perPartition('deleteConsumerGroupOffsets', groupId, partitions.map(topicPartitionKey), inner.value(groupId))
  }

  // ---- partitions ------------------------------------------------------------------------

  /** Offsets by spec (ListOffsets to each partition's leader), keyed `topic-partition`. */
  listOffsets(specs: Array<TopicPartition & { spec: OffsetSpec }>, options: AdminCallOptions & { isolationLevel?: 'read_uncommitted' | 'read_committed' } = {}): AdminResult<ListOffsetsResultInfo> {
    const byKey = new Map(specs.map((s) => [topicPartitionKey(s), s]))
    const timestampOf = (spec: OffsetSpec) => (typeof spec === 'string' ? LIST_OFFSETS_TIMESTAMP[spec] : BigInt(spec.timestamp))
    const needsMax = specs.some((s) => s.spec === 'max-timestamp')
    return this.byLeader<ListOffsetsResultInfo>('listOffsets', specs, options, async (nodeId, tps, out) => {
      const byTopic = new Map<string, TopicPartition[]>()
      for (const tp of tps) {
        let list = byTopic.get(tp.topic)
        if (!list) byTopic.set(tp.topic, (list = []))
        list.push(tp)
      }
      if (needsMax) {
        await this.client.ready(nodeId)
        if (this.client.versionFor(nodeId, listOffsetsCodec) < 7) throw new KafkaClientError('UNSUPPORTED_VERSION', `node ${nodeId} serves no ListOffsets v7+ for max-timestamp`)
      }
      const res = await this.client.request(nodeId, listOffsetsCodec, {
        replicaId: -1,
        isolationLevel: options.isolationLevel === 'read_committed' ? 1 : 0,
        topics: [...byTopic].map(([name, list]) => ({
          name,
          partitions: list.map((tp) => ({ partitionIndex: tp.partition, currentLeaderEpoch: -1, timestamp: timestampOf(byKey.get(topicPartitionKey(tp))!.spec) })),
        })),
        timeoutMs: this.config.requestTimeoutMs,
      })
      for (const t of res.topics) {
        for (const p of t.partitions) {
          const key = topicPartitionKey({ topic: t.name, partition: p.partitionIndex })
          if (p.errorCode !== ErrorCode.NONE) out.error(key, p.errorCode, `listOffsets ${key}`)
          else out.ok(key, { offset: p.offset, timestamp: p.timestamp, leaderEpoch: p.leaderEpoch })
        }
      }
    })
  }

  /** Deletes records before offsets (DeleteRecords to each leader); -1 deletes up to the high watermark. */
  deleteRecords(recordsToDelete: Array<TopicPartition & { beforeOffset: bigint | number }>, options: AdminCallOptions = {}): AdminResult<DeletedRecords> {
    const byKey = new Map(recordsToDelete.map((r) => [topicPartitionKey(r), r]))
    const call = this.callOptions(options)
    return this.byLeader<DeletedRecords>('deleteRecords', recordsToDelete, options, async (nodeId, tps, out) => {
      const byTopic = new Map<string, TopicPartition[]>()
      for (const tp of tps) {
        let list = byTopic.get(tp.topic)
        if (!list) byTopic.set(tp.topic, (list = []))
        list.push(tp)
      }
      const res = await this.client.request(nodeId, deleteRecordsCodec, {
        topics: [...byTopic].map(([name, list]) => ({ name, partitions: list.map((tp) => ({ partitionIndex: tp.partition, offset: BigInt(byKey.get(topicPartitionKey(tp))!.beforeOffset) })) })),
        timeoutMs: Math.max(0, Math.min(this.config.requestTimeoutMs, call.deadline - Date.now())),
      })
      for (const t of res.topics) {
        for (const p of t.partitions) {
          const key = topicPartitionKey({ topic: t.name, partition: p.partitionIndex })
          if (p.errorCode !== ErrorCode.NONE) out.error(key, p.errorCode, `deleteRecords ${key}`)
          else out.ok(key, { lowWatermark: p.lowWatermark })
        }
      }
    })
  }

  /** The producers active on partitions (DescribeProducers to each leader). */
  describeProducers(partitions: TopicPartition[], options: AdminCallOptions = {}): AdminResult<ProducerState[]> {
    return this.byLeader<ProducerState[]>('describeProducers', partitions, options, async (nodeId, tps, out) => {
      const byTopic = new Map<string, number[]>()
      for (const tp of tps) {
        let list = byTopic.get(tp.topic)
        if (!list) byTopic.set(tp.topic, (list = []))
        list.push(tp.partition)
      }
      const res = await this.client.request(nodeId, describeProducersCodec, { topics: [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes })) })
      for (const t of res.topics) {
        for (const p of t.partitions) {
          const key = topicPartitionKey({ topic: t.name, partition: p.partitionIndex })
          if (p.errorCode !== ErrorCode.NONE) out.error(key, p.errorCode, `describeProducers ${key}`, p.errorMessage)
          else
            out.ok(
              key,
              p.activeProducers.map((s) => ({
                producerId: s.producerId,
                producerEpoch: s.producerEpoch,
                lastSequence: s.lastSequence,
                lastTimestamp: s.lastTimestamp,
                coordinatorEpoch: s.coordinatorEpoch,
                currentTransactionStartOffset: s.currentTxnStartOffset,
              })),
            )
        }
      }
    })
  }

  // ---- cluster and transactions ----------------------------------------------------------

  /** The cluster's id, controller and brokers (DescribeCluster, or Metadata from brokers without it). */
  async describeCluster(options: AdminCallOptions = {}): Promise<ClusterDescription> {
    return this.single('describeCluster', options, async () => {
      const nodeId = this.anyNode()
      await this.client.ready(nodeId)
      let describeCluster = true
      try {
        this.client.versionFor(nodeId, describeClusterCodec)
      } catch {
        describeCluster = false
      }
      if (describeCluster) {
        const res = await this.client.request(nodeId, describeClusterCodec, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: false })
        if (res.errorCode !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(res.errorCode, 'describeCluster', res.errorMessage)
        const nodes = res.brokers.map((b) => ({ nodeId: b.brokerId, host: b.host, port: b.port, rack: b.rack }))
        return { clusterId: res.clusterId, controller: nodes.find((n) => n.nodeId === res.controllerId) ?? null, nodes }
      }
      const md = await this.client.refreshMetadata([])
      return { clusterId: md.clusterId, controller: md.node(md.controllerId) ?? null, nodes: md.nodes }
    })
  }

  /** Transactional ids' state at their coordinators (DescribeTransactions). */
  describeTransactions(transactionalIds: string[], options: AdminCallOptions = {}): AdminResult<TransactionDescription> {
    return this.byCoordinator<TransactionDescription>('describeTransactions', transactionalIds, CoordinatorType.TRANSACTION, options, async (id, nodeId, out) => {
      const res = await this.client.request(nodeId, describeTransactionsCodec, { transactionalIds: [id] })
      const s = res.transactionStates[0]
      if (!s) throw new KafkaClientError('INVALID_RESPONSE', `DescribeTransactions of ${id} answered nothing`)
      if (s.errorCode !== ErrorCode.NONE) return this.groupError(out, id, s.errorCode, 'describeTransactions')
      out.ok(id, {
        coordinatorId: nodeId,
        state: s.transactionState,
        producerId: s.producerId,
        producerEpoch: s.producerEpoch,
        transactionTimeoutMs: s.transactionTimeoutMs,
        transactionStartTimeMs: s.transactionStartTimeMs,
        topicPartitions: s.topics.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition }))),
      })
    })
  }
}

function errorTextUnknown(topicMissing: boolean): string {
  return topicMissing ? 'UNKNOWN_TOPIC_OR_PARTITION (no such topic)' : 'UNKNOWN_TOPIC_OR_PARTITION (no such partition)'
}

function resourceTypeName(type: number): string {
  return Object.entries(ConfigResourceType).find(([, n]) => n === type)?.[0] ?? String(type)
}

function configEntry(c: {
  name: string
  value: string | null
  readOnly: boolean
  configSource: number
  isSensitive: boolean
  synonyms: Array<{ name: string; value: string | null; source: number }>
  configType: number
  documentation: string | null
}): ConfigEntry {
  const source = CONFIG_SOURCES[c.configSource] ?? 'UNKNOWN'
  return {
    name: c.name,
    value: c.value,
    source,
    isSensitive: c.isSensitive,
    isReadOnly: c.readOnly,
    isDefault: source === 'DEFAULT_CONFIG',
    synonyms: c.synonyms.map((s) => ({ name: s.name, value: s.value, source: CONFIG_SOURCES[s.source] ?? 'UNKNOWN' })),
    type: CONFIG_TYPES[c.configType] ?? 'UNKNOWN',
    documentation: c.documentation,
  }
}

function config(entries: ConfigEntry[]): Config {
  return { entries, get: (name) => entries.find((e) => e.name === name) }
}

/**
 * A per-partition result from a group call answered once for the group: each partition settles
 * with its own code from `codes`, or with the group's error.
 */
function perPartition(what: string, groupId: string, keys: string[], codes: Promise<Map<string, number>>): AdminResult<void> {
  const futures = new Map<string, Promise<void>>()
  for (const key of keys) {
    const p = codes.then((m) => {
      const code = m.get(key)
      if (code === undefined) throw new KafkaClientError('UNKNOWN_SERVER_ERROR', `${what} ${groupId} ${key}: the coordinator did not answer for the partition`)
      if (code !== ErrorCode.NONE) throw KafkaClientError.fromErrorCode(code, `${what} ${groupId} ${key}`)
    })
    p.catch(() => undefined)
    futures.set(key, p)
  }
  return new AdminResult(futures)
}
