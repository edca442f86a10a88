/**
 * Every broker config ferrolog reads, once: Kafka's name (`ServerConfigs`, `ServerLogConfigs`,
 * `KafkaConfig`, ...), type, validator, default, whether it can change while the broker runs
 * (Kafka's `DynamicBrokerConfig` update modes), and where the broker keeps it (`get`, `set` on
 * `BrokerConfig`). The `log.*` defaults of topic configs come from topic-configs.ts
 * (`logDefaultKeys`), each with its topic key's type and validator.
 *
 * `brokerConfigFrom` (ts/server/config.ts), DescribeConfigs' BROKER answers and docs/configs.md
 * come from `BROKER_CONFIG_KEYS`.
 */
import { bool, ConfigError, int, long, oneOf, optional, password, string, type UpdateMode, type ValueType } from './config-def.js'
import { STANDARD_AUTHORIZER_CLASS } from '../security/authorizer/standard-authorizer.js'
import { LOG_CONFIG_KEYS, DEFAULT_MIN_INSYNC_REPLICAS, type LogConfig, type LogConfigField } from './topic-configs.js'

export interface BrokerConfig {
  nodeId: number
  dataDir: string
  /**
   * listeners: where the broker listens, one server socket each, by listener name (Kafka's
   * EndPoint); each name's security protocol comes from `listenerSecurityProtocolMap`.
   */
  listeners: ListenerEndPoint[]
  /** The first listener's host and port (what `--listen` sets: one PLAINTEXT listener). */
  host: string
  port: number
  /** advertised.listeners: what Metadata tells the clients of each listener; null: `listeners`. */
  advertisedListeners: ListenerEndPoint[] | null
  /**
   * The inter-broker listener's advertised host and port: registered in a cluster as the broker's
   * address for the other brokers (derived by `brokerConfigFrom`).
   */
  advertisedHost: string
  advertisedPort: number
  /** listener.security.protocol.map: each listener name's security protocol (names upper case). */
  listenerSecurityProtocolMap: Record<string, string>
  /** inter.broker.listener.name; null: the listener named after security.inter.broker.protocol. */
  interBrokerListenerName: string | null
  /** security.inter.broker.protocol (PLAINTEXT): names the inter-broker listener when inter.broker.listener.name is not set. */
  securityInterBrokerProtocol: string
  /**
   * The `listener.name.<name>.<config>` settings as given (Kafka's per-listener overrides: the
   * `ssl.*` of one listener), by full name.
   */
  listenerOverrides: Record<string, string>
  /**
   * The `ssl.*` settings of TLS listeners (SSL, SASL_SSL) as given, by Kafka's name; a listener's
   * own `listener.name.<name>.ssl.*` (listenerOverrides) come first (ts/server/listeners.ts).
   */
  ssl: Record<string, string | null>
  /** broker.rack: the rack (or zone) this broker is in, for rack-aware replica placement and KIP-392; null: none. */
  rack: string | null
  /**
   * cluster.metadata (`--cluster etcd://HOST:PORT[,HOST:PORT]`): the etcd endpoints that hold the
   * cluster's metadata (ts/cluster/); empty: a standalone broker, the whole cluster by itself.
   */
  clusterMetadata: string[]
  /** num.partitions: partitions of an auto-created topic. */
  numPartitions: number
  /** default.replication.factor: replicas of a topic created without one (auto-created ones too); default 1. */
  defaultReplicationFactor: number
  /** auto.create.topics.enable */
  autoCreateTopics: boolean
  /**
   * max.broker.partitions (KIP-578's name): the partitions all topics of this broker may have
   * together; a CreateTopics, CreatePartitions or auto-creation past it is refused with
   * POLICY_VIOLATION. Default 10000.
   */
  maxBrokerPartitions: number
  /**
   * log.max.open.segments (ferrolog's own): sealed segments whose `.log` the storage engine keeps
   * open at once; past it the least recently read is closed and reopened by its next read. Only
   * active segments hold descriptors from start (docs/storage.md "Open files"). Not set: 1000,
   * or a quarter of the open-file limit when that is less (the broker decides at start).
   */
  maxOpenSegments: number | undefined
  /** socket.request.max.bytes */
  maxRequestBytes: number
  /** max.connections: connections open at once (dynamic). */
  maxConnections: number
  /**
   * connections.max.idle.ms: a connection that read and wrote nothing and had no request in
   * flight (being handled, parked as a long poll, or being written) for this long is closed, a
   * partial frame that never completes included; negative: never. Kafka's default 600000.
   */
  connectionsMaxIdleMs: number
  /** quota.window.num: the samples a client quota's rate is measured over (ts/quota/sampled-rate.ts). */
  quotaWindowNum: number
  /** quota.window.size.seconds: the length of each of those samples. */
  quotaWindowSizeSeconds: number
  /** log.retention.check.interval.ms */
  retentionCheckIntervalMs: number
  /** Defaults of every topic's log, from the broker's log.* settings. */
  logDefaults: LogConfig
  /** The log cleaner's settings (log.cleaner.*). */
  cleaner: CleanerConfig
  clusterId: string
  /** group.initial.rebalance.delay.ms: how long a new group waits for more members before its first generation. */
  groupInitialRebalanceDelayMs: number
  /** group.min.session.timeout.ms and group.max.session.timeout.ms: the session timeouts members may ask for. */
  groupMinSessionTimeoutMs: number
  groupMaxSessionTimeoutMs: number
  /** group.consumer.session.timeout.ms: a KIP-848 member's session, unless its group sets consumer.session.timeout.ms. */
  groupConsumerSessionTimeoutMs: number
  /** group.consumer.heartbeat.interval.ms: the heartbeat interval given to KIP-848 members, unless the group sets consumer.heartbeat.interval.ms. */
  groupConsumerHeartbeatIntervalMs: number
  /**
   * group.consumer.min/max.session.timeout.ms and group.consumer.min/max.heartbeat.interval.ms:
   * the range of the broker's own consumer.* defaults (checked at start, Kafka's
   * GroupCoordinatorConfig) and of a group's consumer.session.timeout.ms and
   * consumer.heartbeat.interval.ms (Kafka's GroupConfig).
   */
  groupConsumerMinSessionTimeoutMs: number
  groupConsumerMaxSessionTimeoutMs: number
  groupConsumerMinHeartbeatIntervalMs: number
  groupConsumerMaxHeartbeatIntervalMs: number
  /** group.consumer.assignors: the server-side assignors by name (uniform, range), the first the default. */
  groupConsumerAssignors: readonly string[]
  /** group.consumer.max.size: the members a consumer group may have. */
  groupConsumerMaxSize: number
  /**
   * group.consumer.migration.policy (Kafka 4.4: bidirectional): whether a live classic group
   * becomes a consumer group when a member joins with ConsumerGroupHeartbeat (upgrade), and a
   * consumer group a classic one when its last consumer-protocol member leaves (downgrade).
   */
  groupConsumerMigrationPolicy: ConsumerGroupMigrationPolicy
  /** group.consumer.regex.refresh.interval.ms (600000): a consumer group's regexes are resolved again after this long even without new topics. */
  groupConsumerRegexRefreshIntervalMs: number
  /** group.consumer.assignment.interval.ms: the least time between two target assignments of a consumer group. */
  groupConsumerAssignmentIntervalMs: number
  /** group.share.session.timeout.ms: a share group member's session, unless its group sets share.session.timeout.ms. */
  groupShareSessionTimeoutMs: number
  /** group.share.heartbeat.interval.ms: the heartbeat interval given to share group members, unless the group sets share.heartbeat.interval.ms. */
  groupShareHeartbeatIntervalMs: number
  /** group.share.min/max.session.timeout.ms and group.share.min/max.heartbeat.interval.ms: the ranges of the above and of the groups' share.* values. */
  groupShareMinSessionTimeoutMs: number
  groupShareMaxSessionTimeoutMs: number
  groupShareMinHeartbeatIntervalMs: number
  groupShareMaxHeartbeatIntervalMs: number
  /** group.share.assignment.interval.ms: the least time between two target assignments of a share group. */
  groupShareAssignmentIntervalMs: number
  /** group.share.max.size: the members a share group may have. */
  groupShareMaxSize: number
  /** group.share.record.lock.duration.ms: how long a share group member holds the records it acquired, unless its group sets share.record.lock.duration.ms; group.share.min/max.record.lock.duration.ms bound the groups' values. */
  groupShareRecordLockDurationMs: number
  groupShareMinRecordLockDurationMs: number
  groupShareMaxRecordLockDurationMs: number
  /** group.share.delivery.count.limit: deliveries of a record before it is archived, unless its group sets share.delivery.count.limit; group.share.min/max.delivery.count.limit bound the groups' values. */
  groupShareDeliveryCountLimit: number
  groupShareMinDeliveryCountLimit: number
  groupShareMaxDeliveryCountLimit: number
  /** group.share.partition.max.record.locks: records in flight per share partition, unless its group sets share.partition.max.record.locks; group.share.min/max.partition.max.record.locks bound the groups' values. */
  groupSharePartitionMaxRecordLocks: number
  groupShareMinPartitionMaxRecordLocks: number
  groupShareMaxPartitionMaxRecordLocks: number
  /** group.share.max.share.sessions: share sessions (ShareFetch) a broker keeps. */
  groupShareMaxShareSessions: number
  /** offsets.retention.check.interval.ms (600000): how often Empty groups without offsets are forgotten. */
  offsetsRetentionCheckIntervalMs: number
  /** offsets.topic.segment.bytes (100 MiB): the segment size of `__consumer_offsets`, a compacted log. */
  offsetsTopicSegmentBytes: number
  /**
   * offsets.topic.num.partitions (50): the partitions of `__consumer_offsets` when it is created;
   * an existing topic keeps its own count (ts/group/offsets-topic.ts).
   */
  offsetsTopicNumPartitions: number
  /**
   * transaction.state.log.num.partitions (50): the partitions of `__transaction_state` when it is
   * created; an existing topic keeps its own count (ts/coordinator/transaction/transaction-log.ts).
   */
  transactionStateLogNumPartitions: number
  /** transaction.state.log.segment.bytes (100 MiB): the segment size of `__transaction_state`, a compacted log. */
  transactionStateLogSegmentBytes: number
  /**
   * share.coordinator.state.topic.num.partitions (50): the partitions of `__share_group_state`
   * when it is created; an existing topic keeps its own count (ts/coordinator/share/share-group-state-topic.ts).
   */
  shareCoordinatorStateTopicNumPartitions: number
  /** share.coordinator.state.topic.segment.bytes (100 MiB): the segment size of `__share_group_state`, a compacted log. */
  shareCoordinatorStateTopicSegmentBytes: number
  /** share.coordinator.snapshot.update.records.per.snapshot (500): ShareUpdate records of a share partition between two ShareSnapshot records. */
  shareCoordinatorSnapshotUpdateRecordsPerSnapshot: number
  /** share.coordinator.state.topic.prune.interval.ms (300000): how often the share coordinator deletes the records of `__share_group_state` its snapshots made redundant. */
  shareCoordinatorStateTopicPruneIntervalMs: number
  /** offsets.commit.timeout.ms: how long an offset commit (or deletion) waits for the offsets log's ISR (default 5000). */
  offsetsCommitTimeoutMs: number
  /** transaction.partition.verification.enable (true): a transactional Produce is verified with the coordinator (KIP-890 part 1). */
  transactionPartitionVerificationEnable: boolean
  /** transaction.max.timeout.ms (900000): the largest transaction.timeout.ms a producer may ask for. */
  transactionMaxTimeoutMs: number
  /** transactional.id.expiration.ms (604800000): an idle transactional id is forgotten after this long. */
  transactionalIdExpirationMs: number
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms (10000): how often timed-out transactions are looked for. */
  transactionAbortTimedOutTransactionCleanupIntervalMs: number
  /** transaction.remove.expired.transaction.cleanup.interval.ms (3600000): how often expired transactional ids are looked for. */
  transactionRemoveExpiredTransactionCleanupIntervalMs: number
  /** max.incremental.fetch.session.cache.slots: how many fetch sessions the broker keeps (default 1000). */
  fetchSessionCacheSlots?: number
  /** metrics.listen: where the Prometheus endpoint (GET /metrics) listens; absent = off. */
  metricsListen?: { host: string; port: number }
  /**
   * transfer.mode (`--transfer`): how Fetch responses' records reach the socket: `zero-copy`
   * (sendfile from the segment files, on the transfer engine's thread) or `copy` (read into
   * buffers, written with socket.write). Default: zero-copy on Linux, copy elsewhere.
   */
  transfer: TransferMode
  /** min.insync.replicas: the default of topics without their own (default 1); acks=all needs an ISR this large. */
  minInsyncReplicas?: number
  /** replica.lag.time.max.ms: how long a follower may stay behind before it leaves the ISR (default 30000). */
  replicaLagTimeMaxMs?: number
  /** producer.id.expiration.ms (86400000): how long an idle producer's state is kept (ts/replica/producer-state.ts). */
  producerIdExpirationMs?: number
  /** producer.id.expiration.check.interval.ms (600000): how often idle producers are looked for. */
  producerIdExpirationCheckIntervalMs?: number
  /**
   * replica.selector.class (KIP-392): where consumers that send their rack read from. Kafka's
   * class names: org.apache.kafka.common.replica.LeaderSelector (the default: the leader) or
   * org.apache.kafka.common.replica.RackAwareReplicaSelector (an in-sync replica in the
   * consumer's rack).
   */
  replicaSelector: ReplicaSelectorName
  /**
   * sasl.enabled.mechanisms: the SASL mechanisms of SASL_PLAINTEXT and SASL_SSL listeners
   * (`listener.name.<listener>.sasl.enabled.mechanisms` overrides it for one listener).
   */
  saslEnabledMechanisms: readonly string[]
  /** sasl.jaas.config: ignored unprefixed, as Kafka's broker ignores it (a warning at start): the broker's is `listener.name.<listener>.<mechanism>.sasl.jaas.config`. */
  saslJaasConfig: string | null
  /** sasl.mechanism.inter.broker.protocol (GSSAPI, not served): the mechanism of a SASL inter-broker listener's connections between brokers. */
  saslMechanismInterBrokerProtocol: string
  /** java.security.auth.login.config: a JAAS login config file (Kafka's kafka_server_jaas.conf), read for the mechanisms without a `sasl.jaas.config`. */
  saslJaasFile: string | null
  /** sasl.server.max.receive.size: the largest frame before authentication completes. */
  saslServerMaxReceiveSize: number
  /** connections.max.reauth.ms: the longest SASL session before the client must re-authenticate (KIP-368); 0: no limit. */
  connectionsMaxReauthMs: number
  /** connection.failed.authentication.delay.ms: how long a failed authentication waits before its answer and the close. */
  failedAuthenticationDelayMs: number
  /**
   * authorizer.class.name: '' (no authorization: every request is allowed) or Kafka's
   * org.apache.kafka.metadata.authorizer.StandardAuthorizer (ACLs, ts/security/authorizer).
   */
  authorizerClassName: '' | typeof STANDARD_AUTHORIZER_CLASS
  /** super.users: principals allowed everything, `User:alice;User:bob`. */
  superUsers: string
  /** allow.everyone.if.no.acl.found (false): whether a resource no ACL names is open to all. */
  allowEveryoneIfNoAclFound: boolean
  /** Cluster mode only: how this broker belongs to the cluster and replicates (see ClusterSettings). */
  cluster: ClusterSettings
  /** SASL/OAUTHBEARER's JWKS validation (sasl.oauthbearer.*, KIP-768); created on first use. */
  oauthBearer?: OAuthBearerSettings
}

