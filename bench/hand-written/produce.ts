// The hand-written codec ferrolog served before issue 25 switched it to the generated one
// (ts/protocol/apis, ts/protocol/messages): kept here only as the baseline of
// bench/protocol-codecs.bench.ts. Nothing in ts/ imports it.
/**
 * Produce (ApiKey 0), versions 3-11; flexible from 9. Facts from Kafka's ProduceRequest.json and
 * ProduceResponse.json; `[vN+]` marks the versions that carry a field, `{tag N}` a tagged field.
 * (v0-2 predate message format v2 and transactions; Kafka 4 dropped them too.)
 *
 *   ProduceRequest
 *     transactionalId nullable string  acks int16  timeoutMs int32
 *     topicData [TopicProduceData]
 *       name string
 *       partitionData [PartitionProduceData]
 *         index int32  records nullable records
 *
 *   ProduceResponse
 *     responses [TopicProduceResponse]
 *       name string
 *       partitionResponses [PartitionProduceResponse]
 *         index int32  errorCode int16  baseOffset int64  logAppendTimeMs int64
 *         logStartOffset int64 [v5+]
 *         recordErrors [{batchIndex int32, batchIndexErrorMessage nullable string}] [v8+]
 *         errorMessage nullable string [v8+]
 *         {tag 0 currentLeader {leaderId int32, leaderEpoch int32} [v10+]}
 *     throttleTimeMs int32
 *     {tag 0 nodeEndpoints [{nodeId int32, host string, port int32, rack nullable string}] [v10+]}
 *
 * Conventions as in fetch.ts: fields missing from a version decode to Kafka's defaults (and the
 * non-ignorable currentLeader and nodeEndpoints throw when set for v9 or older), tagged fields
 * are optional properties, unknown tags are skipped, records are views into the input.
 * Version 11 only adds an error code (TRANSACTION_ABORTABLE) and is the same on the wire as 10.
 */
import type { Reader } from '../../ts/protocol/reader.js'
import type { Writer } from '../../ts/protocol/writer.js'
import { ApiKey, type ApiCodec } from '../../ts/protocol/apis/api.js'
import { type LeaderIdAndEpoch, type NodeEndpoint, cannotCarry, checkVersion, readLeaderIdAndEpoch, readNodeEndpoints, writeLeaderIdAndEpoch, writeNodeEndpoints } from './common.js'

export type { LeaderIdAndEpoch, NodeEndpoint } from './common.js'

const MIN_VERSION = 3
const MAX_VERSION = 11
const FLEXIBLE_FROM = 9
/** The first version whose response carries the CurrentLeader and NodeEndpoints tags (KIP-951). */
const LEADER_HINTS_FROM = 10

// ---------------------------------------------------------------------------------------------
// Types

export interface ProduceRequest {
  /** The transactional id, or null if the producer is not transactional. */
  transactionalId: string | null
  /** 0 no acknowledgement (and no response), 1 the leader, -1 the full ISR. */
  acks: number
  timeoutMs: number
  topicData: TopicProduceData[]
}

export interface TopicProduceData {
  name: string
  partitionData: PartitionProduceData[]
}

export interface PartitionProduceData {
  index: number
  /** The record batches, a view into the request buffer. */
  records: Buffer | null
}

export interface ProduceResponse {
  responses: TopicProduceResponse[]
  throttleTimeMs: number
  /** {tag 0, v10+} Endpoints of the current leaders named in NOT_LEADER_OR_FOLLOWER errors. */
  nodeEndpoints?: NodeEndpoint[]
}

export interface TopicProduceResponse {
  name: string
  partitionResponses: PartitionProduceResponse[]
}

export interface PartitionProduceResponse {
  index: number
  errorCode: number
  baseOffset: bigint
  /** -1 unless the topic uses LogAppendTime. */
  logAppendTimeMs: bigint
  /** [v5+] default -1. */
  logStartOffset: bigint
  /** [v8+] default []. */
  recordErrors: BatchIndexAndErrorMessage[]
  /** [v8+] default null. */
  errorMessage: string | null
  /** {tag 0, v10+} */
  currentLeader?: LeaderIdAndEpoch
}

export interface BatchIndexAndErrorMessage {
  batchIndex: number
  batchIndexErrorMessage: string | null
}

// ---------------------------------------------------------------------------------------------
// Request

