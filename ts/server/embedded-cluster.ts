/**
 * A cluster of brokers in this process, for tests: `startCluster({ brokers: 3 })` starts N
 * Brokers in cluster mode, each on its own port and data dir, replicating to each other over real
 * sockets exactly as brokers of a cluster on etcd do; their metadata (registrations, controller,
 * topics, partition registrations, ...) lives in an in-memory store with etcd's semantics
 * (ts/cluster/in-memory-metadata-store.ts) instead of etcd. For tests only: production clusters
 * keep etcd (`cluster.metadata`).
 *
 *   await using cluster = await startCluster({ brokers: 3 })
 *   const kafka = new Kafka({ brokers: cluster.bootstrapServers.split(',') })
 *   await cluster.stopBroker(cluster.leaderOf('orders', 0))  // leadership moves; clients follow
 *   await cluster.startBroker(1)                              // back on its port and data dir
 *   await cluster.killBroker(2)                               // a crash: gone when its lease expires
 *   await cluster.moveLeader('orders', 0, 3)                  // leader epoch bumped; clients follow
 *
 * Broker ids are 1..N (or from `firstBrokerId`). A stopped broker leaves as a broker of a real cluster does (a controlled
 * shutdown: its partitions get other leaders first); started again it keeps its port and its
 * logs. A killed broker crashes instead: its sockets are cut at once and its registration stays
 * until its session times out (`broker.session.timeout.ms` in `config`); started again it
 * recovers its logs as after a crash. `stop()` stops every broker, removes the data dirs and ends the store's timers: nothing
 * is left behind.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { InMemoryMetadataStore } from '../cluster/in-memory-metadata-store.js'
import { CONTROLLER } from '../cluster/keys.js'
import { casPartition, readPartition } from '../cluster/partition-state.js'
import { fromPinoLogger, silentLogger, type PinoLikeLogger } from '../logger.js'
import type { BackendName } from '../storage/backends.js'
import { Broker } from './broker.js'
import { brokerConfigFrom } from './config.js'

export interface StartClusterOptions {
  /** How many brokers (ids 1..N, or from `firstBrokerId`). Default 3. */
  brokers?: number
  /** The first broker's id (`node.id`); the others follow. Default 1; 0 as clusters whose ids start at 0. */
  firstBrokerId?: number
  /** The address every broker listens on and advertises; default 127.0.0.1. */
  host?: string
  /**
   * Broker configs by Kafka's names for every broker (`num.partitions`, `min.insync.replicas`,
   * ...). Defaults here: `group.initial.rebalance.delay.ms` 0, and the internal topics'
   * replication factors no higher than N (Kafka's 3 needs three brokers).
   */
  config?: Record<string, string>
  /** Where the brokers log, in pino's call shape; default silent. */
  logger?: PinoLikeLogger
  /** The storage engine: 'native' (the Rust core, the default) or 'js'. */
  backend?: BackendName
  /** Fault injection on every broker (`broker.inject`, as startBroker's `faultInjection`). */
  faultInjection?: boolean
  /**
   * Broker `id`'s `listeners` (Kafka's syntax, e.g. `PLAINTEXT://localhost:9092,SSL://localhost:9093`),
   * for clients whose tests expect fixed ports or several listeners per broker; the listeners'
   * other configs (`listener.security.protocol.map`, SSL, SASL) go in `config`. Default: one
   * PLAINTEXT listener on `host`, on a free port chosen at the first start and kept after.
   */
  listeners?: (id: number) => string
}

/** Starts an in-process cluster; `await cluster.stop()` (or `await using`) stops it. */
export async function startCluster(options: StartClusterOptions = {}): Promise<EmbeddedCluster> {
  const n = options.brokers ?? 3
  if (!Number.isInteger(n) || n < 1) throw new Error(`brokers must be a positive integer, got ${n}`)
  const first = options.firstBrokerId ?? 1
  if (!Number.isInteger(first) || first < 0) throw new Error(`firstBrokerId must be a non-negative integer, got ${first}`)
  const cluster = new EmbeddedCluster(options, await mkdtemp(join(tmpdir(), 'ferrolog-cluster-')))
  try {
    await Promise.all(Array.from({ length: n }, (_, i) => cluster.startBroker(first + i)))
    await cluster.waitForBrokers(n)
  } catch (err) {
    await cluster.stop().catch(() => undefined)
    throw err
  }
  return cluster
}

