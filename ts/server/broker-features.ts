/**
 * The feature flags this broker advertises in ApiVersions (v3+, KIP-584; Kafka's
 * `BrokerFeatures` and the finalized features of its metadata image), which clients read to pick
 * a protocol:
 *
 * - `transaction.version` (ts/coordinator/transaction/transaction-version.ts): supported 0-2,
 *   finalized at 2, as Kafka 4.4 finalizes it on a new cluster (`kafka-features.sh describe`:
 *   SupportedMinVersion 0, SupportedMaxVersion 2, FinalizedVersionLevel 2). A Java producer (4.0+)
 *   that sees level 2 speaks transaction version 2: EndTxn v5, Produce v12 and TxnOffsetCommit
 *   v5 adding partitions, no AddPartitionsToTxn or AddOffsetsToTxn. Clients that do not read the
 *   features (kafkajs) keep version 0.
 *
 * Kafka answers a finalized feature with minVersionLevel = maxVersionLevel = its level, and omits
 * a feature finalized at 0. Its epoch is the metadata offset of the last feature change; here the
 * features never change, so the epoch is a constant (>= 0: a client ignores finalized features
 * whose epoch is -1, "unknown"). ApiVersions below v3 has no features; v3 omits supported
 * features whose minimum is 0 (KAFKA-17011: those clients would reject it; `supportedFeaturesFor`).
 */
import type { FinalizedFeatureKey, SupportedFeatureKey } from '../protocol/apis/api-versions.js'
import { FINALIZED_TRANSACTION_VERSION, MAX_TRANSACTION_VERSION, TRANSACTION_VERSION_FEATURE } from '../coordinator/transaction/transaction-version.js'

/** The epoch of the finalized features: constant, they never change on this broker. */
export const FINALIZED_FEATURES_EPOCH = 0n

export const SUPPORTED_FEATURES: readonly SupportedFeatureKey[] = Object.freeze([{ name: TRANSACTION_VERSION_FEATURE, minVersion: 0, maxVersion: MAX_TRANSACTION_VERSION }])

export const FINALIZED_FEATURES: readonly FinalizedFeatureKey[] = Object.freeze(
  [{ name: TRANSACTION_VERSION_FEATURE, level: FINALIZED_TRANSACTION_VERSION }].filter((f) => f.level > 0).map((f) => ({ name: f.name, minVersionLevel: f.level, maxVersionLevel: f.level })),
)

/** The supported features an ApiVersions response of `version` carries (v3: none with a minimum of 0, as Kafka). */
export function supportedFeaturesFor(version: number): SupportedFeatureKey[] {
  return SUPPORTED_FEATURES.filter((f) => version >= 4 || f.minVersion > 0)
}
