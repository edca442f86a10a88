/**
 * DescribeCluster (key 60, KIP-700), v0-v2; every version flexible. The AdminClient's
 * `describeCluster` (and the tools built on it) ask this instead of Metadata.
 *
 *   request  includeClusterAuthorizedOperations, endpointType v1+ int8 (1 brokers,
 *            2 controllers), includeFencedBrokers v2+
 *   response throttleTimeMs, errorCode, errorMessage (nullable), endpointType v1+,
 *            clusterId, controllerId,
 *            brokers [brokerId, host, port, rack (nullable), isFenced v2+],
 *            clusterAuthorizedOperations
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

/** KIP-919's endpoint types. */
export const EndpointType = { BROKER: 1, CONTROLLER: 2 } as const

/** Kafka's "authorized operations were not asked for". */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648

export interface DescribeClusterRequest {
  includeClusterAuthorizedOperations: boolean
  /** v1+; BROKER before. */
  endpointType: number
  /** v2+; false before. */
  includeFencedBrokers: boolean
}

export interface DescribeClusterBroker {
  brokerId: number
  host: string
  port: number
  rack: string | null
  /** v2+; false before. */
  isFenced: boolean
}

export interface DescribeClusterResponse {
  throttleTimeMs: number
  errorCode: number
  errorMessage: string | null
  /** v1+; BROKER before. */
  endpointType: number
  clusterId: string
  controllerId: number
  brokers: DescribeClusterBroker[]
  clusterAuthorizedOperations: number
}

export const describeClusterCodec: ApiCodec<DescribeClusterRequest, DescribeClusterResponse> = {
  apiKey: ApiKey.DescribeCluster,
  name: 'DescribeCluster',
  minVersion: 0,
  maxVersion: 2,
  flexibleFrom: 0,

  decodeRequest(r, version) {
    const request: DescribeClusterRequest = {
      includeClusterAuthorizedOperations: r.bool(),
      endpointType: version >= 1 ? r.int8() : EndpointType.BROKER,
      includeFencedBrokers: version >= 2 ? r.bool() : false,
    }
    r.endStruct(true)
    return request
  },

  encodeRequest(w, version, request) {
    w.bool(request.includeClusterAuthorizedOperations)
    if (version >= 1) w.int8(request.endpointType)
    else if (request.endpointType !== EndpointType.BROKER) cannotCarry('DescribeCluster', version, 'endpointType')
    if (version >= 2) w.bool(request.includeFencedBrokers)
    else if (request.includeFencedBrokers) cannotCarry('DescribeCluster', version, 'includeFencedBrokers')
    w.endStruct(true)
  },

  decodeResponse(r, version) {
    const response: DescribeClusterResponse = {
      throttleTimeMs: r.int32(),
      errorCode: r.int16(),
      errorMessage: r.compactNullableString(),
      endpointType: version >= 1 ? r.int8() : EndpointType.BROKER,
      clusterId: r.compactString(),
      controllerId: r.int32(),
      brokers: r.flexStructArray(true, (r): DescribeClusterBroker => ({
        brokerId: r.int32(),
        host: r.compactString(),
        port: r.int32(),
        rack: r.compactNullableString(),
        isFenced: version >= 2 ? r.bool() : false,
      })),
      clusterAuthorizedOperations: r.int32(),
    }
    r.endStruct(true)
    return response
  },

  encodeResponse(w, version, response) {
    w.int32(response.throttleTimeMs).int16(response.errorCode).compactNullableString(response.errorMessage)
    if (version >= 1) w.int8(response.endpointType)
    else if (response.endpointType !== EndpointType.BROKER) cannotCarry('DescribeCluster', version, 'endpointType')
    w.compactString(response.clusterId).int32(response.controllerId)
    w.flexStructArray(true, response.brokers, (w, b) => {
      w.int32(b.brokerId).compactString(b.host).int32(b.port).compactNullableString(b.rack)
      if (version >= 2) w.bool(b.isFenced)
      else if (b.isFenced) cannotCarry('DescribeCluster', version, 'a fenced broker')
    })
    w.int32(response.clusterAuthorizedOperations)
    w.endStruct(true)
  },
}
