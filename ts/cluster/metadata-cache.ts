/**
 * A broker's copy of the cluster metadata (Kafka's `KRaftMetadataCache`, fed here by an etcd watch
 * instead of the metadata log): it loads every key under the cluster prefix (layout in
 * ts/cluster/keys.ts) at one revision, then watches the prefix from the next revision and applies
 * each change in revision order.
 *
 * It answers Metadata-style questions (live brokers, topics, each partition's registration, the
 * controller) and emits what changed:
 * - `partitionChanges`: the PartitionChanges (ts/replica/partition-registration.ts) of every
 *   partition whose replicas include `brokerId` before or after the change, one array per etcd
 *   revision: what `ReplicaManager.applyPartitionChanges` takes (registration null: the partition
 *   was deleted or moved off this broker). The initial load emits them too.
 * - `topicCreated`, `topicChanged` (configs or partition count), `topicDeleted`;
 * - `brokerRegistered` (a new broker, or a new epoch of one), `brokerUnregistered`;
 * - `controllerChanged`; `change` (the revision) after every applied batch.
 *
 * etcd going away: the watch is resumed from the last applied revision + 1 (every event is seen,
 * none twice); when etcd answers that the revision was compacted (or the watch is cancelled for
 * any other reason) the whole prefix is loaded again and the difference emitted as events, so a
 * listener sees the same changes either way.
 */
import { EventEmitter } from 'node:events'
import type { BrokerEndPoint, PartitionChange, PartitionRegistration } from '../replica/partition-registration.js'
import {
  BROKER_CONFIGS,
  BROKERS,
  CONTROLLER,
  PARTITIONS,
  SCRAM_CREDENTIALS,
  SHUTDOWN,
  TOPICS,
  brokerConfigsKey,
  decode,
  decodePartition,
  parsePartitionKey,
  parseTopicId,
  type BrokerConfigsRecord,
  type BrokerRecord,
  type ControllerRecord,
  type ScramCredentialRecord,
  type ShutdownRecord,
  type TopicRecord,
} from './keys.js'
import type { KeyValue, MetadataStore, MetadataWatch } from './metadata-store.js'

export interface BrokerInfo extends BrokerEndPoint {
  /** The broker epoch: the mod revision of its registration. */
  readonly epoch: bigint
  readonly incarnationId: string
  /** The lease its registration is under. */
  readonly leaseId: string
}

export interface TopicInfo {
  readonly name: string
  readonly topicId: Buffer
  readonly configs: Readonly<Record<string, string>>
  /** assignment[p]: partition p's replicas (the preferred leader first); its length is the partition count. */
  readonly assignment: readonly (readonly number[])[]
  /** Mod revision of the topic key (for compare-and-swap). */
  readonly modRevision: bigint
}

export interface PartitionState {
  readonly topic: string
  readonly topicId: Buffer
  readonly partition: number
  readonly registration: PartitionRegistration
  /** Mod revision of the partition key (for compare-and-swap). */
  readonly modRevision: bigint
}

export interface ControllerInfo {
  readonly brokerId: number
  readonly incarnationId: string
  /** The controller epoch: the create revision of the controller key. */
  readonly epoch: bigint
  readonly leaseId: string
}

export interface ShutdownRequest extends ShutdownRecord {
  readonly modRevision: bigint
  readonly leaseId: string
}

export interface MetadataCacheOptions {
  store: MetadataStore
  /** The broker whose partitions `partitionChanges` reports; omit for none. */
  brokerId?: number
  /** Wait before resuming a broken watch. Default 200 ms. */
  resumeDelayMs?: number
}

export interface MetadataCacheEvents {
  partitionChanges: [changes: PartitionChange[]]
  topicCreated: [topic: TopicInfo]
  topicChanged: [topic: TopicInfo]
  topicDeleted: [topic: { name: string; topicId: Buffer }]
  brokerRegistered: [broker: BrokerInfo]
  brokerUnregistered: [brokerId: number]
  /** A new election's winner (or -1: none), also when the same broker wins again. */
  controllerChanged: [controllerId: number]
  /** The dynamic broker configs (KIP-226) of `configs/brokers/default` or of one broker changed. */
  brokerConfigsChanged: []
  /** A SCRAM credential (`scram-credentials/...`) was set or removed. */
  scramCredentialsChanged: []
  change: [revision: bigint]
  /** A fault of the watch or a reload; the cache keeps retrying. */
  watchError: [error: Error]
}

interface Raw {
  value: Buffer
  modRevision: bigint
  createRevision: bigint
  lease: string
}

type Event = { key: string; kv: Raw | null }