export class EmbeddedCluster {
  /** The cluster's metadata (what etcd holds for a cluster on etcd). */
  readonly store = new InMemoryMetadataStore()
  /** Where each broker's data dir is made (`<root>/broker-<id>`); removed by `stop()`. */
  readonly root: string
  private readonly options: StartClusterOptions
  private readonly running = new Map<number, Broker>()
  private readonly ports = new Map<number, number>()
  private readonly starting = new Map<number, Promise<Broker>>()
  private stopped = false

  /** Use `startCluster`. */
  constructor(options: StartClusterOptions, root: string) {
    this.options = options
    this.root = root
  }

  /** The running brokers, by id. */
  get brokers(): Broker[] {
    return [...this.running.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b)
  }

  /** `host:port` of every running broker, comma-separated (a client's bootstrap.servers). */
  get bootstrapServers(): string {
    const host = this.options.host ?? '127.0.0.1'
    return this.brokers.map((b) => `${host}:${b.port}`).join(',')
  }

  /** Broker `id` (running), or an error. */
  broker(id: number): Broker {
    const b = this.running.get(id)
    if (!b) throw new Error(`broker ${id} is not running`)
    return b
  }

  /** The leader of a partition as the cluster's metadata has it now (-1: none), or undefined for an unknown partition. */
  leaderOf(topic: string, partition: number): number | undefined {
    const b = this.brokers[0]
    return b?.metadataCache.partitionRegistration(topic, partition)?.leader
  }

  /**
   * Starts broker `id` (again: on its port and data dir) and resolves once it is registered and
   * serving.
   */
  startBroker(id: number): Promise<Broker> {
    if (this.stopped) return Promise.reject(new Error('the cluster is stopped'))
    if (this.running.has(id)) return Promise.reject(new Error(`broker ${id} is running already`))
    const pending = this.starting.get(id)
    if (pending) return pending
    const start = (async () => {
      const host = this.options.host ?? '127.0.0.1'
      const n = Math.max(1, this.ports.size, this.options.brokers ?? 3)
      const rf = String(Math.min(3, n))
      const props: Record<string, string> = {
        'group.initial.rebalance.delay.ms': '0',
        'offsets.topic.replication.factor': rf,
        'transaction.state.log.replication.factor': rf,
        'transaction.state.log.min.isr': String(Math.min(2, n)),
        ...this.options.config,
        listeners: this.options.listeners?.(id) ?? `${host}:${this.ports.get(id) ?? 0}`,
        'log.dirs': join(this.root, `broker-${id}`),
        'node.id': String(id),
      }
      const broker = await Broker.start(brokerConfigFrom(props), {
        backend: this.options.backend,
        logger: this.options.logger ? fromPinoLogger(this.options.logger) : silentLogger,
        faultInjection: this.options.faultInjection === true,
        metadataStore: this.store,
      })
      this.ports.set(id, broker.port)
      this.running.set(id, broker)
      return broker
    })()
    this.starting.set(id, start)
    return start.finally(() => this.starting.delete(id))
  }

  /**
   * Stops broker `id` cleanly: a controlled shutdown first (its partitions get other leaders
   * from their ISRs), then its port closes and it leaves the cluster.
   */
  async stopBroker(id: number): Promise<void> {
    const b = this.running.get(id)
    if (!b) throw new Error(`broker ${id} is not running`)
    this.running.delete(id)
    await b.stop()
  }

  /**
   * Kills broker `id`, as SIGKILL would (Broker.kill): its listeners, connections and replica
   * fetchers are cut at once, with no controlled shutdown, no checkpoint and no clean-shutdown
   * marker. Its registration stays until its lease expires (broker.session.timeout.ms); then the
   * controller takes it out of the ISRs and elects new leaders from them, as Kafka's controller
   * does for a fenced broker. Its data dir stays: `startBroker(id)` recovers its logs.
   */
  async killBroker(id: number): Promise<void> {
    const b = this.running.get(id)
    if (!b) throw new Error(`broker ${id} is not running`)
    this.running.delete(id)
    await b.kill()
  }