function decodeRequest(r: Reader, version: number): ProduceRequest {
  checkVersion('Produce', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  const req: ProduceRequest = {
    transactionalId: r.flexNullableString(flexible),
    acks: r.int16(),
    timeoutMs: r.int32(),
    topicData: r.flexStructArray(flexible, (r) => {
      const name = r.flexString(flexible)
      const partitionData = r.flexStructArray(flexible, (r) => ({ index: r.int32(), records: r.flexNullableBytes(flexible) }))
      return { name, partitionData }
    }),
  }
  r.endStruct(flexible)
  return req
}

function encodeRequest(w: Writer, version: number, req: ProduceRequest): void {
  checkVersion('Produce', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  w.flexNullableString(flexible, req.transactionalId).int16(req.acks).int32(req.timeoutMs)
  w.flexStructArray(flexible, req.topicData, (w, t) => {
    w.flexString(flexible, t.name)
    w.flexStructArray(flexible, t.partitionData, (w, p) => {
      w.int32(p.index)
      w.flexNullableBytes(flexible, p.records)
    })
  })
  w.endStruct(flexible)
}

// ---------------------------------------------------------------------------------------------
// Response

function readPartitionResponse(r: Reader, version: number, flexible: boolean): PartitionProduceResponse {
  const p: PartitionProduceResponse = {
    index: r.int32(),
    errorCode: r.int16(),
    baseOffset: r.int64(),
    logAppendTimeMs: r.int64(),
    logStartOffset: version >= 5 ? r.int64() : -1n,
    recordErrors: version >= 8 ? r.flexStructArray(flexible, (r) => ({ batchIndex: r.int32(), batchIndexErrorMessage: r.flexNullableString(flexible) })) : [],
    errorMessage: version >= 8 ? r.flexNullableString(flexible) : null,
  }
  if (flexible && version >= LEADER_HINTS_FROM) {
    r.readTaggedFields({ 0: (f) => (p.currentLeader = readLeaderIdAndEpoch(f)) })
  } else {
    r.endStruct(flexible)
  }
  return p
}

function writePartitionResponse(w: Writer, version: number, flexible: boolean, p: PartitionProduceResponse): void {
  w.int32(p.index).int16(p.errorCode).int64(p.baseOffset).int64(p.logAppendTimeMs)
  if (version >= 5) w.int64(p.logStartOffset)
  if (version >= 8) {
    w.flexStructArray(flexible, p.recordErrors, (w, e) => {
      w.int32(e.batchIndex).flexNullableString(flexible, e.batchIndexErrorMessage)
    })
    w.flexNullableString(flexible, p.errorMessage)
  }
  const leader = p.currentLeader
  if (leader !== undefined && version >= LEADER_HINTS_FROM) {
    w.writeTaggedFields([[0, (w) => writeLeaderIdAndEpoch(w, leader)]])
  } else {
    if (leader !== undefined) cannotCarry('Produce', version, 'a non-default currentLeader')
    w.endStruct(flexible)
  }
}

function decodeResponse(r: Reader, version: number): ProduceResponse {
  checkVersion('Produce', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  const res: ProduceResponse = {
    responses: r.flexStructArray(flexible, (r) => {
      const name = r.flexString(flexible)
      const partitionResponses = r.flexArray(flexible, (r) => readPartitionResponse(r, version, flexible))
      return { name, partitionResponses }
    }),
    throttleTimeMs: r.int32(),
  }
  if (flexible && version >= LEADER_HINTS_FROM) {
    r.readTaggedFields({ 0: (f) => (res.nodeEndpoints = readNodeEndpoints(f)) })
  } else {
    r.endStruct(flexible)
  }
  return res
}

function encodeResponse(w: Writer, version: number, res: ProduceResponse): void {
  checkVersion('Produce', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  w.flexStructArray(flexible, res.responses, (w, t) => {
    w.flexString(flexible, t.name)
    w.flexArray(flexible, t.partitionResponses, (w, p) => writePartitionResponse(w, version, flexible, p))
  })
  w.int32(res.throttleTimeMs)
  const endpoints = res.nodeEndpoints
  if (endpoints !== undefined && version >= LEADER_HINTS_FROM) {
    w.writeTaggedFields([[0, (w) => writeNodeEndpoints(w, endpoints)]])
  } else {
    if (endpoints !== undefined && endpoints.length > 0) cannotCarry('Produce', version, 'a non-default nodeEndpoints')
    w.endStruct(flexible)
  }
}

export const produceCodec: ApiCodec<ProduceRequest, ProduceResponse> = {
  apiKey: ApiKey.Produce,
  name: 'Produce',
  minVersion: MIN_VERSION,
  maxVersion: MAX_VERSION,
  flexibleFrom: FLEXIBLE_FROM,
  decodeRequest,
  encodeRequest,
  decodeResponse,
  encodeResponse,
}
