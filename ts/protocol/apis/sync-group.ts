/**
 * SyncGroup (key 14), v0-v5; v4+ flexible.
 *
 *   request  groupId, generationId int32, memberId, groupInstanceId v3+ (nullable),
 *            protocolType v5+ (nullable), protocolName v5+ (nullable),
 *            assignments [memberId, assignment bytes]
 *   response throttleTimeMs v1+, errorCode, protocolType v5+ (nullable),
 *            protocolName v5+ (nullable), assignment bytes
 *
 * Only the leader sends assignments; the coordinator hands each member its own. Assignments
 * (for consumers: see ../consumer-protocol.ts) stay opaque bytes.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 4

export interface SyncGroupRequestAssignment {
  memberId: string
  assignment: Buffer
}

export interface SyncGroupRequest {
  groupId: string
  generationId: number
  memberId: string
  /** v3+; null before. */
  groupInstanceId: string | null
  /** v5+; null before. */
  protocolType: string | null
  /** v5+; null before. */
  protocolName: string | null
  assignments: SyncGroupRequestAssignment[]
}

export interface SyncGroupResponse {
  /** v1+; 0 before. */
  throttleTimeMs: number
  errorCode: number
  /** v5+; null before. */
  protocolType: string | null
  /** v5+; null before. */
  protocolName: string | null
  assignment: Buffer
}

export const syncGroupCodec: ApiCodec<SyncGroupRequest, SyncGroupResponse> = {
  apiKey: ApiKey.SyncGroup,
  name: 'SyncGroup',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request: SyncGroupRequest = {
      groupId: r.flexString(flexible),
      generationId: r.int32(),
      memberId: r.flexString(flexible),
      groupInstanceId: version >= 3 ? r.flexNullableString(flexible) : null,
      protocolType: version >= 5 ? r.flexNullableString(flexible) : null,
      protocolName: version >= 5 ? r.flexNullableString(flexible) : null,
      assignments: r.flexStructArray(flexible, (r): SyncGroupRequestAssignment => ({
        memberId: r.flexString(flexible),
        assignment: r.flexBytes(flexible),
      })),
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    // Ignorable: protocolType, protocolName.
    const flexible = version >= FLEXIBLE_FROM
    w.flexString(flexible, request.groupId).int32(request.generationId).flexString(flexible, request.memberId)
    if (version >= 3) w.flexNullableString(flexible, request.groupInstanceId)
    else if (request.groupInstanceId !== null) cannotCarry('SyncGroup', version, 'groupInstanceId')
    if (version >= 5) {
      w.flexNullableString(flexible, request.protocolType).flexNullableString(flexible, request.protocolName)
    }
    w.flexStructArray(flexible, request.assignments, (w, a) => {
      w.flexString(flexible, a.memberId).flexBytes(flexible, a.assignment)
    })
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const response: SyncGroupResponse = {
      throttleTimeMs: version >= 1 ? r.int32() : 0,
      errorCode: r.int16(),
      protocolType: version >= 5 ? r.flexNullableString(flexible) : null,
      protocolName: version >= 5 ? r.flexNullableString(flexible) : null,
      assignment: r.flexBytes(flexible),
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: throttleTimeMs, protocolType, protocolName.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 1) w.int32(response.throttleTimeMs)
    w.int16(response.errorCode)
    if (version >= 5) {
      w.flexNullableString(flexible, response.protocolType).flexNullableString(flexible, response.protocolName)
    }
    w.flexBytes(flexible, response.assignment).endStruct(flexible)
  },
}
