/**
 * A cluster's ACLs (the StandardAuthorizer's `AclStorage`) in etcd: the one key `acls` (keys.ts)
 * holding the whole set in the format of ts/security/authorizer/acl-json.ts. A change is a
 * compare-and-swap on the key's mod revision, read again and retried when another broker changed
 * it first, so no change is lost; every broker watches the key and applies each new set at once,
 * so all of them enforce the same ACLs. Sets older than the one applied (a watch event behind a
 * broker's own write) are skipped.
 */
import type { Watcher } from 'etcd3'
import type { Logger } from '../logger.js'
import { formatAcls, parseAcls } from '../security/authorizer/acl-json.js'
import type { AclBinding } from '../security/authorizer/acl.js'
import type { AclStorage } from '../security/authorizer/standard-authorizer.js'
import type { EtcdConnection } from './etcd-client.js'
import { ACLS } from './keys.js'

export class EtcdAclStorage implements AclStorage {
  private readonly connection: EtcdConnection
  private readonly logger: Logger
  /** The mod revision of the set last loaded, written or applied (0: no key). */
  private revision = 0n
  private watcher: Watcher | null = null
  private closed = false

  constructor(connection: EtcdConnection, logger: Logger) {
    this.connection = connection
    this.logger = logger
  }

  async load(): Promise<AclBinding[]> {
    const { acls, revision } = await this.read()
    this.revision = revision
    return acls
  }

  async update(change: (current: readonly AclBinding[]) => AclBinding[]): Promise<AclBinding[]> {
    const ns = this.connection.ns
    for (;;) {
      const { acls, revision } = await this.read()
      const next = change(acls)
      const txn = revision > 0n ? ns.if(ACLS, 'Mod', '==', revision.toString()) : ns.if(ACLS, 'Create', '==', 0)
      const put = await txn.then(ns.put(ACLS).value(formatAcls(next))).commit()
      if (put.succeeded) {
        const written = BigInt(put.header.revision)
        if (written > this.revision) this.revision = written
        return next
      }
    }
  }

  watch(listener: (acls: AclBinding[]) => void): void {
    const start = (this.revision + 1n).toString()
    void (async () => {
      const watcher = await this.connection.ns.watch().key(ACLS).startRevision(start).create()
      if (this.closed) {
        await watcher.cancel()
        return
      }
      this.watcher = watcher
      watcher.on('put', (kv) => {
        const revision = BigInt(kv.mod_revision)
        if (revision <= this.revision) return
        try {
          const acls = parseAcls(kv.value.toString('utf8'), `etcd key ${ACLS}`)
          this.revision = revision
          listener(acls)
        } catch (err) {
          this.logger.error('cannot apply the ACLs stored in etcd; the previous set stays enforced', { error: String(err) })
        }
      })
    })().catch((err) => this.logger.error('cannot watch the ACLs in etcd', { error: String(err) }))
  }

  async close(): Promise<void> {
    this.closed = true
    await this.watcher?.cancel().catch(() => undefined)
  }

  private async read(): Promise<{ acls: AclBinding[]; revision: bigint }> {
    const res = await this.connection.ns.get(ACLS).exec()
    const kv = res.kvs[0]
    if (!kv) return { acls: [], revision: 0n }
    return { acls: parseAcls(kv.value.toString('utf8'), `etcd key ${ACLS}`), revision: BigInt(kv.mod_revision) }
  }
}
