/**
 * ApiVersions (key 18), served v0-v4; v3+ flexible (KIP-511 adds the client's software name and
 * the tagged feature fields); v4 is v3 again (it only lifts KAFKA-17011's ban on a
 * SupportedFeatures minVersion of 0). v5 (clusterId and nodeId in the request,
 * REBOOTSTRAP_REQUIRED, KIP-1242) is not served: a v5 request gets UNSUPPORTED_VERSION and the
 * client retries with v4. The codecs are generated from Kafka's schemas (ts/protocol/messages).
 *
 * Two things set ApiVersions apart, both kept here:
 * - The response header is always v0 (no tagged fields), even for v3+: a client reads it before
 *   it knows what the broker supports (ts/server/kafka-apis.ts, ts/client/connection.ts).
 * - A request of a version the broker does not serve gets the v0 response shape with
 *   UNSUPPORTED_VERSION and the ApiVersions range it does serve, so the client can retry
 *   (`writeUnsupportedApiVersionsResponse`); reading a response whose errorCode is
 *   UNSUPPORTED_VERSION therefore reads the rest as v0, whatever version was asked.
 */
import { ErrorCode } from '../error-codes.js'
import { writeResponseHeader } from '../header.js'
import { apiVersionsRequestCodec, type ApiVersionsRequest } from '../messages/api-versions-request.js'
import {
  apiVersionsResponseCodec,
  defaultApiVersionsResponse,
  type ApiVersion,
  type ApiVersionsResponse,
  type FinalizedFeatureKey,
  type SupportedFeatureKey,
} from '../messages/api-versions-response.js'
import type { Writer } from '../writer.js'
import { ApiKey, servedCodec, type ApiCodec } from './api.js'

export type { ApiVersion, ApiVersionsRequest, ApiVersionsResponse, FinalizedFeatureKey, SupportedFeatureKey }

/** Every ApiVersions response, whatever its version, has a response header v0. */
export const API_VERSIONS_RESPONSE_HEADER_VERSION = 0

const served = servedCodec(apiVersionsRequestCodec, apiVersionsResponseCodec, 0, 4)

export const apiVersionsCodec: ApiCodec<ApiVersionsRequest, ApiVersionsResponse> = {
  ...served,
  decodeResponse(r, version) {
    // A broker that does not serve `version` answers in the v0 shape (KIP-511): read it as v0,
    // as Kafka's ApiVersionsResponse.parse falls back to.
    const at = r.pos
    const errorCode = r.int16()
    r.pos = at
    return served.decodeResponse(r, errorCode === ErrorCode.UNSUPPORTED_VERSION ? 0 : version)
  },
}

/**
 * The v0 body that answers an ApiVersions request of a version the broker does not serve
 * (KIP-511): UNSUPPORTED_VERSION, and in apiKeys only the ApiVersions range the broker serves.
 */
export function unsupportedApiVersionsResponse(): ApiVersionsResponse {
  return {
    ...defaultApiVersionsResponse(),
    errorCode: ErrorCode.UNSUPPORTED_VERSION,
    apiKeys: [{ apiKey: ApiKey.ApiVersions, minVersion: apiVersionsCodec.minVersion, maxVersion: apiVersionsCodec.maxVersion }],
  }
}

/**
 * Writes the whole answer (response header v0 and the v0 body, without the int32 size prefix)
 * to an ApiVersions request of an unsupported version, whose body need not be read at all.
 */
export function writeUnsupportedApiVersionsResponse(w: Writer, correlationId: number): void {
  writeResponseHeader(w, correlationId, false)
  apiVersionsCodec.encodeResponse(w, 0, unsupportedApiVersionsResponse())
}
