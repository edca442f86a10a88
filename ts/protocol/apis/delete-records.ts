/**
 * DeleteRecords (key 21), v0-v2; v2+ flexible. The same fields in every version.
 *
 *   request  topics [name, partitions [partitionIndex, offset]], timeoutMs
 *   response throttleTimeMs, topics [name, partitions [partitionIndex, lowWatermark, errorCode]]
 *
 * An offset of -1 deletes up to the high watermark.
 */
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 2

export interface DeleteRecordsPartition {
  partitionIndex: number
  /** Delete every record before this offset (-1: the high watermark). */
  offset: bigint
}

export interface DeleteRecordsTopic {
  name: string
  partitions: DeleteRecordsPartition[]
}

export interface DeleteRecordsRequest {
  topics: DeleteRecordsTopic[]
  timeoutMs: number
}

export interface DeleteRecordsPartitionResult {
  partitionIndex: number
  lowWatermark: bigint
  errorCode: number
}

export interface DeleteRecordsTopicResult {
  name: string
  partitions: DeleteRecordsPartitionResult[]
}

export interface DeleteRecordsResponse {
  throttleTimeMs: number
  topics: DeleteRecordsTopicResult[]
}

export const deleteRecordsCodec: ApiCodec<DeleteRecordsRequest, DeleteRecordsResponse> = {
  apiKey: ApiKey.DeleteRecords,
  name: 'DeleteRecords',
  minVersion: 0,
  maxVersion: 2,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const topics = r.flexStructArray(flexible, (r): DeleteRecordsTopic => {
      const name = r.flexString(flexible)
      const partitions = r.flexStructArray(flexible, (r): DeleteRecordsPartition => ({ partitionIndex: r.int32(), offset: r.int64() }))
      return { name, partitions }
    })
    const request = { topics, timeoutMs: r.int32() }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexStructArray(flexible, request.topics, (w, topic) => {
      w.flexString(flexible, topic.name)
      w.flexStructArray(flexible, topic.partitions, (w, p) => w.int32(p.partitionIndex).int64(p.offset))
    })
    w.int32(request.timeoutMs).endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = r.int32()
    const topics = r.flexStructArray(flexible, (r): DeleteRecordsTopicResult => {
      const name = r.flexString(flexible)
      const partitions = r.flexStructArray(flexible, (r): DeleteRecordsPartitionResult => ({
        partitionIndex: r.int32(),
        lowWatermark: r.int64(),
        errorCode: r.int16(),
      }))
      return { name, partitions }
    })
    r.endStruct(flexible)
    return { throttleTimeMs, topics }
  },

  encodeResponse(w, version, response) {
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    w.flexStructArray(flexible, response.topics, (w, topic) => {
      w.flexString(flexible, topic.name)
      w.flexStructArray(flexible, topic.partitions, (w, p) => {
        w.int32(p.partitionIndex).int64(p.lowWatermark).int16(p.errorCode)
      })
    })
    w.endStruct(flexible)
  },
}
