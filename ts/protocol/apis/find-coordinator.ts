/**
 * FindCoordinator (key 10), v0-v6; v3+ flexible.
 *
 *   request  key v0-3, keyType int8 v1+ (0 group, 1 transaction, 2 share),
 *            coordinatorKeys []string v4+ (KIP-699 batching)
 *   response throttleTimeMs v1+
 *            errorCode, errorMessage v1+ (nullable), nodeId, host, port      (v0-3)
 *            coordinators [key, nodeId, host, port, errorCode, errorMessage (nullable)]  (v4+)
 *
 * Up to v3 a request asks for one key and is answered at the top level; from v4 it asks for a
 * batch and gets one coordinator per key, so a handler answers in the shape of the version asked.
 * v5 (TRANSACTION_ABORTABLE) and v6 (share groups) add no fields.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 3

/** The values of keyType. */
export const CoordinatorType = {
  GROUP: 0,
  TRANSACTION: 1,
  SHARE: 2,
} as const

export interface FindCoordinatorRequest {
  /** v0-3; '' otherwise. */
  key: string
  /** v1+; 0 (group) before. */
  keyType: number
  /** v4+; [] before. */
  coordinatorKeys: string[]
}

export interface Coordinator {
  key: string
  nodeId: number
  host: string
  port: number
  errorCode: number
  errorMessage: string | null
}

export interface FindCoordinatorResponse {
  /** v1+; 0 before. */
  throttleTimeMs: number
  /** v0-3; 0 otherwise. */
  errorCode: number
  /** v1-3; '' otherwise (Kafka's default of a nullable string without one). */
  errorMessage: string | null
  /** v0-3; 0 otherwise. */
  nodeId: number
  /** v0-3; '' otherwise. */
  host: string
  /** v0-3; 0 otherwise. */
  port: number
  /** v4+; [] before. */
  coordinators: Coordinator[]
}

export const findCoordinatorCodec: ApiCodec<FindCoordinatorRequest, FindCoordinatorResponse> = {
  apiKey: ApiKey.FindCoordinator,
  name: 'FindCoordinator',
  minVersion: 0,
  maxVersion: 6,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request: FindCoordinatorRequest = {
      key: version <= 3 ? r.flexString(flexible) : '',
      keyType: version >= 1 ? r.int8() : 0,
      coordinatorKeys: version >= 4 ? r.flexStringArray(flexible) : [],
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    if (version <= 3) w.flexString(flexible, request.key)
    else if (request.key !== '') cannotCarry('FindCoordinator', version, 'a single key')
    if (version >= 1) w.int8(request.keyType)
    else if (request.keyType !== CoordinatorType.GROUP) cannotCarry('FindCoordinator', version, `keyType ${request.keyType}`)
    if (version >= 4) w.flexStringArray(flexible, request.coordinatorKeys)
    else if (request.coordinatorKeys.length > 0) cannotCarry('FindCoordinator', version, 'coordinatorKeys')
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const response: FindCoordinatorResponse = {
      throttleTimeMs: version >= 1 ? r.int32() : 0,
      errorCode: 0,
      errorMessage: '',
      nodeId: 0,
      host: '',
      port: 0,
      coordinators: [],
    }
    if (version <= 3) {
      response.errorCode = r.int16()
      if (version >= 1) response.errorMessage = r.flexNullableString(flexible)
      response.nodeId = r.int32()
      response.host = r.flexString(flexible)
      response.port = r.int32()
    } else {
      response.coordinators = r.flexStructArray(flexible, (r): Coordinator => ({
        key: r.flexString(flexible),
        nodeId: r.int32(),
        host: r.flexString(flexible),
        port: r.int32(),
        errorCode: r.int16(),
        errorMessage: r.flexNullableString(flexible),
      }))
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable (dropped by the versions without them): throttleTimeMs, errorMessage.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 1) w.int32(response.throttleTimeMs)
    if (version <= 3) {
      w.int16(response.errorCode)
      if (version >= 1) w.flexNullableString(flexible, response.errorMessage)
      w.int32(response.nodeId).flexString(flexible, response.host).int32(response.port)
      if (response.coordinators.length > 0) cannotCarry('FindCoordinator', version, 'coordinators')
    } else {
      if (response.errorCode !== 0 || response.nodeId !== 0 || response.host !== '' || response.port !== 0) {
        cannotCarry('FindCoordinator', version, 'a top-level coordinator or error')
      }
      w.flexStructArray(flexible, response.coordinators, (w, c) => {
        w.flexString(flexible, c.key).int32(c.nodeId).flexString(flexible, c.host).int32(c.port)
        w.int16(c.errorCode).flexNullableString(flexible, c.errorMessage)
      })
    }
    w.endStruct(flexible)
  },
}
