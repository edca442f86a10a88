/** ApiVersions: the version range of every API the broker serves (and only those). */
import type { ApiVersionsRequest, ApiVersionsResponse } from '../../protocol/apis/api-versions.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { Broker } from '../broker.js'
import type { ApiHandler } from '../request-handler.js'

export function apiVersionsHandler(broker: Broker): ApiHandler<ApiVersionsRequest, ApiVersionsResponse> {
  return () => ({
    errorCode: ErrorCode.NONE,
    apiKeys: broker.requests.supportedApis(),
    throttleTimeMs: 0,
    supportedFeatures: [],
    finalizedFeaturesEpoch: -1n,
    finalizedFeatures: [],
    zkMigrationReady: false,
  })
}
