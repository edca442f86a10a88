/**
 * The broker: a data directory (locked, one broker each), its logs and topics, the request
 * handlers and the socket server, wired together; `start` and a clean `stop`.
 */
import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { TransactionCoordinator } from '../coordinator/transaction/transaction-coordinator.js'
import { TRANSACTION_STATE_TOPIC } from '../coordinator/transaction/transaction-log.js'
import { ShareCoordinator } from '../coordinator/share/share-coordinator.js'
import { SHARE_GROUP_STATE_TOPIC } from '../coordinator/share/share-group-state-topic.js'
import { DefaultStatePersister } from '../share/persister.js'
import { TransactionMarkerChannelManager } from '../coordinator/transaction/transaction-marker-channel-manager.js'
import { TransactionStateManager } from '../coordinator/transaction/transaction-state-manager.js'
import { FileGroupConfigStorage, GroupConfigManager, type GroupConfigStorage } from '../group/group-config-manager.js'
import type { ScramCredentialStore } from '../security/scram/scram-credential-store.js'
import { FileScramCredentialStore } from './file-scram-credential-store.js'
import { FileClientQuotaStorage } from './client-quota-file-store.js'
import type { ClientQuotaStorage } from '../quota/client-quota-storage.js'
import { ClientQuotaManagers } from '../quota/client-quota-managers.js'
import { GroupCoordinatorService } from '../group/group-coordinator-service.js'
import { RANGE_ASSIGNOR_NAME, RangeAssignor } from '../group/consumer/assignor/range-assignor.js'
import { UniformAssignor } from '../group/consumer/assignor/uniform-assignor.js'
import { OFFSETS_TOPIC } from '../group/offsets-topic.js'
import type { ClusterMetadata } from '../cluster/cluster-metadata.js'
import type { MetadataStore } from '../cluster/metadata-store.js'
import { createLogger, type Logger } from '../logger.js'
import { SocketServer } from '../network/socket-server.js'
import { usesTls, type SecurityProtocol } from '../security/security-protocol.js'
import type { ListenerEndPointInfo } from '../replica/partition-registration.js'
import { brokerListeners, isSslConfigName, listenerSslServer, registeredListenerName, type BrokerListener } from './listeners.js'
import { Transfer } from '../network/transfer.js'
import { SharePartitionManager } from '../share/share-partition-manager.js'
import { FetchManager } from '../fetch/fetch-context.js'
import { defaultEngine, loadNative, nativeLoadError, nativeOrigin, NativeUnavailableError } from '../native/binding.js'
import { FetchSessionCache } from '../fetch/fetch-session-cache.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { PARTITION_LEADER_EPOCH } from '../replica/leader-epoch.js'
import { ReplicaManager, type ReplicationOptions } from '../replica/replica-manager.js'
import { RackAwareReplicaSelector } from '../replica/replica-selector.js'
import type { AlterPartitionManager } from '../replica/partition-registration.js'
import { DEFAULT_MAX_OPEN_SEGMENTS, LogManager } from '../storage/log-manager.js'
import type { BackendName } from '../storage/backends.js'
import { brokerConfigFrom, ConfigError, EXCESSIVE_PARTITIONS, MAX_PARTITIONS_PER_REQUEST, topicLogConfig, topicMinInsyncReplicas, type BrokerConfig } from './config.js'
import { BROKER_CONFIG_KEY } from '../config/broker-configs.js'
import { DynamicBrokerConfig } from './dynamic-broker-config.js'
import type { BrokerContext, TopicPlacement } from './handlers/broker-context.js'
import { registerHandlers } from './handlers/index.js'
import { saslAuthenticatorFactory } from './sasl-mechanisms.js'
import { DataDirLock } from './lock-file.js'
import { StandaloneMetadataCache, type MetadataCache } from './metadata-cache.js'
import { BrokerMetadataPublisher, ClusterMetadataView, isBrokerEligible } from './broker-metadata-publisher.js'
import { ClusterTopicCatalog, ClusterTopicOperations } from './cluster-topics.js'
import { BrokerTopicStats } from './broker-topic-stats.js'
import { MetricsServer } from './metrics.js'
import { internalTopicConfigs, internalTopicLogConfig, isInternalTopic, standalonePartitionCount } from './internal-topics.js'
import { ProducerIdManager } from './producer-id-manager.js'
import { TxnMarkerWriter } from './txn-marker-writer.js'
import { AddPartitionsToTxnManager } from './add-partitions-to-txn-manager.js'
import { KafkaApis } from './kafka-apis.js'
import { FaultInjectionError, FaultInjector, type FaultHandle, type FaultRule } from './fault-injector.js'
import { AuthHelper } from './handlers/auth-helper.js'
import { FileAclStorage } from './acl-file-store.js'
import { FileFeatureStorage } from './feature-file-store.js'
import { TRANSACTION_VERSION_FEATURE, transactionVersionOf } from '../coordinator/transaction/transaction-version.js'
import { defaultLevels, FinalizedFeatures, type FeatureStorage } from './finalized-features.js'
import { StandardAuthorizer, type AclStorage } from '../security/authorizer/standard-authorizer.js'
import { TopicError } from './topic-error.js'
import { newTopicId, TopicStore, type TopicCatalog, type TopicInfo } from './topic-store.js'
import { interBrokerClientSecurity } from './inter-broker-security.js'
import { etcdSecurityOf } from './etcd-security.js'
import { closeClientSecurity, PLAINTEXT_SECURITY, type ClientSecurity } from '../client/client-security.js'

// `await using` needs Symbol.asyncDispose: Node 20.4 added it (as this registered symbol), 20.0-20.3 lack it.
;(Symbol as { asyncDispose?: symbol }).asyncDispose ??= Symbol.for('nodejs.asyncDispose')

/** How long a stopping broker waits for the controller to move its leadership away. */
const CONTROLLED_SHUTDOWN_TIMEOUT_MS = 30_000

/** Kafka's rule for topic names. */
const LEGAL_TOPIC = /^[a-zA-Z0-9._-]{1,249}$/

export { TopicError }

export interface BrokerOptions {
  backend?: BackendName
  logger?: Logger
  /**
   * How partition leaders change their ISR: cluster mode (the cluster metadata's). Then the
   * partitions own their high watermarks (their logs are opened with the 'managed' policy) and
   * the replica manager checks the ISRs every replica.lag.time.max.ms / 2. Absent: standalone.
   */
  alterPartitionManager?: AlterPartitionManager
  /**
   * Replicated partitions (cluster mode): the replica manager makes this broker a leader or a
   * follower of each partition as `replicaManager.applyPartitionChanges` says, and the logs'
   * high watermarks are 'managed' (moved by the ISR and the leader's answers, not the log end).
   * Absent: a standalone broker leading every partition it holds, exactly as before.
   */
  replication?: Omit<ReplicationOptions, 'logger'> & { logger?: Logger }
  /**
   * The data dir is the broker's own (a temporary one `startBroker` made): `stop` removes it once
   * the logs are closed and the lock released. Never set for a directory someone else gave.
   */
  removeDataDirOnStop?: boolean
  /**
   * Fault injection for tests (`inject`, fault-injector.ts): only the embedded API
   * (`startBroker({ faultInjection: true })`) sets it; no config key does, so a broker the CLI
   * starts can never be reached this way.
   */
  faultInjection?: boolean
  /**
   * Cluster mode on this metadata store instead of etcd (`cluster.metadata`): only the in-process
   * clusters of tests (embedded-cluster.ts) set it, with a store they share and close themselves.
   */
  metadataStore?: MetadataStore
}

