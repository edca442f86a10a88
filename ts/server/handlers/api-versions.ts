/**
 * ApiVersions: the version range of every API the broker serves (and only those), and from v3 on
 * the feature flags (ts/server/broker-features.ts: `transaction.version`).
 */
import type { ApiVersionsRequest, ApiVersionsResponse } from '../../protocol/apis/api-versions.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { FINALIZED_FEATURES, FINALIZED_FEATURES_EPOCH, supportedFeaturesFor } from '../broker-features.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function apiVersionsHandler(broker: BrokerContext): ApiHandler<ApiVersionsRequest, ApiVersionsResponse> {
  return (_request, context) => ({
    errorCode: ErrorCode.NONE,
    apiKeys: broker.supportedApis(),
    throttleTimeMs: 0,
    supportedFeatures: supportedFeaturesFor(context.header.apiVersion),
    finalizedFeaturesEpoch: FINALIZED_FEATURES_EPOCH,
    finalizedFeatures: [...FINALIZED_FEATURES],
    zkMigrationReady: false,
  })
}
