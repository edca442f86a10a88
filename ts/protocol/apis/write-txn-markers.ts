/**
 * WriteTxnMarkers (key 27), v0-v1; v1+ flexible. Sent by a transaction coordinator to the
 * leaders of a transaction's partitions.
 *
 *   request  markers [producerId int64, producerEpoch int16, transactionResult bool (true:
 *                     COMMIT), topics [name, partitionIndexes [int32]], coordinatorEpoch int32]
 *   response markers [producerId, topics [name, partitions [partitionIndex, errorCode]]]
 */
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 1

export interface WritableTxnMarker {
  producerId: bigint
  producerEpoch: number
  /** True: COMMIT, false: ABORT. */
  transactionResult: boolean
  topics: Array<{ name: string; partitionIndexes: number[] }>
  coordinatorEpoch: number
}

export interface WriteTxnMarkersRequest {
  markers: WritableTxnMarker[]
}

export interface WritableTxnMarkerResult {
  producerId: bigint
  topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; errorCode: number }> }>
}

export interface WriteTxnMarkersResponse {
  markers: WritableTxnMarkerResult[]
}

export const writeTxnMarkersCodec: ApiCodec<WriteTxnMarkersRequest, WriteTxnMarkersResponse> = {
  apiKey: ApiKey.WriteTxnMarkers,
  name: 'WriteTxnMarkers',
  minVersion: 0,
  maxVersion: 1,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const f = version >= FLEXIBLE_FROM
    const markers = r.flexStructArray(f, (r) => ({
      producerId: r.int64(),
      producerEpoch: r.int16(),
      transactionResult: r.bool(),
      topics: r.flexStructArray(f, (r) => ({ name: r.flexString(f), partitionIndexes: r.flexInt32Array(f) })),
      coordinatorEpoch: r.int32(),
    }))
    r.endStruct(f)
    return { markers }
  },

  encodeRequest(w, version, request) {
    const f = version >= FLEXIBLE_FROM
    w.flexStructArray(f, request.markers, (w, m) => {
      w.int64(m.producerId).int16(m.producerEpoch).bool(m.transactionResult)
      w.flexStructArray(f, m.topics, (w, t) => w.flexString(f, t.name).flexInt32Array(f, t.partitionIndexes))
      w.int32(m.coordinatorEpoch)
    })
    w.endStruct(f)
  },

  decodeResponse(r, version) {
    const f = version >= FLEXIBLE_FROM
    const markers = r.flexStructArray(f, (r) => ({
      producerId: r.int64(),
      topics: r.flexStructArray(f, (r) => ({
        name: r.flexString(f),
        partitions: r.flexStructArray(f, (r) => ({ partitionIndex: r.int32(), errorCode: r.int16() })),
      })),
    }))
    r.endStruct(f)
    return { markers }
  },

  encodeResponse(w, version, response) {
    const f = version >= FLEXIBLE_FROM
    w.flexStructArray(f, response.markers, (w, m) => {
      w.int64(m.producerId)
      w.flexStructArray(f, m.topics, (w, t) => {
        w.flexString(f, t.name)
        w.flexStructArray(f, t.partitions, (w, p) => w.int32(p.partitionIndex).int16(p.errorCode))
      })
    })
    w.endStruct(f)
  },
}