export class Broker implements BrokerContext {
  readonly config: BrokerConfig
  /**
   * The broker configs changed while running (KIP-226), over `config` (which they change in
   * place): in the data dir for a standalone broker, in etcd for a broker of a cluster.
   */
  readonly dynamicConfig: DynamicBrokerConfig | null
  readonly logger: Logger
  /** The ACLs (authorizer.class.name): their file in the data dir, or etcd in a cluster; null: no authorization. */
  authorizer: StandardAuthorizer | null = null
  readonly auth = new AuthHelper(() => this.authorizer)
  /** The topics: a standalone broker's store, or the cluster's (its etcd metadata). */
  readonly topics: TopicCatalog
  /** A standalone broker's topic store (ferrolog-topics.json); null in cluster mode. */
  readonly topicStore: TopicStore | null
  /** Cluster mode: this broker's part of the cluster metadata on etcd; null for a standalone broker. */
  readonly cluster: ClusterMetadata | null
  readonly logManager: LogManager
  readonly replicaManager: ReplicaManager
  readonly apis: KafkaApis
  /** Fetch sessions (KIP-227): the Fetch handler's, and the metrics'. */
  readonly fetchManager: FetchManager
  readonly sharePartitionManager: SharePartitionManager
  /**
   * Share partitions' states: it coordinates those of each `__share_group_state` partition this
   * broker leads (a standalone broker elects itself once the topic exists; replicated, by
   * `onLeadershipChange`). The share partitions keep their state with it through `persister`.
   */
  readonly shareCoordinator: ShareCoordinator
  readonly persister: DefaultStatePersister
  readonly brokerTopicStats = new BrokerTopicStats()
  readonly metadataCache: MetadataCache
  /**
   * Consumer groups and committed offsets, written through the replica manager. It coordinates
   * the groups of each `__consumer_offsets` partition this broker leads: a standalone broker
   * elects it for every partition in `start`, before the port opens; replicated, the replica
   * manager's `onLeadershipChange` does (ts/group/group-coordinator-service.ts).
   */
  readonly groupCoordinator: GroupCoordinatorService
  /** The configs set on groups (DescribeConfigs and the config APIs on GROUP resources): a file of the data dir, or etcd in a cluster. */
  readonly groupConfigs: GroupConfigManager
  /** Users' SCRAM credentials: a file of the data dir, or etcd in a cluster. */
  readonly scramCredentials: ScramCredentialStore
  /** Client quotas (AlterClientQuotas): a file of the data dir, or etcd in a cluster. */
  readonly clientQuotas: ClientQuotaStorage
  /** Their enforcement: produce, fetch and request quotas, following every change. */
  readonly quotas: ClientQuotaManagers
  /** The cluster's finalized feature levels (UpdateFeatures; ApiVersions; transaction.version). */
  readonly finalizedFeatures: FinalizedFeatures
  /**
   * Transactions: it coordinates the transactional ids of each `__transaction_state` partition
   * this broker leads (elected in `start` for a standalone broker; by `onLeadershipChange` when
   * replicated).
   */
  readonly transactionCoordinator: TransactionCoordinator
  /** Appends transaction markers to this broker's partitions (the coordinator's and WriteTxnMarkers'). */
  readonly txnMarkerWriter: TxnMarkerWriter
  /** Verifies transactional Produce with the transaction coordinator (KIP-890 part 1). */
  readonly addPartitionsToTxnManager: AddPartitionsToTxnManager
  /**
   * How this broker connects to the other brokers (the inter-broker listener's TLS and SASL,
   * inter-broker-security.ts): read again when TLS settings change; PLAINTEXT for a broker alone.
   */
  private interBrokerSecurity: ClientSecurity = PLAINTEXT_SECURITY
  readonly producerIds: ProducerIdManager
  /**
   * `__consumer_offsets` as clients see it (Metadata lists it with is_internal, Fetch and
   * ListOffsets read it): its partitions as found in the data dir, or offsets.topic.num.partitions
   * for a new one (internal-topics.ts), each group's commits in the partition of its id, in
   * Kafka's record format. Clients cannot produce to it or delete it. Its topic id is derived
   * from the cluster id (not stored), so it is the same on every start of the cluster. In cluster
   * mode it is a replicated topic of the cluster's instead, created when first needed
   * (`internalTopic`).
   */
  private readonly standaloneOffsetsTopic: TopicInfo
  /** `__transaction_state` as clients see it, likewise (transaction.state.log.num.partitions for a new one). */
  private readonly standaloneTransactionStateTopic: TopicInfo
  /**
   * `__share_group_state` of a standalone broker (share.coordinator.state.topic.num.partitions for
   * a new one): made when first needed (a share partition's first state), as Kafka creates it,
   * or at start when its directories are there; until then clients do not see it.
   */
  private readonly standaloneShareGroupStateTopic: TopicInfo
  private standaloneShareGroupStateMade: Promise<void> | null = null
  private standaloneShareGroupStateReady = false
  /** Cluster mode: the cluster's topics (`topics`, and `__consumer_offsets` once created). */
  private readonly clusterCatalog: ClusterTopicCatalog | null
  private readonly clusterTopics: ClusterTopicOperations | null
  private readonly publisher: BrokerMetadataPublisher | null
  /** One socket server per listener, in `listeners` order (listeners.ts). */
  private readonly listenerServers: ListenerServer[]
  /** The zero-copy engine (its own thread) when config.transfer is zero-copy. */
  readonly transfer: Transfer | null
  private readonly lock: DataDirLock
  private readonly metricsServer: MetricsServer | null
  private boundPort = 0
  private boundMetricsPort = 0
  private stopping: Promise<void> | null = null
  private readonly removeDataDirOnStop: boolean
  /** Fault injection's rules when enabled (BrokerOptions.faultInjection), else null. */
  private faultInjector: FaultInjector | null = null
  /**
   * Topic changes (create, delete, add partitions), one at a time, in the order asked: each
   * checks, makes or removes its logs and records the store as one step, so two changes never
   * interleave (Kafka's controller applies its metadata records one after another too).
   */
  private adminQueue: Promise<unknown> = Promise.resolve()

