import { describe, expect, it } from 'vitest'
import { ConfigResourceType } from '../../../ts/protocol/apis/describe-configs.js'
import { ConfigOperation, incrementalAlterConfigsCodec, type IncrementalAlterConfigsRequest, type IncrementalAlterConfigsResponse } from '../../../ts/protocol/apis/incremental-alter-configs.js'
import { describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = incrementalAlterConfigsCodec

const request = (): { input: IncrementalAlterConfigsRequest; expected: IncrementalAlterConfigsRequest } => {
  const input: IncrementalAlterConfigsRequest = {
    resources: [
      {
        resourceType: ConfigResourceType.TOPIC,
        resourceName: 'orders',
        configs: [
          { name: 'retention.ms', configOperation: ConfigOperation.SET, value: '1000' },
          { name: 'segment.bytes', configOperation: ConfigOperation.DELETE, value: null },
          { name: 'cleanup.policy', configOperation: ConfigOperation.APPEND, value: 'delete' },
        ],
      },
    ],
    validateOnly: false,
  }
  return { input, expected: input }
}

const response = (): { input: IncrementalAlterConfigsResponse; expected: IncrementalAlterConfigsResponse } => {
  const input: IncrementalAlterConfigsResponse = {
    throttleTimeMs: 0,
    responses: [{ errorCode: 3, errorMessage: 'no topic ghost', resourceType: ConfigResourceType.TOPIC, resourceName: 'ghost' }],
  }
  return { input, expected: input }
}

describeCodecVersions(codec, { request, response })

describe('IncrementalAlterConfigs', () => {
  it('serves v0-v1, flexible from v1', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([44, 0, 1, 1])
  })

  it('golden v1 request (flexible): one SET', () => {
    expectGolden(
      codec,
      'request',
      1,
      { resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }], validateOnly: true },
      hex(
        '02 // resources: compact 1',
        `02 07 ${utf8('orders')} // TOPIC, resourceName`,
        `02 0d ${utf8('retention.ms')} 00 05 ${utf8('1000')} // configs: 1, name, SET, value`,
        '00 00 // config, resource: tagged fields',
        '01 00 // validateOnly true, tagged fields',
      ),
    )
  })
})
