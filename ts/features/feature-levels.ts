/**
 * Finalized feature levels (KIP-584) as they are stored: the model every `FeatureStorage` keeps
 * (a standalone broker's file, ts/server/feature-file-store.ts; a cluster's etcd key,
 * ts/cluster/feature-store.ts) and its JSON:
 *
 *     { "version": 1, "features": { "transaction.version": 2 } }
 *
 * every supported feature with its level (0: not finalized). The broker's view of them is
 * ts/server/finalized-features.ts.
 */

/** The levels at one epoch. */
export interface FeatureLevels {
  readonly epoch: bigint
  /** Every supported feature's level (0: not finalized). */
  readonly levels: ReadonlyMap<string, number>
}

/** Where the finalized levels are kept; a change is durable once `update` resolves. */
export interface FeatureStorage {
  load(): Promise<FeatureLevels>
  /**
   * Writes `change(current)`; retried with the newer levels when another broker changed them
   * first. `change` answering null writes nothing (the current levels are returned).
   */
  update(change: (current: FeatureLevels) => ReadonlyMap<string, number> | null): Promise<FeatureLevels>
  /** Calls `listener` with each change made elsewhere (other brokers); absent standalone. */
  watch?(listener: (levels: FeatureLevels) => void): void
  close?(): Promise<void>
}

export const FEATURES_FORMAT_VERSION = 1

/** The stored JSON (above) of `levels`. */
export function formatFeatureLevels(levels: ReadonlyMap<string, number>, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ version: FEATURES_FORMAT_VERSION, ...extra, features: Object.fromEntries([...levels].sort(([a], [b]) => a.localeCompare(b))) })}\n`
}

/** The levels of the stored JSON, every feature of `defaults` present (a missing one at its default); throws on a malformed one. */
export function parseFeatureLevels(text: string, where: string, defaults: ReadonlyMap<string, number>): { levels: Map<string, number>; json: Record<string, unknown> } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new Error(`${where} is not JSON: ${(err as Error).message}`, { cause: err })
  }
  const o = json as { version?: unknown; features?: unknown }
  if (typeof json !== 'object' || json === null || o.version !== FEATURES_FORMAT_VERSION || typeof o.features !== 'object' || o.features === null) {
    throw new Error(`${where} is not a version ${FEATURES_FORMAT_VERSION} features file`)
  }
  const levels = new Map(defaults)
  for (const [name, level] of Object.entries(o.features)) {
    if (!Number.isInteger(level) || (level as number) < 0 || (level as number) > 32767) throw new Error(`${where}: feature ${name} has an invalid level ${JSON.stringify(level)}`)
    levels.set(name, level as number)
  }
  return { levels, json: json as Record<string, unknown> }
}
