/**
 * The topics of a broker in cluster mode: what the request handlers read (`ClusterTopicCatalog`,
 * the etcd metadata cache's topics as a TopicCatalog) and the topic operations they ask for
 * (`ClusterTopicOperations`: CreateTopics, DeleteTopics, CreatePartitions and the config APIs as
 * etcd transactions through ts/cluster's TopicAdmin, from any broker). A standalone broker keeps
 * its topics in its own file instead (topic-store.ts) and makes its logs itself; here the logs
 * follow the metadata: every broker makes, deletes and reconfigures its replicas' logs as the
 * watch reports the change (broker-metadata-publisher.ts).
 *
 * An operation resolves once this broker's cache has applied its write, so a Metadata request
 * right after a CreateTopics (on the same connection, as clients do) sees the topic.
 */
import { OFFSETS_TOPIC } from '../group/offsets-topic.js'
import { isInternalTopic } from './internal-topics.js'
import type { MetadataCache as ClusterCache, TopicAdmin, TopicInfo as ClusterTopicInfo } from '../cluster/index.js'
import { ClusterMetadataError } from '../cluster/errors.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { ConfigError, EXCESSIVE_PARTITIONS, MAX_PARTITIONS_PER_REQUEST, topicLogConfig } from './config.js'
import type { LogConfig } from '../storage/types.js'
import type { TopicPlacement } from './handlers/broker-context.js'
import { TopicError } from './topic-error.js'
import type { TopicCatalog, TopicInfo } from './topic-store.js'

/**
 * The cluster's topics as TopicInfo, `__consumer_offsets` aside (as in a standalone broker's
 * store: the broker lists it as its internal topic, `internalTopic`).
 */
export class ClusterTopicCatalog implements TopicCatalog {
  private readonly cache: ClusterCache
  /** One TopicInfo per version of a topic's record (the cache replaces the object on a change). */
  private readonly views = new WeakMap<ClusterTopicInfo, TopicInfo>()

  constructor(cache: ClusterCache) {
    this.cache = cache
  }

  get(name: string): TopicInfo | undefined {
    return isInternalTopic(name) ? undefined : this.view(this.cache.topic(name))
  }

  getById(topicId: Buffer): TopicInfo | undefined {
    const t = this.view(this.cache.topicById(topicId))
    return t && isInternalTopic(t.name) ? undefined : t
  }

  all(): TopicInfo[] {
    return this.cache
      .topics()
      .filter((t) => !isInternalTopic(t.name))
      .map((t) => this.view(t)!)
  }

  /** An internal topic (`__consumer_offsets` by default) once created in the cluster. */
  internalTopic(name: string = OFFSETS_TOPIC): TopicInfo | undefined {
    return this.view(this.cache.topic(name))
  }

  /** Any topic of the cluster, `__consumer_offsets` included. */
  anyTopic(name: string): TopicInfo | undefined {
    return this.view(this.cache.topic(name))
  }

  private view(t: ClusterTopicInfo | undefined): TopicInfo | undefined {
    if (!t) return undefined
    let v = this.views.get(t)
    if (!v) {
      v = { name: t.name, topicId: t.topicId, partitions: t.assignment.length, configs: { ...t.configs } }
      this.views.set(t, v)
    }
    return v
  }
}

/** The topic operations of a broker in cluster mode; each throws TopicError with Kafka's code. */
export class ClusterTopicOperations {
  private readonly admin: TopicAdmin
  private readonly cache: ClusterCache
  private readonly catalog: ClusterTopicCatalog
  /** This broker's log defaults (log.*): topic configs are checked with them, as a standalone broker checks them. */
  private readonly logDefaults: LogConfig

  constructor(admin: TopicAdmin, cache: ClusterCache, catalog: ClusterTopicCatalog, logDefaults: LogConfig) {
    this.admin = admin
    this.cache = cache
    this.catalog = catalog
    this.logDefaults = logDefaults
  }

