/**
 * A broker's whole cluster-metadata layer, in one object: its metadata store (etcd, or the one an
 * in-process cluster for tests shares), its registration, its metadata cache, its controller
 * candidate, topic admin, AlterPartition and producer id blocks. `ClusterMetadata.start`
 * connects, loads the cache, registers the broker and joins the controller election; `close`
 * leaves (revoking the lease: the broker vanishes at once).
 */
import { BrokerRegistration } from './broker-registration.js'
import { Controller } from './controller.js'
import type { EtcdSecurity } from './etcd-client.js'
import { EtcdAlterPartitionManager } from './alter-partition-manager.js'
import { MetadataCache } from './metadata-cache.js'
import type { MetadataStore } from './metadata-store.js'
import { ProducerIdManager } from './producer-id-manager.js'
import { TopicAdmin } from './topic-admin.js'
import { brokerConfigsKey, encode, type BrokerConfigsRecord } from './keys.js'

export interface ClusterMetadataOptions {
  /** `cluster.metadata`: `etcd://HOST:PORT[,HOST:PORT...]`; the broker's own etcd connection. */
  cluster?: string | string[]
  /**
   * Instead of `cluster`: a store shared with others (an in-process cluster's, for tests), which
   * `close` leaves open.
   */
  store?: MetadataStore
  /** Keys live under `/ferrolog/<clusterId>/`. Default "ferrolog". */
  clusterId?: string
  /** `node.id`. */
  brokerId: number
  /** The advertised listener. */
  host: string
  port: number
  /** `broker.rack`. */
  rack?: string | null
  /** `broker.session.timeout.ms`. Default 9000. */
  sessionTimeoutMs?: number
  /** See BrokerRegistrationOptions.registrationTimeoutMs. Default 0. */
  registrationTimeoutMs?: number
  /** Deadline of each etcd call. Default 5000 ms. */
  requestTimeoutMs?: number
  /** etcd's TLS and user/password (cluster.metadata.ssl.*, cluster.metadata.username/password). */
  etcdSecurity?: EtcdSecurity
  /** `num.partitions`, `default.replication.factor` for CreateTopics with -1. Default 1, 1. */
  defaultPartitions?: number
  defaultReplicationFactor?: number
}

export class ClusterMetadata {
  readonly store: MetadataStore
  readonly registration: BrokerRegistration
  readonly cache: MetadataCache
  readonly controller: Controller
  readonly admin: TopicAdmin
  readonly alterPartitionManager: EtcdAlterPartitionManager
  readonly producerIds: ProducerIdManager

  /** The store is this broker's own connection (closed with it). */
  private readonly ownsStore: boolean

  private constructor(options: ClusterMetadataOptions, store: MetadataStore, ownsStore: boolean) {
    this.store = store
    this.ownsStore = ownsStore
    this.registration = new BrokerRegistration({
      store,
      brokerId: options.brokerId,
      host: options.host,
      port: options.port,
      rack: options.rack,
      sessionTimeoutMs: options.sessionTimeoutMs,
      registrationTimeoutMs: options.registrationTimeoutMs,
    })
    this.cache = new MetadataCache({ store, brokerId: options.brokerId })
    this.controller = new Controller({ store, registration: this.registration, cache: this.cache })
    this.admin = new TopicAdmin({ store, defaultPartitions: options.defaultPartitions, defaultReplicationFactor: options.defaultReplicationFactor })
    this.alterPartitionManager = new EtcdAlterPartitionManager({ store, registration: this.registration })
    this.producerIds = new ProducerIdManager({ store, brokerId: options.brokerId })
  }

  /**
   * Connects, loads the metadata, registers the broker and joins the controller election. Listeners
   * wanted for the initial load's events go on `configure(cm)`, called before anything is loaded.
   * Rejects (having closed everything) with DuplicateBrokerRegistrationError or etcd's error.
   */
  static async start(options: ClusterMetadataOptions, configure?: (cm: ClusterMetadata) => void): Promise<ClusterMetadata> {
    const cm = await ClusterMetadata.connect(options, configure)
    try {
      await cm.join()
      return cm
    } catch (e) {
      await cm.close()
      throw e
    }
  }

  /**
   * The first half of `start`, for a broker's start (Kafka's order: the metadata first, then the
   * logs, then the listener, then the registration): connects and loads the metadata cache, but
   * neither registers nor joins the election. `join` does, once the broker listens (its port
   * then known: `registration.setEndPoint`).
   */
  static async connect(options: ClusterMetadataOptions, configure?: (cm: ClusterMetadata) => void): Promise<ClusterMetadata> {
    let cm: ClusterMetadata
    if (options.store) {
      cm = new ClusterMetadata(options, options.store, false)
    } else {
      if (options.cluster === undefined) throw new Error('cluster metadata needs cluster.metadata (etcd) or a store')
      // Loaded only here: an in-process cluster never loads etcd's client.
      const { EtcdMetadataStore } = await import('./etcd-metadata-store.js')
      const store = EtcdMetadataStore.connect({ cluster: options.cluster, clusterId: options.clusterId, requestTimeoutMs: options.requestTimeoutMs, security: options.etcdSecurity })
      cm = new ClusterMetadata(options, store, true)
    }
    try {
      configure?.(cm)
      await cm.cache.start()
      return cm
    } catch (e) {
      await cm.close()
      throw e
    }
  }

  /** Registers the broker and joins the controller election; the broker epoch. */
  async join(): Promise<bigint> {
    const epoch = await this.registration.register()
    this.controller.start()
    return epoch
  }

  /**
   * Writes one layer of dynamic broker configs (KIP-226): the cluster-wide defaults (null) or
   * broker `id`'s own; every broker's cache sees it through its watch. Resolves once this
   * broker's cache has applied the write.
   */
  async writeBrokerConfigs(id: number | null, configs: BrokerConfigsRecord): Promise<void> {
    const key = brokerConfigsKey(id)
    const revision = Object.keys(configs).length === 0 ? await this.store.delete(key) : await this.store.put(key, encode(configs))
    await this.cache.waitForRevision(revision, 10_000)
  }

  get brokerId(): number {
    return this.registration.brokerId
  }

  /**
   * Controlled shutdown: leadership moves away; resolves when the controller is done and this
   * broker's cache has applied its moves (or rejects after `timeoutMs`).
   */
  async controlledShutdown(timeoutMs = 30_000): Promise<void> {
    const started = Date.now()
    const revision = await this.registration.controlledShutdown(timeoutMs)
    await this.cache.waitForRevision(revision, Math.max(1, timeoutMs - (Date.now() - started)))
  }

  /** Leaves the cluster: the registration (and controllership) end at once. */
  async close(): Promise<void> {
    this.controller.close()
    await this.cache.close()
    await this.registration.close()
    if (this.ownsStore) this.store.close()
  }

  /** Stops without revoking the lease (tests: the broker vanishes only when the lease expires, as after a crash). */
  async abandon(): Promise<void> {
    this.controller.close()
    await this.cache.close()
    this.registration.abandon()
    if (this.ownsStore) this.store.close()
  }
}
