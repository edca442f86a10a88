/**
 * A cluster's client quotas (ts/quota/client-quota-storage.ts) in etcd: the one key
 * `client-quotas` (keys.ts) holding every entity's quotas in the form of
 * ts/quota/client-quotas-image.ts. A change is a compare-and-swap on the key's mod revision,
 * read again and retried when another broker changed it first, so no change is lost; every
 * broker watches the key and enforces each new set at once. Sets older than the one applied (a
 * watch event behind a broker's own write) are skipped.
 */
import type { Logger } from '../logger.js'
import type { ClientQuotaStorage } from '../quota/client-quota-storage.js'
import { ClientQuotasImage, type ClientQuotaChange } from '../quota/client-quotas-image.js'
import { CLIENT_QUOTAS } from './keys.js'
import { compare, op, type MetadataStore, type MetadataWatch } from './metadata-store.js'

export class EtcdClientQuotaStorage implements ClientQuotaStorage {
  image = ClientQuotasImage.EMPTY
  private readonly store: MetadataStore
  private readonly logger: Logger
  /** The mod revision of the image applied (0: no key). */
  private revision = 0n
  private watcher: MetadataWatch | null = null
  private closed = false
  private updating: Promise<unknown> = Promise.resolve()
  private readonly listeners: Array<(image: ClientQuotasImage) => void> = []

  private constructor(store: MetadataStore, logger: Logger) {
    this.store = store
    this.logger = logger
  }

  /** Reads the quotas, then follows every change. */
  static async load(store: MetadataStore, logger: Logger): Promise<EtcdClientQuotaStorage> {
    const storage = new EtcdClientQuotaStorage(store, logger)
    const { image, revision } = await storage.read()
    storage.set(image, revision)
    storage.watch()
    return storage
  }

  update<T>(decide: (current: ClientQuotasImage) => { changes: ClientQuotaChange[]; result: T }): Promise<T> {
    const run = this.updating.then(async () => {
      for (;;) {
        const { image, revision } = await this.read()
        const { changes, result } = decide(image)
        if (changes.length === 0) return result
        const next = image.apply(changes)
        const guard = revision > 0n ? compare.modRevision(CLIENT_QUOTAS, '==', revision) : compare.createRevision(CLIENT_QUOTAS, '==', 0)
        const put = await this.store.txn({ compare: [guard], success: [op.put(CLIENT_QUOTAS, next.format())] })
        if (put.succeeded) {
          this.set(next, put.revision)
          return result
        }
      }
    })
    this.updating = run.catch(() => {})
    return run
  }

  onChange(listener: (image: ClientQuotasImage) => void): void {
    this.listeners.push(listener)
  }

  async close(): Promise<void> {
    this.closed = true
    await this.watcher?.cancel().catch(() => undefined)
  }

  private set(image: ClientQuotasImage, revision: bigint): void {
    if (revision <= this.revision && revision !== 0n) return
    this.revision = revision
    this.image = image
    for (const listener of this.listeners) listener(image)
  }

  private watch(): void {
    const start = this.revision + 1n
    void (async () => {
      const watcher = await this.store.watch(
        { key: CLIENT_QUOTAS },
        { startRevision: start },
        {
          events: (events) => {
            for (const e of events) {
              if (e.type !== 'put') continue
              try {
                this.set(ClientQuotasImage.parse(e.kv.value.toString('utf8'), `etcd key ${CLIENT_QUOTAS}`), e.kv.modRevision)
              } catch (err) {
                this.logger.error('cannot apply the client quotas stored in etcd; the previous ones stay enforced', { error: String(err) })
              }
            }
          },
        },
      )
      if (this.closed) {
        await watcher.cancel()
        return
      }
      this.watcher = watcher
    })().catch((err) => this.logger.error('cannot watch the client quotas in etcd', { error: String(err) }))
  }

  private async read(): Promise<{ image: ClientQuotasImage; revision: bigint }> {
    const kv = await this.store.get(CLIENT_QUOTAS)
    if (!kv) return { image: ClientQuotasImage.EMPTY, revision: 0n }
    return { image: ClientQuotasImage.parse(kv.value.toString('utf8'), `etcd key ${CLIENT_QUOTAS}`), revision: kv.modRevision }
  }
}
