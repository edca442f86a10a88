/**
 * JoinGroup (key 11), v0-v9; v6+ flexible.
 *
 *   request  groupId, sessionTimeoutMs int32, rebalanceTimeoutMs int32 v1+, memberId,
 *            groupInstanceId v5+ (nullable), protocolType,
 *            protocols [name, metadata bytes], reason v8+ (nullable)
 *   response throttleTimeMs v2+, errorCode, generationId, protocolType v7+ (nullable),
 *            protocolName (nullable v7+), leader, skipAssignment bool v9+, memberId,
 *            members [memberId, groupInstanceId v5+ (nullable), metadata bytes]
 *
 * From v4 a new member joins twice (MEMBER_ID_REQUIRED, then with the id it was given). Protocol
 * metadata (for consumers, a subscription: see ../consumer-protocol.ts) stays opaque bytes, views
 * into the buffer decoded.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 6

export interface JoinGroupRequestProtocol {
  name: string
  metadata: Buffer
}

export interface JoinGroupRequest {
  groupId: string
  sessionTimeoutMs: number
  /** v1+; -1 before (the coordinator then uses sessionTimeoutMs). */
  rebalanceTimeoutMs: number
  memberId: string
  /** v5+; null before. */
  groupInstanceId: string | null
  protocolType: string
  protocols: JoinGroupRequestProtocol[]
  /** v8+; null before. */
  reason: string | null
}

export interface JoinGroupResponseMember {
  memberId: string
  /** v5+; null before. */
  groupInstanceId: string | null
  metadata: Buffer
}

export interface JoinGroupResponse {
  /** v2+; 0 before. */
  throttleTimeMs: number
  errorCode: number
  generationId: number
  /** v7+; null before. */
  protocolType: string | null
  /** Nullable from v7; before, null is sent as '' (as Kafka's JoinGroupResponse does). */
  protocolName: string | null
  leader: string
  /** v9+; false before. */
  skipAssignment: boolean
  memberId: string
  members: JoinGroupResponseMember[]
}

export const joinGroupCodec: ApiCodec<JoinGroupRequest, JoinGroupResponse> = {
  apiKey: ApiKey.JoinGroup,
  name: 'JoinGroup',
  minVersion: 0,
  maxVersion: 9,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request: JoinGroupRequest = {
      groupId: r.flexString(flexible),
      sessionTimeoutMs: r.int32(),
      rebalanceTimeoutMs: version >= 1 ? r.int32() : -1,
      memberId: r.flexString(flexible),
      groupInstanceId: version >= 5 ? r.flexNullableString(flexible) : null,
      protocolType: r.flexString(flexible),
      protocols: r.flexStructArray(flexible, (r): JoinGroupRequestProtocol => ({
        name: r.flexString(flexible),
        metadata: r.flexBytes(flexible),
      })),
      reason: version >= 8 ? r.flexNullableString(flexible) : null,
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    // Ignorable: rebalanceTimeoutMs, reason.
    const flexible = version >= FLEXIBLE_FROM
    w.flexString(flexible, request.groupId).int32(request.sessionTimeoutMs)
    if (version >= 1) w.int32(request.rebalanceTimeoutMs)
    w.flexString(flexible, request.memberId)
    if (version >= 5) w.flexNullableString(flexible, request.groupInstanceId)
    else if (request.groupInstanceId !== null) cannotCarry('JoinGroup', version, 'groupInstanceId')
    w.flexString(flexible, request.protocolType)
    w.flexStructArray(flexible, request.protocols, (w, p) => {
      w.flexString(flexible, p.name).flexBytes(flexible, p.metadata)
    })
    if (version >= 8) w.flexNullableString(flexible, request.reason)
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const response: JoinGroupResponse = {
      throttleTimeMs: version >= 2 ? r.int32() : 0,
      errorCode: r.int16(),
      generationId: r.int32(),
      protocolType: version >= 7 ? r.flexNullableString(flexible) : null,
      protocolName: version >= 7 ? r.flexNullableString(flexible) : r.flexString(flexible),
      leader: r.flexString(flexible),
      skipAssignment: version >= 9 ? r.bool() : false,
      memberId: r.flexString(flexible),
      members: r.flexStructArray(flexible, (r): JoinGroupResponseMember => ({
        memberId: r.flexString(flexible),
        groupInstanceId: version >= 5 ? r.flexNullableString(flexible) : null,
        metadata: r.flexBytes(flexible),
      })),
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: throttleTimeMs, protocolType, members' groupInstanceId.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 2) w.int32(response.throttleTimeMs)
    w.int16(response.errorCode).int32(response.generationId)
    if (version >= 7) {
      w.flexNullableString(flexible, response.protocolType).flexNullableString(flexible, response.protocolName)
    } else {
      w.flexString(flexible, response.protocolName ?? '')
    }
    w.flexString(flexible, response.leader)
    if (version >= 9) w.bool(response.skipAssignment)
    else if (response.skipAssignment) cannotCarry('JoinGroup', version, 'skipAssignment')
    w.flexString(flexible, response.memberId)
    w.flexStructArray(flexible, response.members, (w, m) => {
      w.flexString(flexible, m.memberId)
      if (version >= 5) w.flexNullableString(flexible, m.groupInstanceId)
      w.flexBytes(flexible, m.metadata)
    })
    w.endStruct(flexible)
  },
}
