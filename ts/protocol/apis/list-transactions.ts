/**
 * ListTransactions (key 66), v0-v1; flexible.
 *
 *   request  stateFilters [string], producerIdFilters [int64], durationFilter int64 v1+ (-1: none;
 *            else only transactions running longer than this many ms)
 *   response throttleTimeMs, errorCode, unknownStateFilters [string],
 *            transactionStates [transactionalId, producerId int64, transactionState]
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

export interface ListTransactionsRequest {
  stateFilters: string[]
  producerIdFilters: bigint[]
  /** v1+; -1 before. */
  durationFilter: bigint
}

export interface ListTransactionsResponse {
  throttleTimeMs: number
  errorCode: number
  unknownStateFilters: string[]
  transactionStates: Array<{ transactionalId: string; producerId: bigint; transactionState: string }>
}

export const listTransactionsCodec: ApiCodec<ListTransactionsRequest, ListTransactionsResponse> = {
  apiKey: ApiKey.ListTransactions,
  name: 'ListTransactions',
  minVersion: 0,
  maxVersion: 1,
  flexibleFrom: 0,

  decodeRequest(r, version) {
    const request = {
      stateFilters: r.flexStringArray(true),
      producerIdFilters: r.flexArray(true, (r) => r.int64()),
      durationFilter: version >= 1 ? r.int64() : -1n,
    }
    r.endStruct(true)
    return request
  },

  encodeRequest(w, version, request) {
    w.flexStringArray(true, request.stateFilters).flexArray(true, request.producerIdFilters, (w, id) => w.int64(id))
    if (version >= 1) w.int64(request.durationFilter)
    else if (request.durationFilter !== -1n) cannotCarry('ListTransactions', version, 'a duration filter')
    w.endStruct(true)
  },

  decodeResponse(r) {
    const response = {
      throttleTimeMs: r.int32(),
      errorCode: r.int16(),
      unknownStateFilters: r.flexStringArray(true),
      transactionStates: r.flexStructArray(true, (r) => ({ transactionalId: r.compactString(), producerId: r.int64(), transactionState: r.compactString() })),
    }
    r.endStruct(true)
    return response
  },

  encodeResponse(w, _version, response) {
    w.int32(response.throttleTimeMs).int16(response.errorCode).flexStringArray(true, response.unknownStateFilters)
    w.flexStructArray(true, response.transactionStates, (w, s) => w.compactString(s.transactionalId).int64(s.producerId).compactString(s.transactionState))
    w.endStruct(true)
  },
}
