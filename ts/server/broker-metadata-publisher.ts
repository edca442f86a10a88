/**
 * Cluster mode's link from the metadata to the broker (Kafka's `BrokerMetadataPublisher`): what
 * the etcd metadata cache (ts/cluster/metadata-cache.ts) reports, applied to this broker's
 * replicas and logs, one change after another in revision order:
 *
 * - partition changes (this broker a replica before or after) go to
 *   `ReplicaManager.applyPartitionChanges`, which makes it leader or follower of each (Kafka's
 *   makeLeaders / makeFollowers) or stops it holding the partition; a stopped partition's log is
 *   deleted (its topic was deleted, or the partition moved off this broker: Kafka's
 *   `stopReplicas(deletePartition = true)`), renamed `-delete` at once as DeleteTopics does;
 * - a topic's config change is applied to its open logs at once (`LogManager.reconfigureTopic`).
 *
 * Start order (`start`, called once the broker registered): the cache must have applied the
 * broker's own registration (its epoch, an etcd revision) before anything is applied, so a broker
 * that restarts never acts on what the metadata said before the controller saw it come back.
 * Then every partition this broker is a replica of is applied, and changes after that as they come.
 *
 * `ClusterMetadataView` is the handlers' MetadataCache (metadata-cache.ts) over the etcd cache:
 * the live brokers, the controller and each partition's registration.
 */
import type { ClusterMetadata, MetadataCache as ClusterCache } from '../cluster/index.js'
import type { Logger } from '../logger.js'
import type { BrokerEndPoint, PartitionChange, PartitionRegistration } from '../replica/partition-registration.js'
import type { ReplicaManager } from '../replica/replica-manager.js'
import type { Log } from '../storage/log.js'
import type { LogManager } from '../storage/log-manager.js'
import type { MetadataCache } from './metadata-cache.js'

export class ClusterMetadataView implements MetadataCache {
  private readonly cache: ClusterCache

  constructor(cache: ClusterCache) {
    this.cache = cache
  }

  aliveBrokers(): BrokerEndPoint[] {
    return this.cache.liveBrokers()
  }

  controllerId(): number {
    return this.cache.controllerId()
  }

  partitionRegistration(topic: string, partition: number): PartitionRegistration | undefined {
    return this.cache.partition(topic, partition)
  }
}

/**
 * Whether a broker may be in an ISR (Kafka's `isReplicaIsrEligible`): registered (its lease
 * alive) and not shutting down.
 */
export function isBrokerEligible(cache: ClusterCache, brokerId: number): boolean {
  return cache.isAlive(brokerId) && !cache.shutdownRequests().some((r) => r.brokerId === brokerId)
}

export interface BrokerMetadataPublisherOptions {
  cluster: ClusterMetadata
  replicaManager: ReplicaManager
  logManager: LogManager
  logger: Logger
  /** After each batch of partition changes is applied (the broker's group coordinator follows `__consumer_offsets`). */
  onPartitionsApplied?: () => void | Promise<void>
}

export class BrokerMetadataPublisher {
  private readonly cluster: ClusterMetadata
  private readonly replicaManager: ReplicaManager
  private readonly logManager: LogManager
  private readonly logger: Logger
  private readonly onPartitionsApplied: (() => void | Promise<void>) | undefined
  /** Changes, one batch at a time: each waits for the one before. */
  private queue: Promise<unknown> = Promise.resolve()
  private started = false
  private closed = false
  /** The registration's revision is applied (see `leaderWritesAllowed`). */
  private caughtUp = false
  private readonly listeners: Array<() => void> = []

  constructor(options: BrokerMetadataPublisherOptions) {
    this.cluster = options.cluster
    this.replicaManager = options.replicaManager
    this.logManager = options.logManager
    this.logger = options.logger
    this.onPartitionsApplied = options.onPartitionsApplied
  }