/**
 * The broker-wide sasl.oauthbearer.* settings of the JWKS validator (Kafka's SaslConfigs, 4.4
 * defaults). A listener overrides each as `listener.name.<l>.oauthbearer.<key>` (ts/server/oauthbearer-config.ts).
 */
export interface OAuthBearerSettings {
  /** sasl.oauthbearer.jwks.endpoint.url: an http(s) URL or a file: URL; null: none. */
  jwksEndpointUrl: string | null
  /** sasl.oauthbearer.jwks.endpoint.refresh.ms (3600000). */
  jwksEndpointRefreshMs: number
  /** sasl.oauthbearer.jwks.endpoint.retry.backoff.ms (100) and .max.ms (10000). */
  jwksEndpointRetryBackoffMs: number
  jwksEndpointRetryBackoffMaxMs: number
  /** sasl.oauthbearer.expected.audience: empty: none. */
  expectedAudience: readonly string[]
  /** sasl.oauthbearer.expected.issuer: null: none. */
  expectedIssuer: string | null
  /** sasl.oauthbearer.allow.unverified.audience / .issuer (false): start without expected ones. */
  allowUnverifiedAudience: boolean
  allowUnverifiedIssuer: boolean
  /** sasl.oauthbearer.clock.skew.seconds (30). */
  clockSkewSeconds: number
  /** sasl.oauthbearer.scope.claim.name (scope) and sub.claim.name (sub). */
  scopeClaimName: string
  subClaimName: string
  /** sasl.oauthbearer.expected.scope (ferrolog's own): scope items every token must hold. */
  expectedScope: readonly string[]
  /** org.apache.kafka.sasl.oauthbearer.allowed.urls (Kafka: a JVM system property): the JWKS and token endpoint URLs that may be read. */
  allowedUrls: readonly string[]
  /**
   * The inter-broker client's OAuth login (ts/server/inter-broker-security.ts):
   * sasl.login.callback.handler.class, sasl.oauthbearer.token.endpoint.url,
   * sasl.oauthbearer.client.credentials.client.id / .client.secret and sasl.oauthbearer.scope
   * (else the JAAS entry's clientId, clientSecret, scope); null: none.
   */
  loginCallbackHandlerClass: string | null
  tokenEndpointUrl: string | null
  clientCredentialsClientId: string | null
  clientCredentialsClientSecret: string | null
  scope: string | null
}

/** The settings that matter in cluster mode (`cluster.metadata` set); Kafka's names and defaults. */
export interface ClusterSettings {
  /** broker.session.timeout.ms (9000): the lease of the broker's registration; past it without a keep-alive the broker is fenced. */
  brokerSessionTimeoutMs: number
  /** offsets.topic.replication.factor (3): the replicas of `__consumer_offsets`, created when first needed, once that many brokers live. */
  offsetsTopicReplicationFactor: number
  /**
   * transaction.state.log.replication.factor (3): the replicas of `__transaction_state`, created
   * when first needed, once that many brokers live.
   */
  transactionStateLogReplicationFactor: number
  /**
   * share.coordinator.state.topic.replication.factor (3): the replicas of `__share_group_state`,
   * created when first needed, with no more replicas than brokers alive then.
   */
  shareCoordinatorStateTopicReplicationFactor: number
  /** controlled.shutdown.enable (true): a SIGTERM moves this broker's leadership away before it stops. */
  controlledShutdownEnable: boolean
  /** num.replica.fetchers (1): fetcher loops per source broker. */
  numReplicaFetchers: number
  /** replica.fetch.* (Kafka's defaults: backoff 1000 ms, wait 500 ms, min 1 byte, 1 MiB a partition, 10 MiB a response). */
  replicaFetchBackoffMs: number
  replicaFetchWaitMaxMs: number
  replicaFetchMinBytes: number
  replicaFetchMaxBytes: number
  replicaFetchResponseMaxBytes: number
  /**
   * The etcd client's TLS and authentication (cluster.metadata.ssl.* and cluster.metadata.username
   * / .password, ferrolog's own): PEM files as etcd's --cacert, --cert and --key take them; with a
   * CA the endpoints are reached over https. null: not set.
   */
  etcdCaLocation: string | null
  etcdCertificateLocation: string | null
  etcdKeyLocation: string | null
  etcdUsername: string | null
  etcdPassword: string | null
}

/** Kafka's CleanerConfig, from the broker's log.cleaner.* settings. */
export interface CleanerConfig {
  /** log.cleaner.enable */
  enableCleaner: boolean
  /** log.cleaner.threads: concurrent rounds (0 runs none). */
  numThreads: number
  /** log.cleaner.dedupe.buffer.size: the offset maps' memory, over all threads. */
  dedupeBufferSize: number
  /** log.cleaner.io.buffer.size: accepted and shown; the engines size their own buffers. */
  ioBufferSize: number
  /** log.cleaner.backoff.ms: the wait when no log needs cleaning. */
  backOffMs: number
}

export type TransferMode = 'zero-copy' | 'copy'

export type ReplicaSelectorName = 'leader' | 'rack-aware'

/** Kafka's replica selector classes, by the names Kafka's brokers accept. */
export const REPLICA_SELECTOR_CLASSES: Record<ReplicaSelectorName, string> = {
  leader: 'org.apache.kafka.common.replica.LeaderSelector',
  'rack-aware': 'org.apache.kafka.common.replica.RackAwareReplicaSelector',
}

