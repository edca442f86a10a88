/**
 * InitProducerId (key 22), v0-v5; v2+ flexible.
 *
 *   request  transactionalId (nullable), transactionTimeoutMs, producerId v3+, producerEpoch v3+
 *   response throttleTimeMs, errorCode, producerId, producerEpoch
 *
 * v3 (KIP-360) lets a producer bump its epoch by sending the producer id and epoch it has.
 * Encoding an older version with either set (they are not ignorable) throws. Kafka 4.x also
 * defines v6 (KIP-939, two-phase commit), still marked unstable; not served.
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 2

export interface InitProducerIdRequest {
  /** Null for an idempotent (non-transactional) producer. */
  transactionalId: string | null
  transactionTimeoutMs: number
  /** v3+; -1 before (and for a new producer). */
  producerId: bigint
  /** v3+; -1 before (and for a new producer). */
  producerEpoch: number
}

export interface InitProducerIdResponse {
  throttleTimeMs: number
  errorCode: number
  producerId: bigint
  producerEpoch: number
}

export const initProducerIdCodec: ApiCodec<InitProducerIdRequest, InitProducerIdResponse> = {
  apiKey: ApiKey.InitProducerId,
  name: 'InitProducerId',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const request = {
      transactionalId: r.flexNullableString(flexible),
      transactionTimeoutMs: r.int32(),
      producerId: version >= 3 ? r.int64() : -1n,
      producerEpoch: version >= 3 ? r.int16() : -1,
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexNullableString(flexible, request.transactionalId).int32(request.transactionTimeoutMs)
    if (version >= 3) {
      w.int64(request.producerId).int16(request.producerEpoch)
    } else if (request.producerId !== -1n || request.producerEpoch !== -1) {
      cannotCarry('InitProducerId', version, 'a producer id and epoch')
    }
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const response = { throttleTimeMs: r.int32(), errorCode: r.int16(), producerId: r.int64(), producerEpoch: r.int16() }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    w.int32(response.throttleTimeMs).int16(response.errorCode).int64(response.producerId).int16(response.producerEpoch)
    w.endStruct(version >= FLEXIBLE_FROM)
  },
}
