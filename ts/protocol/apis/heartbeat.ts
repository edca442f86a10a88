/**
 * Heartbeat (key 12), v0-v4; v4+ flexible.
 *
 *   request  groupId, generationId int32, memberId, groupInstanceId v3+ (nullable)
 *   response throttleTimeMs v1+, errorCode
 *
 * A member learns of a rebalance from REBALANCE_IN_PROGRESS here.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 4

export interface HeartbeatRequest {
  groupId: string
  generationId: number
  memberId: string
  /** v3+; null before. */
  groupInstanceId: string | null
}

export interface HeartbeatResponse {
  /** v1+; 0 before. */
  throttleTimeMs: number
  errorCode: number
}

export const heartbeatCodec: ApiCodec<HeartbeatRequest, HeartbeatResponse> = {
  apiKey: ApiKey.Heartbeat,
  name: 'Heartbeat',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request: HeartbeatRequest = {
      groupId: r.flexString(flexible),
      generationId: r.int32(),
      memberId: r.flexString(flexible),
      groupInstanceId: version >= 3 ? r.flexNullableString(flexible) : null,
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexString(flexible, request.groupId).int32(request.generationId).flexString(flexible, request.memberId)
    if (version >= 3) w.flexNullableString(flexible, request.groupInstanceId)
    else if (request.groupInstanceId !== null) cannotCarry('Heartbeat', version, 'groupInstanceId')
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const response: HeartbeatResponse = { throttleTimeMs: version >= 1 ? r.int32() : 0, errorCode: r.int16() }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: throttleTimeMs.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 1) w.int32(response.throttleTimeMs)
    w.int16(response.errorCode).endStruct(flexible)
  },
}
