/**
 * CreatePartitions (key 37), v0-v3; v2+ flexible. The same fields in every version.
 *
 *   request  topics [name, count, assignments (nullable) [brokerIds]], timeoutMs, validateOnly
 *   response throttleTimeMs, results [name, errorCode, errorMessage (nullable)]
 */
import type { Reader } from '../reader.js'
import type { Writer } from '../writer.js'
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

function readInt32(r: Reader): number {
  return r.int32()
}

function writeInt32(w: Writer, v: number): void {
  w.int32(v)
}

export const createPartitionsCodec: ApiCodec<CreatePartitionsRequest, CreatePartitionsResponse> = {
  apiKey: ApiKey.CreatePartitions,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const topics = r.flexArray(flexible, (r): CreatePartitionsTopic => {
      const topic = {
        name: r.flexString(flexible),
        count: r.int32(),
        assignments: r.flexNullableArray(flexible, (r): CreatePartitionsAssignment => {
          const assignment = { brokerIds: r.flexArray(flexible, readInt32) }
          r.endStruct(flexible)
          return assignment
        }),
      }
      r.endStruct(flexible)
      return topic
    })
    const request = { topics, timeoutMs: r.int32(), validateOnly: r.bool() }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexArray(flexible, request.topics, (w, topic) => {
      w.flexString(flexible, topic.name).int32(topic.count)
      w.flexNullableArray(flexible, topic.assignments, (w, a) => {
        w.flexArray(flexible, a.brokerIds, writeInt32).endStruct(flexible)
      })
      w.endStruct(flexible)
    })
    w.int32(request.timeoutMs).bool(request.validateOnly).endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = r.int32()
    const results = r.flexArray(flexible, (r): CreatePartitionsTopicResult => {
      const result = { name: r.flexString(flexible), errorCode: r.int16(), errorMessage: r.flexNullableString(flexible) }
      r.endStruct(flexible)
      return result
    })
    r.endStruct(flexible)
    return { throttleTimeMs, results }
  },

  encodeResponse(w, version, response) {
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    w.flexArray(flexible, response.results, (w, result) => {
      w.flexString(flexible, result.name).int16(result.errorCode).flexNullableString(flexible, result.errorMessage)
      w.endStruct(flexible)
    })
    w.endStruct(flexible)
  },
}
