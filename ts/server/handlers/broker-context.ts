/**
 * What the request handlers may use of the broker: its config, stores and managers, and the
 * topic operations that run through its admin queue. `Broker` implements it; handlers depend on
 * this interface (a type), never on broker.ts, so broker.ts can register them without an import
 * cycle.
 */
import type { ShareCoordinator } from '../../coordinator/share/share-coordinator.js'
import type { Persister } from '../../share/persister.js'
import type { TransactionCoordinator } from '../../coordinator/transaction/transaction-coordinator.js'
import type { FetchManager } from '../../fetch/fetch-context.js'
import type { GroupConfigManager } from '../../group/group-config-manager.js'
import type { GroupCoordinatorService } from '../../group/group-coordinator-service.js'
import type { Logger } from '../../logger.js'
import type { ReplicaManager } from '../../replica/replica-manager.js'
import type { SharePartitionManager } from '../../share/share-partition-manager.js'
import type { LogManager } from '../../storage/log-manager.js'
import type { BrokerConfig } from '../config.js'
import type { DynamicBrokerConfig } from '../dynamic-broker-config.js'
import type { BrokerTopicStats } from '../broker-topic-stats.js'
import type { MetadataCache } from '../metadata-cache.js'
import type { ProducerIdManager } from '../producer-id-manager.js'
import type { TopicCatalog, TopicInfo } from '../topic-store.js'
import type { TxnMarkerWriter } from '../txn-marker-writer.js'
import type { FinalizedFeatures } from '../finalized-features.js'
import type { AddPartitionsToTxnManager } from '../add-partitions-to-txn-manager.js'
import type { ScramCredentialStore } from '../../security/scram/scram-credential-store.js'
import type { ClientQuotaStorage } from '../../quota/client-quota-storage.js'
import type { ClientQuotaManagers } from '../../quota/client-quota-managers.js'
import type { StandardAuthorizer } from '../../security/authorizer/standard-authorizer.js'
import type { AuthHelper } from './auth-helper.js'

/** How a new topic's replicas are placed (CreateTopics' replicationFactor or assignments). */
export interface TopicPlacement {
  replicationFactor: number
  /** Empty: placed by the replication factor. */
  assignments?: ReadonlyArray<readonly number[]>
}

export interface BrokerContext {
  readonly config: BrokerConfig
  /** The broker configs changed while running (KIP-226); null where they are not served (cluster mode). */
  readonly dynamicConfig: DynamicBrokerConfig | null
  readonly logger: Logger
  /** The ACLs (authorizer.class.name set); null: no authorization. */
  readonly authorizer: StandardAuthorizer | null
  /** How handlers ask the authorizer (everything allowed without one). */
  readonly auth: AuthHelper
  /** The topics (read only: changes go through the topic operations below). */
  readonly topics: TopicCatalog
  readonly logManager: LogManager
  readonly replicaManager: ReplicaManager
  readonly groupCoordinator: GroupCoordinatorService
  /** The configs set on groups (GROUP resources of DescribeConfigs and the config APIs). */
  readonly groupConfigs: GroupConfigManager
  /** Users' SCRAM credentials (a file of the data dir, or etcd in a cluster); authentication reads its cache. */
  readonly scramCredentials: ScramCredentialStore
  /** Client quotas (a file of the data dir, or etcd in a cluster): AlterClientQuotas, DescribeClientQuotas. */
  readonly clientQuotas: ClientQuotaStorage
  /** The quotas' enforcement (Produce, Fetch, every request). */
  readonly quotas: ClientQuotaManagers
  /** The cluster's finalized feature levels (ApiVersions, UpdateFeatures). */
  readonly finalizedFeatures: FinalizedFeatures
  /** Transactions (KIP-98): the ids of each `__transaction_state` partition this broker leads. */
  readonly transactionCoordinator: TransactionCoordinator
  /** Appends transaction markers to partitions this broker leads (WriteTxnMarkers). */
  readonly txnMarkerWriter: TxnMarkerWriter
  /** Verifies transactional Produce with the transaction coordinator (KIP-890 part 1). */
  readonly addPartitionsToTxnManager: AddPartitionsToTxnManager
  readonly producerIds: ProducerIdManager
  readonly fetchManager: FetchManager
  /** Share groups' share partitions and share sessions on this broker (ShareFetch, ShareAcknowledge). */
  readonly sharePartitionManager: SharePartitionManager
  /** Bytes out to consumers and to followers (metrics). */
  readonly brokerTopicStats: BrokerTopicStats
  /** The live brokers, the controller and each partition's leader, replicas and ISR. */
  readonly metadataCache: MetadataCache
  /** The internal `__consumer_offsets`, as Metadata lists it (in a cluster: once it is created). */
  readonly offsetsTopic: TopicInfo | undefined
  /**
   * Makes sure `__consumer_offsets` exists (cluster mode: created on the first FindCoordinator,
   * as Kafka does; a standalone broker always has it). Throws TopicError.
   */
  ensureOffsetsTopic(): Promise<void>
  /** `__transaction_state`, as Metadata lists it (in a cluster: once it is created). */
  readonly transactionStateTopic: TopicInfo | undefined
  /** Makes sure `__transaction_state` exists (cluster mode: created on the first FindCoordinator for a transactional id). Throws TopicError. */
  ensureTransactionStateTopic(): Promise<void>
  /** The share coordinator: share partitions' states in `__share_group_state` (InitializeShareGroupState, ReadShareGroupState, ...). */
  readonly shareCoordinator: ShareCoordinator
  /** The share coordinator of any share partition, here or on another broker (ts/share/persister.ts). */
  readonly persister: Persister
  /** `__share_group_state`, as Metadata lists it (once it is created). */
  readonly shareGroupStateTopic: TopicInfo | undefined
  /** Makes sure `__share_group_state` exists (created when first needed, as Kafka does). Throws TopicError. */
  ensureShareGroupStateTopic(): Promise<void>
  /** The port clients are told to connect to. */
  readonly advertisedPort: number
  /** The ApiKeys and versions served, for ApiVersions. */
  supportedApis(): Array<{ apiKey: number; minVersion: number; maxVersion: number }>
  /** A topic clients may name: one of the topic store's, or `__consumer_offsets`. */
  visibleTopic(name: string): TopicInfo | undefined
  visibleTopicById(topicId: Buffer): TopicInfo | undefined
  /** Topic operations; they throw TopicError with Kafka's error code. */
  /**
   * `placement`: the replication factor (-1: default.replication.factor) or an explicit
   * assignment (the replicas of each partition, the first the preferred leader); default: the
   * default replication factor.
   */
  createTopic(name: string, partitions: number, configs: Record<string, string>, validateOnly?: boolean, placement?: TopicPlacement): Promise<TopicInfo | null>
  deleteTopic(name: string): Promise<void>
  addPartitions(name: string, count: number, validateOnly?: boolean): Promise<void>
  alterTopicConfigs(name: string, configs: Record<string, string>, validateOnly: boolean): Promise<void>
}