  private constructor(
    config: BrokerConfig,
    logger: Logger,
    lock: DataDirLock,
    topicStore: TopicStore | null,
    cluster: ClusterMetadata | null,
    clusterCatalog: ClusterTopicCatalog | null,
    logManager: LogManager,
    producerIds: ProducerIdManager,
    alterPartitionManager: AlterPartitionManager | undefined,
    replication: BrokerOptions['replication'],
    removeDataDirOnStop: boolean,
    dynamicConfig: DynamicBrokerConfig | null,
    groupConfigStorage: GroupConfigStorage,
    scramCredentials: ScramCredentialStore,
    finalizedFeatures: FinalizedFeatures,
    clientQuotas: ClientQuotaStorage,
  ) {
    this.config = config
    this.dynamicConfig = dynamicConfig
    if (dynamicConfig) {
      dynamicConfig.onChange = (changed) => this.applyDynamicConfigs(changed)
      dynamicConfig.validate = (layer, configs) => this.validateSslChange(layer, configs)
      dynamicConfig.onAlter = (names) => {
        if (names.some(isSslConfigName)) this.reloadSsl()
      }
    }
    this.groupConfigs = new GroupConfigManager(groupConfigStorage, {
      sessionTimeoutMs: config.groupConsumerSessionTimeoutMs,
      minSessionTimeoutMs: config.groupConsumerMinSessionTimeoutMs,
      maxSessionTimeoutMs: config.groupConsumerMaxSessionTimeoutMs,
      heartbeatIntervalMs: config.groupConsumerHeartbeatIntervalMs,
      minHeartbeatIntervalMs: config.groupConsumerMinHeartbeatIntervalMs,
      maxHeartbeatIntervalMs: config.groupConsumerMaxHeartbeatIntervalMs,
      shareRecords: {
        recordLockDurationMs: config.groupShareRecordLockDurationMs,
        minRecordLockDurationMs: config.groupShareMinRecordLockDurationMs,
        maxRecordLockDurationMs: config.groupShareMaxRecordLockDurationMs,
        deliveryCountLimit: config.groupShareDeliveryCountLimit,
        minDeliveryCountLimit: config.groupShareMinDeliveryCountLimit,
        maxDeliveryCountLimit: config.groupShareMaxDeliveryCountLimit,
        partitionMaxRecordLocks: config.groupSharePartitionMaxRecordLocks,
        minPartitionMaxRecordLocks: config.groupShareMinPartitionMaxRecordLocks,
        maxPartitionMaxRecordLocks: config.groupShareMaxPartitionMaxRecordLocks,
      },
      share: {
        sessionTimeoutMs: config.groupShareSessionTimeoutMs,
        minSessionTimeoutMs: config.groupShareMinSessionTimeoutMs,
        maxSessionTimeoutMs: config.groupShareMaxSessionTimeoutMs,
        heartbeatIntervalMs: config.groupShareHeartbeatIntervalMs,
        minHeartbeatIntervalMs: config.groupShareMinHeartbeatIntervalMs,
        maxHeartbeatIntervalMs: config.groupShareMaxHeartbeatIntervalMs,
      },
    })
    this.scramCredentials = scramCredentials
    this.clientQuotas = clientQuotas
    this.quotas = new ClientQuotaManagers({ numSamples: config.quotaWindowNum, windowSizeSeconds: config.quotaWindowSizeSeconds })
    this.quotas.follow(clientQuotas)
    this.finalizedFeatures = finalizedFeatures
    this.removeDataDirOnStop = removeDataDirOnStop
    this.producerIds = producerIds
    this.logger = logger
    this.lock = lock
    this.topicStore = topicStore
    this.cluster = cluster
    this.clusterCatalog = clusterCatalog
    this.topics = clusterCatalog ?? topicStore!
    this.clusterTopics = cluster && clusterCatalog ? new ClusterTopicOperations(cluster.admin, cluster.cache, clusterCatalog, config.logDefaults) : null
    this.standaloneOffsetsTopic = {
      name: OFFSETS_TOPIC,
      topicId: createHash('sha256').update(`${config.clusterId}/${OFFSETS_TOPIC}`).digest().subarray(0, 16),
      partitions: standalonePartitionCount(logManager.allLogs(), OFFSETS_TOPIC, config.offsetsTopicNumPartitions),
      configs: internalTopicConfigs(OFFSETS_TOPIC, config)!,
    }
    this.standaloneTransactionStateTopic = {
      name: TRANSACTION_STATE_TOPIC,
      topicId: createHash('sha256').update(`${config.clusterId}/${TRANSACTION_STATE_TOPIC}`).digest().subarray(0, 16),
      partitions: standalonePartitionCount(logManager.allLogs(), TRANSACTION_STATE_TOPIC, config.transactionStateLogNumPartitions),
      configs: internalTopicConfigs(TRANSACTION_STATE_TOPIC, config)!,
    }
    this.standaloneShareGroupStateTopic = {
      name: SHARE_GROUP_STATE_TOPIC,
      topicId: createHash('sha256').update(`${config.clusterId}/${SHARE_GROUP_STATE_TOPIC}`).digest().subarray(0, 16),
      partitions: standalonePartitionCount(logManager.allLogs(), SHARE_GROUP_STATE_TOPIC, config.shareCoordinatorStateTopicNumPartitions),
      configs: internalTopicConfigs(SHARE_GROUP_STATE_TOPIC, config)!,
    }
    this.logManager = logManager
    this.metadataCache = cluster
      ? new ClusterMetadataView(cluster.cache)
      : new StandaloneMetadataCache(config.nodeId, () => ({ id: config.nodeId, host: config.advertisedHost, port: this.advertisedPort, rack: config.rack, endpoints: this.advertisedEndPoints() }))
    // Checked at start (a ConfigError): the credentials and stores brokers reach each other with.
    if (cluster || replication) this.interBrokerSecurity = interBrokerClientSecurity(config, this.dynamicSslLayers())
    const interBrokerSecurity = () => this.interBrokerSecurity
    if (cluster) {
      const c = config.cluster
      alterPartitionManager = cluster.alterPartitionManager
      replication = {
        brokerEndPoint: (id) => cluster.cache.broker(id),
        isBrokerAlive: (id) => isBrokerEligible(cluster.cache, id),
        partitionExists: (tp) => cluster.cache.partitionState(tp.topic, tp.partition) !== undefined,
        pendingLeadership: (tp) => (cluster.cache.partition(tp.topic, tp.partition)?.leader === config.nodeId ? this.publisher?.settled() : undefined),
        onPartitionStopped: (change, log) => this.publisher?.partitionStopped(change, log),
        leaderWritesAllowed: () => this.publisher?.leaderWritesAllowed ?? false,
        numReplicaFetchers: c.numReplicaFetchers,
        fetchBackOffMs: c.replicaFetchBackoffMs,
        fetchWaitMaxMs: c.replicaFetchWaitMaxMs,
        fetchMinBytes: c.replicaFetchMinBytes,
        fetchMaxBytes: c.replicaFetchMaxBytes,
        fetchResponseMaxBytes: c.replicaFetchResponseMaxBytes,
      }
    }
    const rackOf = (id: number) => (id === config.nodeId ? config.rack : (replication?.brokerEndPoint(id)?.rack ?? null))
    // Kafka's TopicMetadata.partitionRacks: the racks of the brokers holding the partition's replicas.
    const partitionRacks = (topic: string, partition: number) => (this.metadataCache.partitionRegistration(topic, partition)?.replicas ?? []).flatMap((id) => rackOf(id) ?? [])
    this.replicaManager = new ReplicaManager(logManager, {
      brokerId: config.nodeId,
      alterPartitionManager,
      replicaLagTimeMaxMs: config.replicaLagTimeMaxMs,
      // Dynamic (cluster-wide): read from the config at each use.
      producerIdExpirationMs: () => BROKER_CONFIG_KEY.get('producer.id.expiration.ms')!.get(config) as number,
      producerIdExpirationCheckIntervalMs: config.producerIdExpirationCheckIntervalMs,
      // LeaderSelector, Kafka's default, always answers the leader: no selector asks nothing.
      replicaSelector: config.replicaSelector === 'rack-aware' ? new RackAwareReplicaSelector() : null,
      rackOf,
      minInSyncReplicas: (topic) => topicMinInsyncReplicas(this.visibleTopic(topic)?.configs, config),
      logger,
      replication: replication && {
        security: interBrokerSecurity,
        ...replication,
        logger: replication.logger ?? logger,
        onLeadershipChange: (leaders, followers) => {
          replication.onLeadershipChange?.(leaders, followers)
          this.groupCoordinator.onLeadershipChange(leaders, followers)
          this.transactionCoordinator.onLeadershipChange(leaders, followers)
          this.shareCoordinator.onLeadershipChange(leaders, followers)
        },
      },
    })
    this.groupCoordinator = new GroupCoordinatorService(
      this.replicaManager,
      {
        numPartitions: () => this.offsetsTopic?.partitions ?? config.offsetsTopicNumPartitions,
        commitTimeoutMs: config.offsetsCommitTimeoutMs,
        initialRebalanceDelayMs: config.groupInitialRebalanceDelayMs,
        minSessionTimeoutMs: config.groupMinSessionTimeoutMs,
        maxSessionTimeoutMs: config.groupMaxSessionTimeoutMs,
        offsetsRetentionCheckIntervalMs: config.offsetsRetentionCheckIntervalMs,
        consumerGroupAssignors: config.groupConsumerAssignors.map((name) => (name === RANGE_ASSIGNOR_NAME ? new RangeAssignor() : new UniformAssignor())),
        consumerGroupMaxSize: config.groupConsumerMaxSize,
        consumerGroupMigrationPolicy: config.groupConsumerMigrationPolicy,
        consumerGroupRegexRefreshIntervalMs: config.groupConsumerRegexRefreshIntervalMs,
        consumerGroupSessionTimeoutMs: config.groupConsumerSessionTimeoutMs,
        shareGroupMaxSize: config.groupShareMaxSize,
        shareGroupSessionTimeoutMs: config.groupShareSessionTimeoutMs,
        onShareGroupEmpty: (groupId) => this.sharePartitionManager.onGroupEmpty(groupId),
        topics: {
          byName: (name) => {
            const t = this.topics.get(name)
            return t && { name: t.name, topicId: t.topicId, numPartitions: t.partitions, partitionRacks: (p: number) => partitionRacks(t.name, p) }
          },
          byId: (topicId) => {
            const t = this.topics.getById(Buffer.from(topicId, 'hex'))
            return t && { name: t.name, topicId: t.topicId, numPartitions: t.partitions, partitionRacks: (p: number) => partitionRacks(t.name, p) }
          },
          names: () => this.topics.all().map((t) => t.name),
        },
      },
      logger,
    )
    this.txnMarkerWriter = new TxnMarkerWriter({
      replicaManager: this.replicaManager,
      onOffsetsMarker: (producerId, commit, partition) => this.groupCoordinator.onTransactionCompleted(producerId, commit, partition),
    })
    this.transactionCoordinator = new TransactionCoordinator(
      new TransactionStateManager(this.replicaManager, logger, {
        numPartitions: () => this.transactionStateTopic?.partitions ?? config.transactionStateLogNumPartitions,
        transactionVersionLevel: () => transactionVersionOf(finalizedFeatures.level(TRANSACTION_VERSION_FEATURE)),
      }),
      new TransactionMarkerChannelManager(
        {
          brokerId: config.nodeId,
          leaderOf: (tp) => {
            const leader = this.metadataCache.partitionRegistration(tp.topic, tp.partition)?.leader
            return leader === undefined || leader < 0 ? undefined : leader
          },
          topicExists: (topic) => this.visibleTopic(topic) !== undefined,
          endpoint: (id) => this.metadataCache.aliveBrokers().find((b) => b.id === id),
          writeLocal: (markers) => this.txnMarkerWriter.writeTxnMarkers(markers),
          security: interBrokerSecurity,
        },
        logger,
      ),
      () => this.producerIds.generateProducerId(),
      {
        transactionMaxTimeoutMs: config.transactionMaxTimeoutMs,
        transactionalIdExpirationMs: config.transactionalIdExpirationMs,
        abortTimedOutTransactionsIntervalMs: config.transactionAbortTimedOutTransactionCleanupIntervalMs,
        removeExpiredTransactionalIdsIntervalMs: config.transactionRemoveExpiredTransactionCleanupIntervalMs,
        transactionVersionLevel: () => transactionVersionOf(finalizedFeatures.level(TRANSACTION_VERSION_FEATURE)),
      },
      logger,
    )
    this.addPartitionsToTxnManager = new AddPartitionsToTxnManager({
      brokerId: config.nodeId,
      coordinatorNode: (transactionalId) => {
        const leader = this.metadataCache.partitionRegistration(TRANSACTION_STATE_TOPIC, this.transactionCoordinator.stateManager.partitionFor(transactionalId))?.leader
        return this.metadataCache.aliveBrokers().find((b) => b.id === leader)
      },
      coordinator: this.transactionCoordinator,
      logger,
      security: interBrokerSecurity,
    })
    this.fetchManager = new FetchManager(new FetchSessionCache({ maxEntries: config.fetchSessionCacheSlots }))
    this.shareCoordinator = new ShareCoordinator(this.replicaManager, logger, {
      numPartitions: () => this.shareGroupStateTopic?.partitions ?? config.shareCoordinatorStateTopicNumPartitions,
      snapshotUpdateRecordsPerSnapshot: config.shareCoordinatorSnapshotUpdateRecordsPerSnapshot,
      pruneIntervalMs: config.shareCoordinatorStateTopicPruneIntervalMs,
      topicPartitionExists: (topicId, partition) => {
        const topic = this.topics.getById(topicId)
        return topic !== undefined && partition < topic.partitions
      },
    })
    this.persister = new DefaultStatePersister({
      brokerId: config.nodeId,
      coordinator: this.shareCoordinator,
      ensureTopic: () => this.ensureShareGroupStateTopic(),
      leaderOf: (partition) => this.metadataCache.partitionRegistration(SHARE_GROUP_STATE_TOPIC, partition)?.leader,
      endpoint: (id) => this.metadataCache.aliveBrokers().find((b) => b.id === id),
      security: interBrokerSecurity,
      logger,
    })
    this.sharePartitionManager = new SharePartitionManager({
      replicaManager: this.replicaManager,
      persister: this.persister,
      maxShareSessions: config.groupShareMaxShareSessions,
      defaultGroupConfig: {
        recordLockDurationMs: config.groupShareRecordLockDurationMs,
        deliveryCountLimit: config.groupShareDeliveryCountLimit,
        maxInFlightRecords: config.groupSharePartitionMaxRecordLocks,
        autoOffsetReset: 'latest',
        isolationLevel: 'read_uncommitted',
      },
    })
    this.apis = new KafkaApis(logger)
    this.apis.requestQuota = this.quotas.request
    registerHandlers(this, this.apis)
    // Before anything holds a resource: a SASL listener's settings are checked here (ConfigError).
    const authenticators = new Map(brokerListeners(config).map((listener) => [listener.listenerName, saslAuthenticatorFactory(config, listener, this, logger) ?? undefined]))
    this.transfer = config.transfer === 'zero-copy' ? new Transfer() : null
    this.listenerServers = brokerListeners(config).map((listener) => ({
      listener,
      boundPort: 0,
      server: new SocketServer((frame, connection) => this.apis.handle(frame, connection), {
        host: listener.host,
        port: listener.port,
        maxRequestBytes: config.maxRequestBytes,
        connectionsMaxIdleMs: config.connectionsMaxIdleMs,
        maxConnections: config.maxConnections,
        logger,
        transfer: this.transfer,
        listener: { listenerName: listener.listenerName, securityProtocol: listener.securityProtocol },
        tls: usesTls(listener.securityProtocol) ? listenerSslServer(config, listener.listenerName, this.dynamicSslLayers()) : undefined,
        authenticator: authenticators.get(listener.listenerName),
      }),
    }))
    this.metricsServer = config.metricsListen ? new MetricsServer(this, config.metricsListen.host, config.metricsListen.port) : null
    this.publisher = cluster ? new BrokerMetadataPublisher({ cluster, replicaManager: this.replicaManager, logManager, logger }) : null
  }

