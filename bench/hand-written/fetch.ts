// The hand-written codec ferrolog served before issue 25 switched it to the generated one
// (ts/protocol/apis, ts/protocol/messages): kept here only as the baseline of
// bench/protocol-codecs.bench.ts. Nothing in ts/ imports it.
/**
 * Fetch (ApiKey 1), versions 4-17; flexible from 12. Facts from Kafka's FetchRequest.json and
 * FetchResponse.json; `[vN+]` marks the versions that carry a field, `{tag N}` a tagged field.
 *
 *   FetchRequest
 *     replicaId int32 [v4-14]  maxWaitMs int32  minBytes int32  maxBytes int32
 *     isolationLevel int8  sessionId int32 [v7+]  sessionEpoch int32 [v7+]
 *     topics [FetchTopic]
 *       topic string [v4-12] | topicId uuid [v13+]
 *       partitions [FetchPartition]
 *         partition int32  currentLeaderEpoch int32 [v9+]  fetchOffset int64
 *         lastFetchedEpoch int32 [v12+]  logStartOffset int64 [v5+]  partitionMaxBytes int32
 *         {tag 0 replicaDirectoryId uuid [v17+]}
 *     forgottenTopicsData [ForgottenTopic] [v7+]
 *       topic string [v7-12] | topicId uuid [v13+]   partitions [int32]
 *     rackId string [v11+]
 *     {tag 0 clusterId nullable string [v12+]}  {tag 1 replicaState {replicaId int32, replicaEpoch int64} [v15+]}
 *
 *   FetchResponse
 *     throttleTimeMs int32  errorCode int16 [v7+]  sessionId int32 [v7+]
 *     responses [FetchableTopicResponse]
 *       topic string [v4-12] | topicId uuid [v13+]
 *       partitions [PartitionData]
 *         partitionIndex int32  errorCode int16  highWatermark int64  lastStableOffset int64
 *         logStartOffset int64 [v5+]  abortedTransactions nullable [{producerId int64, firstOffset int64}]
 *         preferredReadReplica int32 [v11+]  records nullable records
 *         {tag 0 divergingEpoch {epoch int32, endOffset int64}}
 *         {tag 1 currentLeader {leaderId int32, leaderEpoch int32}}
 *         {tag 2 snapshotId {endOffset int64, epoch int32}}                  (all three v12+)
 *     {tag 0 nodeEndpoints [{nodeId int32, host string, port int32, rack nullable string}] [v16+]}
 *
 * Flexible versions use compact strings, arrays and records and end every structure (tagged
 * structures included) with its tagged fields.
 *
 * Conventions of the data-path codecs (produce.ts and list-offsets.ts follow them too):
 * - A field missing from a version decodes to Kafka's default for it. Encoding a version that
 *   lacks a field drops it when Kafka marks it ignorable and throws when it does not and the
 *   value is not the default (as Kafka's generated code does): a sessionId, a preferred read
 *   replica or a diverging epoch that the client cannot see is a bug of the caller.
 * - A tagged field is an optional property: absent when its tag is not on the wire (Kafka's
 *   default), written whenever it is defined. Tags we do not model, or that the version does not
 *   define, are skipped when reading and never written back.
 * - int64 is bigint, uuid a 16-byte Buffer, records a view into the input buffer (no copy).
 * - Every decoding fault is a ProtocolError.
 *
 * The response's records are the bulk of its bytes, so writing it is split: `writeFetchResponse`
 * walks the response and hands each records field to a sink after writing its length prefix.
 * `encodeResponse` copies the bytes in; `fetchResponseCuts` leaves them out and returns where they
 * go, for a writer that sends the record bytes by other means (sendfile).
 */
import type { Reader } from '../../ts/protocol/reader.js'
import type { Writer } from '../../ts/protocol/writer.js'
import { ApiKey, type ApiCodec } from '../../ts/protocol/apis/api.js'
import { type LeaderIdAndEpoch, type NodeEndpoint, ZERO_UUID, cannotCarry, checkVersion, readLeaderIdAndEpoch, readNodeEndpoints, writeLeaderIdAndEpoch, writeNodeEndpoints } from './common.js'

export { ZERO_UUID }
export type { LeaderIdAndEpoch, NodeEndpoint }

