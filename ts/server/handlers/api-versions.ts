/** ApiVersions: the version range of every API the broker serves (and only those). */
import type { ApiVersionsRequest, ApiVersionsResponse } from '../../protocol/apis/api-versions.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function apiVersionsHandler(broker: BrokerContext): ApiHandler<ApiVersionsRequest, ApiVersionsResponse> {
  return () => ({
    errorCode: ErrorCode.NONE,
    apiKeys: broker.supportedApis(),
    throttleTimeMs: 0,
    supportedFeatures: [],
    finalizedFeaturesEpoch: -1n,
    finalizedFeatures: [],
    zkMigrationReady: false,
  })
}
