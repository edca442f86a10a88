/**
 * OffsetCommit (key 8), v2-v9; v8+ flexible.
 *
 *   request  groupId, generationIdOrMemberEpoch int32, memberId,
 *            groupInstanceId v7+ (nullable), retentionTimeMs int64 v2-4,
 *            topics [name, partitions [partitionIndex, committedOffset int64,
 *                                      committedLeaderEpoch int32 v6+,
 *                                      committedMetadata (nullable)]]
 *   response throttleTimeMs v3+, topics [name, partitions [partitionIndex, errorCode]]
 *
 * Kafka 4.0 removed v0-v1 (KIP-896), so v2 is the floor. v9 (KIP-848) has the shape of v8 and
 * still names topics; topic ids replace names only in v10 (Kafka 4.1+), not served here.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import type { Reader } from '../reader.js'
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 8

export interface OffsetCommitRequestPartition {
  partitionIndex: number
  committedOffset: bigint
  /** v6+; -1 before. */
  committedLeaderEpoch: number
  committedMetadata: string | null
}

export interface OffsetCommitRequestTopic {
  name: string
  partitions: OffsetCommitRequestPartition[]
}

export interface OffsetCommitRequest {
  groupId: string
  generationIdOrMemberEpoch: number
  memberId: string
  /** v7+; null before. */
  groupInstanceId: string | null
  /** v2-4; -1n otherwise (the broker's offsets.retention.minutes applies). */
  retentionTimeMs: bigint
  topics: OffsetCommitRequestTopic[]
}

export interface OffsetCommitResponsePartition {
  partitionIndex: number
  errorCode: number
}

export interface OffsetCommitResponseTopic {
  name: string
  partitions: OffsetCommitResponsePartition[]
}

export interface OffsetCommitResponse {
  /** v3+; 0 before. */
  throttleTimeMs: number
  topics: OffsetCommitResponseTopic[]
}

export const offsetCommitCodec: ApiCodec<OffsetCommitRequest, OffsetCommitResponse> = {
  apiKey: ApiKey.OffsetCommit,
  name: 'OffsetCommit',
  minVersion: 2,
  maxVersion: 9,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const readPartition = (r: Reader): OffsetCommitRequestPartition => ({
      partitionIndex: r.int32(),
      committedOffset: r.int64(),
      committedLeaderEpoch: version >= 6 ? r.int32() : -1,
      committedMetadata: r.flexNullableString(flexible),
    })
    const readTopic = (r: Reader): OffsetCommitRequestTopic => ({
      name: r.flexString(flexible),
      partitions: r.flexStructArray(flexible, readPartition),
    })
    const request: OffsetCommitRequest = {
      groupId: r.flexString(flexible),
      generationIdOrMemberEpoch: r.int32(),
      memberId: r.flexString(flexible),
      groupInstanceId: version >= 7 ? r.flexNullableString(flexible) : null,
      retentionTimeMs: version <= 4 ? r.int64() : -1n,
      topics: r.flexStructArray(flexible, readTopic),
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    // Ignorable: retentionTimeMs, committedLeaderEpoch.
    const flexible = version >= FLEXIBLE_FROM
    w.flexString(flexible, request.groupId).int32(request.generationIdOrMemberEpoch)
    w.flexString(flexible, request.memberId)
    if (version >= 7) w.flexNullableString(flexible, request.groupInstanceId)
    else if (request.groupInstanceId !== null) cannotCarry('OffsetCommit', version, 'groupInstanceId')
    if (version <= 4) w.int64(request.retentionTimeMs)
    w.flexStructArray(flexible, request.topics, (w, t) => {
      w.flexString(flexible, t.name)
      w.flexStructArray(flexible, t.partitions, (w, p) => {
        w.int32(p.partitionIndex).int64(p.committedOffset)
        if (version >= 6) w.int32(p.committedLeaderEpoch)
        w.flexNullableString(flexible, p.committedMetadata)
      })
    })
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const readPartition = (r: Reader): OffsetCommitResponsePartition => ({ partitionIndex: r.int32(), errorCode: r.int16() })
    const readTopic = (r: Reader): OffsetCommitResponseTopic => ({
      name: r.flexString(flexible),
      partitions: r.flexStructArray(flexible, readPartition),
    })
    const response: OffsetCommitResponse = {
      throttleTimeMs: version >= 3 ? r.int32() : 0,
      topics: r.flexStructArray(flexible, readTopic),
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: throttleTimeMs.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 3) w.int32(response.throttleTimeMs)
    w.flexStructArray(flexible, response.topics, (w, t) => {
      w.flexString(flexible, t.name)
      w.flexStructArray(flexible, t.partitions, (w, p) => {
        w.int32(p.partitionIndex).int16(p.errorCode)
      })
    })
    w.endStruct(flexible)
  },
}