const MIN_VERSION = 4
const MAX_VERSION = 17
const FLEXIBLE_FROM = 12
/** The first version that names topics by id instead of by name. */
const TOPIC_IDS_FROM = 13
/** The first version that moves replicaId into the tagged ReplicaState. */
const REPLICA_STATE_FROM = 15
const NODE_ENDPOINTS_FROM = 16
const REPLICA_DIRECTORY_ID_FROM = 17

// ---------------------------------------------------------------------------------------------
// Types

export interface FetchRequest {
  /** {tag 0, v12+} The clusterId if known. */
  clusterId?: string
  /** [v4-14] The follower's broker id, or -1 for a consumer (v15+: in replicaState). */
  replicaId: number
  /** {tag 1, v15+} The follower's id and epoch. */
  replicaState?: ReplicaState
  maxWaitMs: number
  minBytes: number
  maxBytes: number
  /** 0 READ_UNCOMMITTED, 1 READ_COMMITTED. */
  isolationLevel: number
  /** [v7+] default 0 (no session). */
  sessionId: number
  /** [v7+] default -1 (sessionless). */
  sessionEpoch: number
  topics: FetchTopic[]
  /** [v7+] default []. */
  forgottenTopicsData: ForgottenTopic[]
  /** [v11+] default ''. */
  rackId: string
}

export interface ReplicaState {
  replicaId: number
  replicaEpoch: bigint
}

export interface FetchTopic {
  /** [v4-12] default ''. */
  topic: string
  /** [v13+] default ZERO_UUID. */
  topicId: Buffer
  partitions: FetchPartition[]
}

export interface FetchPartition {
  partition: number
  /** [v9+] default -1. */
  currentLeaderEpoch: number
  fetchOffset: bigint
  /** [v12+] default -1. */
  lastFetchedEpoch: number
  /** [v5+] default -1. */
  logStartOffset: bigint
  partitionMaxBytes: number
  /** {tag 0, v17+} The directory id of the follower fetching. */
  replicaDirectoryId?: Buffer
}

export interface ForgottenTopic {
  /** [v7-12] default ''. */
  topic: string
  /** [v13+] default ZERO_UUID. */
  topicId: Buffer
  partitions: number[]
}

/**
 * The response, generic in how its records are held: decoded responses hold `Buffer | null`
 * (views into the input); a broker may hold file slices and write them with `fetchResponseCuts`.
 */
export interface FetchResponse<R = Buffer | null> {
  throttleTimeMs: number
  /** [v7+] default 0. */
  errorCode: number
  /** [v7+] default 0. */
  sessionId: number
  responses: FetchableTopicResponse<R>[]
  /** {tag 0, v16+} Endpoints of the current leaders named in the partitions' errors. */
  nodeEndpoints?: NodeEndpoint[]
}

export interface FetchableTopicResponse<R = Buffer | null> {
  /** [v4-12] default ''. */
  topic: string
  /** [v13+] default ZERO_UUID. */
  topicId: Buffer
  partitions: PartitionData<R>[]
}

export interface PartitionData<R = Buffer | null> {
  partitionIndex: number
  errorCode: number
  highWatermark: bigint
  lastStableOffset: bigint
  /** [v5+] default -1. */
  logStartOffset: bigint
  /** {tag 0, v12+} */
  divergingEpoch?: EpochEndOffset
  /** {tag 1, v12+} */
  currentLeader?: LeaderIdAndEpoch
  /** {tag 2, v12+} */
  snapshotId?: SnapshotId
  abortedTransactions: AbortedTransaction[] | null
  /** [v11+] default -1. */
  preferredReadReplica: number
  records: R
}

export interface EpochEndOffset {
  epoch: number
  endOffset: bigint
}

export interface SnapshotId {
  endOffset: bigint
  epoch: number
}

export interface AbortedTransaction {
  producerId: bigint
  firstOffset: bigint
}

// ---------------------------------------------------------------------------------------------
// Request

interface TopicRef {
  topic: string
  topicId: Buffer
}

function readTopicRef(r: Reader, version: number, flexible: boolean): TopicRef {
  return version >= TOPIC_IDS_FROM ? { topic: '', topicId: r.uuid() } : { topic: r.flexString(flexible), topicId: ZERO_UUID }
}