export interface BrokerConfigKey<T> {
  name: string
  /** Names read when `name` is absent, most specific first, with their factor to this key's unit. */
  synonyms?: ReadonlyArray<{ name: string; factor: number }>
  value: ValueType<T>
  default: T
  /** How it changes while the broker runs (Kafka's DynamicBrokerConfig); read-only: from server.properties only. */
  dynamic: UpdateMode
  /**
   * What the broker redoes when a dynamic change of it is applied (Kafka's Reconfigurable):
   * `logs`: every log takes its settings again (the log defaults); `cleaner`: the cleaner starts
   * or stops threads; `sockets`: the socket server takes its connection bound again; `ssl`: the
   * TLS listeners read their key and trust stores again (new connections use them). Absent: the new value is read where it is used, from its next use.
   */
  reconfigure?: 'logs' | 'cleaner' | 'sockets' | 'ssl'
  /** Where the broker keeps it. */
  get(config: BrokerConfig): T
  set(config: BrokerConfig, value: T): void
  /** Where ferrolog differs from Kafka 4.4 (name, default, validator), or why the key is ferrolog's own. */
  differs?: string
  /** A key Kafka does not have. */
  ferrologOnly?: true
  /** A key Kafka reads outside its broker ConfigDef (StandardAuthorizer's own keys): who reads it there. */
  outsideConfigDef?: string
  /**
   * A key Kafka defines as internal (`ConfigDef.defineInternal`): left out of Kafka's docs, and
   * DescribeConfigs lists it only when the broker's config sets it (Kafka describes the values
   * set and the non-internal ones); ferrolog lists it when it is not at its default.
   */
  internal?: true
  doc: string
}

function key<T>(k: BrokerConfigKey<T>): BrokerConfigKey<unknown> {
  return k
}

/** One listener: Kafka's EndPoint, `NAME://host:port`. */
export interface ListenerEndPoint {
  /** The listener name, upper case (Kafka's ListenerName.normalised). */
  listenerName: string
  host: string
  port: number
}

/** Kafka's SocketServerConfigs.URI_PARSE_REGEXP: `NAME://host:port`, IPv6 hosts in brackets. */
const LISTENER_URI = /^(.*):\/\/\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$/

/**
 * A `listeners` value: comma-separated `NAME://host:port` (Kafka's listenerListToEndPoints); a
 * bare `host:port` (ferrolog's `--listen`) is one PLAINTEXT listener. An empty host is
 * 127.0.0.1 (Kafka: every interface).
 */
