/**
 * ApiVersions: the version range of every API the broker serves (and only those), and from v3 on
 * the feature flags: those this broker supports (ts/server/broker-features.ts:
 * `transaction.version`) and the cluster's finalized levels with their epoch
 * (ts/server/finalized-features.ts, changed by UpdateFeatures).
 */
import type { ApiVersionsRequest, ApiVersionsResponse } from '../../protocol/apis/api-versions.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { supportedFeaturesFor } from '../broker-features.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function apiVersionsHandler(broker: BrokerContext): ApiHandler<ApiVersionsRequest, ApiVersionsResponse> {
  return (_request, context) => ({
    errorCode: ErrorCode.NONE,
    apiKeys: broker.supportedApis(),
    throttleTimeMs: 0,
    supportedFeatures: supportedFeaturesFor(context.header.apiVersion),
    finalizedFeaturesEpoch: broker.finalizedFeatures.epoch,
    finalizedFeatures: broker.finalizedFeatures.finalizedFeatureKeys(),
    zkMigrationReady: false,
  })
}
