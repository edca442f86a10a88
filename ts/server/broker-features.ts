/**
 * The feature flags this broker supports (KIP-584; Kafka's `BrokerFeatures`), which ApiVersions
 * (v3+) advertises next to the cluster's finalized levels (./finalized-features.ts, changed by
 * UpdateFeatures: `kafka-features.sh upgrade|downgrade|disable`) and clients read to pick a
 * protocol:
 *
 * - `transaction.version` (ts/coordinator/transaction/transaction-version.ts): supported 0-2,
 *   finalized at 2 on a new data dir or cluster, as Kafka 4.4 finalizes it on a new cluster
 *   (`kafka-features.sh describe`: SupportedMinVersion 0, SupportedMaxVersion 2,
 *   FinalizedVersionLevel 2). A Java producer (4.0+) or ferrolog's Producer that sees level 2
 *   speaks transaction version 2: EndTxn v5, Produce v12 and TxnOffsetCommit v5 adding
 *   partitions, no AddPartitionsToTxn or AddOffsetsToTxn; at 1 or 0 they speak version 1 (and
 *   the coordinator's own aborts use the level). Clients that do not read the features
 *   (kafkajs) keep version 0.
 *
 * - `group.version`: supported 0-1, finalized at 1 as Kafka 4.4 (GroupVersion GV_1: the KIP-848
 *   consumer group protocol). At 0 ConsumerGroupHeartbeat and ConsumerGroupDescribe answer
 *   UNSUPPORTED_VERSION, as Kafka's (the ApiKeys stay listed, as Kafka lists them).
 * - `share.version`: supported 0-1, finalized at 1 (ShareVersion SV_1: share groups). At 0 the
 *   share group ApiKeys answer UNSUPPORTED_VERSION, as Kafka's. Kafka 4.4 supports and finalizes
 *   2 (SV_2: the share groups' dead-letter queue, KIP-1191), which ferrolog does not serve.
 *
 * ApiVersions below v3 has no features; v3 omits supported features whose minimum is 0
 * (KAFKA-17011: those clients would reject it; `supportedFeaturesFor`).
 */
import type { SupportedFeatureKey } from '../protocol/apis/api-versions.js'
import { DEFAULT_TRANSACTION_VERSION, MAX_TRANSACTION_VERSION, TRANSACTION_VERSION_FEATURE } from '../coordinator/transaction/transaction-version.js'

export const GROUP_VERSION_FEATURE = 'group.version'
export const SHARE_VERSION_FEATURE = 'share.version'

export const SUPPORTED_FEATURES: readonly SupportedFeatureKey[] = Object.freeze([
  { name: GROUP_VERSION_FEATURE, minVersion: 0, maxVersion: 1 },
  { name: SHARE_VERSION_FEATURE, minVersion: 0, maxVersion: 1 },
  { name: TRANSACTION_VERSION_FEATURE, minVersion: 0, maxVersion: MAX_TRANSACTION_VERSION },
])

/** The levels Kafka 4.4 finalizes on a new cluster, for the features above (share.version: the highest ferrolog supports). */
export const DEFAULT_FINALIZED_LEVELS: Readonly<Record<string, number>> = Object.freeze({
  [GROUP_VERSION_FEATURE]: 1,
  [SHARE_VERSION_FEATURE]: 1,
  [TRANSACTION_VERSION_FEATURE]: DEFAULT_TRANSACTION_VERSION,
})

/** Kafka's `GroupVersion.supportsNewConsumerRebalanceProtocol`: KIP-848 consumer groups at group.version 1 and above. */
export function supportsConsumerGroups(levels: { level(name: string): number }): boolean {
  return levels.level(GROUP_VERSION_FEATURE) >= 1
}

/** Kafka's `ShareVersion.supportsShareGroups`: share groups at share.version 1 and above. */
export function supportsShareGroups(levels: { level(name: string): number }): boolean {
  return levels.level(SHARE_VERSION_FEATURE) >= 1
}

/** The supported features an ApiVersions response of `version` carries (v3: none with a minimum of 0, as Kafka). */
export function supportedFeaturesFor(version: number): SupportedFeatureKey[] {
  return SUPPORTED_FEATURES.filter((f) => version >= 4 || f.minVersion > 0)
}
