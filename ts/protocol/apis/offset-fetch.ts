/**
 * OffsetFetch (key 9), v1-v9; v6+ flexible.
 *
 *   request  groupId, topics [name, partitionIndexes []int32] (nullable v2+: all topics)   (v1-7)
 *            groups [groupId, memberId v9+ (nullable), memberEpoch int32 v9+,
 *                    topics (nullable) [name, partitionIndexes]]                         (v8+)
 *            requireStable bool v7+
 *   response throttleTimeMs v3+
 *            topics [name, partitions [partitionIndex, committedOffset int64,
 *                    committedLeaderEpoch int32 v5+, metadata (nullable), errorCode]],
 *            errorCode v2+                                                                (v1-7)
 *            groups [groupId, topics [the same, with the leader epoch], errorCode]       (v8+)
 *
 * Kafka 4.0 removed v0 (KIP-896). From v8 one request asks for several groups (KIP-709) and the
 * fields of v1-7 are gone, so a handler answers in the shape of the version asked. Topic ids
 * replace names only in v10 (Kafka 4.1+), not served here.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import type { Reader } from '../reader.js'
import type { Writer } from '../writer.js'
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 6

export interface OffsetFetchRequestTopic {
  name: string
  partitionIndexes: number[]
}

/** A topic of a v8+ group: the shape of OffsetFetchRequestTopic. */
export type OffsetFetchRequestTopics = OffsetFetchRequestTopic

export interface OffsetFetchRequestGroup {
  groupId: string
  /** v9+; null before. */
  memberId: string | null
  /** v9+; -1 before. */
  memberEpoch: number
  /** Null for every topic with a committed offset. */
  topics: OffsetFetchRequestTopics[] | null
}

export interface OffsetFetchRequest {
  /** v1-7; '' otherwise. */
  groupId: string
  /** v1-7, null (all topics) from v2; [] otherwise. */
  topics: OffsetFetchRequestTopic[] | null
  /** v8+; [] before. */
  groups: OffsetFetchRequestGroup[]
  /** v7+; false before. */
  requireStable: boolean
}

export interface OffsetFetchResponsePartition {
  partitionIndex: number
  committedOffset: bigint
  /** v5+; -1 before. */
  committedLeaderEpoch: number
  metadata: string | null
  errorCode: number
}

export interface OffsetFetchResponseTopic {
  name: string
  partitions: OffsetFetchResponsePartition[]
}

/** A partition of a v8+ group: the shape of OffsetFetchResponsePartition. */
export type OffsetFetchResponsePartitions = OffsetFetchResponsePartition
/** A topic of a v8+ group: the shape of OffsetFetchResponseTopic. */
export type OffsetFetchResponseTopics = OffsetFetchResponseTopic

export interface OffsetFetchResponseGroup {
  groupId: string
  topics: OffsetFetchResponseTopics[]
  errorCode: number
}

export interface OffsetFetchResponse {
  /** v3+; 0 before. */
  throttleTimeMs: number
  /** v1-7; [] otherwise. */
  topics: OffsetFetchResponseTopic[]
  /** v2-7; 0 otherwise. */
  errorCode: number
  /** v8+; [] before. */
  groups: OffsetFetchResponseGroup[]
}

// The topics' readers and writers leave their tagged fields to flexStructArray.

function readRequestTopic(r: Reader, flexible: boolean): OffsetFetchRequestTopic {
  return { name: r.flexString(flexible), partitionIndexes: r.flexInt32Array(flexible) }
}

function writeRequestTopic(w: Writer, flexible: boolean, topic: OffsetFetchRequestTopic): void {
  w.flexString(flexible, topic.name)
  w.flexInt32Array(flexible, topic.partitionIndexes)
}

function readResponseTopic(r: Reader, flexible: boolean, leaderEpoch: boolean): OffsetFetchResponseTopic {
  const name = r.flexString(flexible)
  const partitions = r.flexStructArray(flexible, (r): OffsetFetchResponsePartition => ({
    partitionIndex: r.int32(),
    committedOffset: r.int64(),
    committedLeaderEpoch: leaderEpoch ? r.int32() : -1,
    metadata: r.flexNullableString(flexible),
    errorCode: r.int16(),
  }))
  return { name, partitions }
}