  async createTopic(name: string, partitions: number, configs: Record<string, string>, validateOnly: boolean, placement: TopicPlacement): Promise<TopicInfo | null> {
    const assignment = placement.assignments && placement.assignments.length > 0 ? placement.assignments.map((r) => [...r]) : undefined
    const count = assignment ? assignment.length : partitions
    if (count > MAX_PARTITIONS_PER_REQUEST) throw new TopicError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS)
    validateConfigs(configs, this.logDefaults)
    const created = await this.call(() =>
      this.admin.createTopic({ name, numPartitions: assignment ? undefined : partitions, replicationFactor: placement.replicationFactor, assignment, configs, validateOnly }),
    )
    if (validateOnly) return null
    await this.applied(created.revision)
    return this.catalog.anyTopic(name) ?? null
  }

  async deleteTopic(name: string): Promise<void> {
    if (isInternalTopic(name)) throw new TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, `topic ${name} is a Kafka internal topic and is not allowed to be deleted`)
    await this.applied(await this.call(() => this.admin.deleteTopic(name)))
  }

  async addPartitions(name: string, count: number, validateOnly: boolean): Promise<void> {
    const topic = this.cache.topic(name)
    if (!topic) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${name}`)
    if (count - topic.assignment.length > MAX_PARTITIONS_PER_REQUEST) throw new TopicError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS)
    if (validateOnly) {
      if (count <= topic.assignment.length) {
        throw new TopicError(ErrorCode.INVALID_PARTITIONS, `topic ${name} has ${topic.assignment.length} partitions; the new count must be larger, not ${count}`)
      }
      return
    }
    await this.applied(await this.call(() => this.admin.createPartitions(name, count)))
  }

  async alterTopicConfigs(name: string, configs: Record<string, string>, validateOnly: boolean): Promise<void> {
    validateConfigs(configs, this.logDefaults)
    if (!this.cache.topic(name)) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${name}`)
    if (validateOnly) return
    await this.applied(await this.call(() => this.admin.alterTopicConfigs(name, configs, { replace: true })))
  }

  /**
   * Creates `__consumer_offsets` with `partitions` partitions (offsets.topic.num.partitions) of
   * `replicationFactor` replicas each, as Kafka creates it on the first FindCoordinator; fewer
   * live brokers than that is COORDINATOR_NOT_AVAILABLE (retriable: the group waits for the
   * brokers, as with Kafka's offsets.topic.replication.factor). Created by another broker
   * meanwhile: nothing to do, and its count stays (Kafka never changes it).
   */
  async createOffsetsTopic(partitions: number, replicationFactor: number, configs: Record<string, string> = {}): Promise<void> {
    return this.createInternalTopic(OFFSETS_TOPIC, partitions, 'offsets.topic.replication.factor', replicationFactor, configs)
  }

  /**
   * Creates an internal topic (`__consumer_offsets`, `__transaction_state`) of `partitions`
   * partitions with `replicationFactor` replicas (the `setting` named in the error) and `configs`
   * (its log's come from each broker's own settings: ./internal-topics.ts); see createOffsetsTopic.
   */
  async createInternalTopic(name: string, partitions: number, setting: string, replicationFactor: number, configs: Record<string, string> = {}): Promise<void> {
    const live = this.cache.liveBrokers().length
    if (live < replicationFactor) {
      throw new TopicError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `${name} needs ${setting} (${replicationFactor}) live brokers, and ${live} live`)
    }
    try {
      await this.createTopic(name, partitions, configs, false, { replicationFactor })
    } catch (err) {
      // Created by another broker meanwhile: this one's cache has it shortly.
      if (!(err instanceof TopicError) || err.errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) throw err
    }
  }

  /** Runs a TopicAdmin call; its ClusterMetadataError as a TopicError, etcd away as REQUEST_TIMED_OUT. */
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (err) {
      if (err instanceof ClusterMetadataError) throw new TopicError(err.errorCode, err.message)
      throw new TopicError(ErrorCode.REQUEST_TIMED_OUT, `the cluster metadata (etcd) did not answer: ${(err as Error).message}`)
    }
  }

  /** Waits until this broker's cache applied the write (the etcd revision). */
  private async applied(revision: bigint): Promise<void> {
    try {
      await this.cache.waitForRevision(revision)
    } catch (err) {
      throw new TopicError(ErrorCode.REQUEST_TIMED_OUT, (err as Error).message)
    }
  }
}

/** Kafka's `LogConfig.validate`: each value, and the values checked together against `defaults` for those not set. */
function validateConfigs(configs: Record<string, string>, defaults: LogConfig): void {
  try {
    topicLogConfig(configs, defaults)
  } catch (err) {
    if (err instanceof ConfigError) throw new TopicError(ErrorCode.INVALID_CONFIG, err.message)
    throw err
  }
}
