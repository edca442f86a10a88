/**
 * UpdateFeatures: changes the cluster's finalized feature levels (`kafka-features.sh
 * upgrade|downgrade|disable`), checked as Kafka's controller checks them
 * (ts/server/feature-control.ts), stored where the broker keeps them (a file of the data dir, or
 * etcd in a cluster: ts/server/finalized-features.ts) and answered once stored, so every broker
 * advertises the new levels in ApiVersions. validateOnly checks without storing.
 *
 * As Kafka's `ControllerApis.handleUpdateFeatures`: ALTER on the cluster, else
 * CLUSTER_AUTHORIZATION_FAILED; the outcome is the top-level error, and v0-v1 also list every
 * feature of the request with NONE when it succeeded (`UpdateFeaturesResponse.createWithErrors`:
 * none when it failed). A change the storage refuses is UNKNOWN_SERVER_ERROR, nothing changed.
 */
import type { UpdateFeaturesRequest, UpdateFeaturesResponse } from '../../protocol/apis/update-features.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation } from '../../security/authorizer/acl.js'
import { SUPPORTED_FEATURES } from '../broker-features.js'
import { applyFeatureUpdates, upgradeTypeOf, type FeatureUpdateOutcome } from '../feature-control.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'

/** Kafka's `Errors.CLUSTER_AUTHORIZATION_FAILED.message()`. */
const CLUSTER_AUTHORIZATION_FAILED_MESSAGE = 'Cluster authorization failed.'

export function updateFeaturesHandler(broker: BrokerContext): ApiHandler<UpdateFeaturesRequest, UpdateFeaturesResponse> {
  return async (request, context) => {
    const answer = (errorCode: number, errorMessage: string | null): UpdateFeaturesResponse => ({
      throttleTimeMs: 0,
      errorCode,
      errorMessage,
      results: errorCode === ErrorCode.NONE ? request.featureUpdates.map((u) => ({ feature: u.feature, errorCode: ErrorCode.NONE, errorMessage: null })) : [],
    })
    if (!broker.auth.authorizeCluster(context, AclOperation.ALTER)) return answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED_MESSAGE)
    const version = context.header.apiVersion
    const updates = request.featureUpdates.map((u) => ({ feature: u.feature, maxVersionLevel: u.maxVersionLevel, upgradeType: upgradeTypeOf(version, u) }))
    const check = applyFeatureUpdates(broker.finalizedFeatures.levels, updates, SUPPORTED_FEATURES, broker.config.nodeId)
    if (check.errorCode !== ErrorCode.NONE || request.validateOnly) return answer(check.errorCode, 'errorMessage' in check ? check.errorMessage : null)
    let refused: FeatureUpdateOutcome | null = null
    try {
      // Checked again against the levels stored now (another broker may have changed them since).
      await broker.finalizedFeatures.update((current) => {
        const outcome = applyFeatureUpdates(current.levels, updates, SUPPORTED_FEATURES, broker.config.nodeId)
        if ('levels' in outcome) return outcome.levels
        refused = outcome
        return null
      })
    } catch (err) {
      // Not stored (the file or etcd refused the write): nothing changed; Kafka's answer to an unexpected failure.
      broker.logger.error('cannot store the finalized features', { error: String(err) })
      return answer(ErrorCode.UNKNOWN_SERVER_ERROR, (err as Error).message)
    }
    const again = refused as FeatureUpdateOutcome | null
    if (again !== null && 'errorMessage' in again) return answer(again.errorCode, again.errorMessage)
    broker.logger.info('finalized features updated', { features: Object.fromEntries(broker.finalizedFeatures.levels) })
    return answer(ErrorCode.NONE, null)
  }
}
