/**
 * DescribeConfigs (key 32), v1-v4 (Kafka 4.0 removed v0 and with it isDefault); v4+ flexible.
 *
 *   request  resources [resourceType, resourceName, configurationKeys (nullable)]
 *            includeSynonyms, includeDocumentation v3+
 *   response throttleTimeMs
 *            results [errorCode, errorMessage (nullable), resourceType, resourceName,
 *                     configs [name, value (nullable), readOnly, configSource, isSensitive,
 *                              synonyms [name, value (nullable), source],
 *                              configType v3+, documentation v3+ (nullable)]]
 *
 * Encoding an older version drops the ignorable configType and documentation and throws for
 * includeDocumentation=true (not ignorable).
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 4

/** Kafka's ConfigResource.Type codes. */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
  CLIENT_METRICS: 16,
  GROUP: 32,
} as const

export interface DescribeConfigsResource {
  resourceType: number
  resourceName: string
  /** Null for every key. */
  configurationKeys: string[] | null
}

export interface DescribeConfigsRequest {
  resources: DescribeConfigsResource[]
  includeSynonyms: boolean
  /** v3+; false before. */
  includeDocumentation: boolean
}

export interface DescribeConfigsSynonym {
  name: string
  value: string | null
  source: number
}

export interface DescribeConfigsResourceResult {
  name: string
  value: string | null
  readOnly: boolean
  configSource: number
  isSensitive: boolean
  synonyms: DescribeConfigsSynonym[]
  /** v3+; 0 (unknown) before. */
  configType: number
  /** v3+; "" before. */
  documentation: string | null
}

export interface DescribeConfigsResult {
  errorCode: number
  errorMessage: string | null
  resourceType: number
  resourceName: string
  configs: DescribeConfigsResourceResult[]
}

export interface DescribeConfigsResponse {
  throttleTimeMs: number
  results: DescribeConfigsResult[]
}

export const describeConfigsCodec: ApiCodec<DescribeConfigsRequest, DescribeConfigsResponse> = {
  apiKey: ApiKey.DescribeConfigs,
  name: 'DescribeConfigs',
  minVersion: 1,
  maxVersion: 4,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const resources = r.flexStructArray(flexible, (r): DescribeConfigsResource => ({
      resourceType: r.int8(),
      resourceName: r.flexString(flexible),
      configurationKeys: r.flexNullableStringArray(flexible),
    }))
    const request = {
      resources,
      includeSynonyms: r.bool(),
      includeDocumentation: version >= 3 ? r.bool() : false,
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexStructArray(flexible, request.resources, (w, resource) => {
      w.int8(resource.resourceType).flexString(flexible, resource.resourceName)
      w.flexNullableStringArray(flexible, resource.configurationKeys)
    })
    w.bool(request.includeSynonyms)
    if (version >= 3) w.bool(request.includeDocumentation)
    else if (request.includeDocumentation) cannotCarry('DescribeConfigs', version, 'includeDocumentation')
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = r.int32()
    const results = r.flexStructArray(flexible, (r): DescribeConfigsResult => ({
      errorCode: r.int16(),
      errorMessage: r.flexNullableString(flexible),
      resourceType: r.int8(),
      resourceName: r.flexString(flexible),
      configs: r.flexStructArray(flexible, (r): DescribeConfigsResourceResult => ({
        name: r.flexString(flexible),
        value: r.flexNullableString(flexible),
        readOnly: r.bool(),
        configSource: r.int8(),
        isSensitive: r.bool(),
        synonyms: r.flexStructArray(flexible, (r): DescribeConfigsSynonym => ({
          name: r.flexString(flexible),
          value: r.flexNullableString(flexible),
          source: r.int8(),
        })),
        configType: version >= 3 ? r.int8() : 0,
        documentation: version >= 3 ? r.flexNullableString(flexible) : '',
      })),
    }))
    r.endStruct(flexible)
    return { throttleTimeMs, results }
  },

  encodeResponse(w, version, response) {
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    w.flexStructArray(flexible, response.results, (w, result) => {
      w.int16(result.errorCode).flexNullableString(flexible, result.errorMessage)
      w.int8(result.resourceType).flexString(flexible, result.resourceName)
      w.flexStructArray(flexible, result.configs, (w, c) => {
        w.flexString(flexible, c.name).flexNullableString(flexible, c.value)
        w.bool(c.readOnly).int8(c.configSource).bool(c.isSensitive)
        w.flexStructArray(flexible, c.synonyms, (w, s) => {
          w.flexString(flexible, s.name).flexNullableString(flexible, s.value).int8(s.source)
        })
        if (version >= 3) w.int8(c.configType).flexNullableString(flexible, c.documentation)
      })
    })
    w.endStruct(flexible)
  },
}
