/**
 * IncrementalAlterConfigs (key 44, KIP-339), v0-v1; v1+ flexible. Each config of a resource is
 * changed by its own operation; the others keep their values.
 *
 *   request  resources [resourceType, resourceName,
 *                       configs [name, configOperation, value (nullable)]]
 *            validateOnly
 *   response throttleTimeMs
 *            responses [errorCode, errorMessage (nullable), resourceType, resourceName]
 *
 * configOperation: SET 0, DELETE 1 (back to the default), APPEND 2 and SUBTRACT 3 (list-typed
 * configs only). The response is AlterConfigs' (alter-configs.ts).
 */
import { ApiKey, type ApiCodec } from './api.js'
import { readAlterConfigsResponse, writeAlterConfigsResponse, type AlterConfigsResponse } from './alter-configs.js'

const FLEXIBLE_FROM = 1

/** Kafka's AlterConfigOp.OpType codes. */
export const ConfigOperation = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const

export interface IncrementalAlterableConfig {
  name: string
  configOperation: number
  value: string | null
}

export interface IncrementalAlterConfigsResource {
  resourceType: number
  resourceName: string
  configs: IncrementalAlterableConfig[]
}

export interface IncrementalAlterConfigsRequest {
  resources: IncrementalAlterConfigsResource[]
  validateOnly: boolean
}

export type IncrementalAlterConfigsResponse = AlterConfigsResponse

export const incrementalAlterConfigsCodec: ApiCodec<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse> = {
  apiKey: ApiKey.IncrementalAlterConfigs,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const resources = r.flexStructArray(flexible, (r): IncrementalAlterConfigsResource => ({
      resourceType: r.int8(),
      resourceName: r.flexString(flexible),
      configs: r.flexStructArray(flexible, (r): IncrementalAlterableConfig => ({
        name: r.flexString(flexible),
        configOperation: r.int8(),
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
        w.flexString(flexible, c.name).int8(c.configOperation).flexNullableString(flexible, c.value)
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