  /**
   * Starts a broker on its data dir. Standalone (no `cluster.metadata`): its topics from its own
   * file, every partition led by itself. Cluster mode, in Kafka's order: the cluster metadata is
   * loaded from etcd first (its topics decide which partition directories are served), then the
   * logs open, the port opens, the broker registers (a restart faster than its old lease's expiry
   * waits for it, up to twice the session timeout), joins the controller election, and applies its
   * replicas' registrations (broker-metadata-publisher.ts).
   */
  static async start(startConfig: BrokerConfig, options: BrokerOptions = {}): Promise<Broker> {
    // The broker's own copy: dynamic configs change it in place, never the caller's object.
    const config = structuredClone(startConfig)
    const logger = options.logger ?? createLogger({ fields: { nodeId: config.nodeId } })
    const backend = options.backend ?? defaultEngine()
    const native = loadNative()
    if (native === null) {
      const cause = nativeLoadError()!
      // Refused before anything is opened: what was asked for cannot run here.
      if (backend === 'native') throw new NativeUnavailableError('the native storage backend (--backend native)', cause)
      if (config.transfer === 'zero-copy') throw new NativeUnavailableError('zero-copy transfer (transfer.mode=zero-copy)', cause)
      logger.info(`native binding not available: ${cause}; using the TypeScript engine and copy transfer`)
    }
    const clustered = config.clusterMetadata.length > 0 || options.metadataStore !== undefined
    mkdirSync(config.dataDir, { recursive: true })
    const lock = DataDirLock.acquire(config.dataDir)
    let dynamicConfig: DynamicBrokerConfig | null = null
    try {
      // Before anything reads the config: the stored dynamic values apply from the start.
      if (!clustered) dynamicConfig = DynamicBrokerConfig.load(config, brokerConfigFrom({}))
    } catch (err) {
      lock.release()
      throw err
    }
    // Only the active segment of each partition holds its files open from start (three
    // descriptors a partition); sealed segments hold no index descriptor and open their `.log`
    // on first read, at most log.max.open.segments of them at once (docs/storage.md "Open
    // files"). Sockets and those still count, so the soft limit goes up to the hard one first,
    // as the JVM raises it for Kafka (crates/storage/src/fd_limit.rs).
    // Without the binding the soft limit stays where it is: Node cannot raise it.
    const openFiles = native ? native.raiseOpenFileLimit().soft : null
    // Not configured: the default bound, within a quarter of the limit (a twin's segment read
    // through FileRecords holds two descriptors), so that old segments' reads leave room for
    // sockets and the active segments.
    const maxOpenSegments = config.maxOpenSegments ?? Math.min(DEFAULT_MAX_OPEN_SEGMENTS, Math.max(16, Math.floor((openFiles ?? 1024) / 4)))
    let logManager: LogManager | undefined
    let cluster: ClusterMetadata | null = null
    let clientQuotas: ClientQuotaStorage | undefined
    let broker: Broker | undefined
    let finalizedFeatures: FinalizedFeatures | undefined
    try {
      // The small files first: one that refuses the start does so before any log is opened.
      let topicStore: TopicStore | null = null
      let producerIds: ProducerIdManager
      let groupConfigStorage: GroupConfigStorage
      let scramCredentials: ScramCredentialStore
      let featureStorage: FeatureStorage
      if (clustered) {
        // Loaded only here: a standalone broker (and `import 'ferrolog'`) never loads the cluster
        // modules, and only a broker on etcd loads etcd's client.
        const { ClusterMetadata } = await import('../cluster/cluster-metadata.js')
        cluster = await ClusterMetadata.connect({
          ...(options.metadataStore ? { store: options.metadataStore } : { cluster: config.clusterMetadata }),
          clusterId: config.clusterId,
          brokerId: config.nodeId,
          host: config.advertisedHost,
          port: config.advertisedPort,
          rack: config.rack,
          sessionTimeoutMs: config.cluster.brokerSessionTimeoutMs,
          registrationTimeoutMs: 2 * config.cluster.brokerSessionTimeoutMs,
          defaultPartitions: config.numPartitions,
          defaultReplicationFactor: config.defaultReplicationFactor,
          etcdSecurity: etcdSecurityOf(config),
        })
        const connected = cluster
        // Before anything reads the config: the cluster's dynamic broker configs apply from the start.
        dynamicConfig = DynamicBrokerConfig.ofCluster(config, brokerConfigFrom({}), {
          brokerConfigs: () => connected.cache.brokerConfigs(config.nodeId),
          write: (id, configs) => connected.writeBrokerConfigs(id, configs),
          onChange: (listener) => connected.cache.on('brokerConfigsChanged', listener),
        })
        const blocks = cluster.producerIds
        producerIds = new ProducerIdManager({
          reserveBlock: async (size) => {
            const block = await blocks.allocateBlock()
            if (BigInt(block.size) !== size) throw new Error(`the cluster handed out a producer id block of ${block.size} ids, not ${size}`)
            return block.firstProducerId
          },
        })
        const { EtcdGroupConfigStore } = await import('../cluster/group-config-store.js')
        const { EtcdScramCredentialStore } = await import('../cluster/scram-credential-store.js')
        groupConfigStorage = new EtcdGroupConfigStore(cluster.store)
        scramCredentials = new EtcdScramCredentialStore(cluster.store, cluster.cache)
        const { EtcdClientQuotaStorage } = await import('../cluster/client-quota-store.js')
        clientQuotas = await EtcdClientQuotaStorage.load(cluster.store, logger)
        const { EtcdFeatureStorage } = await import('../cluster/feature-store.js')
        featureStorage = new EtcdFeatureStorage(cluster.store, logger, defaultLevels())
      } else {
        topicStore = await TopicStore.load(config.dataDir)
        groupConfigStorage = await FileGroupConfigStorage.load(config.dataDir)
        scramCredentials = await FileScramCredentialStore.load(config.dataDir)
        clientQuotas = await FileClientQuotaStorage.load(config.dataDir)
        featureStorage = new FileFeatureStorage(config.dataDir)
        producerIds = await ProducerIdManager.load(config.dataDir)
      }
      finalizedFeatures = await FinalizedFeatures.load(featureStorage)
      // Every log's topic overrides come from here (the replica manager's new logs too).
      const clusterCatalog = cluster ? new ClusterTopicCatalog(cluster.cache) : null
      const catalog: TopicCatalog = clusterCatalog ?? topicStore!
      const replicated = cluster !== null || options.alterPartitionManager !== undefined || options.replication !== undefined
      logManager = await LogManager.open({
        dataDir: config.dataDir,
        backend,
        // Replicated logs: the leader moves the high watermark with its ISR, a follower with its leader.
        highWatermark: replicated ? 'managed' : 'log-end',
        defaultConfig: config.logDefaults,
        topicConfig: (topic) => internalTopicLogConfig(topic, config) ?? topicLogConfig(catalog.get(topic)?.configs ?? {}),
        // A directory is served only as a partition of a known topic with that topic's id: one
        // left by a deletion or creation that did not finish is set aside, never served.
        accept: (topic, partition, topicId) => {
          if (isInternalTopic(topic) && !clusterCatalog) return true
          const known = clusterCatalog ? clusterCatalog.anyTopic(topic) : catalog.get(topic)
          return known !== undefined && partition < known.partitions && (topicId === null || topicId.equals(known.topicId))
        },
        retentionCheckIntervalMs: config.retentionCheckIntervalMs,
        maxOpenSegments,
        cleaner: config.cleaner,
        logger,
      })
      broker = new Broker(
        config,
        logger,
        lock,
        topicStore,
        cluster,
        clusterCatalog,
        logManager,
        producerIds,
        options.alterPartitionManager,
        options.replication,
        options.removeDataDirOnStop ?? false,
        dynamicConfig,
        groupConfigStorage,
        scramCredentials,
        finalizedFeatures,
        clientQuotas,
      )
      if (config.authorizerClassName !== '') {
        let storage: AclStorage
        if (cluster) {
          const { EtcdAclStorage } = await import('../cluster/acl-store.js')
          storage = new EtcdAclStorage(cluster.store, logger)
        } else storage = new FileAclStorage(config.dataDir)
        // Before the port opens: no request is ever served without its ACLs.
        broker.authorizer = await StandardAuthorizer.load({ storage, superUsers: config.superUsers, allowEveryoneIfNoAclFound: config.allowEveryoneIfNoAclFound })
      }
      if (options.faultInjection) {
        const b = broker
        broker.faultInjector = new FaultInjector(logger, (topicId) => b.visibleTopicById(topicId)?.name)
        broker.apis.faults = broker.faultInjector
        logger.info('fault injection enabled (embedded broker for tests)')
      }
      if (topicStore) for (const topic of topicStore.all()) await broker.ensureLogs(topic)
      if (!broker.replicaManager.isReplicated) {
        // Standalone: this broker leads every partition of __consumer_offsets and
        // __transaction_state, and coordinates every group and transaction. The logs are made
        // highest partition first: the highest directory records the count (internal-topics.ts).
        for (const topic of [broker.standaloneOffsetsTopic, broker.standaloneTransactionStateTopic]) {
          for (let p = topic.partitions - 1; p >= 0; p--) await logManager.getOrCreateLog(topic.name, p, { config: internalTopicLogConfig(topic.name, config) })
        }
        const elections: Array<Promise<void>> = []
        for (let p = 0; p < broker.standaloneOffsetsTopic.partitions; p++) elections.push(broker.groupCoordinator.onElection(p, PARTITION_LEADER_EPOCH))
        for (let p = 0; p < broker.standaloneTransactionStateTopic.partitions; p++) elections.push(broker.transactionCoordinator.onElection(p, PARTITION_LEADER_EPOCH))
        await Promise.all(elections)
        // __share_group_state is made when first needed; once made, it is there at every start.
        if (logManager.allLogs().some((l) => l.topic === SHARE_GROUP_STATE_TOPIC)) await broker.ensureShareGroupStateTopic()
      }
      for (const ls of broker.listenerServers) ls.boundPort = await ls.server.listen()
      broker.boundPort = broker.listenerServers[0]!.boundPort
      if (broker.metricsServer) broker.boundMetricsPort = await broker.metricsServer.listen()
      if (cluster) {
        cluster.registration.setEndPoint(config.advertisedHost, broker.advertisedPort, broker.advertisedEndPoints())
        const epoch = await cluster.join()
        await broker.publisher!.start(epoch)
      }
      logger.info('broker started', {
        listen:
          broker.listenerServers.length === 1
            ? `${config.host}:${broker.boundPort}`
            : broker.listenerServers.map((ls) => `${ls.listener.listenerName}://${ls.listener.host}:${ls.boundPort}`).join(','),
        metrics: config.metricsListen ? `${config.metricsListen.host}:${broker.boundMetricsPort}` : 'off',
        dataDir: config.dataDir,
        cluster: cluster ? (options.metadataStore ? 'in-process (tests)' : config.clusterMetadata.join(',')) : 'standalone',
        topics: broker.topics.all().length,
        engine: backend === 'native' ? 'native (Rust core)' : 'js (TypeScript)',
        binding: nativeOrigin() ?? 'none',
        transfer: config.transfer,
        openFiles: openFiles ?? 'not raised (no native binding)',
        maxOpenSegments,
      })
      return broker
    } catch (err) {
      if (broker) {
        await broker.stop().catch(() => undefined)
      } else {
        await logManager?.close().catch(() => undefined)
        await finalizedFeatures?.close().catch(() => undefined)
        await clientQuotas?.close().catch(() => undefined)
        await cluster?.close().catch(() => undefined)
        lock.release()
      }
      throw err
    }
  }