export class MetadataCache extends EventEmitter<MetadataCacheEvents> {
  private readonly store: MetadataStore
  private readonly brokerId: number | undefined
  private readonly resumeDelayMs: number
  private raw = new Map<string, Raw>()
  private readonly brokers = new Map<number, BrokerInfo>()
  private readonly topicsByName = new Map<string, TopicInfo>()
  private readonly topicsById = new Map<string, TopicInfo>()
  /** topicId string -> partition -> state */
  private readonly parts = new Map<string, Map<number, { registration: PartitionRegistration; modRevision: bigint }>>()
  private readonly shutdowns = new Map<number, ShutdownRequest>()
  private controllerInfo: ControllerInfo | null = null
  /** `configs/brokers/<default|id>` -> its configs. */
  private readonly brokerConfigLayers = new Map<string, BrokerConfigsRecord>()
  /** `scram-credentials/<mechanism>/<user>` -> its credential. */
  private readonly scramRecords = new Map<string, ScramCredentialRecord>()
  private rev = 0n
  private watcher: MetadataWatch | null = null
  private resumeTimer: NodeJS.Timeout | null = null
  private closed = false
  private waiters: { rev: bigint; resolve: () => void }[] = []

  constructor(options: MetadataCacheOptions) {
    super()
    this.store = options.store
    this.brokerId = options.brokerId
    this.resumeDelayMs = options.resumeDelayMs ?? 200
  }

  /** Loads everything and starts watching; resolves once the initial state is applied (and its events emitted). */
  async start(): Promise<void> {
    await this.reload()
    await this.watchFrom(this.rev + 1n)
  }

  /** The last etcd revision applied. */
  get revision(): bigint {
    return this.rev
  }

