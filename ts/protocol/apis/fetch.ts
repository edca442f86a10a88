/**
 * Fetch (ApiKey 1), served v4-v17; v12+ flexible. (v18, whose partitions carry the follower's
 * high-watermark, is not served.) The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves and gives the broker's
 * sender its way of writing a response: `encodeResponseCuts` writes all but the records held
 * outside the heap, through the generated writer's records seam (`RecordsWriter`), and returns
 * where they go, so that the response's bytes interleave with sendfile parts. A decoded
 * response's records are views into the response's bytes.
 *
 * Decoding gives every field. Encoding also takes values that leave out the tagged fields
 * (clusterId, replicaState, replicaDirectoryId, highWatermark; divergingEpoch, currentLeader,
 * snapshotId, nodeEndpoints): an absent one is Kafka's default, not on the wire, as the
 * hand-written codec this one replaced took them. A value that has them all is written as is.
 */
import { ZERO_UUID, type RecordsWriter } from '../message-codec.js'
import { defaultReplicaState, fetchRequestCodec, type FetchPartition, type FetchRequest, type FetchTopic, type ForgottenTopic, type ReplicaState } from '../messages/fetch-request.js'
import {
  defaultEpochEndOffset,
  defaultLeaderIdAndEpoch,
  defaultSnapshotId,
  fetchResponseCodec,
  writeFetchResponse,
  type AbortedTransaction,
  type EpochEndOffset,
  type FetchableTopicResponse,
  type FetchResponse,
  type LeaderIdAndEpoch,
  type NodeEndpoint,
  type PartitionData,
  type SnapshotId,
} from '../messages/fetch-response.js'
import type { Writer } from '../writer.js'
import { servedCodec, type ApiCodec, type RecordsCut, type RecordsRef } from './api.js'
import { checkVersion } from './common.js'

export { ZERO_UUID }
export type { RecordsCut, RecordsRef } from './api.js'
export type {
  AbortedTransaction,
  EpochEndOffset,
  FetchableTopicResponse,
  FetchPartition,
  FetchRequest,
  FetchResponse,
  FetchTopic,
  ForgottenTopic,
  LeaderIdAndEpoch,
  NodeEndpoint,
  PartitionData,
  ReplicaState,
  SnapshotId,
}

const MIN_VERSION = 4
const MAX_VERSION = 17

// A partition's tagged structures when they say nothing (Kafka's defaults, never on the wire).
// Shared and frozen: a response sets its own object, never writes into these.
export const NO_DIVERGING_EPOCH: EpochEndOffset = Object.freeze(defaultEpochEndOffset())
export const NO_CURRENT_LEADER: LeaderIdAndEpoch = Object.freeze(defaultLeaderIdAndEpoch())
export const NO_SNAPSHOT_ID: SnapshotId = Object.freeze(defaultSnapshotId())
/** A request's replicaState when it comes from a consumer (or before v15). */
export const NO_REPLICA_STATE: ReplicaState = Object.freeze(defaultReplicaState())
/** A request partition's highWatermark (v18+) when the feature is not supported: Kafka's default, Long.MAX_VALUE. */
export const NO_HIGH_WATERMARK = 0x7fffffffffffffffn

/** How a broker's Fetch response may hold its records. */
export type ResponseRecords = Buffer | RecordsRef | null

/** The records seam of the broker's sender: Buffers are copied in, the others left out and their places kept in `cuts`. */
function cutsWriter(cuts: RecordsCut<RecordsRef>[]): RecordsWriter<ResponseRecords> {
  return {
    sizeOf: (records) => (records === null ? -1 : Buffer.isBuffer(records) ? records.length : records.sizeInBytes),
    write: (w, records, size) => {
      if (Buffer.isBuffer(records)) w.raw(records)
      else if (records !== null && size > 0) cuts.push({ at: w.length, records, size })
    },
  }
}

/**
 * Writes a Fetch response whose records are Buffers (copied in) or `RecordsRef`s (left out) and
 * returns where the left-out ones go, in order: the full response is w's bytes [0, cuts[0].at),
 * cuts[0].records, [cuts[0].at, cuts[1].at), ..., [cuts[n-1].at, end). Null and empty records
 * leave no cut.
 */
export function encodeFetchResponseCuts(w: Writer, version: number, response: FetchResponse<ResponseRecords>): RecordsCut<RecordsRef>[] {
  checkVersion('Fetch', version, MIN_VERSION, MAX_VERSION)
  const cuts: RecordsCut<RecordsRef>[] = []
  writeFetchResponse(w, version, completeResponse(response), cutsWriter(cuts))
  return cuts
}

// ---------------------------------------------------------------------------------------------
// Absent tagged fields, at Kafka's defaults. Each returns its argument when nothing is absent.

/** `items` mapped by `f`, or `items` itself when `f` returns every item unchanged. */
function mapChanged<T>(items: T[], f: (item: T) => T): T[] {
  for (let i = 0; i < items.length; i++) {
    const changed = f(items[i]!)
    if (changed !== items[i]) {
      const out = items.slice()
      out[i] = changed
      for (let j = i + 1; j < items.length; j++) out[j] = f(items[j]!)
      return out
    }
  }
  return items
}

function completePartition(p: FetchPartition): FetchPartition {
  if (p.replicaDirectoryId !== undefined && p.highWatermark !== undefined) return p
  return { ...p, replicaDirectoryId: p.replicaDirectoryId ?? ZERO_UUID, highWatermark: p.highWatermark ?? NO_HIGH_WATERMARK }
}

function completeTopic(t: FetchTopic): FetchTopic {
  const partitions = mapChanged(t.partitions, completePartition)
  return partitions === t.partitions ? t : { ...t, partitions }
}

function completeRequest(req: FetchRequest): FetchRequest {
  const topics = mapChanged(req.topics, completeTopic)
  if (req.clusterId !== undefined && req.replicaState !== undefined && topics === req.topics) return req
  return { ...req, clusterId: req.clusterId ?? null, replicaState: req.replicaState ?? NO_REPLICA_STATE, topics }
}

function completePartitionData<R>(p: PartitionData<R>): PartitionData<R> {
  if (p.divergingEpoch !== undefined && p.currentLeader !== undefined && p.snapshotId !== undefined) return p
  return { ...p, divergingEpoch: p.divergingEpoch ?? NO_DIVERGING_EPOCH, currentLeader: p.currentLeader ?? NO_CURRENT_LEADER, snapshotId: p.snapshotId ?? NO_SNAPSHOT_ID }
}

function completeTopicResponse<R>(t: FetchableTopicResponse<R>): FetchableTopicResponse<R> {
  const partitions = mapChanged(t.partitions, completePartitionData)
  return partitions === t.partitions ? t : { ...t, partitions }
}

function completeResponse<R>(res: FetchResponse<R>): FetchResponse<R> {
  const responses = mapChanged(res.responses, completeTopicResponse)
  if (res.nodeEndpoints !== undefined && responses === res.responses) return res
  return { ...res, nodeEndpoints: res.nodeEndpoints ?? [], responses }
}

const served = servedCodec(fetchRequestCodec, fetchResponseCodec, MIN_VERSION, MAX_VERSION)

export const fetchCodec: ApiCodec<FetchRequest, FetchResponse> = {
  ...served,
  encodeRequest: (w, version, request) => served.encodeRequest(w, version, completeRequest(request)),
  encodeResponse: (w, version, response) => served.encodeResponse(w, version, completeResponse(response)),
  encodeResponseCuts: encodeFetchResponseCuts,
}
