/**
 * Where a broker keeps its client quotas (Kafka keeps them as ClientQuotaRecords in its metadata
 * log): a file of the data dir for a standalone broker (ts/server/client-quota-file-store.ts),
 * one etcd key for a cluster (ts/cluster/client-quota-store.ts), in the form of
 * client-quotas-image.ts. Either way `image` is what enforcement and DescribeClientQuotas read, and
 * it follows every change, from this broker or (in a cluster) any other.
 */
import type { ClientQuotaChange, ClientQuotasImage } from './client-quotas-image.js'

export interface ClientQuotaStorage {
  /** The quotas as they are now. */
  readonly image: ClientQuotasImage
  /**
   * Runs `decide` with the quotas as they are (one call at a time on this broker), stores the
   * changes it returns all together, then resolves to its result once they are durable and in
   * `image`.
   */
  update<T>(decide: (current: ClientQuotasImage) => { changes: ClientQuotaChange[]; result: T }): Promise<T>
  /** Calls `listener` with each new image (changes stored by this broker or another). */
  onChange(listener: (image: ClientQuotasImage) => void): void
  /** Stops following changes (a cluster's watch). */
  close(): Promise<void>
}
