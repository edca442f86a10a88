/**
 * UpdateFeatures' checks and outcome, as Kafka 4.4's controller decides them
 * (`FeatureControlManager.updateFeatures` and `QuorumController.updateFeatures`): each update in
 * the request's order, the first refused one refusing the whole request with
 * INVALID_UPDATE_VERSION and "The update failed for all features since the following feature had
 * an error: Invalid update version L for feature F. <reason>", where the reason is, in Kafka's
 * order:
 *
 * - an upgrade type other than 1 (UPGRADE), 2 (SAFE_DOWNGRADE), 3 (UNSAFE_DOWNGRADE):
 *   "The controller does not support the given upgrade type."
 * - a level below 0: "A feature version cannot be less than 0."
 * - a level this broker does not support: "Local controller N does not support this feature."
 *   (a feature it does not know, at a level above 0) or "Local controller N only supports
 *   versions MIN-MAX";
 * - a lower level asked as an UPGRADE: "Can't downgrade the version of this feature without
 *   setting the upgrade type to either safe or unsafe downgrade."; a higher one as a downgrade:
 *   "Can't downgrade to a newer version.";
 * - a feature it does not know at level 0 (disable): "Feature F not found."
 *
 * Level 0 disables a feature (not finalized any more). A level equal to the current one is
 * accepted (nothing changes but the epoch, as Kafka writes the record again). UpdateFeatures v0
 * has no upgrade type: its allowDowngrade means SAFE_DOWNGRADE, else UPGRADE (Kafka's
 * `UpdateFeaturesRequest`). ferrolog's brokers all run the same features, so no broker of the
 * cluster is asked (Kafka also checks every registered broker's supported range).
 */
import type { SupportedFeatureKey } from '../protocol/apis/api-versions.js'
import { ErrorCode } from '../protocol/error-codes.js'

export const UpgradeType = { UNKNOWN: 0, UPGRADE: 1, SAFE_DOWNGRADE: 2, UNSAFE_DOWNGRADE: 3 } as const

export interface FeatureUpdate {
  feature: string
  maxVersionLevel: number
  /** UpdateFeatures v1+'s; a v0 request's allowDowngrade is mapped by `upgradeTypeOf`. */
  upgradeType: number
}

export type FeatureUpdateOutcome = { errorCode: typeof ErrorCode.NONE; levels: Map<string, number> } | { errorCode: number; errorMessage: string }

/** Kafka's `FeatureUpdate.UpgradeType` of a request's update (v0: allowDowngrade). */
export function upgradeTypeOf(version: number, update: { allowDowngrade: boolean; upgradeType: number }): number {
  if (version === 0) return update.allowDowngrade ? UpgradeType.SAFE_DOWNGRADE : UpgradeType.UPGRADE
  return update.upgradeType >= UpgradeType.UPGRADE && update.upgradeType <= UpgradeType.UNSAFE_DOWNGRADE ? update.upgradeType : UpgradeType.UNKNOWN
}

/**
 * The levels after `updates`, or the error refusing them all. `nodeId` names this broker in
 * the messages as Kafka names its controller.
 */
export function applyFeatureUpdates(current: ReadonlyMap<string, number>, updates: readonly FeatureUpdate[], supported: readonly SupportedFeatureKey[], nodeId: number): FeatureUpdateOutcome {
  const levels = new Map(current)
  for (const update of updates) {
    const reason = reasonRefused(levels, update, supported, nodeId)
    if (reason !== null) {
      const message = `Invalid update version ${update.maxVersionLevel} for feature ${update.feature}. ${reason}`
      return { errorCode: ErrorCode.INVALID_UPDATE_VERSION, errorMessage: `The update failed for all features since the following feature had an error: ${message}` }
    }
    levels.set(update.feature, update.maxVersionLevel)
  }
  return { errorCode: ErrorCode.NONE, levels }
}

function reasonRefused(levels: ReadonlyMap<string, number>, update: FeatureUpdate, supported: readonly SupportedFeatureKey[], nodeId: number): string | null {
  const { feature, maxVersionLevel: level, upgradeType } = update
  if (upgradeType === UpgradeType.UNKNOWN) return 'The controller does not support the given upgrade type.'
  if (level < 0) return 'A feature version cannot be less than 0.'
  const range = supported.find((f) => f.name === feature) ?? { minVersion: 0, maxVersion: 0 }
  if (level < range.minVersion || level > range.maxVersion) {
    return range.maxVersion === 0
      ? `Local controller ${nodeId} does not support this feature.`
      : `Local controller ${nodeId} only supports versions ${versionRange(range.minVersion, range.maxVersion)}`
  }
  const currentLevel = levels.get(feature) ?? 0
  if (level < currentLevel && upgradeType === UpgradeType.UPGRADE) {
    return "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."
  }
  if (level > currentLevel && upgradeType !== UpgradeType.UPGRADE) return "Can't downgrade to a newer version."
  if (!supported.some((f) => f.name === feature)) return `Feature ${feature} not found.`
  return null
}

/** Kafka's `VersionRange.toString`. */
function versionRange(min: number, max: number): string {
  return min === max ? `${min}` : `${min}-${max}`
}