function writeResponseTopic(w: Writer, flexible: boolean, leaderEpoch: boolean, topic: OffsetFetchResponseTopic): void {
  w.flexString(flexible, topic.name)
  w.flexStructArray(flexible, topic.partitions, (w, p) => {
    w.int32(p.partitionIndex).int64(p.committedOffset)
    if (leaderEpoch) w.int32(p.committedLeaderEpoch)
    w.flexNullableString(flexible, p.metadata).int16(p.errorCode)
  })
}

export const offsetFetchCodec: ApiCodec<OffsetFetchRequest, OffsetFetchResponse> = {
  apiKey: ApiKey.OffsetFetch,
  name: 'OffsetFetch',
  minVersion: 1,
  maxVersion: 9,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const readTopic = (r: Reader) => readRequestTopic(r, flexible)
    const request: OffsetFetchRequest = { groupId: '', topics: [], groups: [], requireStable: false }
    if (version <= 7) {
      request.groupId = r.flexString(flexible)
      request.topics = version >= 2 ? r.flexNullableStructArray(flexible, readTopic) : r.array(readTopic)
    } else {
      request.groups = r.flexStructArray(flexible, (r): OffsetFetchRequestGroup => ({
        groupId: r.flexString(flexible),
        memberId: version >= 9 ? r.flexNullableString(flexible) : null,
        memberEpoch: version >= 9 ? r.int32() : -1,
        topics: r.flexNullableStructArray(flexible, readTopic),
      }))
    }
    if (version >= 7) request.requireStable = r.bool()
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    // Ignorable: memberId, memberEpoch.
    const flexible = version >= FLEXIBLE_FROM
    const writeTopic = (w: Writer, topic: OffsetFetchRequestTopic) => writeRequestTopic(w, flexible, topic)
    if (version <= 7) {
      if (request.topics === null && version < 2) cannotCarry('OffsetFetch', version, 'a null topics array (all topics)')
      w.flexString(flexible, request.groupId).flexNullableStructArray(flexible, request.topics, writeTopic)
      if (request.groups.length > 0) cannotCarry('OffsetFetch', version, 'groups')
    } else {
      if (request.groupId !== '' || request.topics === null || request.topics.length > 0) {
        cannotCarry('OffsetFetch', version, 'a top-level groupId or topics')
      }
      w.flexStructArray(flexible, request.groups, (w, g) => {
        w.flexString(flexible, g.groupId)
        if (version >= 9) w.flexNullableString(flexible, g.memberId).int32(g.memberEpoch)
        w.flexNullableStructArray(flexible, g.topics, writeTopic)
      })
    }
    if (version >= 7) w.bool(request.requireStable)
    else if (request.requireStable) cannotCarry('OffsetFetch', version, 'requireStable')
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const response: OffsetFetchResponse = {
      throttleTimeMs: version >= 3 ? r.int32() : 0,
      topics: [],
      errorCode: 0,
      groups: [],
    }
    if (version <= 7) {
      response.topics = r.flexStructArray(flexible, (r) => readResponseTopic(r, flexible, version >= 5))
      if (version >= 2) response.errorCode = r.int16()
    } else {
      response.groups = r.flexStructArray(flexible, (r): OffsetFetchResponseGroup => ({
        groupId: r.flexString(flexible),
        topics: r.flexStructArray(flexible, (r) => readResponseTopic(r, flexible, true)),
        errorCode: r.int16(),
      }))
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: throttleTimeMs, committedLeaderEpoch, the top-level errorCode.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 3) w.int32(response.throttleTimeMs)
    if (version <= 7) {
      w.flexStructArray(flexible, response.topics, (w, t) => writeResponseTopic(w, flexible, version >= 5, t))
      if (version >= 2) w.int16(response.errorCode)
      if (response.groups.length > 0) cannotCarry('OffsetFetch', version, 'groups')
    } else {
      if (response.topics.length > 0) cannotCarry('OffsetFetch', version, 'top-level topics')
      w.flexStructArray(flexible, response.groups, (w, g) => {
        w.flexString(flexible, g.groupId)
        w.flexStructArray(flexible, g.topics, (w, t) => writeResponseTopic(w, flexible, true, t))
        w.int16(g.errorCode)
      })
    }
    w.endStruct(flexible)
  },
}
