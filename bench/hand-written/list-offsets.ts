// The hand-written codec ferrolog served before issue 25 switched it to the generated one
// (ts/protocol/apis, ts/protocol/messages): kept here only as the baseline of
// bench/protocol-codecs.bench.ts. Nothing in ts/ imports it.
/**
 * ListOffsets (ApiKey 2), versions 0-9; flexible from 6. Facts from Kafka's
 * ListOffsetsRequest.json and ListOffsetsResponse.json; `[vN+]` marks the versions that carry a
 * field. (kafkajs still sends v0-v1, hence v0; Kafka 4 dropped v0.)
 *
 *   ListOffsetsRequest
 *     replicaId int32  isolationLevel int8 [v2+]
 *     topics [ListOffsetsTopic]
 *       name string
 *       partitions [ListOffsetsPartition]
 *         partitionIndex int32  currentLeaderEpoch int32 [v4+]  timestamp int64
 *         maxNumOffsets int32 [v0]
 *
 *   ListOffsetsResponse
 *     throttleTimeMs int32 [v2+]
 *     topics [ListOffsetsTopicResponse]
 *       name string
 *       partitions [ListOffsetsPartitionResponse]
 *         partitionIndex int32  errorCode int16  oldStyleOffsets [int64] [v0]
 *         timestamp int64 [v1+]  offset int64 [v1+]  leaderEpoch int32 [v4+]
 *
 * The timestamp of a request partition is a time or one of the special values -1 latest, -2
 * earliest, -3 max timestamp (v7+), -4 earliest local (v8+), -5 latest tiered (v9+); versions
 * 7-9 are the same on the wire as 6. No ListOffsets field is tagged.
 *
 * Conventions as in fetch.ts: fields missing from a version decode to Kafka's defaults, and
 * encoding throws for a non-ignorable one set to something else (isolationLevel before v2,
 * maxNumOffsets and oldStyleOffsets after v0, timestamp and offset in v0, leaderEpoch before v4);
 * tags are skipped when reading.
 */
import type { Reader } from '../../ts/protocol/reader.js'
import type { Writer } from '../../ts/protocol/writer.js'
import { ApiKey, type ApiCodec } from '../../ts/protocol/apis/api.js'
import { cannotCarry, checkVersion } from './common.js'

const MIN_VERSION = 0
const MAX_VERSION = 9
const FLEXIBLE_FROM = 6

/** The special timestamps of a ListOffsets request partition. */
export const ListOffsetsTimestamp = {
  LATEST: -1n,
  EARLIEST: -2n,
  MAX_TIMESTAMP: -3n,
  EARLIEST_LOCAL: -4n,
  LATEST_TIERED: -5n,
} as const

// ---------------------------------------------------------------------------------------------
// Types

export interface ListOffsetsRequest {
  /** The broker id of a follower, or -1 for a consumer. */
  replicaId: number
  /** [v2+] default 0 (READ_UNCOMMITTED). */
  isolationLevel: number
  topics: ListOffsetsTopic[]
}

export interface ListOffsetsTopic {
  name: string
  partitions: ListOffsetsPartition[]
}

export interface ListOffsetsPartition {
  partitionIndex: number
  /** [v4+] default -1. */
  currentLeaderEpoch: number
  timestamp: bigint
  /** [v0] default 1. */
  maxNumOffsets: number
}

export interface ListOffsetsResponse {
  /** [v2+] default 0. */
  throttleTimeMs: number
  topics: ListOffsetsTopicResponse[]
}

export interface ListOffsetsTopicResponse {
  name: string
  partitions: ListOffsetsPartitionResponse[]
}

export interface ListOffsetsPartitionResponse {
  partitionIndex: number
  errorCode: number
  /** [v0] default []. */
  oldStyleOffsets: bigint[]
  /** [v1+] default -1. */
  timestamp: bigint
  /** [v1+] default -1. */
  offset: bigint
  /** [v4+] default -1. */
  leaderEpoch: number
}

// ---------------------------------------------------------------------------------------------
// Request

