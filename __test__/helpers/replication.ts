/**
 * A replicated cluster of Broker instances in this process, on 127.0.0.1 and ephemeral ports,
 * with this harness playing the cluster metadata's part (no etcd): it records each topic with
 * one topic id in every broker's topic store and hands every broker the same PartitionChange
 * registrations through `replicaManager.applyPartitionChanges`, as the metadata layer does.
 */
import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import { createLogger, silentLogger } from '../../ts/logger.js'
import { newTopicId } from '../../ts/server/topic-store.js'
import type { BrokerEndPoint, PartitionChange, PartitionRegistration } from '../../ts/replica/partition-registration.js'
import type { BackendName } from '../../ts/storage/backends.js'
import type { Log } from '../../ts/storage/log.js'
import { tempDir } from './tmp.js'

export interface ClusterOptions {
  backend?: BackendName
  /** Broker properties for every broker (the replica.* settings are the options below). */
  props?: Record<string, string>
  /** replica.fetch.backoff.ms; the tests use a short one. */
  fetchBackOffMs?: number
  /** replica.fetch.wait.max.ms. */
  fetchWaitMaxMs?: number
}

export class ReplicatedCluster {
  readonly brokers = new Map<number, Broker>()
  readonly dataDirs = new Map<number, string>()
  private readonly ports = new Map<number, number>()
  /** The last registration of each partition, by `topic-partition`. */
  readonly registrations = new Map<string, PartitionChange>()
  readonly topicIds = new Map<string, Buffer>()
  readonly stopped: Array<{ brokerId: number; change: PartitionChange; log: Log | undefined }> = []
  private readonly options: ClusterOptions

  private constructor(options: ClusterOptions) {
    this.options = options
  }

  static async start(ids: readonly number[], options: ClusterOptions = {}): Promise<ReplicatedCluster> {
    const cluster = new ReplicatedCluster(options)
    try {
      for (const id of ids) await cluster.startBroker(id)
    } catch (err) {
      await cluster.stop()
      throw err
    }
    return cluster
  }

  endPoint(id: number): BrokerEndPoint | undefined {
    const port = this.ports.get(id)
    return port === undefined ? undefined : { id, host: '127.0.0.1', port, rack: null }
  }

  broker(id: number): Broker {
    const b = this.brokers.get(id)
    if (!b) throw new Error(`broker ${id} is not running`)
    return b
  }

  /** Starts broker `id` (again, on its data dir and port, when it ran before). */
  async startBroker(id: number): Promise<Broker> {
    const dataDir = this.dataDirs.get(id) ?? tempDir(`ferrolog-repl-${id}-`)
    this.dataDirs.set(id, dataDir)
    const port = this.ports.get(id) ?? 0
    const config = brokerConfigFrom({ listeners: `127.0.0.1:${port}`, 'log.dirs': dataDir, 'node.id': String(id), ...this.options.props })
    const logger = process.env.FERROLOG_TEST_LOGS ? createLogger({ level: 'debug', fields: { nodeId: id } }) : silentLogger
    const broker = await Broker.start(config, {
      backend: this.options.backend ?? 'native',
      logger,
      replication: {
        brokerEndPoint: (brokerId) => this.endPoint(brokerId),
        isBrokerAlive: (brokerId) => this.brokers.has(brokerId),
        fetchBackOffMs: this.options.fetchBackOffMs ?? 100,
        fetchWaitMaxMs: this.options.fetchWaitMaxMs,
        onPartitionStopped: (change, log) => void this.stopped.push({ brokerId: id, change, log }),
      },
    })
    this.brokers.set(id, broker)
    this.ports.set(id, broker.port)
    return broker
  }

  /** Stops broker `id` cleanly (a test removes its clean-shutdown marker to start it as after a kill). */
  async stopBroker(id: number): Promise<void> {
    const b = this.brokers.get(id)
    if (!b) return
    this.brokers.delete(id)
    await b.stop()
  }

  /** Records the topic, with one topic id, in the topic store of every running broker. */
  async createTopic(name: string, partitions = 1, configs: Record<string, string> = {}): Promise<Buffer> {
    const topicId = this.topicIds.get(name) ?? newTopicId()
    this.topicIds.set(name, topicId)
    for (const b of this.brokers.values()) if (!b.topics.get(name)) await b.topicStore!.create({ name, topicId, partitions, configs })
    return topicId
  }

  /** Gives every running broker (or those named) the partition's new registration. */
  async apply(topic: string, partition: number, registration: PartitionRegistration | null, only?: readonly number[]): Promise<void> {
    const topicId = this.topicIds.get(topic)
    if (!topicId) throw new Error(`no topic ${topic}`)
    const change: PartitionChange = { topic, partition, topicId, registration }
    this.registrations.set(`${topic}-${partition}`, change)
    const targets = only ?? [...this.brokers.keys()]
    await Promise.all(targets.map((id) => this.broker(id).replicaManager.applyPartitionChanges([change])))
  }

  /** Hands the last registrations to a broker again (after its restart: the metadata replays). */
  async replay(id: number): Promise<void> {
    await this.broker(id).replicaManager.applyPartitionChanges([...this.registrations.values()])
  }

  async stop(): Promise<void> {
    for (const id of [...this.brokers.keys()]) await this.stopBroker(id).catch(() => undefined)
  }
}

/** Polls `check` every 20 ms until it holds, or throws after `timeoutMs` with `what`. */
export async function waitUntil(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

export function registration(leader: number, replicas: readonly number[], leaderEpoch: number, partitionEpoch = leaderEpoch, isr: readonly number[] = replicas): PartitionRegistration {
  return { leader, replicas, isr, leaderEpoch, partitionEpoch }
}