  /** Resolves once the cache has applied revision `rev` (of a write under the cluster prefix). */
  waitForRevision(rev: bigint, timeoutMs = 10_000): Promise<void> {
    if (this.rev >= rev) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter)
        reject(new Error(`metadata cache did not reach revision ${rev} in ${timeoutMs} ms (at ${this.rev})`))
      }, timeoutMs)
      const waiter = {
        rev,
        resolve: () => {
          clearTimeout(timer)
          resolve()
        },
      }
      this.waiters.push(waiter)
    })
  }

  /** Live (registered) brokers, by id. */
  liveBrokers(): BrokerEndPoint[] {
    return this.brokerInfos().map(({ id, host, port, rack, endpoints }) => ({ id, host, port, rack, ...(endpoints ? { endpoints } : {}) }))
  }

  brokerInfos(): BrokerInfo[] {
    return [...this.brokers.values()].sort((a, b) => a.id - b.id)
  }

  broker(id: number): BrokerInfo | undefined {
    return this.brokers.get(id)
  }

  isAlive(id: number): boolean {
    return this.brokers.has(id)
  }

  /** The controller, or null while there is none (an election is under way). */
  controller(): ControllerInfo | null {
    return this.controllerInfo
  }

  /** The dynamic broker configs (KIP-226) that apply to broker `id`: the cluster-wide defaults and its own. */
  brokerConfigs(id: number): BrokerConfigsView {
    return { default: { ...this.brokerConfigLayers.get(brokerConfigsKey(null)) }, broker: { ...this.brokerConfigLayers.get(brokerConfigsKey(id)) } }
  }

  /** Every SCRAM credential, with its mechanism and user. */
  scramCredentials(): Array<{ mechanismName: string; username: string; record: ScramCredentialRecord }> {
    return [...this.scramRecords].map(([key, record]) => {
      const rest = key.slice(SCRAM_CREDENTIALS.length)
      const slash = rest.indexOf('/')
      return { mechanismName: rest.slice(0, slash), username: rest.slice(slash + 1), record }
    })
  }

  /** The controller's broker id, or -1 (Kafka's Metadata `controller_id` when unknown). */
  controllerId(): number {
    return this.controllerInfo?.brokerId ?? -1
  }

  topics(): TopicInfo[] {
    return [...this.topicsByName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  topic(name: string): TopicInfo | undefined {
    return this.topicsByName.get(name)
  }

  topicById(topicId: Buffer): TopicInfo | undefined {
    return this.topicsById.get(topicId.toString('base64url'))
  }

  /** A partition's registration, or undefined for an unknown topic or partition. */
  partition(topic: string, partition: number): PartitionRegistration | undefined {
    return this.partitionState(topic, partition)?.registration
  }

  partitionState(topic: string, partition: number): PartitionState | undefined {
    const t = this.topicsByName.get(topic)
    const p = t && this.parts.get(t.topicId.toString('base64url'))?.get(partition)
    return t && p ? { topic, topicId: t.topicId, partition, registration: p.registration, modRevision: p.modRevision } : undefined
  }

  /** Every partition of every topic. */
  partitionStates(): PartitionState[] {
    const out: PartitionState[] = []
    for (const t of this.topics()) {
      const ps = this.parts.get(t.topicId.toString('base64url'))
      if (!ps) continue
      for (const [partition, p] of [...ps].sort((a, b) => a[0] - b[0])) {
        out.push({ topic: t.name, topicId: t.topicId, partition, registration: p.registration, modRevision: p.modRevision })
      }
    }
    return out
  }

  /** The current PartitionChanges of every partition `brokerId` is a replica of (for a broker's start). */
  partitionsFor(brokerId: number): PartitionChange[] {
    return this.partitionStates()
      .filter((p) => p.registration.replicas.includes(brokerId))
      .map(({ topic, topicId, partition, registration }) => ({ topic, topicId, partition, registration }))
  }

  /** Pending controlled shutdown requests. */
  shutdownRequests(): ShutdownRequest[] {
    return [...this.shutdowns.values()]
  }

  /** Stops watching. */
  async close(): Promise<void> {
    this.closed = true
    if (this.resumeTimer) clearTimeout(this.resumeTimer)
    const w = this.watcher
    this.watcher = null
    if (w) await w.cancel().catch(() => {})
  }

  /** Loads the whole prefix and applies the difference from what the cache holds. */
  private async reload(): Promise<void> {
    const res = await this.store.range('')
    const fresh = new Map<string, Raw>()
    for (const kv of res.kvs) fresh.set(kv.key, toRaw(kv))
    const events: Event[] = []
    for (const [key, kv] of fresh) if (this.raw.get(key)?.modRevision !== kv.modRevision) events.push({ key, kv })
    for (const key of this.raw.keys()) if (!fresh.has(key)) events.push({ key, kv: null })
    this.apply(events, res.revision)
  }

  private async watchFrom(startRevision: bigint): Promise<void> {
    if (this.closed) return
    // Set once the store answers; events come later (the store delivers them asynchronously).
    let watcher: MetadataWatch | null = null
    watcher = await this.store.watch(
      { prefix: '' },
      { startRevision },
      {
        events: (received) => {
          if (watcher !== this.watcher) return
          const events: Event[] = []
          let last = this.rev
          for (const ev of received) {
            const mod = ev.kv.modRevision
            if (mod <= this.rev) continue // seen before a resume
            if (mod > last) last = mod
            events.push({ key: ev.kv.key, kv: ev.type === 'delete' ? null : toRaw(ev.kv) })
          }
          if (events.length > 0) this.apply(events, last)
        },
        disconnected: () => this.resume(watcher, false),
        error: (e: Error) => {
          this.emit('watchError', e)
          this.resume(watcher, true)
        },
      },
    )
    if (this.closed) {
      await watcher.cancel().catch(() => {})
      return
    }
    this.watcher = watcher
  }

  /** Replaces a broken watch: from the next revision, or after a full reload (compaction, cancel). */
  private resume(broken: MetadataWatch | null, reload: boolean): void {
    if (broken === null || broken !== this.watcher || this.closed) return
    this.watcher = null
    broken.cancel().catch(() => {})
    const retry = (needsReload: boolean) => {
      this.resumeTimer = setTimeout(() => {
        this.resumeTimer = null
        if (this.closed) return
        ;(async () => {
          if (needsReload) await this.reload()
          await this.watchFrom(this.rev + 1n)
        })().catch((e: Error) => {
          // etcd away, or the watch refused (its start revision compacted): load everything again.
          this.emit('watchError', e)
          retry(true)
        })
      }, this.resumeDelayMs)
    }
    retry(reload)
  }

  /** Applies one revision's (or one reload's) changes and emits the events. */
  private apply(events: Event[], revision: bigint): void {
    const created: TopicInfo[] = []
    const changed: TopicInfo[] = []
    const deleted: { name: string; topicId: Buffer }[] = []
    const registered: BrokerInfo[] = []
    const unregistered: number[] = []
    const changes: PartitionChange[] = []
    const previousController = this.controllerInfo
    const deletedNames = new Map<string, string>()
    let brokerConfigsChanged = false
    let scramCredentialsChanged = false

    // Topics first: the partitions of a topic created in this revision need its name.
    const ordered = [...events.filter((e) => e.key.startsWith(TOPICS)), ...events.filter((e) => !e.key.startsWith(TOPICS))]
    for (const { key, kv } of ordered) {
      if (kv) this.raw.set(key, kv)
      else this.raw.delete(key)
      try {
        if (key.startsWith(TOPICS)) {
          const name = key.slice(TOPICS.length)
          const old = this.topicsByName.get(name)
          if (old) {
            this.topicsByName.delete(name)
            this.topicsById.delete(old.topicId.toString('base64url'))
          }
          const rec = kv ? decode<TopicRecord>(kv.value) : null
          const info: TopicInfo | null = rec && kv ? { name, topicId: parseTopicId(rec.topicId), configs: rec.configs, assignment: rec.assignment, modRevision: kv.modRevision } : null
          if (info) {
            this.topicsByName.set(name, info)
            this.topicsById.set(rec!.topicId, info)
          }
          if (old && (!info || !old.topicId.equals(info.topicId))) {
            deleted.push({ name, topicId: old.topicId })
            deletedNames.set(old.topicId.toString('base64url'), name)
          }
          if (info && (!old || !old.topicId.equals(info.topicId))) created.push(info)
          else if (info && old) changed.push(info)
        } else if (key.startsWith(PARTITIONS)) {
          const pk = parsePartitionKey(key)
          if (!pk) continue
          let ps = this.parts.get(pk.topicId)
          const old = ps?.get(pk.partition)?.registration ?? null
          const registration = kv ? decodePartition(kv.value) : null
          if (registration && kv) {
            if (!ps) this.parts.set(pk.topicId, (ps = new Map()))
            ps.set(pk.partition, { registration, modRevision: kv.modRevision })
          } else if (ps) {
            ps.delete(pk.partition)
            if (ps.size === 0) this.parts.delete(pk.topicId)
          }
          const id = this.brokerId
          if (id === undefined) continue
          const name = this.topicsById.get(pk.topicId)?.name ?? deletedNames.get(pk.topicId)
          if (name === undefined) continue
          if (old?.replicas.includes(id) || registration?.replicas.includes(id)) {
            changes.push({
              topic: name,
              partition: pk.partition,
              topicId: parseTopicId(pk.topicId),
              registration: registration && registration.replicas.includes(id) ? registration : null,
            })
          }
        } else if (key.startsWith(BROKERS)) {
          const id = Number(key.slice(BROKERS.length))
          if (kv) {
            const r = decode<BrokerRecord>(kv.value)
            const info: BrokerInfo = {
              id,
              host: r.host,
              port: r.port,
              rack: r.rack ?? null,
              ...(r.listeners ? { endpoints: r.listeners } : {}),
              epoch: kv.modRevision,
              incarnationId: r.incarnationId,
              leaseId: kv.lease,
            }
            this.brokers.set(id, info)
            registered.push(info)
          } else if (this.brokers.delete(id)) {
            unregistered.push(id)
          }
        } else if (key === CONTROLLER) {
          if (kv) {
            const r = decode<ControllerRecord>(kv.value)
            this.controllerInfo = { brokerId: r.brokerId, incarnationId: r.incarnationId, epoch: kv.createRevision, leaseId: kv.lease }
          } else {
            this.controllerInfo = null
          }
        } else if (key.startsWith(BROKER_CONFIGS)) {
          if (kv) this.brokerConfigLayers.set(key, decode<BrokerConfigsRecord>(kv.value))
          else this.brokerConfigLayers.delete(key)
          brokerConfigsChanged = true
        } else if (key.startsWith(SCRAM_CREDENTIALS)) {
          if (kv && key.indexOf('/', SCRAM_CREDENTIALS.length) > 0) this.scramRecords.set(key, decode<ScramCredentialRecord>(kv.value))
          else this.scramRecords.delete(key)
          scramCredentialsChanged = true
        } else if (key.startsWith(SHUTDOWN)) {
          const id = Number(key.slice(SHUTDOWN.length))
          if (kv) this.shutdowns.set(id, { ...decode<ShutdownRecord>(kv.value), modRevision: kv.modRevision, leaseId: kv.lease })
          else this.shutdowns.delete(id)
        }
      } catch (e) {
        this.emit('watchError', new Error(`undecodable metadata at ${key}: ${(e as Error).message}`, { cause: e }))
      }
    }
    if (revision > this.rev) this.rev = revision

    for (const t of created) this.emit('topicCreated', t)
    for (const b of registered) this.emit('brokerRegistered', b)
    for (const id of unregistered) this.emit('brokerUnregistered', id)
    if (changes.length > 0) this.emit('partitionChanges', changes)
    for (const t of changed) this.emit('topicChanged', t)
    for (const t of deleted) this.emit('topicDeleted', t)
    if (this.controllerInfo?.epoch !== previousController?.epoch) this.emit('controllerChanged', this.controllerId())
    if (brokerConfigsChanged) this.emit('brokerConfigsChanged')
    if (scramCredentialsChanged) this.emit('scramCredentialsChanged')
    this.emit('change', this.rev)
    const ready = this.waiters.filter((w) => w.rev <= this.rev)
    if (ready.length > 0) {
      this.waiters = this.waiters.filter((w) => w.rev > this.rev)
      for (const w of ready) w.resolve()
    }
  }
}

export interface BrokerConfigsView {
  /** The cluster-wide dynamic defaults and this broker's own dynamic configs. */
  default: BrokerConfigsRecord
  broker: BrokerConfigsRecord
}

function toRaw(kv: KeyValue): Raw {
  return { value: kv.value, modRevision: kv.modRevision, createRevision: kv.createRevision, lease: kv.lease }
}
