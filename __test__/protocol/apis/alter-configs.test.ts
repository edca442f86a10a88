import { describe, expect, it } from 'vitest'
import { alterConfigsCodec, type AlterConfigsRequest, type AlterConfigsResponse } from '../../../ts/protocol/apis/alter-configs.js'
import { ConfigResourceType } from '../../../ts/protocol/apis/describe-configs.js'
import { describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = alterConfigsCodec

const request = (): { input: AlterConfigsRequest; expected: AlterConfigsRequest } => {
  const input: AlterConfigsRequest = {
    resources: [
      {
        resourceType: ConfigResourceType.TOPIC,
        resourceName: 'orders',
        configs: [
          { name: 'retention.ms', value: '1000' },
          { name: 'x', value: null },
        ],
      },
      { resourceType: ConfigResourceType.BROKER, resourceName: '', configs: [] },
    ],
    validateOnly: true,
  }
  return { input, expected: input }
}

const response = (): { input: AlterConfigsResponse; expected: AlterConfigsResponse } => {
  const input: AlterConfigsResponse = {
    throttleTimeMs: 3,
    responses: [
      { errorCode: 0, errorMessage: null, resourceType: ConfigResourceType.TOPIC, resourceName: 'orders' },
      { errorCode: 40, errorMessage: 'Unknown topic config name: x', resourceType: ConfigResourceType.TOPIC, resourceName: 'other' },
    ],
  }
  return { input, expected: input }
}

describeCodecVersions(codec, { request, response })

describe('AlterConfigs', () => {
  it('serves v0-v2, flexible from v2', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([33, 0, 2, 2])
  })

  it('golden v1 request (classic) and v2 response (flexible)', () => {
    expectGolden(
      codec,
      'request',
      1,
      { resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: null }] }], validateOnly: false },
      hex(
        '00000001 // resources: 1',
        `02 0006 ${utf8('orders')} // resourceType TOPIC, resourceName`,
        `00000001 000c ${utf8('retention.ms')} ffff // configs: 1, name, value null`,
        '00 // validateOnly false',
      ),
    )
    expectGolden(
      codec,
      'response',
      2,
      { throttleTimeMs: 0, responses: [{ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders' }] },
      hex('00000000 // throttleTimeMs', '02 // responses: compact 1', `0000 00 02 07 ${utf8('orders')} // errorCode, message null, TOPIC, name`, '00 00 // tagged fields'),
    )
  })
})
