/**
 * A cluster's SCRAM credentials (ts/security/scram/scram-credential-store.ts) in etcd: one key
 * per user and mechanism, `scram-credentials/<mechanism>/<user>` (keys.ts, its value a
 * ScramCredentialRecord). Every broker's metadata cache watches them (metadata-cache.ts), and
 * this store rebuilds its CredentialCache on each change, so a credential altered through any
 * broker is used by every broker's next authentication. An update's changes go in one etcd
 * transaction (up to 128 of them: etcd's default --max-txn-ops; more go in several), and it
 * resolves once this broker's cache has applied them.
 *
 * Kafka's controller is the only writer of its credentials; here any broker writes. Two brokers
 * altering the same user at once: the later write wins, as with two AlterUserScramCredentials one
 * after the other.
 */
import { CredentialCache } from '../security/scram/credential-cache.js'
import type { ScramCredentialChange } from '../security/scram/scram-control-manager.js'
import type { ScramCredentialStore } from '../security/scram/scram-credential-store.js'
import { encode, scramCredentialKey, type ScramCredentialRecord } from './keys.js'
import type { MetadataCache } from './metadata-cache.js'
import { MAX_TXN_OPS, op, type MetadataStore } from './metadata-store.js'

export class EtcdScramCredentialStore implements ScramCredentialStore {
  readonly cache = new CredentialCache()
  private readonly store: MetadataStore
  private readonly metadata: MetadataCache
  private readonly reload = (): void => this.rebuild()
  private updating: Promise<unknown> = Promise.resolve()

  constructor(store: MetadataStore, metadata: MetadataCache) {
    this.store = store
    this.metadata = metadata
    this.rebuild()
    metadata.on('scramCredentialsChanged', this.reload)
  }

  update<T>(decide: (current: CredentialCache) => { changes: ScramCredentialChange[]; result: T }): Promise<T> {
    const run = this.updating.then(async () => {
      const { changes, result } = decide(this.cache)
      let revision = 0n
      for (let i = 0; i < changes.length; i += MAX_TXN_OPS) {
        const chunk = changes.slice(i, i + MAX_TXN_OPS)
        const ops = chunk.map((c) => {
          const key = scramCredentialKey(c.mechanismName, c.username)
          if (!c.credential) return op.delete(key)
          const record: ScramCredentialRecord = {
            salt: c.credential.salt.toString('base64'),
            storedKey: c.credential.storedKey.toString('base64'),
            serverKey: c.credential.serverKey.toString('base64'),
            iterations: c.credential.iterations,
          }
          return op.put(key, encode(record))
        })
        revision = (await this.store.txn({ compare: [], success: ops })).revision
      }
      if (revision > 0n) await this.metadata.waitForRevision(revision)
      return result
    })
    this.updating = run.catch(() => {})
    return run
  }

  close(): void {
    this.metadata.off('scramCredentialsChanged', this.reload)
  }

  private rebuild(): void {
    this.cache.replaceAll(
      this.metadata.scramCredentials().map(({ mechanismName, username, record }) => ({
        mechanismName,
        username,
        credential: {
          salt: Buffer.from(record.salt, 'base64'),
          storedKey: Buffer.from(record.storedKey, 'base64'),
          serverKey: Buffer.from(record.serverKey, 'base64'),
          iterations: record.iterations,
        },
      })),
    )
  }
}
