/**
 * OffsetDelete (key 47), v0 only; never flexible.
 *
 *   request  groupId, topics [name, partitions [partitionIndex int32]]
 *   response errorCode, throttleTimeMs,
 *            topics [name, partitions [partitionIndex, errorCode]]
 *
 * A top-level error (the group is unknown, or not empty and not a consumer group) comes with no
 * topics; otherwise each partition has its own (GROUP_SUBSCRIBED_TO_TOPIC for a topic that the
 * live group consumes).
 */
import { ApiKey, type ApiCodec } from './api.js'

export interface OffsetDeleteRequestTopic {
  name: string
  partitions: Array<{ partitionIndex: number }>
}

export interface OffsetDeleteRequest {
  groupId: string
  topics: OffsetDeleteRequestTopic[]
}

export interface OffsetDeleteResponsePartition {
  partitionIndex: number
  errorCode: number
}

export interface OffsetDeleteResponseTopic {
  name: string
  partitions: OffsetDeleteResponsePartition[]
}

export interface OffsetDeleteResponse {
  errorCode: number
  throttleTimeMs: number
  topics: OffsetDeleteResponseTopic[]
}

export const offsetDeleteCodec: ApiCodec<OffsetDeleteRequest, OffsetDeleteResponse> = {
  apiKey: ApiKey.OffsetDelete,
  name: 'OffsetDelete',
  minVersion: 0,
  maxVersion: 0,
  flexibleFrom: Infinity,

  decodeRequest(r) {
    return {
      groupId: r.string(),
      topics: r.array((r): OffsetDeleteRequestTopic => ({
        name: r.string(),
        partitions: r.array((r) => ({ partitionIndex: r.int32() })),
      })),
    }
  },

  encodeRequest(w, _version, request) {
    w.string(request.groupId)
    w.array(request.topics, (w, t) => {
      w.string(t.name)
      w.array(t.partitions, (w, p) => w.int32(p.partitionIndex))
    })
  },

  decodeResponse(r) {
    return {
      errorCode: r.int16(),
      throttleTimeMs: r.int32(),
      topics: r.array((r): OffsetDeleteResponseTopic => ({
        name: r.string(),
        partitions: r.array((r): OffsetDeleteResponsePartition => ({ partitionIndex: r.int32(), errorCode: r.int16() })),
      })),
    }
  },

  encodeResponse(w, _version, response) {
    w.int16(response.errorCode).int32(response.throttleTimeMs)
    w.array(response.topics, (w, t) => {
      w.string(t.name)
      w.array(t.partitions, (w, p) => w.int32(p.partitionIndex).int16(p.errorCode))
    })
  },
}
