/**
 * The cluster's finalized features (KIP-584; Kafka's `FinalizedFeatures` of the metadata image
 * and the FeatureLevelRecords behind it): the level of each feature this broker supports
 * (ts/server/broker-features.ts), changed by UpdateFeatures (ts/server/feature-control.ts) and
 * read by ApiVersions and by what a level changes (the transaction coordinator's
 * `transaction.version`).
 *
 * Where they live (a `FeatureStorage`, ts/features/feature-levels.ts, which documents the
 * JSON): a standalone broker's `<dataDir>/ferrolog-features.json` (./feature-file-store.ts), a
 * cluster's etcd key `features` (ts/cluster/feature-store.ts, watched by every broker). A level
 * of 0 is not finalized: ApiVersions omits it, as Kafka. No file or key: the levels Kafka 4.4 finalizes on a new cluster (`DEFAULT_FINALIZED_LEVELS`), so
 * a data dir or cluster from before UpdateFeatures keeps what it had. The epoch (ApiVersions'
 * `finalizedFeaturesEpoch`, Kafka's metadata offset of the image) is the storage's: a counter in
 * the file, the key's etcd mod revision; 0 before any change.
 */
import type { FeatureLevels, FeatureStorage } from '../features/feature-levels.js'
import type { FinalizedFeatureKey } from '../protocol/apis/api-versions.js'
import { SUPPORTED_FEATURES, DEFAULT_FINALIZED_LEVELS } from './broker-features.js'

export type { FeatureLevels, FeatureStorage }

/** Kafka 4.4's levels on a new cluster, every supported feature present. */
export function defaultLevels(): Map<string, number> {
  return new Map(SUPPORTED_FEATURES.map((f) => [f.name, DEFAULT_FINALIZED_LEVELS[f.name] ?? 0]))
}

/** The broker's view of the finalized features: loaded at start, kept current by changes here and elsewhere. */
export class FinalizedFeatures {
  private readonly storage: FeatureStorage
  private current: FeatureLevels
  private readonly listeners: Array<(levels: FeatureLevels) => void> = []

  private constructor(storage: FeatureStorage, current: FeatureLevels) {
    this.storage = storage
    this.current = current
  }

  static async load(storage: FeatureStorage): Promise<FinalizedFeatures> {
    const features = new FinalizedFeatures(storage, await storage.load())
    storage.watch?.((levels) => features.apply(levels))
    return features
  }

  get epoch(): bigint {
    return this.current.epoch
  }

  get levels(): ReadonlyMap<string, number> {
    return this.current.levels
  }

  /** A feature's finalized level; 0 when not finalized (or unknown). */
  level(name: string): number {
    return this.current.levels.get(name) ?? 0
  }

  /** ApiVersions' finalized features: those above 0, at min = max = the level (Kafka's answer). */
  finalizedFeatureKeys(): FinalizedFeatureKey[] {
    return [...this.current.levels].filter(([, level]) => level > 0).map(([name, level]) => ({ name, minVersionLevel: level, maxVersionLevel: level }))
  }

  /** Calls `listener` after every change of the levels (here or on another broker). */
  onChange(listener: (levels: FeatureLevels) => void): void {
    this.listeners.push(listener)
  }

  /** Stores new levels (durable when this resolves) and applies them. */
  async update(change: (current: FeatureLevels) => ReadonlyMap<string, number> | null): Promise<FeatureLevels> {
    const written = await this.storage.update(change)
    this.apply(written)
    return written
  }

  async close(): Promise<void> {
    await this.storage.close?.()
  }

  private apply(levels: FeatureLevels): void {
    if (levels.epoch < this.current.epoch) return
    this.current = levels
    for (const listener of this.listeners) listener(levels)
  }
}