function decodeRequest(r: Reader, version: number): ListOffsetsRequest {
  checkVersion('ListOffsets', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  const req: ListOffsetsRequest = {
    replicaId: r.int32(),
    isolationLevel: version >= 2 ? r.int8() : 0,
    topics: r.flexStructArray(flexible, (r) => {
      const name = r.flexString(flexible)
      const partitions = r.flexStructArray(flexible, (r): ListOffsetsPartition => ({
        partitionIndex: r.int32(),
        currentLeaderEpoch: version >= 4 ? r.int32() : -1,
        timestamp: r.int64(),
        maxNumOffsets: version === 0 ? r.int32() : 1,
      }))
      return { name, partitions }
    }),
  }
  r.endStruct(flexible)
  return req
}

function encodeRequest(w: Writer, version: number, req: ListOffsetsRequest): void {
  checkVersion('ListOffsets', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  w.int32(req.replicaId)
  if (version >= 2) w.int8(req.isolationLevel)
  else if (req.isolationLevel !== 0) cannotCarry('ListOffsets', version, 'a non-default isolationLevel')
  w.flexStructArray(flexible, req.topics, (w, t) => {
    w.flexString(flexible, t.name)
    w.flexStructArray(flexible, t.partitions, (w, p) => {
      w.int32(p.partitionIndex)
      if (version >= 4) w.int32(p.currentLeaderEpoch)
      w.int64(p.timestamp)
      if (version === 0) w.int32(p.maxNumOffsets)
      else if (p.maxNumOffsets !== 1) cannotCarry('ListOffsets', version, 'a non-default maxNumOffsets')
    })
  })
  w.endStruct(flexible)
}

// ---------------------------------------------------------------------------------------------
// Response

function decodeResponse(r: Reader, version: number): ListOffsetsResponse {
  checkVersion('ListOffsets', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  const res: ListOffsetsResponse = {
    throttleTimeMs: version >= 2 ? r.int32() : 0,
    topics: r.flexStructArray(flexible, (r) => {
      const name = r.flexString(flexible)
      const partitions = r.flexStructArray(flexible, (r): ListOffsetsPartitionResponse => ({
        partitionIndex: r.int32(),
        errorCode: r.int16(),
        oldStyleOffsets: version === 0 ? r.array((r) => r.int64()) : [],
        timestamp: version >= 1 ? r.int64() : -1n,
        offset: version >= 1 ? r.int64() : -1n,
        leaderEpoch: version >= 4 ? r.int32() : -1,
      }))
      return { name, partitions }
    }),
  }
  r.endStruct(flexible)
  return res
}

function encodeResponse(w: Writer, version: number, res: ListOffsetsResponse): void {
  checkVersion('ListOffsets', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  if (version >= 2) w.int32(res.throttleTimeMs)
  w.flexStructArray(flexible, res.topics, (w, t) => {
    w.flexString(flexible, t.name)
    w.flexStructArray(flexible, t.partitions, (w, p) => {
      w.int32(p.partitionIndex).int16(p.errorCode)
      if (version === 0) {
        w.array(p.oldStyleOffsets, (w, o) => w.int64(o))
        if (p.timestamp !== -1n || p.offset !== -1n) cannotCarry('ListOffsets', version, 'a non-default timestamp or offset')
      } else {
        if (p.oldStyleOffsets.length > 0) cannotCarry('ListOffsets', version, 'a non-default oldStyleOffsets')
        w.int64(p.timestamp).int64(p.offset)
      }
      if (version >= 4) w.int32(p.leaderEpoch)
      else if (p.leaderEpoch !== -1) cannotCarry('ListOffsets', version, 'a non-default leaderEpoch')
    })
  })
  w.endStruct(flexible)
}

export const listOffsetsCodec: ApiCodec<ListOffsetsRequest, ListOffsetsResponse> = {
  apiKey: ApiKey.ListOffsets,
  name: 'ListOffsets',
  minVersion: MIN_VERSION,
  maxVersion: MAX_VERSION,
  flexibleFrom: FLEXIBLE_FROM,
  decodeRequest,
  encodeRequest,
  decodeResponse,
  encodeResponse,
}
