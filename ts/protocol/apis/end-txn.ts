/**
 * EndTxn (key 26), v0-v4; v3+ flexible.
 *
 *   request  transactionalId, producerId int64, producerEpoch int16, committed bool
 *   response throttleTimeMs, errorCode
 *
 * v4 has the shape of v3 (KIP-890 part 1: the client understands TRANSACTION_ABORTABLE). v5
 * (transaction version 2: the response carries the bumped producer id and epoch) is not served.
 */
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 3

export interface EndTxnRequest {
  transactionalId: string
  producerId: bigint
  producerEpoch: number
  /** True to commit, false to abort. */
  committed: boolean
}

export interface EndTxnResponse {
  throttleTimeMs: number
  errorCode: number
}

export const endTxnCodec: ApiCodec<EndTxnRequest, EndTxnResponse> = {
  apiKey: ApiKey.EndTxn,
  name: 'EndTxn',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request = { transactionalId: r.flexString(flexible), producerId: r.int64(), producerEpoch: r.int16(), committed: r.bool() }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexString(flexible, request.transactionalId).int64(request.producerId).int16(request.producerEpoch).bool(request.committed)
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
