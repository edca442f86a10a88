import { describe, expect, it } from 'vitest'
import { describeLogDirsCodec, type DescribeLogDirsRequest, type DescribeLogDirsResponse } from '../../../ts/protocol/apis/describe-log-dirs.js'
import { describeCodecVersions, encode, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = describeLogDirsCodec

const request = (): { input: DescribeLogDirsRequest; expected: DescribeLogDirsRequest } => {
  const input: DescribeLogDirsRequest = {
    topics: [
      { topic: 'orders', partitions: [0, 2] },
      { topic: 'none', partitions: [] },
    ],
  }
  return { input, expected: input }
}

const response = (version: number): { input: DescribeLogDirsResponse; expected: DescribeLogDirsResponse } => {
  const input: DescribeLogDirsResponse = {
    throttleTimeMs: 1,
    errorCode: 0,
    results: [
      {
        errorCode: 0,
        logDir: '/var/lib/ferrolog',
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, partitionSize: 5_000_000_000n, offsetLag: 0n, isFutureKey: false }] }],
        totalBytes: 1n << 40n,
        usableBytes: 123n,
        isCordoned: false,
      },
    ],
  }
  const expected = version >= 4 ? input : { ...input, results: input.results.map((r) => ({ ...r, totalBytes: -1n, usableBytes: -1n })) }
  return { input, expected }
}

describeCodecVersions(codec, { request, response })

describe('DescribeLogDirs', () => {
  it('serves v1-v4 (v0 went with Kafka 4.0), flexible from v2', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([35, 1, 4, 2])
  })

  it('golden v1 request for every topic (null) and v4 response', () => {
    expectGolden(codec, 'request', 1, { topics: null }, hex('ffffffff // topics: null (all)'))
    expectGolden(
      codec,
      'response',
      4,
      {
        throttleTimeMs: 0,
        errorCode: 0,
        results: [
          {
            errorCode: 0,
            logDir: '/d',
            topics: [{ name: 't', partitions: [{ partitionIndex: 0, partitionSize: 77n, offsetLag: 1n, isFutureKey: false }] }],
            totalBytes: 1000n,
            usableBytes: 10n,
            isCordoned: false,
          },
        ],
      },
      hex(
        '00000000 0000 // throttleTimeMs, errorCode (v3+)',
        `02 0000 03 ${utf8('/d')} // results: 1, errorCode, logDir`,
        `02 02 ${utf8('t')} // topics: 1, name`,
        '02 00000000 000000000000004d 0000000000000001 00 00 // partitions: 1, index, size 77, lag 1, not future, tags',
        '00 // topic tags',
        '00000000000003e8 000000000000000a 00 // totalBytes 1000, usableBytes 10 (v4+), result tags',
        '00 // tagged fields',
      ),
    )
  })

  it("drops a top-level error code before v3 (ignorable in Kafka 4.4's schema, as its serializer does)", () => {
    expect(encode(codec, 'response', 2, { throttleTimeMs: 0, errorCode: 56, results: [] }).toString('hex')).toBe('000000000100')
  })
})
