/**
 * AddOffsetsToTxn (key 25), v0-v3; v3+ flexible.
 *
 *   request  transactionalId, producerId int64, producerEpoch int16, groupId
 *   response throttleTimeMs, errorCode
 *
 * v4 (KIP-890: the TRANSACTION_ABORTABLE error) has the shape of v3; not served, as
 * AddPartitionsToTxn v5 and EndTxn v5 are not.
 */
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 3

export interface AddOffsetsToTxnRequest {
  transactionalId: string
  producerId: bigint
  producerEpoch: number
  groupId: string
}

export interface AddOffsetsToTxnResponse {
  throttleTimeMs: number
  errorCode: number
}

export const addOffsetsToTxnCodec: ApiCodec<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse> = {
  apiKey: ApiKey.AddOffsetsToTxn,
  name: 'AddOffsetsToTxn',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request = { transactionalId: r.flexString(flexible), producerId: r.int64(), producerEpoch: r.int16(), groupId: r.flexString(flexible) }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexString(flexible, request.transactionalId).int64(request.producerId).int16(request.producerEpoch).flexString(flexible, request.groupId)
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const response = { throttleTimeMs: r.int32(), errorCode: r.int16() }
    r.endStruct(version >= FLEXIBLE_FROM)
    return response
  },

  encodeResponse(w, version, response) {
    w.int32(response.throttleTimeMs).int16(response.errorCode)
    w.endStruct(version >= FLEXIBLE_FROM)
  },
}