  /**
   * Answers chosen requests with a Kafka error, latency, a held answer or a closed connection
   * (fault-injector.ts), until the returned handle's `remove()` or `clearInjections()`. Only a
   * broker started with `startBroker({ faultInjection: true })` allows it; any other throws
   * FaultInjectionError (code FAULT_INJECTION_DISABLED).
   */
  inject(rule: FaultRule): FaultHandle {
    if (!this.faultInjector) {
      throw new FaultInjectionError('FAULT_INJECTION_DISABLED', 'fault injection is not enabled on this broker: start it with startBroker({ faultInjection: true })')
    }
    return this.faultInjector.inject(rule)
  }

  /** Removes every injected fault and releases every held answer: normal service again. */
  clearInjections(): void {
    if (!this.faultInjector) {
      throw new FaultInjectionError('FAULT_INJECTION_DISABLED', 'fault injection is not enabled on this broker: start it with startBroker({ faultInjection: true })')
    }
    this.faultInjector.clear()
  }

  /** The ApiKeys and versions served, for ApiVersions. */
  supportedApis(): ReturnType<KafkaApis['supportedApis']> {
    return this.apis.supportedApis()
  }

  /** The port the broker listens on (the configured one, or the one picked for port 0). */
  get port(): number {
    return this.boundPort
  }

