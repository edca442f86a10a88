/**
 * AddPartitionsToTxn (key 24), v0-v4; v3+ flexible.
 *
 *   v0-v3 request  transactionalId, producerId int64, producerEpoch int16,
 *                  topics [name, partitions [int32]]
 *   v4    request  transactions [transactionalId, producerId, producerEpoch, verifyOnly bool,
 *                                topics [name, partitions [int32]]]
 *   v0-v3 response throttleTimeMs, resultsByTopic [name, resultsByPartition [partitionIndex, errorCode]]
 *   v4    response throttleTimeMs, errorCode, resultsByTransaction [transactionalId, topicResults [...]]
 *
 * v4 (KIP-890 part 1) is the broker-to-coordinator form, batched, with `verifyOnly` to ask
 * whether partitions are in a transaction. v5 (transaction version 2, where the coordinator adds
 * partitions implicitly) is not served: clients then use v0-v3. The codec keeps one shape for
 * both: `transactions` (v0-v3 carry exactly one, verifyOnly false).
 */
import type { Reader } from '../reader.js'
import type { Writer } from '../writer.js'
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 3
const BATCHED_FROM = 4

export interface AddPartitionsToTxnTopic {
  name: string
  partitions: number[]
}

export interface AddPartitionsToTxnTransaction {
  transactionalId: string
  producerId: bigint
  producerEpoch: number
  /** v4+; false before. */
  verifyOnly: boolean
  topics: AddPartitionsToTxnTopic[]
}

export interface AddPartitionsToTxnRequest {
  /** v0-v3: exactly one. */
  transactions: AddPartitionsToTxnTransaction[]
}

export interface AddPartitionsToTxnTopicResult {
  name: string
  resultsByPartition: Array<{ partitionIndex: number; partitionErrorCode: number }>
}

export interface AddPartitionsToTxnResponse {
  throttleTimeMs: number
  /** v4+ top-level error; 0 before. */
  errorCode: number
  /** v0-v3: exactly one (its id is not on the wire). */
  resultsByTransaction: Array<{ transactionalId: string; topicResults: AddPartitionsToTxnTopicResult[] }>
}

function readTopics(r: Reader, flexible: boolean): AddPartitionsToTxnTopic[] {
  return r.flexStructArray(flexible, (r) => ({ name: r.flexString(flexible), partitions: r.flexInt32Array(flexible) }))
}

function writeTopics(w: Writer, flexible: boolean, topics: readonly AddPartitionsToTxnTopic[]): void {
  w.flexStructArray(flexible, topics, (w, t) => w.flexString(flexible, t.name).flexInt32Array(flexible, t.partitions))
}

function readTopicResults(r: Reader, flexible: boolean): AddPartitionsToTxnTopicResult[] {
  return r.flexStructArray(flexible, (r) => ({
    name: r.flexString(flexible),
    resultsByPartition: r.flexStructArray(flexible, (r) => ({ partitionIndex: r.int32(), partitionErrorCode: r.int16() })),
  }))
}

function writeTopicResults(w: Writer, flexible: boolean, results: readonly AddPartitionsToTxnTopicResult[]): void {
  w.flexStructArray(flexible, results, (w, t) => {
    w.flexString(flexible, t.name)
    w.flexStructArray(flexible, t.resultsByPartition, (w, p) => w.int32(p.partitionIndex).int16(p.partitionErrorCode))
  })
}

export const addPartitionsToTxnCodec: ApiCodec<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> = {
  apiKey: ApiKey.AddPartitionsToTxn,
  name: 'AddPartitionsToTxn',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    let transactions: AddPartitionsToTxnTransaction[]
    if (version >= BATCHED_FROM) {
      transactions = r.flexStructArray(flexible, (r) => ({
        transactionalId: r.flexString(flexible),
        producerId: r.int64(),
        producerEpoch: r.int16(),
        verifyOnly: r.bool(),
        topics: readTopics(r, flexible),
      }))
    } else {
      transactions = [{ transactionalId: r.flexString(flexible), producerId: r.int64(), producerEpoch: r.int16(), verifyOnly: false, topics: readTopics(r, flexible) }]
    }
    r.endStruct(flexible)
    return { transactions }
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    if (version >= BATCHED_FROM) {
      w.flexStructArray(flexible, request.transactions, (w, t) => {
        w.flexString(flexible, t.transactionalId).int64(t.producerId).int16(t.producerEpoch).bool(t.verifyOnly)
        writeTopics(w, flexible, t.topics)
      })
    } else {
      if (request.transactions.length !== 1 || request.transactions[0].verifyOnly) cannotCarry('AddPartitionsToTxn', version, 'other than one transaction to add to')
      const t = request.transactions[0]
      w.flexString(flexible, t.transactionalId).int64(t.producerId).int16(t.producerEpoch)
      writeTopics(w, flexible, t.topics)
    }
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = r.int32()
    let errorCode = 0
    let resultsByTransaction: AddPartitionsToTxnResponse['resultsByTransaction']
    if (version >= BATCHED_FROM) {
      errorCode = r.int16()
      resultsByTransaction = r.flexStructArray(flexible, (r) => ({ transactionalId: r.flexString(flexible), topicResults: readTopicResults(r, flexible) }))
    } else {
      resultsByTransaction = [{ transactionalId: '', topicResults: readTopicResults(r, flexible) }]
    }
    r.endStruct(flexible)
    return { throttleTimeMs, errorCode, resultsByTransaction }
  },

  encodeResponse(w, version, response) {
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    if (version >= BATCHED_FROM) {
      w.int16(response.errorCode)
      w.flexStructArray(flexible, response.resultsByTransaction, (w, t) => {
        w.flexString(flexible, t.transactionalId)
        writeTopicResults(w, flexible, t.topicResults)
      })
    } else {
      writeTopicResults(w, flexible, response.resultsByTransaction[0]?.topicResults ?? [])
    }
    w.endStruct(flexible)
  },
}
