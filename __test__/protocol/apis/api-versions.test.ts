import { describe, expect, it } from 'vitest'
import {
  API_VERSIONS_RESPONSE_HEADER_VERSION,
  apiVersionsCodec,
  type ApiVersionsRequest,
  type ApiVersionsResponse,
  unsupportedApiVersionsResponse,
  writeUnsupportedApiVersionsResponse,
} from '../../../ts/protocol/apis/api-versions.js'
import { ErrorCode } from '../../../ts/protocol/error-codes.js'
import { readResponseHeader } from '../../../ts/protocol/header.js'
import { ProtocolError } from '../../../ts/protocol/protocol-error.js'
import { Reader } from '../../../ts/protocol/reader.js'
import { Writer } from '../../../ts/protocol/writer.js'
import { decode, describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = apiVersionsCodec

function request(version: number) {
  const input: ApiVersionsRequest = { clientSoftwareName: 'ferrolog-test', clientSoftwareVersion: '1.2.3', clusterId: null, nodeId: -1 }
  const expected = version >= 3 ? input : { clientSoftwareName: '', clientSoftwareVersion: '', clusterId: null, nodeId: -1 }
  return { input, expected }
}

function response(version: number) {
  const input: ApiVersionsResponse = {
    errorCode: 0,
    apiKeys: [
      { apiKey: 0, minVersion: 3, maxVersion: 11 },
      { apiKey: 18, minVersion: 0, maxVersion: 3 },
    ],
    throttleTimeMs: 25,
    supportedFeatures: [{ name: 'metadata.version', minVersion: 7, maxVersion: 27 }],
    finalizedFeaturesEpoch: 42n,
    finalizedFeatures: [{ name: 'metadata.version', maxVersionLevel: 27, minVersionLevel: 27 }],
    zkMigrationReady: true,
  }
  const expected: ApiVersionsResponse = {
    ...input,
    throttleTimeMs: version >= 1 ? input.throttleTimeMs : 0,
    ...(version >= 3 ? {} : { supportedFeatures: [], finalizedFeaturesEpoch: -1n, finalizedFeatures: [], zkMigrationReady: false }),
  }
  return { input, expected }
}

describeCodecVersions(codec, {
  request,
  response,
  untaggedResponse: (version) => ({ ...response(version).input, ...response(0).expected, throttleTimeMs: 1 }),
})

describe('ApiVersions', () => {
  it('serves v0-v4, flexible from v3', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([18, 0, 4, 3])
  })

  it('v4 is v3 on the wire, request and response', () => {
    const request = { clientSoftwareName: 'apache-kafka-java', clientSoftwareVersion: '4.4.0' }
    const response: ApiVersionsResponse = {
      errorCode: 0,
      apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }],
      throttleTimeMs: 0,
      supportedFeatures: [{ name: 'metadata.version', minVersion: 0, maxVersion: 27 }],
      finalizedFeaturesEpoch: -1n,
      finalizedFeatures: [],
      zkMigrationReady: false,
    }
    for (const [kind, value] of [
      ['request', request],
      ['response', response],
    ] as const) {
      const v3 = new Writer()
      const v4 = new Writer()
      if (kind === 'request') {
        codec.encodeRequest(v3, 3, value as ApiVersionsRequest)
        codec.encodeRequest(v4, 4, value as ApiVersionsRequest)
      } else {
        codec.encodeResponse(v3, 3, value as ApiVersionsResponse)
        codec.encodeResponse(v4, 4, value as ApiVersionsResponse)
      }
      expect(v4.finish().equals(v3.finish()), kind).toBe(true)
    }
  })

  it('golden v0 request: an empty body; v2 request: still empty', () => {
    expectGolden(codec, 'request', 0, { clientSoftwareName: '', clientSoftwareVersion: '', clusterId: null, nodeId: -1 }, hex(''))
    expectGolden(codec, 'request', 2, { clientSoftwareName: '', clientSoftwareVersion: '', clusterId: null, nodeId: -1 }, hex(''))
  })

  it('golden v1 response (non-flexible)', () => {
    const value: ApiVersionsResponse = {
      ...response(1).expected,
      apiKeys: [
        { apiKey: 3, minVersion: 0, maxVersion: 12 },
        { apiKey: 18, minVersion: 0, maxVersion: 3 },
      ],
      throttleTimeMs: 100,
    }
    const bytes = hex('0000     // errorCode 0', '00000002 // apiKeys: int32 count 2', '0003 0000 000c // Metadata 0-12', '0012 0000 0003 // ApiVersions 0-3', '00000064 // throttleTimeMs 100')
    expectGolden(codec, 'response', 1, value, bytes)
  })

  it('golden v3 request (flexible): compact strings, tagged fields', () => {
    const bytes = hex(`09 ${utf8('ferrolog')} // clientSoftwareName: varint length+1 = 9`, `06 ${utf8('0.1.0')}    // clientSoftwareVersion: length+1 = 6`, '00 // no tagged fields')
    expectGolden(codec, 'request', 3, { clientSoftwareName: 'ferrolog', clientSoftwareVersion: '0.1.0', clusterId: null, nodeId: -1 }, bytes)
  })

  it('golden v3 response (flexible) with tagged features', () => {
    const value: ApiVersionsResponse = {
      errorCode: 0,
      apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 3 }],
      throttleTimeMs: 0,
      supportedFeatures: [{ name: 'metadata.version', minVersion: 1, maxVersion: 27 }],
      finalizedFeaturesEpoch: 5n,
      finalizedFeatures: [{ name: 'metadata.version', maxVersionLevel: 27, minVersionLevel: 27 }],
      zkMigrationReady: false,
    }
    const bytes = hex(
      '0000 // errorCode 0',
      '02   // apiKeys: compact count 1 (+1)',
      '0012 0000 0003 00 // ApiVersions 0-3, no tagged fields',
      '00000000 // throttleTimeMs 0',
      '03 // 3 tagged fields (zkMigrationReady=false is the default, not written)',
      '00 17 // tag 0 supportedFeatures, 23 bytes:',
      `   02 11 ${utf8('metadata.version')} 0001 001b 00 // 1 feature: name, min 1, max 27, no tags`,
      '01 08 0000000000000005 // tag 1 finalizedFeaturesEpoch 5',
      '02 17 // tag 2 finalizedFeatures, 23 bytes:',
      `   02 11 ${utf8('metadata.version')} 001b 001b 00 // maxVersionLevel 27, minVersionLevel 27`,
    )
    expectGolden(codec, 'response', 3, value, bytes)
  })

  it('writes zkMigrationReady only when true (tag 3)', () => {
    const value: ApiVersionsResponse = { ...unsupportedApiVersionsResponse(), errorCode: 0, apiKeys: [], zkMigrationReady: true }
    const bytes = hex('0000 // errorCode', '01 // no apiKeys', '00000000 // throttleTimeMs', '01 03 01 01 // one tag: 3, 1 byte, true')
    expectGolden(codec, 'response', 3, value, bytes)
  })

  it('skips unknown tags between known ones', () => {
    const bytes = hex(
      '0000 01 00000000 // errorCode, no apiKeys, throttleTimeMs',
      '03 // 3 tagged fields',
      '01 08 0000000000000009 // tag 1 finalizedFeaturesEpoch 9',
      '03 01 01 // tag 3 zkMigrationReady true',
      '07 02 abcd // tag 7: unknown, skipped',
    )
    expect(decode(codec, 'response', 3, bytes)).toStrictEqual({
      ...unsupportedApiVersionsResponse(),
      errorCode: 0,
      apiKeys: [],
      finalizedFeaturesEpoch: 9n,
      zkMigrationReady: true,
    })
  })

  it('rejects a known tag whose size lies about its value', () => {
    const bytes = hex('0000 01 00000000', '01 01 01 09 // tag 1 (an int64) of 1 byte')
    expect(() => decode(codec, 'response', 3, bytes)).toThrow(ProtocolError)
    const long = hex('0000 01 00000000', '01 03 02 0100 // tag 3 (a bool) of 2 bytes')
    expect(() => decode(codec, 'response', 3, long)).toThrow(ProtocolError)
  })

  it('answers an unsupported version with header v0 and the v0 body (KIP-511)', () => {
    expect(API_VERSIONS_RESPONSE_HEADER_VERSION).toBe(0)
    const w = new Writer()
    writeUnsupportedApiVersionsResponse(w, 7)
    const bytes = w.finish()
    expect(bytes.toString('hex')).toBe(
      hex(
        '00000007 // correlationId 7, response header v0 (no tagged fields)',
        '0023     // errorCode 35 UNSUPPORTED_VERSION',
        '00000001 // apiKeys: int32 count 1',
        '0012 0000 0004 // ApiVersions 0-4: the range to retry in',
      ).toString('hex'),
    )
    const r = new Reader(bytes)
    expect(readResponseHeader(r, false)).toBe(7)
    const body = decode(codec, 'response', 0, bytes.subarray(r.pos)) as ApiVersionsResponse
    expect(body.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION)
    expect(body.apiKeys).toEqual([{ apiKey: 18, minVersion: 0, maxVersion: 4 }])
  })
})