function writeTopicRef(w: Writer, version: number, flexible: boolean, t: TopicRef): void {
  if (version >= TOPIC_IDS_FROM) w.uuid(t.topicId)
  else w.flexString(flexible, t.topic)
}

function readFetchPartition(r: Reader, version: number, flexible: boolean): FetchPartition {
  const p: FetchPartition = {
    partition: r.int32(),
    currentLeaderEpoch: version >= 9 ? r.int32() : -1,
    fetchOffset: r.int64(),
    lastFetchedEpoch: version >= 12 ? r.int32() : -1,
    logStartOffset: version >= 5 ? r.int64() : -1n,
    partitionMaxBytes: r.int32(),
  }
  if (flexible && version >= REPLICA_DIRECTORY_ID_FROM) {
    r.readTaggedFields({ 0: (f) => (p.replicaDirectoryId = f.uuid()) })
  } else {
    r.endStruct(flexible)
  }
  return p
}

function writeFetchPartition(w: Writer, version: number, flexible: boolean, p: FetchPartition): void {
  w.int32(p.partition)
  if (version >= 9) w.int32(p.currentLeaderEpoch)
  w.int64(p.fetchOffset)
  if (version >= 12) w.int32(p.lastFetchedEpoch)
  else if (p.lastFetchedEpoch !== -1) cannotCarry('Fetch', version, 'a non-default lastFetchedEpoch')
  if (version >= 5) w.int64(p.logStartOffset)
  w.int32(p.partitionMaxBytes)
  const id = p.replicaDirectoryId
  if (flexible && id !== undefined && version >= REPLICA_DIRECTORY_ID_FROM) {
    w.writeTaggedFields([[0, (w) => w.uuid(id)]])
  } else {
    w.endStruct(flexible)
  }
}