  /**
   * Applies what the metadata holds for this broker now and follows it from then on; resolves
   * once the first batch is applied. Call once the broker is registered (`brokerEpoch`: the
   * revision of that registration).
   */
  async start(brokerEpoch: bigint): Promise<void> {
    if (this.started) throw new Error('the metadata publisher is started already')
    this.started = true
    const cache = this.cluster.cache
    await cache.waitForRevision(brokerEpoch)
    // The snapshot and the subscription in one step: no change falls between them.
    const initial = cache.partitionsFor(this.cluster.brokerId)
    const changed = (changes: PartitionChange[]) => void this.enqueue(changes)
    const topicChanged = (topic: { name: string }) => this.reconfigure(topic.name)
    cache.on('partitionChanges', changed)
    cache.on('topicChanged', topicChanged)
    this.listeners.push(
      () => cache.off('partitionChanges', changed),
      () => cache.off('topicChanged', topicChanged),
    )
    const registration = this.cluster.registration
    const fenced = (reason: Error) => {
      this.caughtUp = false
      this.logger.warn("fenced: this broker's registration lease may have expired; it refuses leader writes until it registers again", { reason: reason.message })
    }
    const registered = (epoch: bigint) => {
      this.logger.info('registered in the cluster again', { brokerEpoch: String(epoch) })
      void this.catchUp(epoch)
    }
    registration.on('fenced', fenced)
    registration.on('registered', registered)
    this.listeners.push(
      () => registration.off('fenced', fenced),
      () => registration.off('registered', registered),
    )
    await this.enqueue(initial)
    this.caughtUp = true
  }

  /**
   * Whether this broker may write as a leader (ReplicationOptions.leaderWritesAllowed): its
   * registration's lease is certainly alive, and what the metadata said up to that registration
   * is applied. A broker that was fenced (a pause past its lease) has had its leadership moved
   * meanwhile, and learns it from the watch, which may deliver after the registration's answer:
   * until it has, it could still hold a partition it no longer leads.
   */
  get leaderWritesAllowed(): boolean {
    return this.caughtUp && this.cluster.registration.leaseValid
  }

  /** After a new registration: applied up to its revision, then leader writes again. */
  private async catchUp(epoch: bigint): Promise<void> {
    try {
      await this.cluster.cache.waitForRevision(epoch, 10_000)
      await this.queue
      if (this.cluster.registration.brokerEpoch === epoch) this.caughtUp = true
    } catch (err) {
      if (this.closed || this.cluster.registration.brokerEpoch !== epoch) return
      this.logger.warn("the metadata has not caught up with this broker's registration yet; leader writes stay refused", { brokerEpoch: String(epoch), error: (err as Error).message })
      void this.catchUp(epoch)
    }
  }

  /** Resolves once the changes reported so far are applied. */
  async settled(): Promise<void> {
    await this.queue
  }

  /** Stops following the metadata; resolves when the batch under way is applied. */
  async close(): Promise<void> {
    this.closed = true
    for (const off of this.listeners.splice(0)) off()
    await this.queue
  }

  /**
   * What a stopped partition's log becomes (ReplicationOptions.onPartitionStopped): deleted, as
   * its topic was deleted or it moved off this broker.
   */
  async partitionStopped(change: PartitionChange, log: Log | undefined): Promise<void> {
    if (!log || log.isClosed) return
    const topic = this.cluster.cache.topicById(change.topicId)
    const why = topic ? 'moved off this broker' : 'topic deleted'
    try {
      await this.logManager.deleteLog(change.topic, change.partition)
      this.logger.info('deleted a replica this broker no longer holds', { partition: `${change.topic}-${change.partition}`, why })
    } catch (err) {
      // Left as it is: a directory of a topic the metadata no longer has is set aside (-stray) at the next start.
      this.logger.error('cannot delete a replica this broker no longer holds', { partition: `${change.topic}-${change.partition}`, why, error: String(err) })
    }
  }

  private enqueue(changes: readonly PartitionChange[]): Promise<void> {
    const run = this.queue.then(async () => {
      if (this.closed || changes.length === 0) return
      try {
        await this.replicaManager.applyPartitionChanges(changes)
      } catch (err) {
        // Each failure is logged by the replica manager; the others were applied.
        this.logger.error('partition changes failed', { error: (err as Error).message })
      }
      await this.onPartitionsApplied?.()
    })
    this.queue = run.catch(() => undefined)
    return run
  }

  private reconfigure(topic: string): void {
    try {
      this.logManager.reconfigureTopic(topic)
    } catch (err) {
      this.logger.error("cannot apply a topic's new configs to its logs", { topic, error: (err as Error).message })
    }
  }
}
