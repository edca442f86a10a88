import { describe, expect, it } from 'vitest'
import { AUTHORIZED_OPERATIONS_OMITTED, describeClusterCodec, EndpointType, type DescribeClusterRequest, type DescribeClusterResponse } from '../../../ts/protocol/apis/describe-cluster.js'
import { describeCodecVersions, encode, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = describeClusterCodec

const request = (version: number): { input: DescribeClusterRequest; expected: DescribeClusterRequest } => {
  const input: DescribeClusterRequest = {
    includeClusterAuthorizedOperations: true,
    endpointType: version >= 1 ? EndpointType.CONTROLLER : EndpointType.BROKER,
    includeFencedBrokers: version >= 2,
  }
  return { input, expected: input }
}

const response = (version: number): { input: DescribeClusterResponse; expected: DescribeClusterResponse } => {
  const input: DescribeClusterResponse = {
    throttleTimeMs: 0,
    errorCode: 0,
    errorMessage: null,
    endpointType: EndpointType.BROKER,
    clusterId: 'ferrolog-cluster',
    controllerId: 3,
    brokers: [
      { brokerId: 3, host: '127.0.0.1', port: 9092, rack: null, isFenced: false },
      { brokerId: 4, host: 'b4', port: 9093, rack: 'r1', isFenced: version >= 2 },
    ],
    clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  }
  return { input, expected: input }
}

describeCodecVersions(codec, { request, response })

describe('DescribeCluster', () => {
  it('serves v0-v2, all flexible', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([60, 0, 2, 0])
  })

  it('golden v0 request and v1 response', () => {
    expectGolden(codec, 'request', 0, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: false }, hex('00 00 // false, tagged fields'))
    expectGolden(
      codec,
      'response',
      1,
      {
        throttleTimeMs: 0,
        errorCode: 0,
        errorMessage: null,
        endpointType: 1,
        clusterId: 'c',
        controllerId: 0,
        brokers: [{ brokerId: 0, host: 'h', port: 9092, rack: null, isFenced: false }],
        clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      },
      hex(
        '00000000 0000 00 // throttleTimeMs, errorCode, errorMessage null',
        `01 02 ${utf8('c')} 00000000 // endpointType (v1+), clusterId, controllerId`,
        `02 00000000 02 ${utf8('h')} 00002384 00 00 // brokers: 1, id, host, port, rack null, tags`,
        '80000000 00 // authorized operations omitted, tagged fields',
      ),
    )
  })

  it('refuses what an older version cannot carry', () => {
    expect(() => encode(codec, 'request', 0, { includeClusterAuthorizedOperations: false, endpointType: 2, includeFencedBrokers: false })).toThrow(/v0 cannot carry endpointType/)
    expect(() => encode(codec, 'request', 1, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: true })).toThrow(/v1 cannot carry includeFencedBrokers/)
  })
})
