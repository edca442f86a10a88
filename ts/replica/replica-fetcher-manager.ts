/**
 * Kafka's `ReplicaFetcherManager` (`AbstractFetcherManager`): the follower fetchers of this
 * broker, one per (source broker, fetcher id). A partition's fetcher id is Kafka's
 * `abs(31 * topic.hashCode + partition) % num.replica.fetchers` (Java's String.hashCode), so the
 * partitions led by one broker spread over num.replica.fetchers fetchers (default 1), each with
 * its own connection and fetch session.
 *
 * - `addFetcherForPartitions`: each partition goes to the fetcher of its leader and fetcher id,
 *   made and started on first use; a fetcher whose source broker moved (another host or port)
 *   is shut down and made again with its partitions. The caller removes a partition from its
 *   old fetcher first (as Kafka's `makeFollowers` does).
 * - `removeFetcherForPartitions`: out of whichever fetcher holds them; resolves once no
 *   truncation or append of theirs is under way.
 * - `shutdownIdleFetcherThreads`: fetchers left with no partitions stop.
 * - `shutdown`: every fetcher stops.
 *
 * Partitions a fetcher gave up on (fenced, a storage error) are kept in `failedPartitions`
 * (Kafka's `FailedPartitions`) until added again.
 */
import type { ClientSecurity } from '../client/client-security.js'
import type { Logger } from '../logger.js'
import { tpKey, type InitialFetchState, type PartitionFetchState } from './abstract-fetcher-thread.js'
import type { TopicPartition } from './fetch-params.js'
import type { BrokerEndPoint } from './partition-registration.js'
import {
  DEFAULT_REPLICA_FETCH_MAX_BYTES,
  DEFAULT_REPLICA_FETCH_MIN_BYTES,
  DEFAULT_REPLICA_FETCH_RESPONSE_MAX_BYTES,
  DEFAULT_REPLICA_FETCH_WAIT_MAX_MS,
  ReplicaFetcherThread,
  type FollowerPartitions,
  type ReplicaFetcherConfig,
} from './replica-fetcher-thread.js'
import { DEFAULT_REPLICA_FETCH_BACKOFF_MS } from './abstract-fetcher-thread.js'

/** num.replica.fetchers (Kafka's default 1). */
export const DEFAULT_NUM_REPLICA_FETCHERS = 1

export interface ReplicaFetcherManagerOptions extends ReplicaFetcherConfig {
  brokerId: number
  /** This broker's epoch in the cluster (KIP-903), sent in ReplicaState; -1 when unknown. */
  brokerEpoch?: bigint
  /** num.replica.fetchers (1). */
  numReplicaFetchers?: number
  partitions: FollowerPartitions
  logger: Logger
  /** The inter-broker listener's security, asked at each new connection (default PLAINTEXT). */
  security?: ClientSecurity | (() => ClientSecurity)
}

/** Java's String.hashCode. */
function javaStringHash(s: string): number {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0
  return h
}

export class ReplicaFetcherManager {
  readonly numFetchers: number
  private readonly options: ReplicaFetcherManagerOptions
  private readonly config: Required<ReplicaFetcherConfig>
  /** By `${sourceBrokerId}-${fetcherId}` (Kafka's `BrokerIdAndFetcherId`). */
  private readonly fetchers = new Map<string, ReplicaFetcherThread>()
  /** Partitions a fetcher gave up on, by tpKey, until added again. */
  readonly failedPartitions = new Map<string, TopicPartition>()
  private closed = false

  constructor(options: ReplicaFetcherManagerOptions) {
    this.options = options
    this.numFetchers = Math.max(1, options.numReplicaFetchers ?? DEFAULT_NUM_REPLICA_FETCHERS)
    this.config = {
      fetchWaitMaxMs: options.fetchWaitMaxMs ?? DEFAULT_REPLICA_FETCH_WAIT_MAX_MS,
      fetchMinBytes: options.fetchMinBytes ?? DEFAULT_REPLICA_FETCH_MIN_BYTES,
      fetchMaxBytes: options.fetchMaxBytes ?? DEFAULT_REPLICA_FETCH_MAX_BYTES,
      fetchResponseMaxBytes: options.fetchResponseMaxBytes ?? DEFAULT_REPLICA_FETCH_RESPONSE_MAX_BYTES,
      fetchBackOffMs: options.fetchBackOffMs ?? DEFAULT_REPLICA_FETCH_BACKOFF_MS,
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    }
  }

  /** Kafka's `getFetcherId`: abs(31 * topic.hashCode + partition) % num.replica.fetchers. */
  fetcherId(tp: TopicPartition): number {
    return ((Math.imul(31, javaStringHash(tp.topic)) + tp.partition) & 0x7fffffff) % this.numFetchers
  }

  /** Adds partitions to the fetchers of their leaders (see the module comment). */
  addFetcherForPartitions(partitions: ReadonlyArray<{ tp: TopicPartition; state: InitialFetchState }>): Promise<void> {
    return this.addAll(partitions)
  }

