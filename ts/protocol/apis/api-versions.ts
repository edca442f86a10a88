/**
 * ApiVersions (key 18), v0-v4; v3 is flexible (KIP-511 adds the client's software name); v4 is
 * v3 again (it only lifts KAFKA-17011's ban on a SupportedFeatures minVersion of 0).
 *
 *   request  v0-v2: (empty)
 *            v3:    clientSoftwareName, clientSoftwareVersion
 *   response v0:    errorCode, apiKeys [apiKey, minVersion, maxVersion]
 *            v1+:   + throttleTimeMs
 *            v3:    + tagged: 0 supportedFeatures, 1 finalizedFeaturesEpoch,
 *                             2 finalizedFeatures, 3 zkMigrationReady
 *
 * The response header is always v0 (no tagged fields), even for v3: a client reads it before it
 * knows what the broker supports. A request of a version the broker does not serve gets the v0
 * response shape with UNSUPPORTED_VERSION and the ApiVersions range it does serve, so the client
 * can retry: see `writeUnsupportedApiVersionsResponse`.
 *
 * Kafka 4.x also defines v5 (clusterId and nodeId in the request, REBOOTSTRAP_REQUIRED,
 * KIP-1242); the broker does not serve it yet: a v5 request gets UNSUPPORTED_VERSION and the
 * client retries with v4.
 */
import { ErrorCode } from '../error-codes.js'
import { writeResponseHeader } from '../header.js'
import type { Reader } from '../reader.js'
import type { Writer } from '../writer.js'
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 3

/** Every ApiVersions response, whatever its version, has a response header v0. */
export const API_VERSIONS_RESPONSE_HEADER_VERSION = 0

export interface ApiVersionsRequest {
  /** v3+; "" before. */
  clientSoftwareName: string
  /** v3+; "" before. */
  clientSoftwareVersion: string
}

export interface ApiVersion {
  apiKey: number
  minVersion: number
  maxVersion: number
}

export interface SupportedFeatureKey {
  name: string
  minVersion: number
  maxVersion: number
}

export interface FinalizedFeatureKey {
  name: string
  maxVersionLevel: number
  minVersionLevel: number
}

export interface ApiVersionsResponse {
  errorCode: number
  apiKeys: ApiVersion[]
  /** v1+; 0 before. */
  throttleTimeMs: number
  /** v3+ (tag 0); [] before. */
  supportedFeatures: SupportedFeatureKey[]
  /** v3+ (tag 1); -1 (unknown) before. */
  finalizedFeaturesEpoch: bigint
  /** v3+ (tag 2); [] before. */
  finalizedFeatures: FinalizedFeatureKey[]
  /** v3+ (tag 3); false before. */
  zkMigrationReady: boolean
}

const TAG_SUPPORTED_FEATURES = 0
const TAG_FINALIZED_FEATURES_EPOCH = 1
const TAG_FINALIZED_FEATURES = 2
const TAG_ZK_MIGRATION_READY = 3

function readSupportedFeature(r: Reader): SupportedFeatureKey {
  const feature = { name: r.compactString(), minVersion: r.int16(), maxVersion: r.int16() }
  r.skipTaggedFields()
  return feature
}

function readFinalizedFeature(r: Reader): FinalizedFeatureKey {
  const feature = { name: r.compactString(), maxVersionLevel: r.int16(), minVersionLevel: r.int16() }
  r.skipTaggedFields()
  return feature
}