  /** The port of the metrics endpoint (the one picked for port 0); 0 when metrics are off. */
  get metricsPort(): number {
    return this.boundMetricsPort
  }

  /** Open client connections. */
  /** Requests received and not yet fully answered on the wire (each connection stops reading at MAX_QUEUED_REQUESTS). */
  get queuedRequests(): number {
    return this.listenerServers.reduce((n, ls) => n + ls.server.queuedRequests, 0)
  }

  get connectionCount(): number {
    return this.listenerServers.reduce((n, ls) => n + ls.server.connectionCount, 0)
  }

  /** Each listener as bound: its name, protocol, host and port (the one picked for port 0). */
  get listeners(): Array<{ listenerName: string; securityProtocol: SecurityProtocol; host: string; port: number }> {
    return this.listenerServers.map(({ listener, boundPort }) => ({ listenerName: listener.listenerName, securityProtocol: listener.securityProtocol, host: listener.host, port: boundPort }))
  }

  /** The port a listener is bound to (by name, any case); throws for a name the broker does not listen on. */
  listenerPort(listenerName: string): number {
    const ls = this.listenerServers.find((l) => l.listener.listenerName === listenerName.toUpperCase())
    if (!ls) throw new Error(`no listener ${listenerName} (listeners: ${this.listenerServers.map((l) => l.listener.listenerName).join(', ')})`)
    return ls.boundPort
  }

  /** What Metadata tells the clients of each listener: its advertised host and port (port 0: the bound one). */
  advertisedEndPoints(): ListenerEndPointInfo[] {
    return this.listenerServers.map(({ listener, boundPort }) => ({
      listenerName: listener.listenerName,
      securityProtocol: listener.securityProtocol,
      host: listener.advertisedHost,
      port: listener.advertisedPort === 0 ? boundPort : listener.advertisedPort,
    }))
  }

  /** `host:port` for clients' bootstrap servers: the advertised listener, with the port picked for port 0. */
  get bootstrapServers(): string {
    return `${this.config.advertisedHost}:${this.advertisedPort}`
  }

  get advertisedPort(): number {
    if (this.config.advertisedPort !== 0) return this.config.advertisedPort
    // Port 0: the bound port of the listener it advertises (the inter-broker one, else the first advertised).
    return this.listenerPort(registeredListenerName(this.config))
  }

  /** A topic clients may name: one of the topic store's, or the internal `__consumer_offsets`. */
  visibleTopic(name: string): TopicInfo | undefined {
    if (name === OFFSETS_TOPIC) return this.offsetsTopic
    if (name === TRANSACTION_STATE_TOPIC) return this.transactionStateTopic
    if (name === SHARE_GROUP_STATE_TOPIC) return this.shareGroupStateTopic
    return this.topics.get(name)
  }

  visibleTopicById(topicId: Buffer): TopicInfo | undefined {
    const offsets = this.offsetsTopic
    if (offsets && topicId.equals(offsets.topicId)) return offsets
    const txn = this.transactionStateTopic
    if (txn && topicId.equals(txn.topicId)) return txn
    const share = this.shareGroupStateTopic
    return share && topicId.equals(share.topicId) ? share : this.topics.getById(topicId)
  }

  async ensureOffsetsTopic(): Promise<void> {
    if (this.clusterTopics && !this.offsetsTopic) {
      await this.clusterTopics.createOffsetsTopic(this.config.offsetsTopicNumPartitions, this.config.cluster.offsetsTopicReplicationFactor, internalTopicConfigs(OFFSETS_TOPIC, this.config))
    }
  }

  async ensureTransactionStateTopic(): Promise<void> {
    if (this.clusterTopics && !this.transactionStateTopic) {
      await this.clusterTopics.createInternalTopic(
        TRANSACTION_STATE_TOPIC,
        this.config.transactionStateLogNumPartitions,
        'transaction.state.log.replication.factor',
        this.config.cluster.transactionStateLogReplicationFactor,
        internalTopicConfigs(TRANSACTION_STATE_TOPIC, this.config),
      )
    }
  }

