/**
 * Where a broker keeps its SCRAM credentials (Kafka keeps them as UserScramCredentialRecords in
 * its metadata log): a file of the data dir for a standalone broker
 * (ts/server/file-scram-credential-store.ts), etcd for a cluster
 * (ts/cluster/scram-credential-store.ts). Either way `cache` is what authentication reads, and it
 * follows every change: a credential altered is used by the next authentication.
 */
import type { CredentialCache } from './credential-cache.js'
import type { ScramCredentialChange } from './scram-control-manager.js'

export interface ScramCredentialStore {
  /** The credentials as they are now. */
  readonly cache: CredentialCache
  /**
   * Runs `decide` with the credentials as they are (one call at a time on this broker), stores
   * the changes it returns all together, then resolves to its result once they are durable and
   * in `cache`.
   */
  update<T>(decide: (current: CredentialCache) => { changes: ScramCredentialChange[]; result: T }): Promise<T>
  /** Stops following changes (a cluster's watch); the cache keeps its last state. */
  close(): void
}