export function parseListeners(text: string, name: string): ListenerEndPoint[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
  if (entries.length === 0) throw new ConfigError(`${name} names no listener`)
  return entries.map((entry) => {
    if (!entry.includes('://')) return { listenerName: 'PLAINTEXT', ...hostPort(entry, name) }
    const [, listenerName = '', host = '', portText] = LISTENER_URI.exec(entry) ?? []
    const port = portText === undefined ? NaN : Number(portText)
    if (listenerName === '' || !Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${name}: unable to parse ${entry} to a broker endpoint (NAME://host:port)`)
    return { listenerName: listenerName.toUpperCase(), host: host || '127.0.0.1', port }
  })
}

const listenerList: ValueType<ListenerEndPoint[]> = {
  type: 'LIST',
  valid: '',
  parse: (text, name) => parseListeners(text, name),
  format: (list) => list.map((l) => `${l.listenerName}://${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}`).join(','),
}

/** Kafka's `listener.security.protocol.map` default. */
export const DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP = 'SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT'

/** `NAME:PROTOCOL,...` (Kafka's Csv.parseCsvMap), names upper case; the protocols are checked by the broker. */
const protocolMap: ValueType<Record<string, string>> = {
  type: 'STRING',
  valid: '',
  parse(text, name) {
    const out: Record<string, string> = {}
    for (const entry of text.split(',').map((e) => e.trim())) {
      if (entry === '') continue
      const colon = entry.lastIndexOf(':')
      if (colon <= 0 || colon === entry.length - 1) throw new ConfigError(`Error parsing configuration property '${name}': "${entry}" is not NAME:PROTOCOL`)
      out[entry.slice(0, colon).trim().toUpperCase()] = entry
        .slice(colon + 1)
        .trim()
        .toUpperCase()
    }
    return out
  },
  format: (map) =>
    Object.entries(map)
      .map(([k, v]) => `${k}:${v}`)
      .join(','),
}

/** `listeners`-style `[PROTOCOL://]host:port`. */
export function hostPort(text: string, what: string): { host: string; port: number } {
  const stripped = text.trim().replace(/^[A-Z_]+:\/\//, '')
  const colon = stripped.lastIndexOf(':')
  const port = Number(stripped.slice(colon + 1))
  if (colon < 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${what} must be host:port, not "${text}"`)
  return { host: stripped.slice(0, colon) || '127.0.0.1', port }
}

const listener: ValueType<{ host: string; port: number }> = {
  type: 'STRING',
  valid: '',
  parse: (text, name) => hostPort(text, name),
  format: ({ host, port }) => `PLAINTEXT://${host}:${port}`,
}

/** Kafka's LIST of SASL mechanism names (any names: the broker checks, at start, that it serves the ones a SASL listener uses). */
const saslMechanismList: ValueType<readonly string[]> = {
  type: 'LIST',
  valid: '',
  parse: (text) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  format: (list) => list.join(','),
}

/** Kafka's class names of the server-side assignors ferrolog has. */
const CONSUMER_GROUP_ASSIGNOR_CLASSES: Record<string, string> = {
  uniform: 'org.apache.kafka.coordinator.group.assignor.UniformAssignor',
  range: 'org.apache.kafka.coordinator.group.assignor.RangeAssignor',
}

/** group.consumer.assignors: names (uniform, range) or Kafka's class names of them. */
const consumerGroupAssignorList: ValueType<readonly string[]> = {
  type: 'LIST',
  valid: `[${Object.keys(CONSUMER_GROUP_ASSIGNOR_CLASSES).join(', ')}]`,
  parse(text) {
    const names = text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((s) => {
        const name = Object.entries(CONSUMER_GROUP_ASSIGNOR_CLASSES).find(([n, cls]) => s === n || s === cls)?.[0]
        if (name === undefined) throw new ConfigError(`group.consumer.assignors: unknown assignor "${s}" (ferrolog has ${Object.keys(CONSUMER_GROUP_ASSIGNOR_CLASSES).join(', ')})`)
        return name
      })
    if (names.length === 0) throw new ConfigError('group.consumer.assignors names no assignor')
    return names
  },
  format: (names) => names.join(','),
}

/** `etcd://h1:p1,h2:p2` (or `h1:p1,etcd://h2:p2`) as etcd client URLs `http://h:p`. */
const etcdEndpoints: ValueType<string[]> = {
  type: 'STRING',
  valid: 'etcd://HOST:PORT[,HOST:PORT...]',
  parse(text) {
    const endpoints = text
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '')
      .map((e) => {
        const m = /^(?:etcd:\/\/)?([^/:]+):(\d+)$/.exec(e)
        if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new ConfigError(`cluster.metadata must be etcd://HOST:PORT[,HOST:PORT...], not "${text}"`)
        return `http://${m[1]}:${m[2]}`
      })
    if (endpoints.length === 0) throw new ConfigError(`cluster.metadata names no etcd endpoint: "${text}"`)
    return endpoints
  },
  format: (urls) => urls.map((u) => u.replace(/^http:\/\//, 'etcd://')).join(','),
}

const replicaSelector: ValueType<ReplicaSelectorName> = {
  type: 'CLASS',
  valid: `[${Object.values(REPLICA_SELECTOR_CLASSES).join(', ')}]`,
  parse(text) {
    const value = text.trim()
    if (value === '') return 'leader'
    for (const [name, className] of Object.entries(REPLICA_SELECTOR_CLASSES)) if (value === className) return name as ReplicaSelectorName
    throw new ConfigError(`replica.selector.class must be ${Object.values(REPLICA_SELECTOR_CLASSES).join(' or ')}, not "${value}"`)
  },
  format: (name) => REPLICA_SELECTOR_CLASSES[name],
}

/**
 * The broker's default of each log config (log.retention.ms, message.max.bytes, ...), with the
 * topic key's type, validator and default; dynamic cluster-wide, as in Kafka.
 */
function logDefaultKeys(): BrokerConfigKey<unknown>[] {
  return (Object.entries(LOG_CONFIG_KEYS) as Array<[LogConfigField, (typeof LOG_CONFIG_KEYS)[LogConfigField]]>).map(([field, k]) =>
    key<unknown>({
      name: k.brokerName,
      synonyms: k.brokerUnits,
      value: k.value,
      default: k.default,
      dynamic: 'cluster-wide',
      reconfigure: 'logs',
      get: (c) => c.logDefaults[field],
      set: (c, v) => ((c.logDefaults as Record<string, unknown>)[field] = v),
      differs: k.differs ?? (k.brokerUnits ? `defaults to ${(k.value as ValueType<unknown>).format(k.default)} itself (Kafka: null, which falls back to ${k.brokerUnits.at(-1)!.name})` : undefined),
      doc: `The default of the topic config ${k.name}. ${k.doc}`,
    }),
  )
}

const cluster = (c: BrokerConfig) => c.cluster

/** A comma-separated list kept as its text (Kafka's LIST). */
const textList: ValueType<string> = {
  type: 'LIST',
  valid: '',
  parse: (text) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .join(','),
  format: (s) => s,
}

/**
 * The `ssl.*` keys of TLS listeners (Kafka's SslConfigs and BrokerSecurityConfigs), per-broker
 * dynamic as in Kafka: a change (or the same key store location given again) reloads the
 * listeners' certificates. Read by ts/security/ssl-engine-factory.ts.
 */
function sslKeys(): BrokerConfigKey<unknown>[] {
  const ssl = <T extends string | null>(name: string, value: ValueType<T>, def: T, doc: string, extra: Partial<BrokerConfigKey<T>> = {}) =>
    key<T>({
      name,
      value,
      default: def,
      dynamic: 'per-broker',
      reconfigure: 'ssl',
      get: (c) => (c.ssl[name] ?? def) as T,
      set: (c, v) => (c.ssl[name] = v),
      doc,
      ...extra,
    })
  return [
    ssl('ssl.keystore.type', string, 'JKS', 'The key store format: PEM (JKS and PKCS12 are not read: convert them to PEM).', { differs: 'PEM only' }),
    ssl('ssl.keystore.location', optional(string), null, "A PEM file with the listener's private key (PKCS#8) and certificate chain."),
    ssl('ssl.keystore.key', optional(password), null, 'The private key in PEM (PKCS#8), inline, with ssl.keystore.certificate.chain.'),
    ssl('ssl.keystore.certificate.chain', optional(password), null, 'The certificate chain in PEM, inline, with ssl.keystore.key.'),
    ssl('ssl.key.password', optional(password), null, 'The password of an encrypted private key.'),
    ssl('ssl.truststore.type', string, 'JKS', 'The trust store format: PEM.', { differs: 'PEM only' }),
    ssl('ssl.truststore.location', optional(string), null, 'A PEM file of the CA certificates client certificates must chain to.'),
    ssl('ssl.truststore.certificates', optional(password), null, 'The CA certificates in PEM, inline.'),
    ssl(
      'ssl.client.auth',
      oneOf(['required', 'requested', 'none'] as const),
      'none',
      'Whether clients must (required), may (requested) or need not (none) present a certificate; its subject DN is their principal.',
    ),
    ssl('ssl.principal.mapping.rules', string, 'DEFAULT', "How a client certificate's subject DN becomes its principal name: RULE:pattern/replacement/[LU],...,DEFAULT.", { dynamic: 'read-only' }),
    ssl('ssl.enabled.protocols', textList, 'TLSv1.2,TLSv1.3', 'The TLS versions accepted (a range from the oldest to the newest named).'),
    ssl('ssl.protocol', string, 'TLSv1.3', 'The newest TLS version used.'),
    ssl('ssl.cipher.suites', textList, '', 'The cipher suites accepted, IANA names; empty: the defaults of TLS 1.2 and 1.3.'),
    ssl(
      'ssl.endpoint.identification.algorithm',
      string,
      'https',
      "How this broker, as the client of another broker (the inter-broker listener), checks that broker's certificate names the host it connects to: https, or empty (not checked).",
    ),
  ]
}

const oauth = (c: BrokerConfig): Partial<OAuthBearerSettings> => (c.oauthBearer ??= {} as OAuthBearerSettings)

/** Kafka's LIST of any strings: comma separated, trimmed, empty items dropped. */
export type ConsumerGroupMigrationPolicy = (typeof MIGRATION_POLICIES)[number]
/** Kafka's ConsumerGroupMigrationPolicy values (its enum's order), read case-insensitively as its CaseInsensitiveValidString. */
const MIGRATION_POLICIES = ['disabled', 'downgrade', 'upgrade', 'bidirectional'] as const
const migrationPolicy: ValueType<ConsumerGroupMigrationPolicy> = {
  ...oneOf(MIGRATION_POLICIES),
  valid: `(case insensitive) [${MIGRATION_POLICIES.map((p) => p.toUpperCase()).join(', ')}]`,
  parse: (text, name) => oneOf(MIGRATION_POLICIES).parse(text.toLowerCase(), name),
}

const stringList: ValueType<readonly string[]> = {
  type: 'LIST',
  valid: '',
  parse: (text) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  format: (v) => v.join(','),
}

/** Space-separated scope items (as unsecuredValidatorRequiredScope). */
const scopeList: ValueType<readonly string[]> = {
  type: 'STRING',
  valid: '',
  parse: (text) => text.split(' ').filter((s) => s !== ''),
  format: (v) => v.join(' '),
}

/** The sasl.oauthbearer.* keys of the broker's JWKS validator. */
function oauthBearerKeys(): BrokerConfigKey<unknown>[] {
  const k = <F extends keyof OAuthBearerSettings>(field: F, spec: Omit<BrokerConfigKey<OAuthBearerSettings[F]>, 'get' | 'set' | 'dynamic'>) =>
    key<OAuthBearerSettings[F]>({
      ...spec,
      dynamic: 'read-only',
      get: (c) => oauth(c)[field] ?? spec.default,
      set: (c, v) => (oauth(c)[field] = v),
    })
  return [
    k('jwksEndpointUrl', {
      name: 'sasl.oauthbearer.jwks.endpoint.url',
      value: optional(string),
      default: null,
      doc: 'Where the OAUTHBEARER JWKS validator reads the keys that verify tokens: an http(s) URL (fetched at start, refreshed) or a file: URL (read again when it changes). Must be listed in org.apache.kafka.sasl.oauthbearer.allowed.urls.',
    }),
    k('jwksEndpointRefreshMs', {
      name: 'sasl.oauthbearer.jwks.endpoint.refresh.ms',
      value: long(1),
      default: 3_600_000,
      differs: 'at least 1 (Kafka: checked when the validator starts)',
      doc: 'How often the JWKS is fetched again.',
    }),
    k('jwksEndpointRetryBackoffMs', {
      name: 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms',
      value: long(0),
      default: 100,
      differs: 'at least 0 (Kafka: no validator)',
      doc: 'The first wait between JWKS fetch attempts; it doubles each attempt.',
    }),
    k('jwksEndpointRetryBackoffMaxMs', {
      name: 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms',
      value: long(0),
      default: 10_000,
      differs: 'at least 0 (Kafka: no validator)',
      doc: 'How long a failing JWKS refresh keeps retrying.',
    }),
    k('expectedAudience', {
      name: 'sasl.oauthbearer.expected.audience',
      value: stringList,
      default: [],
      doc: "The audiences a token's aud claim must name one of. Required with a JWKS URL unless sasl.oauthbearer.allow.unverified.audience is true.",
    }),
    k('expectedIssuer', {
      name: 'sasl.oauthbearer.expected.issuer',
      value: optional(string),
      default: null,
      doc: "The issuer a token's iss claim must be. Required with a JWKS URL unless sasl.oauthbearer.allow.unverified.issuer is true.",
    }),
    k('allowUnverifiedAudience', { name: 'sasl.oauthbearer.allow.unverified.audience', value: bool, default: false, doc: 'Accept tokens whatever their audience (insecure).' }),
    k('allowUnverifiedIssuer', { name: 'sasl.oauthbearer.allow.unverified.issuer', value: bool, default: false, doc: 'Accept tokens whatever their issuer (insecure).' }),
    k('clockSkewSeconds', {
      name: 'sasl.oauthbearer.clock.skew.seconds',
      value: int(0),
      default: 30,
      differs: 'at least 0 (Kafka: no validator)',
      doc: "The clock difference allowed between the identity provider and the broker on a token's exp and nbf.",
    }),
    k('scopeClaimName', { name: 'sasl.oauthbearer.scope.claim.name', value: string, default: 'scope', doc: "The claim holding a token's scope." }),
    k('subClaimName', { name: 'sasl.oauthbearer.sub.claim.name', value: string, default: 'sub', doc: "The claim holding a token's principal name." }),
    k('expectedScope', {
      name: 'sasl.oauthbearer.expected.scope',
      value: scopeList,
      default: [],
      ferrologOnly: true,
      doc: "Space-separated scope items every token must hold (the JWKS validator's twin of unsecuredValidatorRequiredScope); a token without them is answered insufficient_scope.",
    }),
    k('allowedUrls', {
      name: 'org.apache.kafka.sasl.oauthbearer.allowed.urls',
      value: stringList,
      default: [],
      ferrologOnly: true,
      doc: 'The JWKS and token endpoint URLs the broker may read, comma separated, matched exactly; empty: none. Kafka 4 has this list as a JVM system property of the same name.',
    }),
    k('loginCallbackHandlerClass', {
      name: 'sasl.login.callback.handler.class',
      value: optional({ ...string, type: 'CLASS' }),
      default: null,
      doc: "The login of the inter-broker client on an OAUTHBEARER listener: org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler (a token from sasl.oauthbearer.token.endpoint.url) or unset (OAuthBearerLoginModule's unsecured token). Kafka's listener and mechanism prefixes apply.",
    }),
    k('tokenEndpointUrl', {
      name: 'sasl.oauthbearer.token.endpoint.url',
      value: optional(string),
      default: null,
      doc: 'The OAuth token endpoint the inter-broker client gets its OAUTHBEARER token from (client credentials grant); must be listed in org.apache.kafka.sasl.oauthbearer.allowed.urls.',
    }),
    k('clientCredentialsClientId', {
      name: 'sasl.oauthbearer.client.credentials.client.id',
      value: optional(string),
      default: null,
      doc: "The inter-broker client's OAuth client id (else the OAuthBearerLoginModule JAAS option clientId).",
    }),
    k('clientCredentialsClientSecret', {
      name: 'sasl.oauthbearer.client.credentials.client.secret',
      value: optional(password),
      default: null,
      doc: "The inter-broker client's OAuth client secret (else the OAuthBearerLoginModule JAAS option clientSecret).",
    }),
    k('scope', { name: 'sasl.oauthbearer.scope', value: optional(string), default: null, doc: 'The scope the inter-broker client asks its token for (else the JAAS option scope).' }),
  ]
}

/** Every broker config, in name order. */
export const BROKER_CONFIG_KEYS: ReadonlyArray<BrokerConfigKey<unknown>> = [
  ...logDefaultKeys(),
  ...sslKeys(),
  ...oauthBearerKeys(),
  key({
    name: 'node.id',
    value: int(0),
    default: 0,
    dynamic: 'read-only',
    get: (c) => c.nodeId,
    set: (c, v) => (c.nodeId = v),
    differs: 'defaults to 0 (Kafka has no default: every node names its id)',
    doc: "This broker's id in the cluster.",
  }),
  key({
    name: 'log.dirs',
    synonyms: [{ name: 'log.dir', factor: 1 }],
    value: string,
    default: './data',
    dynamic: 'read-only',
    get: (c) => c.dataDir,
    set: (c, v) => (c.dataDir = v),
    differs: 'one directory, ./data by default (Kafka: a list, log.dir /tmp/kafka-logs)',
    doc: "The data directory: every partition's log, the topics file, the checkpoints.",
  }),
  key({
    name: 'listeners',
    value: listenerList,
    default: [{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9092 }],
    dynamic: 'read-only',
    get: (c) => c.listeners,
    set: (c, v) => ((c.listeners = v), (c.host = v[0]!.host), (c.port = v[0]!.port)),
    differs: 'PLAINTEXT://127.0.0.1:9092 by default, a bare host:port is a PLAINTEXT listener and an empty host 127.0.0.1; not dynamic (Kafka: per-broker, listeners added and removed live)',
    doc: 'Where the broker listens: NAME://host:port,... (port 0: any free port), each name mapped to a security protocol by listener.security.protocol.map.',
  }),
  key({
    name: 'advertised.listeners',
    value: optional(listenerList),
    default: null,
    dynamic: 'read-only',
    get: (c) => c.advertisedListeners,
    set: (c, v) => (c.advertisedListeners = v),
    doc: "What Metadata tells the clients of each listener, NAME://host:port,... (port 0: the listener's bound port); default: listeners.",
  }),
  key({
    name: 'listener.security.protocol.map',
    value: protocolMap,
    default: protocolMap.parse(DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP, 'listener.security.protocol.map'),
    dynamic: 'read-only',
    get: (c) => c.listenerSecurityProtocolMap,
    set: (c, v) => (c.listenerSecurityProtocolMap = v),
    differs: 'not dynamic (Kafka: per-broker)',
    doc: "Each listener name's security protocol: NAME:PROTOCOL,... (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).",
  }),
  key({
    name: 'inter.broker.listener.name',
    value: optional(string),
    default: null,
    dynamic: 'read-only',
    get: (c) => c.interBrokerListenerName,
    set: (c, v) => (c.interBrokerListenerName = v === null ? null : v.toUpperCase()),
    doc: 'The listener brokers use to reach each other (one of advertised.listeners); only one of this and security.inter.broker.protocol.',
  }),
  key({
    name: 'security.inter.broker.protocol',
    value: oneOf(['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const),
    default: 'PLAINTEXT',
    dynamic: 'read-only',
    get: (c) => c.securityInterBrokerProtocol,
    set: (c, v) => (c.securityInterBrokerProtocol = v),
    doc: 'The security protocol, and so the listener of that name, brokers use to reach each other.',
  }),
  key({
    name: 'broker.rack',
    value: optional(string),
    default: null,
    dynamic: 'read-only',
    get: (c) => c.rack,
    set: (c, v) => (c.rack = v),
    doc: 'The rack (or zone) of this broker, for rack-aware replica placement and fetching from the closest replica (KIP-392).',
  }),
  key({
    name: 'cluster.metadata',
    value: optional(etcdEndpoints),
    default: null,
    dynamic: 'read-only',
    get: (c) => (c.clusterMetadata.length > 0 ? c.clusterMetadata : null),
    set: (c, v) => (c.clusterMetadata = v ?? []),
    ferrologOnly: true,
    doc: "The etcd endpoints that hold the cluster's metadata (docs/cluster.md); absent: a standalone broker.",
  }),
  key({
    name: 'cluster.metadata.ssl.ca.location',
    value: optional(string),
    default: null,
    dynamic: 'read-only',
    get: (c) => cluster(c).etcdCaLocation,
    set: (c, v) => (cluster(c).etcdCaLocation = v),
    ferrologOnly: true,
    doc: "A PEM file of the CA certificates etcd's server certificate must chain to (etcd's --trusted-ca-file; etcdctl's --cacert): set, the etcd endpoints are reached over TLS (https).",
  }),
  key({
    name: 'cluster.metadata.ssl.certificate.location',
    value: optional(string),
    default: null,
    dynamic: 'read-only',
    get: (c) => cluster(c).etcdCertificateLocation,
    set: (c, v) => (cluster(c).etcdCertificateLocation = v),
    ferrologOnly: true,
    doc: "The broker's client certificate (PEM) for an etcd with --client-cert-auth (etcdctl's --cert); with cluster.metadata.ssl.key.location and cluster.metadata.ssl.ca.location.",
  }),
  key({
    name: 'cluster.metadata.ssl.key.location',
    value: optional(string),
    default: null,
    dynamic: 'read-only',
    get: (c) => cluster(c).etcdKeyLocation,
    set: (c, v) => (cluster(c).etcdKeyLocation = v),
    ferrologOnly: true,
    doc: "The private key (PEM, unencrypted) of cluster.metadata.ssl.certificate.location (etcdctl's --key).",
  }),
  key({
    name: 'cluster.metadata.username',
    value: optional(string),
    default: null,
    dynamic: 'read-only',
    get: (c) => cluster(c).etcdUsername,
    set: (c, v) => (cluster(c).etcdUsername = v),
    ferrologOnly: true,
    doc: "The etcd user the broker authenticates as when etcd's authentication is enabled (etcdctl's --user), with cluster.metadata.password; it needs read and write on the cluster's keys (/ferrolog/<cluster.id>/).",
  }),
  key({
    name: 'cluster.metadata.password',
    value: optional(password),
    default: null,
    dynamic: 'read-only',
    get: (c) => cluster(c).etcdPassword,
    set: (c, v) => (cluster(c).etcdPassword = v),
    ferrologOnly: true,
    doc: 'The password of cluster.metadata.username.',
  }),
  key({
    name: 'cluster.id',
    value: string,
    default: 'ferrolog-cluster',
    dynamic: 'read-only',
    get: (c) => c.clusterId,
    set: (c, v) => (c.clusterId = v),
    ferrologOnly: true,
    doc: 'The cluster id answered in Metadata and DescribeCluster (Kafka keeps it in meta.properties).',
  }),
  key({
    name: 'default.replication.factor',
    value: int(1),
    default: 1,
    dynamic: 'read-only',
    get: (c) => c.defaultReplicationFactor,
    set: (c, v) => (c.defaultReplicationFactor = v),
    differs: 'at least 1 (Kafka: no validator)',
    doc: 'The replicas of a topic created without a replication factor, auto-created ones included.',
  }),
  key({
    name: 'num.partitions',
    value: int(1),
    default: 1,
    dynamic: 'read-only',
    get: (c) => c.numPartitions,
    set: (c, v) => (c.numPartitions = v),
    doc: 'The partitions of a topic created without a count, auto-created ones included.',
  }),
  key({
    name: 'auto.create.topics.enable',
    value: bool,
    default: true,
    dynamic: 'read-only',
    get: (c) => c.autoCreateTopics,
    set: (c, v) => (c.autoCreateTopics = v),
    doc: 'Whether Metadata and Produce for an unknown topic create it.',
  }),
  key({
    name: 'max.broker.partitions',
    value: int(1),
    default: 10_000,
    dynamic: 'read-only',
    get: (c) => c.maxBrokerPartitions,
    set: (c, v) => (c.maxBrokerPartitions = v),
    ferrologOnly: true,
    doc: "The partitions all topics of this broker may have together (KIP-578's name); more: POLICY_VIOLATION.",
  }),
  key({
    name: 'log.max.open.segments',
    value: optional(int(1)),
    default: null,
    dynamic: 'read-only',
    get: (c) => c.maxOpenSegments ?? null,
    set: (c, v) => (c.maxOpenSegments = v ?? undefined),
    ferrologOnly: true,
    doc: 'Sealed segments whose .log the engine keeps open at once; default 1000, or a quarter of the open-file limit when less (docs/storage.md "Open files").',
  }),
  key({
    name: 'socket.request.max.bytes',
    value: int(1),
    default: 104_857_600,
    dynamic: 'read-only',
    get: (c) => c.maxRequestBytes,
    set: (c, v) => (c.maxRequestBytes = v),
    doc: 'The largest request frame accepted; a larger one closes the connection.',
  }),
  key({
    name: 'quota.window.num',
    value: int(1),
    default: 11,
    dynamic: 'read-only',
    get: (c) => c.quotaWindowNum,
    set: (c, v) => (c.quotaWindowNum = v),
    doc: 'The number of samples a client quota (AlterClientQuotas) is measured over.',
  }),
  key({
    name: 'quota.window.size.seconds',
    value: int(1),
    default: 1,
    dynamic: 'read-only',
    get: (c) => c.quotaWindowSizeSeconds,
    set: (c, v) => (c.quotaWindowSizeSeconds = v),
    doc: 'The time span of each sample a client quota is measured over.',
  }),
  key({
    name: 'max.connections',
    value: int(0),
    default: 2_147_483_647,
    dynamic: 'cluster-wide',
    reconfigure: 'sockets',
    get: (c) => c.maxConnections,
    set: (c, v) => (c.maxConnections = v),
    doc: 'Connections the broker keeps open at once; one past it is closed at once (Kafka leaves it waiting in the listen backlog).',
  }),
  key({
    name: 'connections.max.idle.ms',
    value: long(null),
    default: 600_000,
    dynamic: 'read-only',
    get: (c) => c.connectionsMaxIdleMs,
    set: (c, v) => (c.connectionsMaxIdleMs = Math.max(v, -1)),
    doc: 'A connection idle this long is closed; negative: never.',
  }),
  key({
    name: 'log.retention.check.interval.ms',
    value: long(1),
    default: 300_000,
    dynamic: 'read-only',
    get: (c) => c.retentionCheckIntervalMs,
    set: (c, v) => (c.retentionCheckIntervalMs = v),
    doc: 'How often retention looks for segments to delete.',
  }),
  key({
    name: 'log.cleaner.enable',
    value: bool,
    default: true,
    dynamic: 'read-only',
    get: (c) => c.cleaner.enableCleaner,
    set: (c, v) => (c.cleaner.enableCleaner = v),
    doc: 'Whether the log cleaner compacts topics with cleanup.policy compact.',
  }),
  key({
    name: 'log.cleaner.threads',
    value: int(0),
    default: 1,
    dynamic: 'cluster-wide',
    reconfigure: 'cleaner',
    get: (c) => c.cleaner.numThreads,
    set: (c, v) => (c.cleaner.numThreads = v),
    doc: 'Cleaning rounds that run at once (0: none).',
  }),
  key({
    name: 'log.cleaner.dedupe.buffer.size',
    value: long(1),
    default: 128 * 1024 * 1024,
    dynamic: 'cluster-wide',
    get: (c) => c.cleaner.dedupeBufferSize,
    set: (c, v) => (c.cleaner.dedupeBufferSize = v),
    differs: 'at least 1 (Kafka: no validator)',
    doc: "The memory of the cleaners' offset maps, over all threads.",
  }),
  key({
    name: 'log.cleaner.io.buffer.size',
    value: int(0),
    default: 512 * 1024,
    dynamic: 'cluster-wide',
    get: (c) => c.cleaner.ioBufferSize,
    set: (c, v) => (c.cleaner.ioBufferSize = v),
    doc: 'Accepted and described; the engines size their own read and write buffers.',
  }),
  key({
    name: 'log.cleaner.backoff.ms',
    value: long(0),
    default: 15_000,
    dynamic: 'cluster-wide',
    get: (c) => c.cleaner.backOffMs,
    set: (c, v) => (c.cleaner.backOffMs = v),
    doc: 'How long the cleaner waits when no log needs cleaning.',
  }),
  key({
    name: 'group.initial.rebalance.delay.ms',
    value: int(0),
    default: 3000,
    dynamic: 'read-only',
    get: (c) => c.groupInitialRebalanceDelayMs,
    set: (c, v) => (c.groupInitialRebalanceDelayMs = v),
    differs: 'at least 0 (Kafka: no validator)',
    doc: 'How long a new classic group waits for more members before its first generation.',
  }),
  key({
    name: 'group.min.session.timeout.ms',
    value: int(1),
    default: 6000,
    dynamic: 'read-only',
    get: (c) => c.groupMinSessionTimeoutMs,
    set: (c, v) => (c.groupMinSessionTimeoutMs = v),
    differs: 'at least 1 (Kafka: no validator)',
    doc: 'The smallest session timeout a group member may ask for.',
  }),
  key({
    name: 'group.max.session.timeout.ms',
    value: int(1),
    default: 1_800_000,
    dynamic: 'read-only',
    get: (c) => c.groupMaxSessionTimeoutMs,
    set: (c, v) => (c.groupMaxSessionTimeoutMs = v),
    differs: 'at least 1 (Kafka: no validator)',
    doc: 'The largest session timeout a group member may ask for.',
  }),
  key({
    name: 'group.consumer.session.timeout.ms',
    value: int(1),
    default: 45_000,
    dynamic: 'read-only',
    get: (c) => c.groupConsumerSessionTimeoutMs,
    set: (c, v) => (c.groupConsumerSessionTimeoutMs = v),
    doc: 'The timeout to detect client failures when using the consumer group protocol.',
  }),
  key({
    name: 'group.consumer.heartbeat.interval.ms',
    value: int(1),
    default: 5000,
    dynamic: 'read-only',
    get: (c) => c.groupConsumerHeartbeatIntervalMs,
    set: (c, v) => (c.groupConsumerHeartbeatIntervalMs = v),
    doc: 'The heartbeat interval given to the members of a consumer group.',
  }),
  key({
    name: 'group.consumer.min.session.timeout.ms',
    value: int(1),
    default: 45_000,
    dynamic: 'read-only',
    get: (c) => c.groupConsumerMinSessionTimeoutMs,
    set: (c, v) => (c.groupConsumerMinSessionTimeoutMs = v),
    doc: 'The minimum allowed session timeout for registered consumers.',
  }),
  key({
    name: 'group.consumer.max.session.timeout.ms',
    value: int(1),
    default: 60_000,
    dynamic: 'read-only',
    get: (c) => c.groupConsumerMaxSessionTimeoutMs,
    set: (c, v) => (c.groupConsumerMaxSessionTimeoutMs = v),
    doc: 'The maximum allowed session timeout for registered consumers.',
  }),
  key({
    name: 'group.consumer.min.heartbeat.interval.ms',
    value: int(1),
    default: 5000,
    dynamic: 'read-only',
    get: (c) => c.groupConsumerMinHeartbeatIntervalMs,
    set: (c, v) => (c.groupConsumerMinHeartbeatIntervalMs = v),
    doc: 'The minimum heartbeat interval for registered consumers.',
  }),
  key({
    name: 'group.consumer.max.heartbeat.interval.ms',
    value: int(1),
    default: 15_000,
    dynamic: 'read-only',
    get: (c) => c.groupConsumerMaxHeartbeatIntervalMs,
    set: (c, v) => (c.groupConsumerMaxHeartbeatIntervalMs = v),
    doc: 'The maximum heartbeat interval for registered consumers.',
  }),
  key({
    name: 'group.consumer.assignors',
    value: consumerGroupAssignorList,
    default: ['uniform', 'range'],
    dynamic: 'read-only',
    get: (c) => c.groupConsumerAssignors,
    set: (c, v) => (c.groupConsumerAssignors = v),
    differs: "the assignors uniform and range only, by name or by Kafka's class name (Kafka: any ConsumerGroupPartitionAssignor class)",
    doc: 'The server side assignors of consumer groups. The first one in the list is the default assignor, used when the consumers do not name one.',
  }),
  key({
    name: 'group.consumer.max.size',
    value: int(1),
    default: 2_147_483_647,
    dynamic: 'read-only',
    get: (c) => c.groupConsumerMaxSize,
    set: (c, v) => (c.groupConsumerMaxSize = v),
    doc: 'The maximum number of consumers that a single consumer group can accommodate (consumer group protocol only).',
  }),
  key<ConsumerGroupMigrationPolicy>({
    name: 'group.consumer.migration.policy',
    value: migrationPolicy,
    default: 'bidirectional',
    dynamic: 'read-only',
    get: (c) => c.groupConsumerMigrationPolicy,
    set: (c, v) => (c.groupConsumerMigrationPolicy = v),
    doc:
      'The config that enables converting the non-empty classic group using the consumer embedded protocol to the non-empty consumer group using the consumer group protocol and vice versa; ' +
      'conversions of empty groups in both directions are always enabled regardless of this policy. bidirectional: both upgrade from classic group to consumer group and downgrade from consumer group to classic group are enabled, ' +
      'upgrade: only upgrade from classic group to consumer group is enabled, downgrade: only downgrade from consumer group to classic group is enabled, disabled: neither upgrade nor downgrade is enabled.',
  }),
  key({
    name: 'group.consumer.regex.refresh.interval.ms',
    value: int(10_000),
    default: 600_000,
    dynamic: 'read-only',
    internal: true,
    get: (c) => c.groupConsumerRegexRefreshIntervalMs,
    set: (c, v) => (c.groupConsumerRegexRefreshIntervalMs = v),
    doc: 'The interval at which the group coordinator will refresh the topics matching the group subscribed regexes. This is only applicable to consumer groups using the consumer group protocol.',
  }),
  key({
    name: 'group.consumer.assignment.interval.ms',
    value: int(0),
    default: 1000,
    dynamic: 'cluster-wide',
    get: (c) => c.groupConsumerAssignmentIntervalMs,
    set: (c, v) => (c.groupConsumerAssignmentIntervalMs = v),
    doc: 'The interval between assignment updates for a consumer group.',
  }),
  key({
    name: 'group.share.session.timeout.ms',
    value: int(1),
    default: 45_000,
    dynamic: 'read-only',
    get: (c) => c.groupShareSessionTimeoutMs,
    set: (c, v) => (c.groupShareSessionTimeoutMs = v),
    doc: 'The timeout to detect client failures when using the share group protocol.',
  }),
  key({
    name: 'group.share.min.session.timeout.ms',
    value: int(1),
    default: 45_000,
    dynamic: 'read-only',
    get: (c) => c.groupShareMinSessionTimeoutMs,
    set: (c, v) => (c.groupShareMinSessionTimeoutMs = v),
    doc: 'The minimum allowed session timeout for share group members.',
  }),
  key({
    name: 'group.share.max.session.timeout.ms',
    value: int(1),
    default: 60_000,
    dynamic: 'read-only',
    get: (c) => c.groupShareMaxSessionTimeoutMs,
    set: (c, v) => (c.groupShareMaxSessionTimeoutMs = v),
    doc: 'The maximum allowed session timeout for share group members.',
  }),
  key({
    name: 'group.share.heartbeat.interval.ms',
    value: int(1),
    default: 5000,
    dynamic: 'read-only',
    get: (c) => c.groupShareHeartbeatIntervalMs,
    set: (c, v) => (c.groupShareHeartbeatIntervalMs = v),
    doc: 'The heartbeat interval given to the members of a share group.',
  }),
  key({
    name: 'group.share.min.heartbeat.interval.ms',
    value: int(1),
    default: 5000,
    dynamic: 'read-only',
    get: (c) => c.groupShareMinHeartbeatIntervalMs,
    set: (c, v) => (c.groupShareMinHeartbeatIntervalMs = v),
    doc: 'The minimum heartbeat interval for share group members.',
  }),
  key({
    name: 'group.share.max.heartbeat.interval.ms',
    value: int(1),
    default: 15_000,
    dynamic: 'read-only',
    get: (c) => c.groupShareMaxHeartbeatIntervalMs,
    set: (c, v) => (c.groupShareMaxHeartbeatIntervalMs = v),
    doc: 'The maximum heartbeat interval for share group members.',
  }),
  key({
    name: 'group.share.assignment.interval.ms',
    value: int(0),
    default: 1000,
    dynamic: 'cluster-wide',
    get: (c) => c.groupShareAssignmentIntervalMs,
    set: (c, v) => (c.groupShareAssignmentIntervalMs = v),
    doc: 'The interval between assignment updates for a share group.',
  }),
  key({
    name: 'group.share.max.size',
    value: int(1, 1000),
    default: 200,
    dynamic: 'read-only',
    get: (c) => c.groupShareMaxSize,
    set: (c, v) => (c.groupShareMaxSize = v),
    doc: 'The maximum number of members that a single share group can accommodate.',
  }),
  key({
    name: 'group.share.record.lock.duration.ms',
    value: int(1000, 3_600_000),
    default: 30_000,
    dynamic: 'read-only',
    get: (c) => c.groupShareRecordLockDurationMs,
    set: (c, v) => (c.groupShareRecordLockDurationMs = v),
    doc: 'The record acquisition lock duration in milliseconds for share groups.',
  }),
  key({
    name: 'group.share.min.record.lock.duration.ms',
    value: int(1000, 30_000),
    default: 15_000,
    dynamic: 'read-only',
    get: (c) => c.groupShareMinRecordLockDurationMs,
    set: (c, v) => (c.groupShareMinRecordLockDurationMs = v),
    doc: 'The minimum value of a group configuration for record acquisition lock duration in milliseconds.',
  }),
  key({
    name: 'group.share.max.record.lock.duration.ms',
    value: int(30000, 3_600_000),
    default: 60_000,
    dynamic: 'read-only',
    get: (c) => c.groupShareMaxRecordLockDurationMs,
    set: (c, v) => (c.groupShareMaxRecordLockDurationMs = v),
    doc: 'The maximum value of a group configuration for record acquisition lock duration in milliseconds.',
  }),
  key({
    name: 'group.share.delivery.count.limit',
    value: int(2, 10),
    default: 5,
    dynamic: 'read-only',
    get: (c) => c.groupShareDeliveryCountLimit,
    set: (c, v) => (c.groupShareDeliveryCountLimit = v),
    doc: 'The maximum number of delivery attempts for a record delivered to a share group.',
  }),
  key({
    name: 'group.share.min.delivery.count.limit',
    value: int(2, 5),
    default: 2,
    dynamic: 'read-only',
    get: (c) => c.groupShareMinDeliveryCountLimit,
    set: (c, v) => (c.groupShareMinDeliveryCountLimit = v),
    doc: 'The minimum value of a group configuration for the maximum number of delivery attempts for a record delivered to a share group.',
  }),
  key({
    name: 'group.share.max.delivery.count.limit',
    value: int(5, 25),
    default: 10,
    dynamic: 'read-only',
    get: (c) => c.groupShareMaxDeliveryCountLimit,
    set: (c, v) => (c.groupShareMaxDeliveryCountLimit = v),
    doc: 'The maximum value of a group configuration for the maximum number of delivery attempts for a record delivered to a share group.',
  }),
  key({
    name: 'group.share.partition.max.record.locks',
    value: int(100, 10000),
    default: 2000,
    dynamic: 'read-only',
    get: (c) => c.groupSharePartitionMaxRecordLocks,
    set: (c, v) => (c.groupSharePartitionMaxRecordLocks = v),
    doc: 'Share-group record lock limit per share-partition.',
  }),
  key({
    name: 'group.share.min.partition.max.record.locks',
    value: int(100, 2000),
    default: 100,
    dynamic: 'read-only',
    get: (c) => c.groupShareMinPartitionMaxRecordLocks,
    set: (c, v) => (c.groupShareMinPartitionMaxRecordLocks = v),
    doc: 'The minimum value of a group configuration for the record lock limit per share-partition.',
  }),
  key({
    name: 'group.share.max.partition.max.record.locks',
    value: int(2000, 10000),
    default: 4000,
    dynamic: 'read-only',
    get: (c) => c.groupShareMaxPartitionMaxRecordLocks,
    set: (c, v) => (c.groupShareMaxPartitionMaxRecordLocks = v),
    doc: 'The maximum value of a group configuration for the record lock limit per share-partition.',
  }),
  key({
    name: 'group.share.max.share.sessions',
    value: int(1),
    default: 2000,
    dynamic: 'read-only',
    get: (c) => c.groupShareMaxShareSessions,
    set: (c, v) => (c.groupShareMaxShareSessions = v),
    doc: 'The maximum number of share sessions per broker.',
  }),
  key({
    name: 'offsets.retention.check.interval.ms',
    value: long(1),
    default: 600_000,
    dynamic: 'read-only',
    get: (c) => c.offsetsRetentionCheckIntervalMs,
    set: (c, v) => (c.offsetsRetentionCheckIntervalMs = v),
    doc: 'How often Empty groups without committed offsets are forgotten.',
  }),
  key({
    name: 'offsets.topic.segment.bytes',
    value: int(14),
    default: 100 * 1024 * 1024,
    dynamic: 'read-only',
    get: (c) => c.offsetsTopicSegmentBytes,
    set: (c, v) => (c.offsetsTopicSegmentBytes = v),
    differs: 'at least 14 (Kafka: 1)',
    doc: 'The segment size of __consumer_offsets.',
  }),
  key({
    name: 'offsets.topic.num.partitions',
    value: int(1),
    default: 50,
    dynamic: 'read-only',
    get: (c) => c.offsetsTopicNumPartitions,
    set: (c, v) => (c.offsetsTopicNumPartitions = v),
    doc: 'The number of partitions for the offset commit topic (should not change after deployment): an existing __consumer_offsets keeps the count it was created with.',
  }),
  key({
    name: 'offsets.commit.timeout.ms',
    value: int(1),
    default: 5000,
    dynamic: 'read-only',
    get: (c) => c.offsetsCommitTimeoutMs,
    set: (c, v) => (c.offsetsCommitTimeoutMs = v),
    doc: "How long an offset commit waits for the offsets log's in-sync replicas.",
  }),
  key({
    name: 'offsets.topic.replication.factor',
    value: int(1),
    default: 3,
    dynamic: 'read-only',
    get: (c) => cluster(c).offsetsTopicReplicationFactor,
    set: (c, v) => (cluster(c).offsetsTopicReplicationFactor = v),
    differs: 'a short in Kafka',
    doc: 'The replicas of __consumer_offsets in a cluster, created once that many brokers live.',
  }),
  key({
    name: 'transaction.state.log.segment.bytes',
    value: int(14),
    default: 100 * 1024 * 1024,
    dynamic: 'read-only',
    get: (c) => c.transactionStateLogSegmentBytes,
    set: (c, v) => (c.transactionStateLogSegmentBytes = v),
    differs: 'at least 14 (Kafka: 1)',
    doc: 'The segment size of __transaction_state.',
  }),
  key({
    name: 'transaction.state.log.num.partitions',
    value: int(1),
    default: 50,
    dynamic: 'read-only',
    get: (c) => c.transactionStateLogNumPartitions,
    set: (c, v) => (c.transactionStateLogNumPartitions = v),
    doc: 'The number of partitions for the transaction topic (should not change after deployment): an existing __transaction_state keeps the count it was created with.',
  }),
  key({
    name: 'transaction.state.log.replication.factor',
    value: int(1),
    default: 3,
    dynamic: 'read-only',
    get: (c) => cluster(c).transactionStateLogReplicationFactor,
    set: (c, v) => (cluster(c).transactionStateLogReplicationFactor = v),
    differs: 'a short in Kafka',
    doc: 'The replicas of __transaction_state in a cluster, created once that many brokers live.',
  }),
  key({
    name: 'share.coordinator.state.topic.num.partitions',
    value: int(1),
    default: 50,
    dynamic: 'read-only',
    get: (c) => c.shareCoordinatorStateTopicNumPartitions,
    set: (c, v) => (c.shareCoordinatorStateTopicNumPartitions = v),
    doc: 'The number of partitions for the share-group state topic (should not change after deployment): an existing __share_group_state keeps the count it was created with.',
  }),
  key({
    name: 'share.coordinator.state.topic.replication.factor',
    value: int(1),
    default: 3,
    dynamic: 'read-only',
    get: (c) => cluster(c).shareCoordinatorStateTopicReplicationFactor,
    set: (c, v) => (cluster(c).shareCoordinatorStateTopicReplicationFactor = v),
    differs: 'a short in Kafka',
    doc: 'The replicas of __share_group_state in a cluster, created when first needed, with no more replicas than brokers alive then.',
  }),
  key({
    name: 'share.coordinator.state.topic.segment.bytes',
    value: int(14),
    default: 100 * 1024 * 1024,
    dynamic: 'read-only',
    get: (c) => c.shareCoordinatorStateTopicSegmentBytes,
    set: (c, v) => (c.shareCoordinatorStateTopicSegmentBytes = v),
    differs: 'at least 14 (Kafka: 1)',
    doc: 'The segment size of __share_group_state.',
  }),
  key({
    name: 'share.coordinator.state.topic.prune.interval.ms',
    value: int(1),
    default: 5 * 60 * 1000,
    dynamic: 'read-only',
    get: (c) => c.shareCoordinatorStateTopicPruneIntervalMs,
    set: (c, v) => (c.shareCoordinatorStateTopicPruneIntervalMs = v),
    doc: 'How often the share coordinator deletes the records of __share_group_state that later snapshots made redundant.',
  }),
  key({
    name: 'share.coordinator.snapshot.update.records.per.snapshot',
    value: int(0, 500),
    default: 500,
    dynamic: 'read-only',
    get: (c) => c.shareCoordinatorSnapshotUpdateRecordsPerSnapshot,
    set: (c, v) => (c.shareCoordinatorSnapshotUpdateRecordsPerSnapshot = v),
    doc: 'The number of ShareUpdate records of a share partition the share coordinator writes between two ShareSnapshot records of it.',
  }),
  key({
    name: 'transaction.partition.verification.enable',
    value: bool,
    default: true,
    dynamic: 'cluster-wide',
    get: (c) => c.transactionPartitionVerificationEnable,
    set: (c, v) => (c.transactionPartitionVerificationEnable = v),
    doc: 'Whether a transactional Produce is verified with the transaction coordinator first (KIP-890).',
  }),
  key({
    name: 'transaction.max.timeout.ms',
    value: int(1),
    default: 900_000,
    dynamic: 'read-only',
    get: (c) => c.transactionMaxTimeoutMs,
    set: (c, v) => (c.transactionMaxTimeoutMs = v),
    doc: 'The largest transaction timeout a producer may ask for.',
  }),
  key({
    name: 'transactional.id.expiration.ms',
    value: int(1),
    default: 604_800_000,
    dynamic: 'read-only',
    get: (c) => c.transactionalIdExpirationMs,
    set: (c, v) => (c.transactionalIdExpirationMs = v),
    doc: 'How long an idle transactional id is remembered.',
  }),
  key({
    name: 'transaction.abort.timed.out.transaction.cleanup.interval.ms',
    value: int(1),
    default: 10_000,
    dynamic: 'read-only',
    get: (c) => c.transactionAbortTimedOutTransactionCleanupIntervalMs,
    set: (c, v) => (c.transactionAbortTimedOutTransactionCleanupIntervalMs = v),
    doc: 'How often timed-out transactions are looked for and aborted.',
  }),
  key({
    name: 'transaction.remove.expired.transaction.cleanup.interval.ms',
    value: int(1),
    default: 3_600_000,
    dynamic: 'read-only',
    get: (c) => c.transactionRemoveExpiredTransactionCleanupIntervalMs,
    set: (c, v) => (c.transactionRemoveExpiredTransactionCleanupIntervalMs = v),
    doc: 'How often expired transactional ids are looked for.',
  }),
  key({
    name: 'max.incremental.fetch.session.cache.slots',
    value: int(0),
    default: 1000,
    dynamic: 'read-only',
    get: (c) => c.fetchSessionCacheSlots ?? 1000,
    set: (c, v) => (c.fetchSessionCacheSlots = v),
    doc: 'How many incremental fetch sessions the broker keeps.',
  }),
  key({
    name: 'metrics.listen',
    value: optional(listener),
    default: null,
    dynamic: 'read-only',
    get: (c) => c.metricsListen ?? null,
    set: (c, v) => (c.metricsListen = v ?? undefined),
    ferrologOnly: true,
    doc: 'Where the Prometheus endpoint (GET /metrics) listens, host:port; absent: off.',
  }),
  key<TransferMode>({
    name: 'transfer.mode',
    value: oneOf(['zero-copy', 'copy'] as const),
    default: 'zero-copy',
    dynamic: 'read-only',
    get: (c) => c.transfer,
    set: (c, v) => (c.transfer = v),
    ferrologOnly: true,
    doc: "How Fetch responses' records reach the socket: zero-copy (sendfile) or copy. Default: zero-copy on Linux with the native binding, else copy.",
  }),
  key({
    name: 'min.insync.replicas',
    value: int(1),
    default: DEFAULT_MIN_INSYNC_REPLICAS,
    dynamic: 'cluster-wide',
    get: (c) => c.minInsyncReplicas ?? DEFAULT_MIN_INSYNC_REPLICAS,
    set: (c, v) => (c.minInsyncReplicas = v),
    doc: 'The default of the topic config min.insync.replicas.',
  }),
  key({
    name: 'producer.id.expiration.ms',
    value: int(1),
    default: 86_400_000,
    dynamic: 'cluster-wide',
    get: (c) => c.producerIdExpirationMs ?? 86_400_000,
    set: (c, v) => (c.producerIdExpirationMs = v),
    doc: "How long a producer's state (its idempotence window) is kept after its last write, unless a transaction of it is open.",
  }),
  key({
    name: 'producer.id.expiration.check.interval.ms',
    value: int(1),
    default: 600_000,
    dynamic: 'read-only',
    get: (c) => c.producerIdExpirationCheckIntervalMs ?? 600_000,
    set: (c, v) => (c.producerIdExpirationCheckIntervalMs = v),
    doc: 'How often the idle producers are looked for and forgotten.',
  }),
  key({
    name: 'replica.lag.time.max.ms',
    value: long(1),
    default: 30_000,
    dynamic: 'read-only',
    get: (c) => c.replicaLagTimeMaxMs ?? 30_000,
    set: (c, v) => (c.replicaLagTimeMaxMs = v),
    differs: 'at least 1 (Kafka: no validator)',
    doc: 'How long a follower may stay behind before it leaves the ISR.',
  }),
  key<ReplicaSelectorName>({
    name: 'replica.selector.class',
    value: replicaSelector,
    default: 'leader',
    dynamic: 'read-only',
    get: (c) => c.replicaSelector,
    set: (c, v) => (c.replicaSelector = v),
    differs: "Kafka's two selectors only (Kafka: any class; default null, the leader)",
    doc: 'Where consumers that send their rack fetch from (KIP-392): the leader, or an in-sync replica in their rack.',
  }),
  key<'' | typeof STANDARD_AUTHORIZER_CLASS>({
    name: 'authorizer.class.name',
    value: oneOf(['', STANDARD_AUTHORIZER_CLASS] as const, 'CLASS'),
    default: '',
    dynamic: 'read-only',
    get: (c) => c.authorizerClassName,
    set: (c, v) => (c.authorizerClassName = v),
    differs: "Kafka's StandardAuthorizer only (Kafka: any Authorizer class)",
    doc: 'The authorizer: empty (every request allowed) or org.apache.kafka.metadata.authorizer.StandardAuthorizer (ACLs; docs/security.md "Authorization").',
  }),
  key({
    name: 'super.users',
    value: string,
    default: '',
    dynamic: 'read-only',
    get: (c) => c.superUsers,
    set: (c, v) => (c.superUsers = v),
    differs: 'read-only (Kafka: also a dynamic cluster-wide config)',
    outsideConfigDef: 'StandardAuthorizer.configure (no ConfigDef entry in Kafka 4.4)',
    doc: 'Principals the authorizer allows everything, separated by semicolons: User:admin;User:broker.',
  }),
  key({
    name: 'allow.everyone.if.no.acl.found',
    value: bool,
    default: false,
    dynamic: 'read-only',
    get: (c) => c.allowEveryoneIfNoAclFound,
    set: (c, v) => (c.allowEveryoneIfNoAclFound = v),
    outsideConfigDef: 'StandardAuthorizer.configure (no ConfigDef entry in Kafka 4.4)',
    doc: 'Whether the authorizer allows everyone a resource that no ACL names.',
  }),
  key({
    name: 'broker.session.timeout.ms',
    value: int(1000),
    default: 9000,
    dynamic: 'read-only',
    get: (c) => cluster(c).brokerSessionTimeoutMs,
    set: (c, v) => (cluster(c).brokerSessionTimeoutMs = v),
    differs: 'at least 1000 (Kafka: no validator); the etcd lease of the registration',
    doc: "The lease of the broker's registration: past it without a keep-alive the broker is fenced.",
  }),
  key({
    name: 'controlled.shutdown.enable',
    value: bool,
    default: true,
    dynamic: 'read-only',
    get: (c) => cluster(c).controlledShutdownEnable,
    set: (c, v) => (cluster(c).controlledShutdownEnable = v),
    doc: "Whether a SIGTERM moves this broker's leadership away before it stops.",
  }),
  key({
    name: 'num.replica.fetchers',
    value: int(1),
    default: 1,
    dynamic: 'cluster-wide',
    get: (c) => cluster(c).numReplicaFetchers,
    set: (c, v) => (cluster(c).numReplicaFetchers = v),
    doc: 'Fetcher loops per source broker.',
  }),
  key({
    name: 'replica.fetch.backoff.ms',
    value: int(0),
    default: 1000,
    dynamic: 'read-only',
    get: (c) => cluster(c).replicaFetchBackoffMs,
    set: (c, v) => (cluster(c).replicaFetchBackoffMs = v),
    doc: 'How long a follower waits after a fetch error.',
  }),
  key({
    name: 'replica.fetch.wait.max.ms',
    value: int(0),
    default: 500,
    dynamic: 'read-only',
    get: (c) => cluster(c).replicaFetchWaitMaxMs,
    set: (c, v) => (cluster(c).replicaFetchWaitMaxMs = v),
    differs: 'at least 0 (Kafka: no validator)',
    doc: "The longest a follower's fetch waits at the leader for data.",
  }),
  key({
    name: 'replica.fetch.min.bytes',
    value: int(1),
    default: 1,
    dynamic: 'read-only',
    get: (c) => cluster(c).replicaFetchMinBytes,
    set: (c, v) => (cluster(c).replicaFetchMinBytes = v),
    differs: 'at least 1 (Kafka: no validator)',
    doc: "The bytes a follower's fetch waits for.",
  }),
  key({
    name: 'replica.fetch.max.bytes',
    value: int(1),
    default: 1024 * 1024,
    dynamic: 'read-only',
    get: (c) => cluster(c).replicaFetchMaxBytes,
    set: (c, v) => (cluster(c).replicaFetchMaxBytes = v),
    differs: 'at least 1 (Kafka: 0)',
    doc: 'The bytes a follower fetches from one partition at a time (at least one batch).',
  }),
  key({
    name: 'replica.fetch.response.max.bytes',
    value: int(1),
    default: 10 * 1024 * 1024,
    dynamic: 'read-only',
    get: (c) => cluster(c).replicaFetchResponseMaxBytes,
    set: (c, v) => (cluster(c).replicaFetchResponseMaxBytes = v),
    differs: 'at least 1 (Kafka: 0)',
    doc: 'The bytes of one follower fetch response (at least one batch).',
  }),
  key({
    name: 'sasl.enabled.mechanisms',
    value: saslMechanismList,
    default: ['GSSAPI'],
    dynamic: 'read-only',
    get: (c) => c.saslEnabledMechanisms,
    set: (c, v) => (c.saslEnabledMechanisms = v),
    differs: 'not dynamic (Kafka: per-broker); GSSAPI (the default) is not served: a SASL listener must name mechanisms ferrolog serves (docs/security.md)',
    doc: "The SASL mechanisms enabled on SASL listeners; listener.name.<listener>.sasl.enabled.mechanisms sets one listener's.",
  }),
  key({
    name: 'sasl.mechanism.inter.broker.protocol',
    value: string,
    default: 'GSSAPI',
    dynamic: 'read-only',
    get: (c) => c.saslMechanismInterBrokerProtocol,
    set: (c, v) => (c.saslMechanismInterBrokerProtocol = v.trim().toUpperCase()),
    differs: 'not dynamic (Kafka: per-broker); GSSAPI (the default) is not served: a SASL inter-broker listener needs PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER',
    doc: "The SASL mechanism brokers authenticate to each other with on a SASL inter-broker listener; one of that listener's sasl.enabled.mechanisms. The credentials are the username and password options of the mechanism's sasl.jaas.config on that listener.",
  }),
  key({
    name: 'sasl.jaas.config',
    value: optional(password),
    default: null,
    dynamic: 'read-only',
    get: (c) => c.saslJaasConfig,
    set: (c, v) => (c.saslJaasConfig = v),
    differs: 'not dynamic (Kafka: per-broker)',
    doc: 'Ignored without a listener and mechanism prefix, as in Kafka: a broker reads listener.name.<listener>.<mechanism>.sasl.jaas.config (e.g. PLAIN\'s users, PlainLoginModule\'s user_<name>="<password>").',
  }),
  key({
    name: 'java.security.auth.login.config',
    value: optional(string),
    default: null,
    dynamic: 'read-only',
    get: (c) => c.saslJaasFile,
    set: (c, v) => (c.saslJaasFile = v),
    ferrologOnly: true,
    doc: "A JAAS login config file, Kafka's kafka_server_jaas.conf (the JVM system property of that name in Kafka): its <listener>.KafkaServer or KafkaServer context configures the mechanisms without a listener.name.<listener>.<mechanism>.sasl.jaas.config.",
  }),
  key({
    name: 'sasl.server.max.receive.size',
    value: int(null),
    default: 524_288,
    dynamic: 'read-only',
    get: (c) => c.saslServerMaxReceiveSize,
    set: (c, v) => (c.saslServerMaxReceiveSize = v),
    doc: 'The largest frame a client may send before SASL authentication completes; a larger one fails the authentication.',
  }),
  key({
    name: 'connections.max.reauth.ms',
    value: long(null),
    default: 0,
    dynamic: 'read-only',
    get: (c) => c.connectionsMaxReauthMs,
    set: (c, v) => (c.connectionsMaxReauthMs = v),
    doc: 'The longest a SASL session lasts before the client must re-authenticate on the connection (KIP-368); its next request after that closes the connection. 0: no limit.',
  }),
  key({
    name: 'connection.failed.authentication.delay.ms',
    value: int(0),
    default: 100,
    dynamic: 'read-only',
    get: (c) => c.failedAuthenticationDelayMs,
    set: (c, v) => (c.failedAuthenticationDelayMs = v),
    doc: 'How long a failed authentication waits before it is answered and the connection closed (slows down password guessing).',
  }),
].sort((a, b) => (a.name < b.name ? -1 : 1))

export const BROKER_CONFIG_KEY: ReadonlyMap<string, BrokerConfigKey<unknown>> = new Map(BROKER_CONFIG_KEYS.map((k) => [k.name, k]))

/** The cleaner's keys' defaults as a CleanerConfig. */
export const DEFAULT_CLEANER_CONFIG: Readonly<CleanerConfig> = Object.freeze({
  enableCleaner: BROKER_CONFIG_KEY.get('log.cleaner.enable')!.default as boolean,
  numThreads: BROKER_CONFIG_KEY.get('log.cleaner.threads')!.default as number,
  dedupeBufferSize: BROKER_CONFIG_KEY.get('log.cleaner.dedupe.buffer.size')!.default as number,
  ioBufferSize: BROKER_CONFIG_KEY.get('log.cleaner.io.buffer.size')!.default as number,
  backOffMs: BROKER_CONFIG_KEY.get('log.cleaner.backoff.ms')!.default as number,
})
