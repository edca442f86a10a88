/**
 * DescribeProducers (key 61), v0; flexible.
 *
 *   request  topics [name, partitionIndexes [int32]]
 *   response throttleTimeMs, topics [name, partitions [partitionIndex, errorCode, errorMessage
 *            (nullable), activeProducers [producerId int64, producerEpoch int32, lastSequence
 *            int32, lastTimestamp int64, coordinatorEpoch int32, currentTxnStartOffset int64]]]
 */
import { ApiKey, type ApiCodec } from './api.js'

export interface DescribeProducersRequest {
  topics: Array<{ name: string; partitionIndexes: number[] }>
}

export interface ProducerStateDescription {
  producerId: bigint
  producerEpoch: number
  lastSequence: number
  lastTimestamp: bigint
  coordinatorEpoch: number
  currentTxnStartOffset: bigint
}

export interface DescribeProducersPartition {
  partitionIndex: number
  errorCode: number
  errorMessage: string | null
  activeProducers: ProducerStateDescription[]
}

export interface DescribeProducersResponse {
  throttleTimeMs: number
  topics: Array<{ name: string; partitions: DescribeProducersPartition[] }>
}

export const describeProducersCodec: ApiCodec<DescribeProducersRequest, DescribeProducersResponse> = {
  apiKey: ApiKey.DescribeProducers,
  name: 'DescribeProducers',
  minVersion: 0,
  maxVersion: 0,
  flexibleFrom: 0,

  decodeRequest(r) {
    const request = { topics: r.flexStructArray(true, (r) => ({ name: r.compactString(), partitionIndexes: r.flexInt32Array(true) })) }
    r.endStruct(true)
    return request
  },

  encodeRequest(w, _version, request) {
    w.flexStructArray(true, request.topics, (w, t) => w.compactString(t.name).flexInt32Array(true, t.partitionIndexes))
    w.endStruct(true)
  },

  decodeResponse(r) {
    const response = {
      throttleTimeMs: r.int32(),
      topics: r.flexStructArray(true, (r) => ({
        name: r.compactString(),
        partitions: r.flexStructArray(true, (r) => ({
          partitionIndex: r.int32(),
          errorCode: r.int16(),
          errorMessage: r.compactNullableString(),
          activeProducers: r.flexStructArray(true, (r) => ({
            producerId: r.int64(),
            producerEpoch: r.int32(),
            lastSequence: r.int32(),
            lastTimestamp: r.int64(),
            coordinatorEpoch: r.int32(),
            currentTxnStartOffset: r.int64(),
          })),
        })),
      })),
    }
    r.endStruct(true)
    return response
  },

  encodeResponse(w, _version, response) {
    w.int32(response.throttleTimeMs)
    w.flexStructArray(true, response.topics, (w, t) => {
      w.compactString(t.name)
      w.flexStructArray(true, t.partitions, (w, p) => {
        w.int32(p.partitionIndex).int16(p.errorCode).compactNullableString(p.errorMessage)
        w.flexStructArray(true, p.activeProducers, (w, s) => {
          w.int64(s.producerId).int32(s.producerEpoch).int32(s.lastSequence).int64(s.lastTimestamp).int32(s.coordinatorEpoch).int64(s.currentTxnStartOffset)
        })
      })
    })
    w.endStruct(true)
  },
}