function decodeRequest(r: Reader, version: number): FetchRequest {
  checkVersion('Fetch', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  const req: FetchRequest = {
    replicaId: version < REPLICA_STATE_FROM ? r.int32() : -1,
    maxWaitMs: r.int32(),
    minBytes: r.int32(),
    maxBytes: r.int32(),
    isolationLevel: r.int8(),
    sessionId: version >= 7 ? r.int32() : 0,
    sessionEpoch: version >= 7 ? r.int32() : -1,
    topics: r.flexStructArray(flexible, (r) => {
      const { topic, topicId } = readTopicRef(r, version, flexible)
      const partitions = r.flexArray(flexible, (r) => readFetchPartition(r, version, flexible))
      return { topic, topicId, partitions }
    }),
    forgottenTopicsData:
      version >= 7
        ? r.flexStructArray(flexible, (r) => {
            const { topic, topicId } = readTopicRef(r, version, flexible)
            const partitions = r.flexInt32Array(flexible)
            return { topic, topicId, partitions }
          })
        : [],
    rackId: version >= 11 ? r.flexString(flexible) : '',
  }
  if (flexible) {
    r.readTaggedFields({
      0: (f) => {
        const clusterId = f.compactNullableString()
        if (clusterId !== null) req.clusterId = clusterId
      },
      1:
        version >= REPLICA_STATE_FROM
          ? (f) => {
              req.replicaState = { replicaId: f.int32(), replicaEpoch: f.int64() }
              f.skipTaggedFields()
            }
          : undefined,
    })
  }
  return req
}

function encodeRequest(w: Writer, version: number, req: FetchRequest): void {
  checkVersion('Fetch', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  if (version < REPLICA_STATE_FROM) w.int32(req.replicaId)
  else if (req.replicaId !== -1) cannotCarry('Fetch', version, 'a non-default replicaId (v15+: in replicaState)')
  w.int32(req.maxWaitMs).int32(req.minBytes).int32(req.maxBytes).int8(req.isolationLevel)
  if (version >= 7) w.int32(req.sessionId).int32(req.sessionEpoch)
  w.flexStructArray(flexible, req.topics, (w, t) => {
    writeTopicRef(w, version, flexible, t)
    w.flexArray(flexible, t.partitions, (w, p) => writeFetchPartition(w, version, flexible, p))
  })
  if (version >= 7) {
    w.flexStructArray(flexible, req.forgottenTopicsData, (w, t) => {
      writeTopicRef(w, version, flexible, t)
      w.flexInt32Array(flexible, t.partitions)
    })
  } else if (req.forgottenTopicsData.length > 0) {
    cannotCarry('Fetch', version, 'a non-default forgottenTopicsData')
  }
  if (version >= 11) w.flexString(flexible, req.rackId)
  const { clusterId, replicaState } = req
  if (replicaState !== undefined && version < REPLICA_STATE_FROM) cannotCarry('Fetch', version, 'a non-default replicaState')
  if (flexible) {
    w.writeTaggedFields([
      [0, clusterId === undefined ? null : (w) => w.compactNullableString(clusterId)],
      [1, replicaState === undefined ? null : (w) => w.int32(replicaState.replicaId).int64(replicaState.replicaEpoch).endStruct(true)],
    ])
  }
}

// ---------------------------------------------------------------------------------------------
// Response

function readPartitionData(r: Reader, version: number, flexible: boolean): PartitionData {
  const p: PartitionData = {
    partitionIndex: r.int32(),
    errorCode: r.int16(),
    highWatermark: r.int64(),
    lastStableOffset: r.int64(),
    logStartOffset: version >= 5 ? r.int64() : -1n,
    abortedTransactions: r.flexNullableStructArray(flexible, (r) => ({ producerId: r.int64(), firstOffset: r.int64() })),
    preferredReadReplica: version >= 11 ? r.int32() : -1,
    records: r.flexNullableBytes(flexible),
  }
  if (flexible) {
    r.readTaggedFields({
      0: (f) => {
        p.divergingEpoch = { epoch: f.int32(), endOffset: f.int64() }
        f.skipTaggedFields()
      },
      1: (f) => (p.currentLeader = readLeaderIdAndEpoch(f)),
      2: (f) => {
        p.snapshotId = { endOffset: f.int64(), epoch: f.int32() }
        f.skipTaggedFields()
      },
    })
  }
  return p
}

function writePartitionTaggedFields(w: Writer, version: number, flexible: boolean, p: PartitionData<unknown>): void {
  const { divergingEpoch, currentLeader, snapshotId } = p
  if (divergingEpoch === undefined && currentLeader === undefined && snapshotId === undefined) {
    w.endStruct(flexible)
    return
  }
  if (!flexible) cannotCarry('Fetch', version, 'a non-default divergingEpoch, currentLeader or snapshotId')
  w.writeTaggedFields([
    [0, divergingEpoch === undefined ? null : (w) => w.int32(divergingEpoch.epoch).int64(divergingEpoch.endOffset).endStruct(true)],
    [1, currentLeader === undefined ? null : (w) => writeLeaderIdAndEpoch(w, currentLeader)],
    [2, snapshotId === undefined ? null : (w) => w.int64(snapshotId.endOffset).int32(snapshotId.epoch).endStruct(true)],
  ])
}

function decodeResponse(r: Reader, version: number): FetchResponse {
  checkVersion('Fetch', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  const res: FetchResponse = {
    throttleTimeMs: r.int32(),
    errorCode: version >= 7 ? r.int16() : 0,
    sessionId: version >= 7 ? r.int32() : 0,
    responses: r.flexStructArray(flexible, (r) => {
      const { topic, topicId } = readTopicRef(r, version, flexible)
      const partitions = r.flexArray(flexible, (r) => readPartitionData(r, version, flexible))
      return { topic, topicId, partitions }
    }),
  }
  if (flexible && version >= NODE_ENDPOINTS_FROM) {
    r.readTaggedFields({ 0: (f) => (res.nodeEndpoints = readNodeEndpoints(f)) })
  } else {
    r.endStruct(flexible)
  }
  return res
}

/**
 * Writes a Fetch response but its record bytes: at each records field it writes the length
 * prefix (`sizeOf` returns the size, or -1 for null records), then calls `sink` (for non-null
 * records), which writes the records into `w` or remembers where they go.
 */
export function writeFetchResponse<R>(w: Writer, version: number, res: FetchResponse<R>, sizeOf: (records: R) => number, sink: (w: Writer, records: R, size: number) => void): void {
  checkVersion('Fetch', version, MIN_VERSION, MAX_VERSION)
  const flexible = version >= FLEXIBLE_FROM
  w.int32(res.throttleTimeMs)
  if (version >= 7) w.int16(res.errorCode).int32(res.sessionId)
  else if (res.sessionId !== 0) cannotCarry('Fetch', version, 'a non-default sessionId')
  w.flexStructArray(flexible, res.responses, (w, t) => {
    writeTopicRef(w, version, flexible, t)
    w.flexArray(flexible, t.partitions, (w, p) => {
      w.int32(p.partitionIndex).int16(p.errorCode).int64(p.highWatermark).int64(p.lastStableOffset)
      if (version >= 5) w.int64(p.logStartOffset)
      w.flexNullableStructArray(flexible, p.abortedTransactions, (w, a) => {
        w.int64(a.producerId).int64(a.firstOffset)
      })
      if (version >= 11) w.int32(p.preferredReadReplica)
      else if (p.preferredReadReplica !== -1) cannotCarry('Fetch', version, 'a non-default preferredReadReplica')
      const size = sizeOf(p.records)
      w.flexNullableBytesLength(flexible, size)
      if (size >= 0) sink(w, p.records, size)
      writePartitionTaggedFields(w, version, flexible, p)
    })
  })
  const endpoints = res.nodeEndpoints
  if (endpoints !== undefined && version >= NODE_ENDPOINTS_FROM) {
    w.writeTaggedFields([[0, (w) => writeNodeEndpoints(w, endpoints)]])
  } else {
    if (endpoints !== undefined && endpoints.length > 0) cannotCarry('Fetch', version, 'a non-default nodeEndpoints')
    w.endStruct(flexible)
  }
}

/** Where one records field goes in the bytes `fetchResponseCuts` wrote. */
export interface RecordsCut<R> {
  /** Offset in the written bytes at which the records belong (right after their length prefix). */
  at: number
  records: R
  size: number
}

/**
 * Writes everything of a Fetch response but its record bytes into `w` and returns where the
 * records go, in order: the full response is w's bytes [0, cuts[0].at), cuts[0].records,
 * [cuts[0].at, cuts[1].at), ..., [cuts[n-1].at, end). Null and empty records leave no cut.
 */
export function fetchResponseCuts<R>(w: Writer, version: number, res: FetchResponse<R>, sizeOf: (records: R) => number): RecordsCut<R>[] {
  const cuts: RecordsCut<R>[] = []
  writeFetchResponse(w, version, res, sizeOf, (w, records, size) => {
    if (size > 0) cuts.push({ at: w.length, records, size })
  })
  return cuts
}

/**
 * Records a broker holds outside the heap, written after the response's bytes by whoever sends
 * it (a range of a segment file: ts/network/transfer.ts's FileRecords).
 */
export interface RecordsRef {
  readonly sizeInBytes: number
}

/** How a broker's Fetch response may hold its records. */
export type ResponseRecords = Buffer | RecordsRef | null

const recordsSize = (records: ResponseRecords): number => (records === null ? -1 : Buffer.isBuffer(records) ? records.length : records.sizeInBytes)

/**
 * Writes a Fetch response whose records are Buffers (copied in) or `RecordsRef`s (left out);
 * returns where the left-out ones go, as `fetchResponseCuts` does.
 */
export function encodeFetchResponseCuts(w: Writer, version: number, res: FetchResponse<ResponseRecords>): RecordsCut<RecordsRef>[] {
  const cuts: RecordsCut<RecordsRef>[] = []
  writeFetchResponse(w, version, res, recordsSize, (w, records, size) => {
    if (Buffer.isBuffer(records)) w.raw(records)
    else if (records !== null && size > 0) cuts.push({ at: w.length, records, size })
  })
  return cuts
}

const bufferSize = (records: Buffer | null): number => (records === null ? -1 : records.length)
const copyRecords = (w: Writer, records: Buffer | null): void => {
  if (records !== null) w.raw(records)
}

export const fetchCodec: ApiCodec<FetchRequest, FetchResponse> = {
  apiKey: ApiKey.Fetch,
  name: 'Fetch',
  minVersion: MIN_VERSION,
  maxVersion: MAX_VERSION,
  flexibleFrom: FLEXIBLE_FROM,
  decodeRequest,
  encodeRequest,
  decodeResponse,
  encodeResponse: (w, version, res) => writeFetchResponse(w, version, res, bufferSize, copyRecords),
  encodeResponseCuts: encodeFetchResponseCuts,
}
