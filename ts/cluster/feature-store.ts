/**
 * A cluster's finalized features (ts/server/finalized-features.ts) in etcd: the one key
 * `features` (keys.ts) holding `{ "version": 1, "features": { ... } }`; its epoch is the key's
 * mod revision (0: no key yet, Kafka 4.4's levels of a new cluster). A change is a
 * compare-and-swap on that revision, read again and retried when another broker changed it
 * first; every broker watches the key and applies each new set at once, so all of them
 * advertise the same levels in ApiVersions and their coordinators use the same
 * transaction.version. Sets older than the one applied are skipped.
 */
import type { Watcher } from 'etcd3'
import type { Logger } from '../logger.js'
import { formatFeatureLevels, parseFeatureLevels, type FeatureLevels, type FeatureStorage } from '../features/feature-levels.js'
import type { EtcdConnection } from './etcd-client.js'
import { FEATURES } from './keys.js'

export class EtcdFeatureStorage implements FeatureStorage {
  private readonly connection: EtcdConnection
  private readonly logger: Logger
  /** The levels before any change (no key): a new cluster's. */
  private readonly defaults: ReadonlyMap<string, number>
  /** The mod revision of the set last loaded, written or applied (0: no key). */
  private revision = 0n
  private watcher: Watcher | null = null
  private closed = false

  constructor(connection: EtcdConnection, logger: Logger, defaults: ReadonlyMap<string, number>) {
    this.connection = connection
    this.logger = logger
    this.defaults = defaults
  }

  async load(): Promise<FeatureLevels> {
    const current = await this.read()
    this.revision = current.epoch
    return current
  }

  async update(change: (current: FeatureLevels) => ReadonlyMap<string, number> | null): Promise<FeatureLevels> {
    const ns = this.connection.ns
    for (;;) {
      const current = await this.read()
      const changed = change(current)
      if (changed === null) return current
      const next = new Map(changed)
      const txn = current.epoch > 0n ? ns.if(FEATURES, 'Mod', '==', current.epoch.toString()) : ns.if(FEATURES, 'Create', '==', 0)
      const put = await txn.then(ns.put(FEATURES).value(formatFeatureLevels(next))).commit()
      if (put.succeeded) {
        const written = BigInt(put.header.revision)
        if (written > this.revision) this.revision = written
        return { epoch: written, levels: next }
      }
    }
  }

  watch(listener: (levels: FeatureLevels) => void): void {
    const start = (this.revision + 1n).toString()
    void (async () => {
      const watcher = await this.connection.ns.watch().key(FEATURES).startRevision(start).create()
      if (this.closed) {
        await watcher.cancel()
        return
      }
      this.watcher = watcher
      watcher.on('put', (kv) => {
        const revision = BigInt(kv.mod_revision)
        if (revision <= this.revision) return
        try {
          const { levels } = parseFeatureLevels(kv.value.toString('utf8'), `etcd key ${FEATURES}`, this.defaults)
          this.revision = revision
          listener({ epoch: revision, levels })
        } catch (err) {
          this.logger.error('cannot apply the finalized features stored in etcd; the previous levels stay', { error: String(err) })
        }
      })
    })().catch((err) => this.logger.error('cannot watch the finalized features in etcd', { error: String(err) }))
  }

  async close(): Promise<void> {
    this.closed = true
    await this.watcher?.cancel().catch(() => undefined)
  }

  private async read(): Promise<FeatureLevels> {
    const res = await this.connection.ns.get(FEATURES).exec()
    const kv = res.kvs[0]
    if (!kv) return { epoch: 0n, levels: new Map(this.defaults) }
    return { epoch: BigInt(kv.mod_revision), levels: parseFeatureLevels(kv.value.toString('utf8'), `etcd key ${FEATURES}`, this.defaults).levels }
  }
}
