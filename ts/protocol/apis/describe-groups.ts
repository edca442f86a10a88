/**
 * DescribeGroups (key 15), v0-v6; v5+ flexible.
 *
 *   request  groups []string, includeAuthorizedOperations bool v3+
 *   response throttleTimeMs v1+
 *            groups [errorCode, errorMessage v6+ (nullable), groupId, groupState, protocolType,
 *                    protocolData,
 *                    members [memberId, groupInstanceId v4+ (nullable), clientId, clientHost,
 *                             memberMetadata bytes, memberAssignment bytes],
 *                    authorizedOperations int32 v3+]
 *
 * v6 (KIP-1043, Kafka 4.0) adds the error message and answers an unknown group with
 * GROUP_ID_NOT_FOUND, where earlier versions describe it as Dead with no members.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import type { Reader } from '../reader.js'
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 5
/** The "authorized operations were not requested" value of authorizedOperations. */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648

export interface DescribeGroupsRequest {
  groups: string[]
  /** v3+; false before. */
  includeAuthorizedOperations: boolean
}

export interface DescribedGroupMember {
  memberId: string
  /** v4+; null before. */
  groupInstanceId: string | null
  clientId: string
  clientHost: string
  memberMetadata: Buffer
  memberAssignment: Buffer
}

export interface DescribedGroup {
  errorCode: number
  /** v6+; null before. */
  errorMessage: string | null
  groupId: string
  groupState: string
  protocolType: string
  protocolData: string
  members: DescribedGroupMember[]
  /** v3+; AUTHORIZED_OPERATIONS_OMITTED before. */
  authorizedOperations: number
}

export interface DescribeGroupsResponse {
  /** v1+; 0 before. */
  throttleTimeMs: number
  groups: DescribedGroup[]
}

export const describeGroupsCodec: ApiCodec<DescribeGroupsRequest, DescribeGroupsResponse> = {
  apiKey: ApiKey.DescribeGroups,
  name: 'DescribeGroups',
  minVersion: 0,
  maxVersion: 6,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request: DescribeGroupsRequest = {
      groups: r.flexStringArray(flexible),
      includeAuthorizedOperations: version >= 3 ? r.bool() : false,
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexStringArray(flexible, request.groups)
    if (version >= 3) w.bool(request.includeAuthorizedOperations)
    else if (request.includeAuthorizedOperations) cannotCarry('DescribeGroups', version, 'includeAuthorizedOperations')
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const readMember = (r: Reader): DescribedGroupMember => ({
      memberId: r.flexString(flexible),
      groupInstanceId: version >= 4 ? r.flexNullableString(flexible) : null,
      clientId: r.flexString(flexible),
      clientHost: r.flexString(flexible),
      memberMetadata: r.flexBytes(flexible),
      memberAssignment: r.flexBytes(flexible),
    })
    const readGroup = (r: Reader): DescribedGroup => ({
      errorCode: r.int16(),
      errorMessage: version >= 6 ? r.flexNullableString(flexible) : null,
      groupId: r.flexString(flexible),
      groupState: r.flexString(flexible),
      protocolType: r.flexString(flexible),
      protocolData: r.flexString(flexible),
      members: r.flexStructArray(flexible, readMember),
      authorizedOperations: version >= 3 ? r.int32() : AUTHORIZED_OPERATIONS_OMITTED,
    })
    const response: DescribeGroupsResponse = {
      throttleTimeMs: version >= 1 ? r.int32() : 0,
      groups: r.flexStructArray(flexible, readGroup),
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: throttleTimeMs, members' groupInstanceId.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 1) w.int32(response.throttleTimeMs)
    w.flexStructArray(flexible, response.groups, (w, g) => {
      w.int16(g.errorCode)
      if (version >= 6) w.flexNullableString(flexible, g.errorMessage)
      else if (g.errorMessage !== null) cannotCarry('DescribeGroups', version, 'errorMessage')
      w.flexString(flexible, g.groupId).flexString(flexible, g.groupState)
      w.flexString(flexible, g.protocolType).flexString(flexible, g.protocolData)
      w.flexStructArray(flexible, g.members, (w, m) => {
        w.flexString(flexible, m.memberId)
        if (version >= 4) w.flexNullableString(flexible, m.groupInstanceId)
        w.flexString(flexible, m.clientId).flexString(flexible, m.clientHost)
        w.flexBytes(flexible, m.memberMetadata).flexBytes(flexible, m.memberAssignment)
      })
      if (version >= 3) w.int32(g.authorizedOperations)
      else if (g.authorizedOperations !== AUTHORIZED_OPERATIONS_OMITTED) cannotCarry('DescribeGroups', version, 'authorizedOperations')
    })
    w.endStruct(flexible)
  },
}
