/**
 * A cluster's ACLs (the StandardAuthorizer's `AclStorage`) in etcd: the one key `acls` (keys.ts)
 * holding the whole set in the format of ts/security/authorizer/acl-json.ts. A change is a
 * compare-and-swap on the key's mod revision, read again and retried when another broker changed
 * it first, so no change is lost; every broker watches the key and applies each new set at once,
 * so all of them enforce the same ACLs. Sets older than the one applied (a watch event behind a
 * broker's own write) are skipped.
 */
import type { Logger } from '../logger.js'
import { formatAcls, parseAcls } from '../security/authorizer/acl-json.js'
import type { AclBinding } from '../security/authorizer/acl.js'
import type { AclStorage } from '../security/authorizer/standard-authorizer.js'
import { ACLS } from './keys.js'
import { compare, op, type MetadataStore, type MetadataWatch } from './metadata-store.js'

export class EtcdAclStorage implements AclStorage {
  private readonly store: MetadataStore
  private readonly logger: Logger
  /** The mod revision of the set last loaded, written or applied (0: no key). */
  private revision = 0n
  private watcher: MetadataWatch | null = null
  private closed = false

  constructor(store: MetadataStore, logger: Logger) {
    this.store = store
    this.logger = logger
  }

  async load(): Promise<AclBinding[]> {
    const { acls, revision } = await this.read()
    this.revision = revision
    return acls
  }

  async update(change: (current: readonly AclBinding[]) => AclBinding[]): Promise<AclBinding[]> {
    for (;;) {
      const { acls, revision } = await this.read()
      const next = change(acls)
      const guard = revision > 0n ? compare.modRevision(ACLS, '==', revision) : compare.createRevision(ACLS, '==', 0)
      const put = await this.store.txn({ compare: [guard], success: [op.put(ACLS, formatAcls(next))] })
      if (put.succeeded) {
        const written = put.revision
        if (written > this.revision) this.revision = written
        return next
      }
    }
  }

  watch(listener: (acls: AclBinding[]) => void): void {
    const start = this.revision + 1n
    const apply = (value: Buffer, revision: bigint) => {
      if (revision <= this.revision) return
      try {
        const acls = parseAcls(value.toString('utf8'), `etcd key ${ACLS}`)
        this.revision = revision
        listener(acls)
      } catch (err) {
        this.logger.error('cannot apply the ACLs stored in etcd; the previous set stays enforced', { error: String(err) })
      }
    }
    void (async () => {
      const watcher = await this.store.watch({ key: ACLS }, { startRevision: start }, { events: (events) => events.forEach((e) => e.type === 'put' && apply(e.kv.value, e.kv.modRevision)) })
      if (this.closed) {
        await watcher.cancel()
        return
      }
      this.watcher = watcher
    })().catch((err) => this.logger.error('cannot watch the ACLs in etcd', { error: String(err) }))
  }

  async close(): Promise<void> {
    this.closed = true
    await this.watcher?.cancel().catch(() => undefined)
  }

  private async read(): Promise<{ acls: AclBinding[]; revision: bigint }> {
    const kv = await this.store.get(ACLS)
    if (!kv) return { acls: [], revision: 0n }
    return { acls: parseAcls(kv.value.toString('utf8'), `etcd key ${ACLS}`), revision: kv.modRevision }
  }
}
