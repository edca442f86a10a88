/**
 * AlterConfigs (key 33), v0-v2; v2+ flexible. Replaces the whole set of dynamic configs of each
 * resource with the ones given (IncrementalAlterConfigs, key 44, changes them one by one).
 *
 *   request  resources [resourceType, resourceName, configs [name, value (nullable)]]
 *            validateOnly
 *   response throttleTimeMs
 *            responses [errorCode, errorMessage (nullable), resourceType, resourceName]
 *
 * The response shape is IncrementalAlterConfigs' too (`AlterConfigsResourceResponse`).
 */
import type { Reader } from '../reader.js'
import type { Writer } from '../writer.js'
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 2

export interface AlterableConfig {
  name: string
  value: string | null
}

export interface AlterConfigsResource {
  resourceType: number
  resourceName: string
  configs: AlterableConfig[]
}

export interface AlterConfigsRequest {
  resources: AlterConfigsResource[]
  validateOnly: boolean
}

/** One resource's outcome, in AlterConfigs and IncrementalAlterConfigs responses. */
export interface AlterConfigsResourceResponse {
  errorCode: number
  errorMessage: string | null
  resourceType: number
  resourceName: string
}

export interface AlterConfigsResponse {
  throttleTimeMs: number
  responses: AlterConfigsResourceResponse[]
}

/** The response of both config-altering ApiKeys, in classic or flexible form. */
export function readAlterConfigsResponse(r: Reader, flexible: boolean): AlterConfigsResponse {
  const throttleTimeMs = r.int32()
  const responses = r.flexStructArray(flexible, (r): AlterConfigsResourceResponse => ({
    errorCode: r.int16(),
    errorMessage: r.flexNullableString(flexible),
    resourceType: r.int8(),
    resourceName: r.flexString(flexible),
  }))
  r.endStruct(flexible)
  return { throttleTimeMs, responses }
}

export function writeAlterConfigsResponse(w: Writer, flexible: boolean, response: AlterConfigsResponse): void {
  w.int32(response.throttleTimeMs)
  w.flexStructArray(flexible, response.responses, (w, res) => {
    w.int16(res.errorCode).flexNullableString(flexible, res.errorMessage)
    w.int8(res.resourceType).flexString(flexible, res.resourceName)
  })
  w.endStruct(flexible)
}

export const alterConfigsCodec: ApiCodec<AlterConfigsRequest, AlterConfigsResponse> = {
  apiKey: ApiKey.AlterConfigs,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const resources = r.flexStructArray(flexible, (r): AlterConfigsResource => ({
      resourceType: r.int8(),
      resourceName: r.flexString(flexible),
      configs: r.flexStructArray(flexible, (r): AlterableConfig => ({
        name: r.flexString(flexible),
        value: r.flexNullableString(flexible),
      })),
    }))
    const request = { resources, validateOnly: r.bool() }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexStructArray(flexible, request.resources, (w, resource) => {
      w.int8(resource.resourceType).flexString(flexible, resource.resourceName)
      w.flexStructArray(flexible, resource.configs, (w, c) => {
        w.flexString(flexible, c.name).flexNullableString(flexible, c.value)
      })
    })
    w.bool(request.validateOnly)
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    return readAlterConfigsResponse(r, version >= FLEXIBLE_FROM)
  },

  encodeResponse(w, version, response) {
    writeAlterConfigsResponse(w, version >= FLEXIBLE_FROM, response)
  },
}