  /**
   * Moves the leadership of a partition to replica `to`, as Kafka does when a reassignment puts
   * `to` first in the replica list and a preferred-leader election follows: `to` must be a live
   * ISR member; the leader epoch (and the partition epoch) go up by one. Resolves once every
   * running broker applied it: the old leader answers NOT_LEADER_OR_FOLLOWER (or
   * FENCED_LEADER_EPOCH to a request of the old epoch), and clients find the new leader through
   * Metadata.
   */
  async moveLeader(topic: string, partition: number, to: number): Promise<void> {
    const any = this.brokers[0]
    if (!any) throw new Error('no broker is running')
    const cache = any.cluster!.cache
    const state = cache.partitionState(topic, partition)
    if (!state) throw new Error(`unknown partition ${topic}-${partition}`)
    let epoch = -1
    for (let attempt = 0; ; attempt++) {
      const current = await readPartition(this.store, state.topicId, partition)
      if (!current) throw new Error(`unknown partition ${topic}-${partition}`)
      const reg = current.registration
      if (!reg.replicas.includes(to)) throw new Error(`broker ${to} is not a replica of ${topic}-${partition} (replicas ${reg.replicas.join(',')})`)
      if (!reg.isr.includes(to)) throw new Error(`broker ${to} is not in the ISR of ${topic}-${partition} (ISR ${reg.isr.join(',')})`)
      if (!this.running.has(to) || !cache.isAlive(to)) throw new Error(`broker ${to} is not alive`)
      if (reg.leader === to) {
        epoch = reg.leaderEpoch
        break
      }
      const controller = await this.store.get(CONTROLLER)
      if (!controller) throw new Error('the cluster has no controller')
      const next = {
        replicas: [to, ...reg.replicas.filter((r) => r !== to)],
        isr: reg.isr,
        leader: to,
        leaderEpoch: reg.leaderEpoch + 1,
        partitionEpoch: reg.partitionEpoch + 1,
      }
      // Written as the controller writes (guarded by its epoch), so it never loses a concurrent
      // AlterPartition or election: on a conflict it reads again.
      const written = await casPartition(this.store, state.topicId, partition, current.modRevision, next, [{ key: CONTROLLER, target: 'Create', value: controller.createRevision }])
      if (written !== null) {
        epoch = next.leaderEpoch
        break
      }
      if (attempt >= 20) throw new Error(`${topic}-${partition} kept changing under 20 attempts`)
    }
    const tp = { topic, partition }
    await this.waitFor(
      `every broker applied the leader ${to} of ${topic}-${partition} (epoch ${epoch})`,
      () =>
        this.brokers.every((b) => {
          const p = b.replicaManager.getPartition(tp)
          return p === undefined || p.leaderEpoch >= epoch
        }) && this.running.get(to)!.replicaManager.getPartition(tp)?.isLeader === true,
    )
  }

  private async waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)
      await new Promise((r) => setTimeout(r, 5))
    }
  }

  /** Resolves once every running broker sees `count` live brokers (bounded: 10 s). */
  async waitForBrokers(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!this.brokers.every((b) => b.metadataCache.aliveBrokers().length === count)) {
      if (Date.now() > deadline) throw new Error(`the brokers did not all see ${count} live brokers within ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 5))
    }
  }

  /** Stops every broker, removes their data dirs and ends the metadata store. */
  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    await Promise.allSettled([...this.starting.values()])
    const errors: unknown[] = []
    for (const id of [...this.running.keys()].sort((a, b) => b - a)) {
      await this.stopBroker(id).catch((err) => errors.push(err))
    }
    this.store.close()
    await rm(this.root, { recursive: true, force: true })
    if (errors.length > 0) throw new AggregateError(errors, 'some brokers did not stop cleanly')
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop()
  }
}
