/**
 * DescribeTransactions (key 65), v0; flexible.
 *
 *   request  transactionalIds [string]
 *   response throttleTimeMs, transactionStates [errorCode, transactionalId, transactionState
 *            (Kafka's state name, e.g. "Ongoing"), transactionTimeoutMs int32,
 *            transactionStartTimeMs int64, producerId int64, producerEpoch int16,
 *            topics [topic, partitions [int32]]]
 */
import { ApiKey, type ApiCodec } from './api.js'

export interface DescribeTransactionsRequest {
  transactionalIds: string[]
}

export interface TransactionStateDescription {
  errorCode: number
  transactionalId: string
  transactionState: string
  transactionTimeoutMs: number
  transactionStartTimeMs: bigint
  producerId: bigint
  producerEpoch: number
  topics: Array<{ topic: string; partitions: number[] }>
}

export interface DescribeTransactionsResponse {
  throttleTimeMs: number
  transactionStates: TransactionStateDescription[]
}

export const describeTransactionsCodec: ApiCodec<DescribeTransactionsRequest, DescribeTransactionsResponse> = {
  apiKey: ApiKey.DescribeTransactions,
  name: 'DescribeTransactions',
  minVersion: 0,
  maxVersion: 0,
  flexibleFrom: 0,

  decodeRequest(r) {
    const request = { transactionalIds: r.flexStringArray(true) }
    r.endStruct(true)
    return request
  },

  encodeRequest(w, _version, request) {
    w.flexStringArray(true, request.transactionalIds).endStruct(true)
  },

  decodeResponse(r) {
    const response = {
      throttleTimeMs: r.int32(),
      transactionStates: r.flexStructArray(true, (r) => ({
        errorCode: r.int16(),
        transactionalId: r.compactString(),
        transactionState: r.compactString(),
        transactionTimeoutMs: r.int32(),
        transactionStartTimeMs: r.int64(),
        producerId: r.int64(),
        producerEpoch: r.int16(),
        topics: r.flexStructArray(true, (r) => ({ topic: r.compactString(), partitions: r.flexInt32Array(true) })),
      })),
    }
    r.endStruct(true)
    return response
  },

  encodeResponse(w, _version, response) {
    w.int32(response.throttleTimeMs)
    w.flexStructArray(true, response.transactionStates, (w, s) => {
      w.int16(s.errorCode).compactString(s.transactionalId).compactString(s.transactionState).int32(s.transactionTimeoutMs)
      w.int64(s.transactionStartTimeMs).int64(s.producerId).int16(s.producerEpoch)
      w.flexStructArray(true, s.topics, (w, t) => w.compactString(t.topic).flexInt32Array(true, t.partitions))
    })
    w.endStruct(true)
  },
}
