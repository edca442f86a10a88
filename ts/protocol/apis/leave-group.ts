/**
 * LeaveGroup (key 13), v0-v5; v4+ flexible.
 *
 *   request  groupId, memberId (v0-2),
 *            members [memberId, groupInstanceId (nullable), reason v5+ (nullable)]  (v3+)
 *   response throttleTimeMs v1+, errorCode,
 *            members [memberId, groupInstanceId (nullable), errorCode]  (v3+)
 *
 * Up to v2 one member leaves; from v3 a batch of members does (KIP-345), each with its outcome,
 * so a handler answers in the shape of the version asked.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import type { Reader } from '../reader.js'
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 4

export interface MemberIdentity {
  memberId: string
  groupInstanceId: string | null
  /** v5+; null before. */
  reason: string | null
}

export interface LeaveGroupRequest {
  groupId: string
  /** v0-2; '' otherwise. */
  memberId: string
  /** v3+; [] before. */
  members: MemberIdentity[]
}

export interface MemberResponse {
  memberId: string
  groupInstanceId: string | null
  errorCode: number
}

export interface LeaveGroupResponse {
  /** v1+; 0 before. */
  throttleTimeMs: number
  errorCode: number
  /** v3+; [] before. */
  members: MemberResponse[]
}

export const leaveGroupCodec: ApiCodec<LeaveGroupRequest, LeaveGroupResponse> = {
  apiKey: ApiKey.LeaveGroup,
  name: 'LeaveGroup',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const readMember = (r: Reader): MemberIdentity => ({
      memberId: r.flexString(flexible),
      groupInstanceId: r.flexNullableString(flexible),
      reason: version >= 5 ? r.flexNullableString(flexible) : null,
    })
    const request: LeaveGroupRequest = {
      groupId: r.flexString(flexible),
      memberId: version <= 2 ? r.flexString(flexible) : '',
      members: version >= 3 ? r.flexStructArray(flexible, readMember) : [],
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    // Ignorable: members' reason.
    const flexible = version >= FLEXIBLE_FROM
    w.flexString(flexible, request.groupId)
    if (version <= 2) {
      w.flexString(flexible, request.memberId)
      if (request.members.length > 0) cannotCarry('LeaveGroup', version, 'a batch of members')
    } else {
      if (request.memberId !== '') cannotCarry('LeaveGroup', version, 'a single memberId')
      w.flexStructArray(flexible, request.members, (w, m) => {
        w.flexString(flexible, m.memberId).flexNullableString(flexible, m.groupInstanceId)
        if (version >= 5) w.flexNullableString(flexible, m.reason)
      })
    }
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const readMember = (r: Reader): MemberResponse => ({
      memberId: r.flexString(flexible),
      groupInstanceId: r.flexNullableString(flexible),
      errorCode: r.int16(),
    })
    const response: LeaveGroupResponse = {
      throttleTimeMs: version >= 1 ? r.int32() : 0,
      errorCode: r.int16(),
      members: version >= 3 ? r.flexStructArray(flexible, readMember) : [],
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: throttleTimeMs.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 1) w.int32(response.throttleTimeMs)
    w.int16(response.errorCode)
    if (version >= 3) {
      w.flexStructArray(flexible, response.members, (w, m) => {
        w.flexString(flexible, m.memberId).flexNullableString(flexible, m.groupInstanceId).int16(m.errorCode)
      })
    } else if (response.members.length > 0) {
      cannotCarry('LeaveGroup', version, 'per-member results')
    }
    w.endStruct(flexible)
  },
}
