/**
 * Produce (ApiKey 0), served v3-v12; v9+ flexible. (v0-2 predate message format v2 and
 * transactions; Kafka 4 dropped them too. v13, which names topics by id, is not served.) v12 is
 * v11 from a client of transaction version 2 (KIP-890 part 2): its transactional batches add their
 * partition to the transaction (ts/server/handlers/produce.ts).
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves. A decoded request's records are views into the request's bytes.
 *
 * Decoding gives every field. Encoding a response also takes values that leave out its tagged
 * fields (currentLeader, nodeEndpoints): an absent one is Kafka's default, not on the wire, as
 * the hand-written codec this one replaced took them. A response that has them all is written
 * as is.
 */
import { produceRequestCodec, type PartitionProduceData, type ProduceRequest, type TopicProduceData } from '../messages/produce-request.js'
import {
  defaultLeaderIdAndEpoch,
  produceResponseCodec,
  type BatchIndexAndErrorMessage,
  type LeaderIdAndEpoch,
  type NodeEndpoint,
  type PartitionProduceResponse,
  type ProduceResponse,
  type TopicProduceResponse,
} from '../messages/produce-response.js'
import { servedCodec, type ApiCodec } from './api.js'

export type { BatchIndexAndErrorMessage, LeaderIdAndEpoch, NodeEndpoint, PartitionProduceData, PartitionProduceResponse, ProduceRequest, ProduceResponse, TopicProduceData, TopicProduceResponse }

/** A partition's currentLeader when there is none to tell (Kafka's default, not on the wire). Shared and frozen. */
export const NO_CURRENT_LEADER: LeaderIdAndEpoch = Object.freeze(defaultLeaderIdAndEpoch())

function completePartition(p: PartitionProduceResponse): PartitionProduceResponse {
  return p.currentLeader !== undefined ? p : { ...p, currentLeader: NO_CURRENT_LEADER }
}

function completeTopic(t: TopicProduceResponse): TopicProduceResponse {
  return t.partitionResponses.every((p) => p.currentLeader !== undefined) ? t : { ...t, partitionResponses: t.partitionResponses.map(completePartition) }
}

function completeResponse(res: ProduceResponse): ProduceResponse {
  const complete = res.nodeEndpoints !== undefined && res.responses.every((t) => completeTopic(t) === t)
  return complete ? res : { ...res, nodeEndpoints: res.nodeEndpoints ?? [], responses: res.responses.map(completeTopic) }
}

const served = servedCodec(produceRequestCodec, produceResponseCodec, 3, 12)

export const produceCodec: ApiCodec<ProduceRequest, ProduceResponse> = {
  ...served,
  encodeResponse: (w, version, response) => served.encodeResponse(w, version, completeResponse(response)),
}