export const apiVersionsCodec: ApiCodec<ApiVersionsRequest, ApiVersionsResponse> = {
  apiKey: ApiKey.ApiVersions,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    if (version < FLEXIBLE_FROM) return { clientSoftwareName: '', clientSoftwareVersion: '' }
    const request = { clientSoftwareName: r.compactString(), clientSoftwareVersion: r.compactString() }
    r.skipTaggedFields()
    return request
  },

  encodeRequest(w, version, request) {
    // Both fields are ignorable: older versions drop them.
    if (version < FLEXIBLE_FROM) return
    w.compactString(request.clientSoftwareName).compactString(request.clientSoftwareVersion).taggedFields()
  },

  decodeResponse(r, version) {
    const errorCode = r.int16()
    // A broker that does not serve `version` answers in the v0 shape (KIP-511), as Kafka's
    // ApiVersionsResponse.parse falls back to: read the rest as v0.
    if (errorCode === ErrorCode.UNSUPPORTED_VERSION) version = 0
    const flexible = version >= FLEXIBLE_FROM
    const response: ApiVersionsResponse = {
      errorCode,
      apiKeys: r.flexStructArray(flexible, (r) => ({ apiKey: r.int16(), minVersion: r.int16(), maxVersion: r.int16() })),
      throttleTimeMs: version >= 1 ? r.int32() : 0,
      supportedFeatures: [],
      finalizedFeaturesEpoch: -1n,
      finalizedFeatures: [],
      zkMigrationReady: false,
    }
    if (flexible) {
      r.readTaggedFields({
        [TAG_SUPPORTED_FEATURES]: (v) => (response.supportedFeatures = v.compactArray(readSupportedFeature)),
        [TAG_FINALIZED_FEATURES_EPOCH]: (v) => (response.finalizedFeaturesEpoch = v.int64()),
        [TAG_FINALIZED_FEATURES]: (v) => (response.finalizedFeatures = v.compactArray(readFinalizedFeature)),
        [TAG_ZK_MIGRATION_READY]: (v) => (response.zkMigrationReady = v.bool()),
      })
    }
    return response
  },

  encodeResponse(w, version, response) {
    // throttleTimeMs and the tagged feature fields are ignorable: older versions drop them.
    const flexible = version >= FLEXIBLE_FROM
    w.int16(response.errorCode)
    w.flexStructArray(flexible, response.apiKeys, (w, api) => {
      w.int16(api.apiKey).int16(api.minVersion).int16(api.maxVersion)
    })
    if (version >= 1) w.int32(response.throttleTimeMs)
    if (!flexible) return
    const { supportedFeatures, finalizedFeaturesEpoch, finalizedFeatures, zkMigrationReady } = response
    w.writeTaggedFields([
      [
        TAG_SUPPORTED_FEATURES,
        supportedFeatures.length === 0
          ? null
          : (v) =>
              v.compactArray(supportedFeatures, (v, f) => {
                v.compactString(f.name).int16(f.minVersion).int16(f.maxVersion).taggedFields()
              }),
      ],
      [TAG_FINALIZED_FEATURES_EPOCH, finalizedFeaturesEpoch === -1n ? null : (v) => v.int64(finalizedFeaturesEpoch)],
      [
        TAG_FINALIZED_FEATURES,
        finalizedFeatures.length === 0
          ? null
          : (v) =>
              v.compactArray(finalizedFeatures, (v, f) => {
                v.compactString(f.name).int16(f.maxVersionLevel).int16(f.minVersionLevel).taggedFields()
              }),
      ],
      [TAG_ZK_MIGRATION_READY, zkMigrationReady ? (v) => v.bool(true) : null],
    ])
  },
}

/**
 * The v0 body that answers an ApiVersions request of a version the broker does not serve
 * (KIP-511): UNSUPPORTED_VERSION, and in apiKeys only the ApiVersions range the broker serves.
 */
export function unsupportedApiVersionsResponse(): ApiVersionsResponse {
  return {
    errorCode: ErrorCode.UNSUPPORTED_VERSION,
    apiKeys: [{ apiKey: ApiKey.ApiVersions, minVersion: apiVersionsCodec.minVersion, maxVersion: apiVersionsCodec.maxVersion }],
    throttleTimeMs: 0,
    supportedFeatures: [],
    finalizedFeaturesEpoch: -1n,
    finalizedFeatures: [],
    zkMigrationReady: false,
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
