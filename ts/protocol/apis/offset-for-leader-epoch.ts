/**
 * OffsetForLeaderEpoch (key 23), v2-v4 (Kafka 4.0 removed v0-v1); v4+ flexible.
 *
 *   request  replicaId v3+, topics [topic, partitions [partition, currentLeaderEpoch, leaderEpoch]]
 *   response throttleTimeMs, topics [topic, partitions [errorCode, partition, leaderEpoch, endOffset]]
 *
 * Consumers send replicaId -1 (CONSUMER_REPLICA_ID); before v3 it is absent and reads as -2
 * (DEBUGGING_REPLICA_ID), Kafka's default. replicaId is ignorable: older versions drop it.
 */
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 4

export const CONSUMER_REPLICA_ID = -1
export const DEBUGGING_REPLICA_ID = -2

export interface OffsetForLeaderPartition {
  partition: number
  /** The epoch the client believes current, -1 for none (fences stale clients). */
  currentLeaderEpoch: number
  /** The epoch whose end offset is asked for. */
  leaderEpoch: number
}

export interface OffsetForLeaderTopic {
  topic: string
  partitions: OffsetForLeaderPartition[]
}

export interface OffsetForLeaderEpochRequest {
  /** v3+; DEBUGGING_REPLICA_ID (-2) before. */
  replicaId: number
  topics: OffsetForLeaderTopic[]
}

export interface EpochEndOffset {
  errorCode: number
  partition: number
  leaderEpoch: number
  endOffset: bigint
}

export interface OffsetForLeaderTopicResult {
  topic: string
  partitions: EpochEndOffset[]
}

export interface OffsetForLeaderEpochResponse {
  throttleTimeMs: number
  topics: OffsetForLeaderTopicResult[]
}

export const offsetForLeaderEpochCodec: ApiCodec<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse> = {
  apiKey: ApiKey.OffsetForLeaderEpoch,
  name: 'OffsetForLeaderEpoch',
  minVersion: 2,
  maxVersion: 4,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const replicaId = version >= 3 ? r.int32() : DEBUGGING_REPLICA_ID
    const topics = r.flexStructArray(flexible, (r): OffsetForLeaderTopic => {
      const topic = r.flexString(flexible)
      const partitions = r.flexStructArray(flexible, (r): OffsetForLeaderPartition => ({
        partition: r.int32(),
        currentLeaderEpoch: r.int32(),
        leaderEpoch: r.int32(),
      }))
      return { topic, partitions }
    })
    r.endStruct(flexible)
    return { replicaId, topics }
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 3) w.int32(request.replicaId)
    w.flexStructArray(flexible, request.topics, (w, topic) => {
      w.flexString(flexible, topic.topic)
      w.flexStructArray(flexible, topic.partitions, (w, p) => {
        w.int32(p.partition).int32(p.currentLeaderEpoch).int32(p.leaderEpoch)
      })
    })
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = r.int32()
    const topics = r.flexStructArray(flexible, (r): OffsetForLeaderTopicResult => {
      const topic = r.flexString(flexible)
      const partitions = r.flexStructArray(flexible, (r): EpochEndOffset => ({
        errorCode: r.int16(),
        partition: r.int32(),
        leaderEpoch: r.int32(),
        endOffset: r.int64(),
      }))
      return { topic, partitions }
    })
    r.endStruct(flexible)
    return { throttleTimeMs, topics }
  },

  encodeResponse(w, version, response) {
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    w.flexStructArray(flexible, response.topics, (w, topic) => {
      w.flexString(flexible, topic.topic)
      w.flexStructArray(flexible, topic.partitions, (w, p) => {
        w.int16(p.errorCode).int32(p.partition).int32(p.leaderEpoch).int64(p.endOffset)
      })
    })
    w.endStruct(flexible)
  },
}
