/**
 * TxnOffsetCommit (key 28), v0-v4; v3+ flexible.
 *
 *   request  transactionalId, groupId, producerId int64, producerEpoch int16,
 *            generationId int32 v3+, memberId v3+, groupInstanceId v3+ (nullable),
 *            topics [name, partitions [partitionIndex, committedOffset int64,
 *                                      committedLeaderEpoch int32 v2+, committedMetadata (nullable)]]
 *   response throttleTimeMs, topics [name, partitions [partitionIndex, errorCode]]
 *
 * v3 (KIP-447) carries the consumer's group metadata so the coordinator can fence zombies.
 * v5 (KIP-890, TRANSACTION_ABORTABLE) is not served.
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 3

export interface TxnOffsetCommitRequestPartition {
  partitionIndex: number
  committedOffset: bigint
  /** v2+; -1 before. */
  committedLeaderEpoch: number
  committedMetadata: string | null
}

export interface TxnOffsetCommitRequest {
  transactionalId: string
  groupId: string
  producerId: bigint
  producerEpoch: number
  /** v3+; -1 before. */
  generationId: number
  /** v3+; '' before. */
  memberId: string
  /** v3+; null before. */
  groupInstanceId: string | null
  topics: Array<{ name: string; partitions: TxnOffsetCommitRequestPartition[] }>
}

export interface TxnOffsetCommitResponse {
  throttleTimeMs: number
  topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; errorCode: number }> }>
}

export const txnOffsetCommitCodec: ApiCodec<TxnOffsetCommitRequest, TxnOffsetCommitResponse> = {
  apiKey: ApiKey.TxnOffsetCommit,
  name: 'TxnOffsetCommit',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const f = version >= FLEXIBLE_FROM
    const request: TxnOffsetCommitRequest = {
      transactionalId: r.flexString(f),
      groupId: r.flexString(f),
      producerId: r.int64(),
      producerEpoch: r.int16(),
      generationId: version >= 3 ? r.int32() : -1,
      memberId: version >= 3 ? r.flexString(f) : '',
      groupInstanceId: version >= 3 ? r.flexNullableString(f) : null,
      topics: r.flexStructArray(f, (r) => ({
        name: r.flexString(f),
        partitions: r.flexStructArray(f, (r) => ({
          partitionIndex: r.int32(),
          committedOffset: r.int64(),
          committedLeaderEpoch: version >= 2 ? r.int32() : -1,
          committedMetadata: r.flexNullableString(f),
        })),
      })),
    }
    r.endStruct(f)
    return request
  },

  encodeRequest(w, version, request) {
    // Ignorable: committedLeaderEpoch.
    const f = version >= FLEXIBLE_FROM
    w.flexString(f, request.transactionalId).flexString(f, request.groupId).int64(request.producerId).int16(request.producerEpoch)
    if (version >= 3) w.int32(request.generationId).flexString(f, request.memberId).flexNullableString(f, request.groupInstanceId)
    else if (request.generationId !== -1 || request.memberId !== '' || request.groupInstanceId !== null) cannotCarry('TxnOffsetCommit', version, 'group metadata')
    w.flexStructArray(f, request.topics, (w, t) => {
      w.flexString(f, t.name)
      w.flexStructArray(f, t.partitions, (w, p) => {
        w.int32(p.partitionIndex).int64(p.committedOffset)
        if (version >= 2) w.int32(p.committedLeaderEpoch)
        w.flexNullableString(f, p.committedMetadata)
      })
    })
    w.endStruct(f)
  },

  decodeResponse(r, version) {
    const f = version >= FLEXIBLE_FROM
    const response = {
      throttleTimeMs: r.int32(),
      topics: r.flexStructArray(f, (r) => ({
        name: r.flexString(f),
        partitions: r.flexStructArray(f, (r) => ({ partitionIndex: r.int32(), errorCode: r.int16() })),
      })),
    }
    r.endStruct(f)
    return response
  },

  encodeResponse(w, version, response) {
    const f = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    w.flexStructArray(f, response.topics, (w, t) => {
      w.flexString(f, t.name)
      w.flexStructArray(f, t.partitions, (w, p) => w.int32(p.partitionIndex).int16(p.errorCode))
    })
    w.endStruct(f)
  },
}
