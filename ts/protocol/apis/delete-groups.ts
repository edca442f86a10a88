/**
 * DeleteGroups (key 42), v0-v3; v2+ flexible.
 *
 *   request  groupsNames []string
 *   response throttleTimeMs,
 *            results [groupId, errorCode, errorMessage v3+ (nullable)]
 *
 * v1 is v0 (a throttled response is sent before the throttle); v3 adds the error message of
 * each group, the request being unchanged.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable
 * (errorMessage), as Kafka's generated code does.
 */
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 2

export interface DeleteGroupsRequest {
  groupsNames: string[]
}

export interface DeletableGroupResult {
  groupId: string
  errorCode: number
  /** v3+; null before. */
  errorMessage: string | null
}

export interface DeleteGroupsResponse {
  throttleTimeMs: number
  results: DeletableGroupResult[]
}

export const deleteGroupsCodec: ApiCodec<DeleteGroupsRequest, DeleteGroupsResponse> = {
  apiKey: ApiKey.DeleteGroups,
  name: 'DeleteGroups',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request: DeleteGroupsRequest = { groupsNames: r.flexStringArray(flexible) }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexStringArray(flexible, request.groupsNames).endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const response: DeleteGroupsResponse = {
      throttleTimeMs: r.int32(),
      results: r.flexStructArray(flexible, (r): DeletableGroupResult => ({
        groupId: r.flexString(flexible),
        errorCode: r.int16(),
        errorMessage: version >= 3 ? r.compactNullableString() : null,
      })),
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: errorMessage.
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    w.flexStructArray(flexible, response.results, (w, g) => {
      w.flexString(flexible, g.groupId).int16(g.errorCode)
      if (version >= 3) w.compactNullableString(g.errorMessage)
    })
    w.endStruct(flexible)
  },
}
