/**
 * CreatePartitions (key 37), v0-v3; v2+ flexible. The same fields in every version.
 *
 *   request  topics [name, count, assignments (nullable) [brokerIds]], timeoutMs, validateOnly
 *   response throttleTimeMs, results [name, errorCode, errorMessage (nullable)]
 */
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 2

export interface CreatePartitionsAssignment {
  brokerIds: number[]
}

export interface CreatePartitionsTopic {
  name: string
  /** The new partition count. */
  count: number
  /** Null to let the broker place the new partitions. */
  assignments: CreatePartitionsAssignment[] | null
}

export interface CreatePartitionsRequest {
  topics: CreatePartitionsTopic[]
  timeoutMs: number
  validateOnly: boolean
}

export interface CreatePartitionsTopicResult {
  name: string
  errorCode: number
  errorMessage: string | null
}

export interface CreatePartitionsResponse {
  throttleTimeMs: number
  results: CreatePartitionsTopicResult[]
}

export const createPartitionsCodec: ApiCodec<CreatePartitionsRequest, CreatePartitionsResponse> = {
  apiKey: ApiKey.CreatePartitions,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const topics = r.flexStructArray(flexible, (r): CreatePartitionsTopic => ({
      name: r.flexString(flexible),
      count: r.int32(),
      assignments: r.flexNullableStructArray(flexible, (r): CreatePartitionsAssignment => ({ brokerIds: r.flexInt32Array(flexible) })),
    }))
    const request = { topics, timeoutMs: r.int32(), validateOnly: r.bool() }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexStructArray(flexible, request.topics, (w, topic) => {
      w.flexString(flexible, topic.name).int32(topic.count)
      w.flexNullableStructArray(flexible, topic.assignments, (w, a) => {
        w.flexInt32Array(flexible, a.brokerIds)
      })
    })
    w.int32(request.timeoutMs).bool(request.validateOnly).endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = r.int32()
    const results = r.flexStructArray(flexible, (r): CreatePartitionsTopicResult => ({
      name: r.flexString(flexible),
      errorCode: r.int16(),
      errorMessage: r.flexNullableString(flexible),
    }))
    r.endStruct(flexible)
    return { throttleTimeMs, results }
  },

  encodeResponse(w, version, response) {
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    w.flexStructArray(flexible, response.results, (w, result) => {
      w.flexString(flexible, result.name).int16(result.errorCode).flexNullableString(flexible, result.errorMessage)
    })
    w.endStruct(flexible)
  },
}
