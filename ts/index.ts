export { LogManager, type LogManagerOptions } from './storage/log-manager.js'
export { Log, type AppendOptions, type ReadOptions, type HighWatermarkPolicy } from './storage/log.js'
export { BACKENDS, backendNamed, type BackendName } from './storage/backends.js'
export { RecordError, type RecordErrorCode } from './protocol/record-error.js'
export { StorageError, kafkaErrorCodeOf, STORAGE_ERROR_CODES, KafkaErrorCode, type StorageErrorCode } from './storage/errors.js'
export * from './storage/types.js'
export { buildBatch } from './protocol/batch-builder.js'
export { Transfer, TransferError, FileRecords, transferTo, sharedTransfer, socketFd, type SendPart, type TransferErrorCode } from './network/transfer.js'
export { createLogger, silentLogger, fromPinoLogger, type Logger, type LogLevel, type PinoLikeLogger } from './logger.js'
export { Broker, type BrokerOptions } from './server/broker.js'
export { startBroker, type StartBrokerOptions } from './server/embedded-broker.js'
export { startCluster, EmbeddedCluster, type StartClusterOptions } from './server/embedded-cluster.js'
export { FaultInjectionError, type FaultInjectionErrorCode, type FaultRule, type FaultHandle, type KafkaErrorName } from './server/fault-injector.js'
export {
  type SecuredBroker,
  type EmbeddedSecurity,
  type EmbeddedSecurityOptions,
  type EmbeddedClientSettings,
  type EmbeddedAcl,
  type EmbeddedSaslMechanism,
  type EmbeddedSecurityProtocol,
} from './server/embedded-security.js'
export { parseJavaProperties, formatJavaProperties } from './config/java-properties.js'
export { createCertificateAuthority, type CertificateAuthority, type CertificateOptions, type IssuedCertificate } from './security/certificates.js'
export { brokerConfigFrom, parseProperties, ConfigError, type BrokerConfig } from './server/config.js'
export { NetworkClient, parseHostPort, type NetworkClientOptions, type RequestOptions, type ReadyConnection } from './client/network-client.js'
export { KafkaConnection, type ConnectionOptions, type SendOptions } from './client/connection.js'
export { KafkaClientError, CommitFailedError, errorName, isRetriable, type ClientErrorCode } from './client/errors.js'
export { Metadata, type Node, type PartitionInfo, type TopicInfo } from './client/metadata.js'
export { NodeApiVersions } from './client/node-api-versions.js'
export { ExponentialBackoff } from './client/exponential-backoff.js'
export {
  FetchSessionHandler,
  FetchSessionBuilder,
  FetchMetadata,
  fetchRequestFor,
  type FetchRequestData,
  type PartitionFetchState,
  type TopicPartition,
  type TopicIdPartition,
} from './client/fetch-session-handler.js'
export { Fetcher, type FetcherOptions, type ConsumerRecord, type Deserializer, type OffsetSpec, type FetchedBatch } from './client/fetcher.js'
export { Consumer, type ConsumerBatch, type ConsumerConstructorOptions, type AssignedPartition, type RunOptions } from './client/consumer.js'
export { ShareConsumer, type AcknowledgementCommitCallback, type ShareConsumerRecord, type AcknowledgementResult, type TopicIdPartition as ShareTopicIdPartition } from './client/share-consumer.js'
export { shareConsumerConfigFrom, type ShareConsumerConfig, type ShareConsumerOptions, type ShareAcquireMode } from './client/share-consumer-config.js'
export type { AcknowledgeType, AcknowledgementMode } from './client/acknowledgements.js'
export { consumerConfigFrom, type ConsumerConfig, type ConsumerOptions, type AutoOffsetReset, type IsolationLevel } from './client/consumer-config.js'
export { rangeAssignor, roundRobinAssignor, assignorNamed, type PartitionAssignor, type MemberSubscription, type GroupAssignment, type PartitionRacks } from './client/assignors.js'
export { SubscriptionState, TopicPartitionState, type ResetStrategy } from './client/subscription-state.js'
export { FetchedRecord } from './client/fetched-records.js'
export { produce, ProduceError, type ProduceOptions, type RecordMetadata, type UnacknowledgedRecord } from './client/produce.js'
export { murmur2, partitionForKey, StickyPartitioner } from './client/partitioner.js'
export { Producer, type ProducerRecord as ProducerSendRecord } from './client/producer.js'
export {
  Admin,
  AdminResult,
  topicPartitionKey,
  configResourceKey,
  CONFIG_SOURCES,
  CONFIG_TYPES,
  type AdminCallOptions,
  type NewTopic,
  type CreateTopicResult,
  type TopicListing,
  type TopicDescription,
  type TopicPartitionInfo,
  type NewPartitions,
  type ConfigResource,
  type ConfigResourceTypeName,
  type ConfigEntry,
  type ConfigSource,
  type ConfigType,
  type Config,
  type AlterConfigOp,
  type GroupListing,
  type MemberDescription,
  type ConsumerGroupDescription,
  type OffsetAndMetadata as AdminOffsetAndMetadata,
  type OffsetSpec as AdminOffsetSpec,
  type ListOffsetsResultInfo,
  type DeletedRecords,
  type ClusterDescription,
  type ProducerState,
  type TransactionDescription,
} from './client/admin.js'
export { adminConfigFrom, type AdminConfig, type AdminOptions } from './client/admin-config.js'
export { producerConfigFrom, type ProducerConfig, type ProducerOptions, type Acks } from './client/producer-config.js'
export type { RecordMetadata as ProducerRecordMetadata } from './client/producer-batch.js'
export { RecordTooLargeError } from './client/errors.js'
export type { OffsetToCommit, TransactionState } from './client/transaction-manager.js'
export type { ConsumerGroupMetadata } from './client/consumer-group-metadata.js'
export { SubscriptionPattern } from './client/subscription-pattern.js'
export { clientSecurityFrom, parseJaasConfig, type ClientSecurity, type ClientTlsOptions, type ClientSaslOptions } from './client/client-security.js'
export { unsecuredJwt, type OAuthBearerProvider, type OAuthBearerToken } from './client/sasl/oauth-bearer-sasl-client.js'
export { ErrorCode } from './protocol/error-codes.js'
