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

function unsupported(what: string, version: number): never {
  throw new Error(`OffsetFetch v${version} cannot carry ${what}`)
}

function readRequestTopic(r: Reader, flexible: boolean): OffsetFetchRequestTopic {
  const topic = { name: r.flexString(flexible), partitionIndexes: r.flexArray(flexible, (r) => r.int32()) }
  r.endStruct(flexible)
  return topic
}

function writeRequestTopic(w: Writer, flexible: boolean, topic: OffsetFetchRequestTopic): void {
  w.flexString(flexible, topic.name)
  w.flexArray(flexible, topic.partitionIndexes, (w, p) => w.int32(p))
  w.endStruct(flexible)
}

function readResponseTopic(r: Reader, flexible: boolean, leaderEpoch: boolean): OffsetFetchResponseTopic {
  const name = r.flexString(flexible)
  const partitions = r.flexArray(flexible, (r): OffsetFetchResponsePartition => {
    const partition = {
      partitionIndex: r.int32(),
      committedOffset: r.int64(),
      committedLeaderEpoch: leaderEpoch ? r.int32() : -1,
      metadata: r.flexNullableString(flexible),
      errorCode: r.int16(),
    }
    r.endStruct(flexible)
    return partition
  })
  r.endStruct(flexible)
  return { name, partitions }
}

function writeResponseTopic(w: Writer, flexible: boolean, leaderEpoch: boolean, topic: OffsetFetchResponseTopic): void {
  w.flexString(flexible, topic.name)
  w.flexArray(flexible, topic.partitions, (w, p) => {
    w.int32(p.partitionIndex).int64(p.committedOffset)
    if (leaderEpoch) w.int32(p.committedLeaderEpoch)
    w.flexNullableString(flexible, p.metadata).int16(p.errorCode).endStruct(flexible)
  })
  w.endStruct(flexible)
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
      request.topics = version >= 2 ? r.flexNullableArray(flexible, readTopic) : r.array(readTopic)
    } else {
      request.groups = r.flexArray(flexible, (r): OffsetFetchRequestGroup => {
        const group = {
          groupId: r.flexString(flexible),
          memberId: version >= 9 ? r.flexNullableString(flexible) : null,
          memberEpoch: version >= 9 ? r.int32() : -1,
          topics: r.flexNullableArray(flexible, readTopic),
        }
        r.endStruct(flexible)
        return group
      })
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
      if (request.topics === null && version < 2) unsupported('a null topics array (all topics)', version)
      w.flexString(flexible, request.groupId).flexNullableArray(flexible, request.topics, writeTopic)
      if (request.groups.length > 0) unsupported('groups', version)
    } else {
      if (request.groupId !== '' || request.topics === null || request.topics.length > 0) {
        unsupported('a top-level groupId or topics', version)
      }
      w.flexArray(flexible, request.groups, (w, g) => {
        w.flexString(flexible, g.groupId)
        if (version >= 9) w.flexNullableString(flexible, g.memberId).int32(g.memberEpoch)
        w.flexNullableArray(flexible, g.topics, writeTopic).endStruct(flexible)
      })
    }
    if (version >= 7) w.bool(request.requireStable)
    else if (request.requireStable) unsupported('requireStable', version)
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
      response.topics = r.flexArray(flexible, (r) => readResponseTopic(r, flexible, version >= 5))
      if (version >= 2) response.errorCode = r.int16()
    } else {
      response.groups = r.flexArray(flexible, (r): OffsetFetchResponseGroup => {
        const group = {
          groupId: r.flexString(flexible),
          topics: r.flexArray(flexible, (r) => readResponseTopic(r, flexible, true)),
          errorCode: r.int16(),
        }
        r.endStruct(flexible)
        return group
      })
    }
    r.endStruct(flexible)
    return response
  },

  encodeResponse(w, version, response) {
    // Ignorable: throttleTimeMs, committedLeaderEpoch, the top-level errorCode.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 3) w.int32(response.throttleTimeMs)
    if (version <= 7) {
      w.flexArray(flexible, response.topics, (w, t) => writeResponseTopic(w, flexible, version >= 5, t))
      if (version >= 2) w.int16(response.errorCode)
      if (response.groups.length > 0) unsupported('groups', version)
    } else {
      if (response.topics.length > 0) unsupported('top-level topics', version)
      w.flexArray(flexible, response.groups, (w, g) => {
        w.flexString(flexible, g.groupId)
        w.flexArray(flexible, g.topics, (w, t) => writeResponseTopic(w, flexible, true, t))
        w.int16(g.errorCode).endStruct(flexible)
      })
    }
    w.endStruct(flexible)
  },
}
