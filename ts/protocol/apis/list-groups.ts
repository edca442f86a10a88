/**
 * ListGroups (key 16), v0-v5; v3+ flexible.
 *
 *   request  statesFilter []string v4+ (KIP-518), typesFilter []string v5+ (KIP-848)
 *   response throttleTimeMs v1+, errorCode,
 *            groups [groupId, protocolType, groupState v4+, groupType v5+]
 *
 * An empty filter lists every group; v0-v2 requests have no fields at all.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 3

export interface ListGroupsRequest {
  /** v4+; [] before. */
  statesFilter: string[]
  /** v5+; [] before. */
  typesFilter: string[]
}

export interface ListedGroup {
  groupId: string
  protocolType: string
  /** v4+; '' before. */
  groupState: string
  /** v5+; '' before. */
  groupType: string
}

export interface ListGroupsResponse {
  /** v1+; 0 before. */
  throttleTimeMs: number
  errorCode: number
  groups: ListedGroup[]
}

export const listGroupsCodec: ApiCodec<ListGroupsRequest, ListGroupsResponse> = {
  apiKey: ApiKey.ListGroups,
  name: 'ListGroups',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request: ListGroupsRequest = {
      statesFilter: version >= 4 ? r.flexStringArray(flexible) : [],
      typesFilter: version >= 5 ? r.flexStringArray(flexible) : [],
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 4) w.flexStringArray(flexible, request.statesFilter)
    else if (request.statesFilter.length > 0) cannotCarry('ListGroups', version, 'statesFilter')
    if (version >= 5) w.flexStringArray(flexible, request.typesFilter)
    else if (request.typesFilter.length > 0) cannotCarry('ListGroups', version, 'typesFilter')
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const response: ListGroupsResponse = {
      throttleTimeMs: version >= 1 ? r.int32() : 0,
      errorCode: r.int16(),
      groups: r.flexStructArray(flexible, (r): ListedGroup => ({
        groupId: r.flexString(flexible),
        protocolType: r.flexString(flexible),
        groupState: version >= 4 ? r.flexString(flexible) : '',
        groupType: version >= 5 ? r.flexString(flexible) : '',
      })),
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: throttleTimeMs, groupState, groupType.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 1) w.int32(response.throttleTimeMs)
    w.int16(response.errorCode)
    w.flexStructArray(flexible, response.groups, (w, g) => {
      w.flexString(flexible, g.groupId).flexString(flexible, g.protocolType)
      if (version >= 4) w.flexString(flexible, g.groupState)
      if (version >= 5) w.flexString(flexible, g.groupType)
    })
    w.endStruct(flexible)
  },
}