  /**
   * Makes sure `__share_group_state` exists, as Kafka creates it when first needed: in a cluster,
   * share.coordinator.state.topic.num.partitions partitions of
   * share.coordinator.state.topic.replication.factor replicas (no more than the brokers alive);
   * a standalone broker makes its logs (highest partition first, as the other internal topics)
   * and coordinates every partition once each is loaded.
   */
  async ensureShareGroupStateTopic(): Promise<void> {
    if (this.clusterTopics) {
      if (this.shareGroupStateTopic) return
      const rf = Math.max(1, Math.min(this.config.cluster.shareCoordinatorStateTopicReplicationFactor, this.metadataCache.aliveBrokers().length))
      await this.clusterTopics.createInternalTopic(
        SHARE_GROUP_STATE_TOPIC,
        this.config.shareCoordinatorStateTopicNumPartitions,
        'share.coordinator.state.topic.replication.factor',
        rf,
        internalTopicConfigs(SHARE_GROUP_STATE_TOPIC, this.config),
      )
      return
    }
    if (this.replicaManager.isReplicated) return
    this.standaloneShareGroupStateMade ??= (async () => {
      const topic = this.standaloneShareGroupStateTopic
      for (let p = topic.partitions - 1; p >= 0; p--) await this.logManager.getOrCreateLog(topic.name, p, { config: internalTopicLogConfig(topic.name, this.config) })
      this.standaloneShareGroupStateReady = true
      const elections: Array<Promise<void>> = []
      for (let p = 0; p < topic.partitions; p++) elections.push(this.shareCoordinator.onElection(p, PARTITION_LEADER_EPOCH))
      await Promise.all(elections)
    })().catch((err: unknown) => {
      this.standaloneShareGroupStateMade = null
      throw new TopicError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `cannot make ${SHARE_GROUP_STATE_TOPIC}: ${(err as Error).message}`)
    })
    return this.standaloneShareGroupStateMade
  }

  /** `__share_group_state` as clients see it; undefined until it is created. */
  get shareGroupStateTopic(): TopicInfo | undefined {
    if (this.clusterCatalog) return this.clusterCatalog.internalTopic(SHARE_GROUP_STATE_TOPIC)
    return this.standaloneShareGroupStateReady ? this.standaloneShareGroupStateTopic : undefined
  }

  /** `__transaction_state` as clients see it; in cluster mode undefined until it is created. */
  get transactionStateTopic(): TopicInfo | undefined {
    return this.clusterCatalog ? this.clusterCatalog.internalTopic(TRANSACTION_STATE_TOPIC) : this.standaloneTransactionStateTopic
  }

  /** `__consumer_offsets` as clients see it; in cluster mode undefined until it is created. */
  get offsetsTopic(): TopicInfo | undefined {
    return this.clusterCatalog ? this.clusterCatalog.internalTopic() : this.standaloneOffsetsTopic
  }

  /**
   * Creates a topic and its logs; throws TopicError with Kafka's error code. Nothing is recorded
   * unless every log was made: a failure removes what was made (KAFKA_STORAGE_ERROR).
   */
  async createTopic(name: string, partitions: number, configs: Record<string, string>, validateOnly = false, placement: TopicPlacement = { replicationFactor: -1 }): Promise<TopicInfo | null> {
    if (!LEGAL_TOPIC.test(name) || name === '.' || name === '..') {
      throw new TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, `illegal topic name "${name}"`)
    }
    if (this.clusterTopics) return this.clusterTopics.createTopic(name, partitions, configs, validateOnly, placement)
    if (!Number.isInteger(partitions) || partitions < 1) throw new TopicError(ErrorCode.INVALID_PARTITIONS, `a topic needs at least one partition, not ${partitions}`)
    if (partitions > MAX_PARTITIONS_PER_REQUEST) throw new TopicError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS)
    this.checkStandalonePlacement(placement)
    let logConfig: ReturnType<typeof topicLogConfig>
    try {
      logConfig = topicLogConfig(configs, this.config.logDefaults)
    } catch (err) {
      if (err instanceof ConfigError) throw new TopicError(ErrorCode.INVALID_CONFIG, err.message)
      throw err
    }
    return this.admin(async () => {
      if (this.topics.get(name) || isInternalTopic(name)) throw new TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, `topic ${name} already exists`)
      this.checkBrokerPartitions(partitions)
      if (validateOnly) return null
      const topic: TopicInfo = { name, topicId: newTopicId(), partitions, configs: { ...configs } }
      await this.storageStep(`cannot create topic ${name}`, () => this.logManager.createLogs(name, range(0, partitions), { topicId: topic.topicId, config: logConfig }, () => this.store.create(topic)))
      this.logger.info('created topic', { topic: name, partitions, configs })
      return topic
    })
  }

  /**
   * Deletes a topic: unrecorded first, then each log closed and its directory renamed
   * `-delete` at once (removed in the background), so neither a restart nor a topic created
   * later under the name serves its records.
   */
  async deleteTopic(name: string): Promise<void> {
    if (isInternalTopic(name)) throw new TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, `topic ${name} is a Kafka internal topic and is not allowed to be deleted`)
    if (this.clusterTopics) return this.clusterTopics.deleteTopic(name)
    return this.admin(async () => {
      const topic = this.topics.get(name)
      if (!topic) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${name}`)
      await this.storageStep(`cannot delete topic ${name}`, () => this.store.delete(name))
      for (let p = 0; p < topic.partitions; p++) {
        try {
          await this.logManager.deleteLog(name, p)
        } catch (err) {
          // Recorded as deleted: the directory left is set aside (-stray) at the next start.
          this.logger.error("cannot remove a deleted topic's log", { topic: name, partition: p, error: String(err) })
        }
      }
      this.logger.info('deleted topic', { topic: name })
    })
  }

  /** Raises a topic's partition count (CreatePartitions); `validateOnly` checks only. */
  async addPartitions(name: string, count: number, validateOnly = false): Promise<void> {
    if (this.clusterTopics) return this.clusterTopics.addPartitions(name, count, validateOnly)
    return this.admin(async () => {
      const topic = this.topics.get(name)
      if (!topic) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${name}`)
      if (count <= topic.partitions) {
        throw new TopicError(ErrorCode.INVALID_PARTITIONS, `topic ${name} has ${topic.partitions} partitions; the new count must be larger, not ${count}`)
      }
      if (count - topic.partitions > MAX_PARTITIONS_PER_REQUEST) throw new TopicError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS)
      this.checkBrokerPartitions(count - topic.partitions)
      if (validateOnly) return
      await this.storageStep(`cannot add partitions to topic ${name}`, () =>
        this.logManager.createLogs(name, range(topic.partitions, count), { topicId: topic.topicId, config: topicLogConfig(topic.configs) }, () => this.store.setPartitions(name, count)),
      )
      this.logger.info('added partitions', { topic: name, partitions: count })
    })
  }

  /** A standalone broker's topic store (its topic operations' only). */
  private get store(): TopicStore {
    if (!this.topicStore) throw new Error('a broker in cluster mode has no topic store of its own')
    return this.topicStore
  }

  /** Partitions of all topics together, the offsets topic aside. */
  get partitionCount(): number {
    let n = 0
    for (const t of this.topics.all()) n += t.partitions
    return n
  }

  /** A standalone broker holds every replica itself: one per partition, on this broker. */
  private checkStandalonePlacement(placement: TopicPlacement): void {
    const assignments = placement.assignments ?? []
    if (assignments.length > 0) {
      const bad = assignments.find((replicas) => replicas.length !== 1 || replicas[0] !== this.config.nodeId)
      if (bad)
        throw new TopicError(
          ErrorCode.INVALID_REPLICA_ASSIGNMENT,
          `replica assignment [${bad.join(', ')}] names brokers other than the 1 available broker (${this.config.nodeId}), or more than one replica`,
        )
      return
    }
    const rf = placement.replicationFactor === -1 ? this.config.defaultReplicationFactor : placement.replicationFactor
    if (rf < 1) throw new TopicError(ErrorCode.INVALID_REPLICATION_FACTOR, `replication factor must be larger than 0, not ${rf}`)
    if (rf > 1) throw new TopicError(ErrorCode.INVALID_REPLICATION_FACTOR, `replication factor ${rf} is larger than the 1 available broker`)
  }

  /** max.broker.partitions: refuses `adding` more partitions past it. */
  private checkBrokerPartitions(adding: number): void {
    const have = this.partitionCount
    if (have + adding > this.config.maxBrokerPartitions) {
      throw new TopicError(ErrorCode.POLICY_VIOLATION, `this broker has ${have} partitions; ${adding} more would pass max.broker.partitions (${this.config.maxBrokerPartitions})`)
    }
  }

  /** Runs `fn` after the topic changes asked before it. */
  private admin<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.adminQueue.then(fn)
    this.adminQueue = run.catch(() => undefined)
    return run
  }

  /** Runs a step that writes to disk; a failure is answered KAFKA_STORAGE_ERROR (and logged). */
  private async storageStep<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      if (err instanceof TopicError) throw err
      this.logger.error(what, { error: err instanceof Error ? err.message : String(err) })
      throw new TopicError(ErrorCode.KAFKA_STORAGE_ERROR, `${what}: ${err instanceof Error ? err.message : String(err)}`)
    }
  }

  /**
   * Replaces a topic's config overrides (AlterConfigs; IncrementalAlterConfigs computes the new
   * set): validated, persisted, then applied to the topic's open logs at once (Kafka's
   * `UnifiedLog.updateConfig`). Throws TopicError with Kafka's error code; on any failure the
   * topic keeps its old configs.
   */
  async alterTopicConfigs(name: string, configs: Record<string, string>, validateOnly: boolean): Promise<void> {
    if (this.clusterTopics) return this.clusterTopics.alterTopicConfigs(name, configs, validateOnly)
    try {
      topicLogConfig(configs, this.config.logDefaults)
    } catch (err) {
      if (err instanceof ConfigError) throw new TopicError(ErrorCode.INVALID_CONFIG, err.message)
      throw err
    }
    return this.admin(async () => {
      const topic = this.topics.get(name)
      if (!topic) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${name}`)
      if (validateOnly) return
      const before = topic.configs
      await this.storageStep(`cannot alter the configs of topic ${name}`, () => this.store.setConfigs(name, configs))
      try {
        this.logManager.reconfigureTopic(name)
      } catch (err) {
        await this.storageStep(`cannot restore the configs of topic ${name}`, () => this.store.setConfigs(name, before))
        this.logManager.reconfigureTopic(name)
        throw new TopicError(ErrorCode.INVALID_CONFIG, (err as Error).message)
      }
      this.logger.info('altered topic configs', { topic: name, configs })
    })
  }

  /**
   * Applies dynamic broker configs just changed (already in `config`): what each key's entry in
   * the config table says to redo (ts/config/broker-configs.ts `reconfigure`).
   */
  private applyDynamicConfigs(changed: string[]): void {
    const redo = new Set(changed.map((name) => BROKER_CONFIG_KEY.get(name)?.reconfigure))
    if (redo.has('logs')) this.logManager.reconfigureAll()
    if (redo.has('cleaner')) this.logManager.cleaner?.reconfigure()
    if (redo.has('sockets')) for (const ls of this.listenerServers) ls.server.setMaxConnections(this.config.maxConnections)
    if (redo.has('ssl') || changed.some(isSslConfigName)) this.reloadSsl()
    this.logger.info('altered dynamic broker configs', { changed })
  }

  /** The dynamic layers that may hold `listener.name.<name>.ssl.*` values, most specific first. */
  private dynamicSslLayers(layers: Record<string, Readonly<Record<string, string>>> | null = null): Array<Readonly<Record<string, string>>> {
    const d = this.dynamicConfig
    if (!d) return []
    return [layers?.broker ?? d.layer('broker'), layers?.default ?? d.layer('default')]
  }

  /**
   * A dynamic change of TLS settings is refused (INVALID_REQUEST) unless every TLS listener can
   * load its key and trust stores with it (Kafka validates a new key store before using it).
   */
  private validateSslChange(layer: 'default' | 'broker', configs: Record<string, string>): void {
    if (!Object.keys(configs).some(isSslConfigName)) return
    const proposed = structuredClone(this.config)
    for (const [name, value] of Object.entries(configs)) if (name.startsWith('ssl.')) proposed.ssl[name] = value
    const layers = { broker: this.dynamicConfig!.layer('broker'), default: this.dynamicConfig!.layer('default'), [layer]: configs }
    for (const { listener } of this.listenerServers) {
      if (!usesTls(listener.securityProtocol)) continue
      try {
        listenerSslServer(proposed, listener.listenerName, this.dynamicSslLayers(layers))
      } catch (err) {
        if (err instanceof ConfigError) throw new TopicError(ErrorCode.INVALID_REQUEST, `Validation of dynamic config update of SSL keystore/truststore failed: ${err.message}`)
        throw err
      }
    }
  }

  /**
   * Reads every TLS listener's key and trust stores again: connections from now on use them,
   * those to other brokers included.
   */
  private reloadSsl(): void {
    if (this.cluster || this.replicaManager.isReplicated) {
      try {
        const fresh = interBrokerClientSecurity(this.config, this.dynamicSslLayers())
        // SASL settings are static: the running login (a refreshing OAuth token) stays.
        closeClientSecurity(fresh)
        this.interBrokerSecurity = { ...fresh, sasl: this.interBrokerSecurity.sasl }
      } catch (err) {
        this.logger.error('cannot reload the inter-broker TLS settings; connections to other brokers keep the old ones', { error: (err as Error).message })
      }
    }
    for (const { listener, server } of this.listenerServers) {
      if (!usesTls(listener.securityProtocol)) continue
      try {
        server.setTls(listenerSslServer(this.config, listener.listenerName, this.dynamicSslLayers()))
        this.logger.info('reloaded TLS key and trust stores', { listener: listener.listenerName })
      } catch (err) {
        this.logger.error('cannot reload TLS key and trust stores; the listener keeps its old ones', { listener: listener.listenerName, error: (err as Error).message })
      }
    }
  }

  /** Stops accepting connections, closes the logs cleanly (checkpoints, clean marker), unlocks. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.logger.info('broker stopping')
      // Held answers go out; nothing injected delays the stop.
      this.faultInjector?.clear()
      await this.controlledShutdown()
      // The metadata is no longer applied (a change under way finishes first).
      await this.publisher?.close()
      // Held JoinGroup and SyncGroup answers go out (NOT_COORDINATOR) before the sockets close.
      this.groupCoordinator.stop()
      await this.transactionCoordinator.stop()
      await this.addPartitionsToTxnManager.stop()
      await Promise.all([...this.listenerServers.map((ls) => ls.server.stop()), this.metricsServer?.stop()])
      this.scramCredentials.close()
      await this.clientQuotas.close()
      await this.finalizedFeatures.close()
      // An ACL change under way is written before the etcd connection closes.
      await this.authorizer?.close()
      // A topic change under way finishes (records, or removes what it made) before the logs close.
      await this.adminQueue
      this.transfer?.close()
      // Fetches still parked belong to connections just closed: dropped, not answered. The
      // follower fetchers stop (a truncation or append under way finishes) before the logs close.
      await this.replicaManager.shutdown()
      this.sharePartitionManager.shutdown()
      this.shareCoordinator.stop()
      await this.persister.stop()
      closeClientSecurity(this.interBrokerSecurity)
      // Offset writes under way are answered before the offsets log closes.
      await this.groupCoordinator.idle()
      try {
        await this.logManager.close()
      } finally {
        // Even when closing failed (a full disk refusing the checkpoints): the files are closed,
        // and the directory is free for the next start, in this process or another. The cluster
        // registration ends last (its lease revoked: the broker leaves the cluster at once).
        this.lock.release()
        await this.cluster?.close().catch((err) => this.logger.warn('cannot leave the cluster cleanly; its registration expires with its lease', { error: String(err) }))
        if (this.removeDataDirOnStop) await rm(this.config.dataDir, { recursive: true, force: true })
      }
      this.logger.info('broker stopped')
    })()
    return this.stopping
  }

  /**
   * A crash, for the in-process cluster's `killBroker` (tests): every socket is cut at once (the
   * listeners with their connections, the replica fetchers' connections), there is no controlled
   * shutdown, no checkpoint and no clean-shutdown marker (the next start recovers the logs as after
   * a crash: LogManager.abandon), and the registration is not revoked: the broker leaves the
   * cluster when its lease expires, as a killed broker does. Its timers end, so nothing of it
   * keeps the process alive.
   */
  kill(): Promise<void> {
    this.stopping ??= (async () => {
      this.logger.info('broker killed')
      this.faultInjector?.clear()
      await Promise.all([...this.listenerServers.map((ls) => ls.server.abort()), this.metricsServer?.stop()])
      // No longer a member: no lease renewal (it expires), no controller duty, no metadata applied.
      await this.cluster?.abandon().catch(() => undefined)
      await this.publisher?.close()
      await this.replicaManager.shutdown()
      this.sharePartitionManager.shutdown()
      this.shareCoordinator.stop()
      await this.persister.stop()
      this.groupCoordinator.stop()
      await this.transactionCoordinator.stop()
      await this.addPartitionsToTxnManager.stop()
      this.scramCredentials.close()
      await this.clientQuotas.close()
      await this.authorizer?.close()
      this.transfer?.close()
      try {
        await this.logManager.abandon()
      } finally {
        this.lock.release()
      }
    })()
    return this.stopping
  }

  /** `await using broker = await startBroker()`: stopped when the scope ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.stop()
  }

  /**
   * Cluster mode (controlled.shutdown.enable): asks the controller to move this broker's
   * leadership away and take it out of the ISRs, and waits until it is done (at most 30 s) while
   * still serving, so producers only see retriable errors (NOT_LEADER_OR_FOLLOWER) and move.
   * It gives up once the broker's lease is no longer known to be valid (etcd unreachable for a
   * session timeout, as Kafka's broker waits at most broker.session.timeout.ms): then no
   * controller can move anything for it, and its registration expires with the lease.
   */
  private async controlledShutdown(): Promise<void> {
    const cluster = this.cluster
    if (!cluster || !this.config.cluster.controlledShutdownEnable || cluster.registration.fenced) return
    const started = Date.now()
    let poll: NodeJS.Timeout | undefined
    const leaseLost = new Promise<never>((_, reject) => {
      poll = setInterval(() => {
        if (!cluster.registration.leaseValid) reject(new Error('the lease is no longer valid (etcd unreachable)'))
      }, 100)
    })
    try {
      await Promise.race([cluster.controlledShutdown(CONTROLLED_SHUTDOWN_TIMEOUT_MS), leaseLost])
      // The moves are in this broker's cache: applied (it follows now) before its port closes.
      await this.publisher?.settled()
      this.logger.info('controlled shutdown done', { ms: Date.now() - started })
    } catch (err) {
      this.logger.warn('controlled shutdown did not finish; stopping anyway', { ms: Date.now() - started, error: (err as Error).message })
    } finally {
      clearInterval(poll)
    }
  }

  private async ensureLogs(topic: TopicInfo): Promise<void> {
    for (let p = 0; p < topic.partitions; p++) {
      await this.logManager.getOrCreateLog(topic.name, p, { topicId: topic.topicId, config: topicLogConfig(topic.configs) })
    }
  }
}

/** A listener's socket server and the port it bound. */
interface ListenerServer {
  listener: BrokerListener
  server: SocketServer
  boundPort: number
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i)
}
