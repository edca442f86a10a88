/**
 * A cluster's finalized features (ts/server/finalized-features.ts) in the cluster's metadata store (etcd): the one key
 * `features` (keys.ts) holding `{ "version": 1, "features": { ... } }`; its epoch is the key's
 * mod revision (0: no key yet, Kafka 4.4's levels of a new cluster). A change is a
 * compare-and-swap on that revision, read again and retried when another broker changed it
 * first; every broker watches the key and applies each new set at once, so all of them
 * advertise the same levels in ApiVersions and their coordinators use the same
 * transaction.version. Sets older than the one applied are skipped.
 */
import type { Logger } from '../logger.js'
import { formatFeatureLevels, parseFeatureLevels, type FeatureLevels, type FeatureStorage } from '../features/feature-levels.js'
import { FEATURES } from './keys.js'
import { compare, op, type MetadataStore, type MetadataWatch } from './metadata-store.js'

export class EtcdFeatureStorage implements FeatureStorage {
  private readonly store: MetadataStore
  private readonly logger: Logger
  /** The levels before any change (no key): a new cluster's. */
  private readonly defaults: ReadonlyMap<string, number>
  /** The mod revision of the set last loaded, written or applied (0: no key). */
  private revision = 0n
  private watcher: MetadataWatch | null = null
  private closed = false

  constructor(store: MetadataStore, logger: Logger, defaults: ReadonlyMap<string, number>) {
    this.store = store
    this.logger = logger
    this.defaults = defaults
  }

  async load(): Promise<FeatureLevels> {
    const current = await this.read()
    this.revision = current.epoch
    return current
  }

  async update(change: (current: FeatureLevels) => ReadonlyMap<string, number> | null): Promise<FeatureLevels> {
    for (;;) {
      const current = await this.read()
      const changed = change(current)
      if (changed === null) return current
      const next = new Map(changed)
      const guard = current.epoch > 0n ? compare.modRevision(FEATURES, '==', current.epoch) : compare.createRevision(FEATURES, '==', 0)
      const put = await this.store.txn({ compare: [guard], success: [op.put(FEATURES, formatFeatureLevels(next))] })
      if (put.succeeded) {
        if (put.revision > this.revision) this.revision = put.revision
        return { epoch: put.revision, levels: next }
      }
    }
  }

  watch(listener: (levels: FeatureLevels) => void): void {
    const start = this.revision + 1n
    const apply = (value: Buffer, revision: bigint) => {
      if (revision <= this.revision) return
      try {
        const { levels } = parseFeatureLevels(value.toString('utf8'), `etcd key ${FEATURES}`, this.defaults)
        this.revision = revision
        listener({ epoch: revision, levels })
      } catch (err) {
        this.logger.error('cannot apply the finalized features stored in etcd; the previous levels stay', { error: String(err) })
      }
    }
    void (async () => {
      const watcher = await this.store.watch({ key: FEATURES }, { startRevision: start }, { events: (events) => events.forEach((e) => e.type === 'put' && apply(e.kv.value, e.kv.modRevision)) })
      if (this.closed) {
        await watcher.cancel()
        return
      }
      this.watcher = watcher
    })().catch((err) => this.logger.error('cannot watch the finalized features in etcd', { error: String(err) }))
  }

  async close(): Promise<void> {
    this.closed = true
    await this.watcher?.cancel().catch(() => undefined)
  }

  private async read(): Promise<FeatureLevels> {
    const kv = await this.store.get(FEATURES)
    if (!kv) return { epoch: 0n, levels: new Map(this.defaults) }
    return { epoch: kv.modRevision, levels: parseFeatureLevels(kv.value.toString('utf8'), `etcd key ${FEATURES}`, this.defaults).levels }
  }
}