  private async addAll(partitions: ReadonlyArray<{ tp: TopicPartition; state: InitialFetchState }>): Promise<void> {
    if (this.closed) throw new Error('the replica fetcher manager is shut down')
    const groups = new Map<string, { leader: BrokerEndPoint; fetcherId: number; items: Array<{ tp: TopicPartition; state: InitialFetchState }> }>()
    for (const item of partitions) {
      const fetcherId = this.fetcherId(item.tp)
      const key = `${item.state.leader.id}-${fetcherId}`
      let g = groups.get(key)
      if (!g) groups.set(key, (g = { leader: item.state.leader, fetcherId, items: [] }))
      g.items.push(item)
    }
    for (const [key, g] of groups) {
      let fetcher = this.fetchers.get(key)
      if (fetcher && (fetcher.sourceBroker.host !== g.leader.host || fetcher.sourceBroker.port !== g.leader.port)) {
        // The broker moved: a new fetcher for its new address takes over the old one's partitions.
        const moved = await this.stopFetcher(key, fetcher)
        fetcher = this.newFetcher(key, g.leader, g.fetcherId)
        fetcher.addPartitions(moved.map(({ tp, state }) => ({ tp, state: { topicId: state.topicId, leader: g.leader, currentLeaderEpoch: state.currentLeaderEpoch, initOffset: state.fetchOffset } })))
      }
      fetcher ??= this.newFetcher(key, g.leader, g.fetcherId)
      for (const { tp } of g.items) this.failedPartitions.delete(tpKey(tp))
      fetcher.addPartitions(g.items)
      this.options.logger.info('added fetcher partitions', {
        fetcher: fetcher.name,
        partitions: g.items.map(({ tp, state }) => `${tpKey(tp)}@${state.initOffset} epoch ${state.currentLeaderEpoch}`).join(', '),
      })
    }
  }

  private newFetcher(key: string, leader: BrokerEndPoint, fetcherId: number): ReplicaFetcherThread {
    const fetcher = new ReplicaFetcherThread({
      fetcherId,
      brokerId: this.options.brokerId,
      brokerEpoch: this.options.brokerEpoch,
      sourceBroker: leader,
      partitions: this.options.partitions,
      config: this.config,
      logger: this.options.logger,
      onPartitionFailed: (tp) => this.failedPartitions.set(tpKey(tp), tp),
      security: this.options.security,
    })
    this.fetchers.set(key, fetcher)
    fetcher.start()
    return fetcher
  }

  private async stopFetcher(key: string, fetcher: ReplicaFetcherThread): Promise<Array<{ tp: TopicPartition; state: PartitionFetchState }>> {
    const tps = fetcher.partitions()
    const states = await fetcher.removePartitions(tps)
    this.fetchers.delete(key)
    await fetcher.shutdown()
    return tps.flatMap((tp) => {
      const state = states.get(tpKey(tp))
      return state ? [{ tp, state }] : []
    })
  }

  /** Takes partitions out of their fetchers; resolves when none of their processing is under way. */
  async removeFetcherForPartitions(tps: readonly TopicPartition[]): Promise<Map<string, PartitionFetchState>> {
    const removed = new Map<string, PartitionFetchState>()
    for (const tp of tps) this.failedPartitions.delete(tpKey(tp))
    // Only the fetchers holding one of them: waiting for every fetcher's processing under way
    // would make a batch of new partitions (none fetched yet) wait once per partition.
    const holding = [...this.fetchers.values()].filter((f) => tps.some((tp) => f.fetchState(tp) !== undefined))
    await Promise.all(
      holding.map(async (f) => {
        for (const [k, s] of await f.removePartitions(tps)) removed.set(k, s)
      }),
    )
    if (removed.size > 0) this.options.logger.info('removed fetcher partitions', { partitions: [...removed.keys()].join(', ') })
    return removed
  }

  /** Kafka's `shutdownIdleFetcherThreads`: fetchers with no partitions left stop. */
  async shutdownIdleFetcherThreads(): Promise<void> {
    const idle = [...this.fetchers].filter(([, f]) => f.partitionCount === 0)
    for (const [key] of idle) this.fetchers.delete(key)
    await Promise.all(idle.map(([, f]) => f.shutdown()))
  }

  /** The fetcher holding a partition, if any. */
  fetcherFor(tp: TopicPartition): ReplicaFetcherThread | undefined {
    for (const f of this.fetchers.values()) if (f.fetchState(tp)) return f
    return undefined
  }

  /** The partition's fetch state in its fetcher, if any. */
  fetchState(tp: TopicPartition): PartitionFetchState | undefined {
    return this.fetcherFor(tp)?.fetchState(tp)
  }

  get fetcherCount(): number {
    return this.fetchers.size
  }

  allFetchers(): ReplicaFetcherThread[] {
    return [...this.fetchers.values()]
  }

  /** Kafka's `closeAllFetchers`: every fetcher stops; no more can be added. */
  async shutdown(): Promise<void> {
    this.closed = true
    const all = [...this.fetchers.values()]
    this.fetchers.clear()
    await Promise.all(all.map((f) => f.shutdown()))
  }
}
