import { describe, expect, it } from 'vitest'
import { ConfigResourceType, describeConfigsCodec, type DescribeConfigsRequest, type DescribeConfigsResponse } from '../../../ts/protocol/apis/describe-configs.js'
import { describeCodecVersions, encode, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = describeConfigsCodec

function request(version: number) {
  const input: DescribeConfigsRequest = {
    resources: [
      { resourceType: ConfigResourceType.TOPIC, resourceName: 'orders', configurationKeys: ['cleanup.policy', 'retention.ms'] },
      { resourceType: ConfigResourceType.BROKER, resourceName: '1', configurationKeys: null },
      { resourceType: ConfigResourceType.TOPIC, resourceName: 'none', configurationKeys: [] },
    ],
    includeSynonyms: true,
    includeDocumentation: version >= 3,
  }
  return { input, expected: input }
}

function response(version: number) {
  const input: DescribeConfigsResponse = {
    throttleTimeMs: 6,
    results: [
      {
        errorCode: 0,
        errorMessage: null,
        resourceType: ConfigResourceType.TOPIC,
        resourceName: 'orders',
        configs: [
          {
            name: 'cleanup.policy',
            value: 'compact',
            readOnly: false,
            configSource: 1,
            isSensitive: false,
            synonyms: [
              { name: 'cleanup.policy', value: 'compact', source: 1 },
              { name: 'log.cleanup.policy', value: 'delete', source: 5 },
            ],
            configType: 7,
            documentation: 'How to clean up old log segments.',
          },
          {
            name: 'ssl.key.password',
            value: null,
            readOnly: true,
            configSource: 5,
            isSensitive: true,
            synonyms: [{ name: 'ssl.key.password', value: null, source: 4 }],
            configType: 9,
            documentation: null,
          },
        ],
      },
      { errorCode: 3, errorMessage: 'Unknown topic.', resourceType: ConfigResourceType.TOPIC, resourceName: 'ghost', configs: [] },
    ],
  }
  const expected: DescribeConfigsResponse = {
    ...input,
    results: input.results.map((r) => ({
      ...r,
      configs: r.configs.map((c) => ({
        ...c,
        configType: version >= 3 ? c.configType : 0,
        documentation: version >= 3 ? c.documentation : '',
      })),
    })),
  }
  return { input, expected }
}

describeCodecVersions(codec, { request, response })

describe('DescribeConfigs', () => {
  it('serves v1-v4 (v0 is gone since Kafka 4.0), flexible from v4', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([32, 1, 4, 4])
  })

  it('golden v1 request (non-flexible): every key of a topic', () => {
    const value: DescribeConfigsRequest = {
      resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: null }],
      includeSynonyms: false,
      includeDocumentation: false,
    }
    const bytes = hex('00000001 // resources: 1', '02 // resourceType TOPIC', `0006 ${utf8('orders')} // resourceName`, 'ffffffff // configurationKeys: null (all)', '00 // includeSynonyms false')
    expectGolden(codec, 'request', 1, value, bytes)
  })

  it('golden v4 request (flexible)', () => {
    const value: DescribeConfigsRequest = {
      resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['cleanup.policy'] }],
      includeSynonyms: true,
      includeDocumentation: false,
    }
    const bytes = hex(
      '02 // resources: compact count 1',
      `02 07 ${utf8('orders')} // resourceType TOPIC, resourceName`,
      `02 0f ${utf8('cleanup.policy')} // configurationKeys: 1 key`,
      '00 // resource: no tagged fields',
      '01 00 // includeSynonyms true, includeDocumentation false (v3+)',
      '00 // no tagged fields',
    )
    expectGolden(codec, 'request', 4, value, bytes)
  })

  it('golden v2 response (non-flexible)', () => {
    const value: DescribeConfigsResponse = {
      throttleTimeMs: 0,
      results: [
        {
          errorCode: 0,
          errorMessage: null,
          resourceType: 2,
          resourceName: 'orders',
          configs: [
            {
              name: 'cleanup.policy',
              value: 'compact',
              readOnly: false,
              configSource: 1,
              isSensitive: false,
              synonyms: [{ name: 'cleanup.policy', value: 'compact', source: 1 }],
              configType: 0,
              documentation: '',
            },
          ],
        },
      ],
    }
    const bytes = hex(
      '00000000 // throttleTimeMs',
      '00000001 // results: 1',
      '0000 ffff // errorCode 0, errorMessage null',
      `02 0006 ${utf8('orders')} // resourceType TOPIC, resourceName`,
      '00000001 // configs: 1',
      `000e ${utf8('cleanup.policy')} 0007 ${utf8('compact')} // name, value`,
      '00 01 00 // readOnly false, configSource 1 (DYNAMIC_TOPIC_CONFIG), isSensitive false',
      '00000001 // synonyms: 1',
      `000e ${utf8('cleanup.policy')} 0007 ${utf8('compact')} 01 // name, value, source 1`,
    )
    expectGolden(codec, 'response', 2, value, bytes)
  })

  it('golden v4 response (flexible)', () => {
    const value: DescribeConfigsResponse = {
      throttleTimeMs: 0,
      results: [
        {
          errorCode: 0,
          errorMessage: null,
          resourceType: 2,
          resourceName: 'orders',
          configs: [
            {
              name: 'cleanup.policy',
              value: 'delete',
              readOnly: false,
              configSource: 5,
              isSensitive: false,
              synonyms: [],
              configType: 7,
              documentation: null,
            },
          ],
        },
      ],
    }
    const bytes = hex(
      '00000000 // throttleTimeMs',
      '02 // results: compact count 1',
      '0000 00 // errorCode 0, errorMessage null',
      `02 07 ${utf8('orders')} // resourceType TOPIC, resourceName`,
      '02 // configs: 1',
      `0f ${utf8('cleanup.policy')} 07 ${utf8('delete')} // name, value`,
      '00 05 00 // readOnly false, configSource 5 (DEFAULT_CONFIG), isSensitive false',
      '01 // synonyms: none',
      '07 00 // configType 7 (LIST), documentation null (v3+)',
      '00 00 00 // config, result, response: no tagged fields',
    )
    expectGolden(codec, 'response', 4, value, bytes)
  })

  it('refuses includeDocumentation before v3 (not ignorable in Kafka)', () => {
    expect(() => encode(codec, 'request', 2, request(3).input)).toThrow(/v2 cannot carry includeDocumentation/)
  })
})
