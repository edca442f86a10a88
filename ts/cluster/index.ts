/** Cluster metadata on etcd, or in this process for tests (docs/cluster.md). */
export { ClusterMetadata, type ClusterMetadataOptions } from './cluster-metadata.js'
export { BrokerRegistration, DEFAULT_BROKER_SESSION_TIMEOUT_MS, type BrokerRegistrationOptions, type BrokerRegistrationEvents } from './broker-registration.js'
export {
  MetadataCache,
  type MetadataCacheOptions,
  type MetadataCacheEvents,
  type BrokerInfo,
  type TopicInfo,
  type PartitionState,
  type ControllerInfo,
  type ShutdownRequest,
} from './metadata-cache.js'
export { Controller, electLeader, type ControllerOptions, type ControllerEvents } from './controller.js'
export { TopicAdmin, validateTopicName, type TopicAdminOptions, type CreateTopicRequest, type CreatedTopic } from './topic-admin.js'
export { EtcdAlterPartitionManager, type EtcdAlterPartitionManagerOptions } from './alter-partition-manager.js'
export { ProducerIdManager, PRODUCER_ID_BLOCK_SIZE, type ProducerIdsBlock, type ProducerIdManagerOptions } from './producer-id-manager.js'
export { EtcdGroupConfigStore } from './group-config-store.js'
export { EtcdScramCredentialStore } from './scram-credential-store.js'
export { EtcdAclStorage } from './acl-store.js'
export { EtcdConnection, parseClusterUrl, type EtcdConnectOptions } from './etcd-client.js'
export { EtcdMetadataStore } from './etcd-metadata-store.js'
export { InMemoryMetadataStore } from './in-memory-metadata-store.js'
export { LeaseNotFoundError, WatchCompactedError, MAX_TXN_OPS, type MetadataStore, type KeyValue, type MetadataWatch, type WatchEvent, type TxnOp, type Compare } from './metadata-store.js'
export { ClusterMetadataError, DuplicateBrokerRegistrationError } from './errors.js'
export { assignReplicasToBrokers, rackAlternatedBrokerList, type BrokerPlacement } from './replica-placement.js'
export { EtcdFeatureStorage } from './feature-store.js'
