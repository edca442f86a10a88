/**
 * ListOffsets v1-v9 (v0 is gone since Kafka 4.0, KIP-896): round trips of every version, golden bytes laid out from
 * ListOffsetsRequest.json and ListOffsetsResponse.json, and hostile input.
 */
import { describe, expect, it } from 'vitest'
import { type ListOffsetsRequest, type ListOffsetsResponse, ListOffsetsTimestamp, listOffsetsCodec } from '../../../ts/protocol/apis/list-offsets.js'
import { ProtocolError } from '../../../ts/protocol/protocol-error.js'
import { decode, encode, expectCorruptionThrowsProtocolError, expectGolden, expectRoundTrip, expectUnknownTopLevelTagsSkipped, hex, versionsOf } from './codec-harness.js'
import { expectLyingLengthsThrowOnlyProtocolError, golden } from './data-path-helpers.js'

const REQUEST: ListOffsetsRequest = {
  replicaId: -1,
  isolationLevel: 1,
  topics: [
    {
      name: 'orders',
      partitions: [
        { partitionIndex: 0, currentLeaderEpoch: 5, timestamp: ListOffsetsTimestamp.EARLIEST },
        { partitionIndex: 1, currentLeaderEpoch: -1, timestamp: 1_700_000_000_000n },
      ],
    },
    { name: 'ünïcödé', partitions: [] },
  ],
  timeoutMs: 0, // v10+, not served
}

const RESPONSE: ListOffsetsResponse = {
  throttleTimeMs: 7,
  topics: [
    {
      name: 'orders',
      partitions: [
        { partitionIndex: 0, errorCode: 0, timestamp: 1_700_000_000_000n, offset: 42n, leaderEpoch: 5 },
        { partitionIndex: 1, errorCode: 3, timestamp: -1n, offset: -1n, leaderEpoch: -1 },
      ],
    },
  ],
}

/**
 * REQUEST at version `v`. `decoded`: every field the version lacks at Kafka's default. Otherwise
 * only the non-ignorable ones (isolationLevel): the encoder drops the others.
 */
function requestAt(v: number, decoded: boolean): ListOffsetsRequest {
  const lacks = (present: boolean, ignorable: boolean) => !present && (decoded || !ignorable)
  return {
    replicaId: REQUEST.replicaId,
    isolationLevel: lacks(v >= 2, false) ? 0 : REQUEST.isolationLevel,
    topics: REQUEST.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        currentLeaderEpoch: lacks(v >= 4, true) ? -1 : p.currentLeaderEpoch,
        timestamp: p.timestamp,
      })),
    })),
    timeoutMs: REQUEST.timeoutMs,
  }
}

/** RESPONSE at version `v`; non-ignorable: leaderEpoch. */
function responseAt(v: number, decoded: boolean): ListOffsetsResponse {
  const lacks = (present: boolean, ignorable: boolean) => !present && (decoded || !ignorable)
  return {
    throttleTimeMs: lacks(v >= 2, true) ? 0 : RESPONSE.throttleTimeMs,
    topics: RESPONSE.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        errorCode: p.errorCode,
        timestamp: p.timestamp,
        offset: p.offset,
        leaderEpoch: lacks(v >= 4, false) ? -1 : p.leaderEpoch,
      })),
    })),
  }
}

describe('ListOffsets codec', () => {
  it('serves v1-v9, flexible from v6', () => {
    expect([listOffsetsCodec.apiKey, listOffsetsCodec.minVersion, listOffsetsCodec.maxVersion, listOffsetsCodec.flexibleFrom]).toEqual([2, 1, 9, 6])
  })

  describe.each(versionsOf(listOffsetsCodec))('v%i', (v) => {
    it('round-trips a request and a response', () => {
      expectRoundTrip(listOffsetsCodec, 'request', v, requestAt(v, false), requestAt(v, true))
      expectRoundTrip(listOffsetsCodec, 'response', v, responseAt(v, false), responseAt(v, true))
      const empty = { replicaId: 2, isolationLevel: 0, topics: [], timeoutMs: 0 }
      expectRoundTrip(listOffsetsCodec, 'request', v, empty, empty)
    })

    if (v >= listOffsetsCodec.flexibleFrom) {
      it('skips unknown top-level tagged fields', () => {
        expectUnknownTopLevelTagsSkipped(listOffsetsCodec, 'request', v, requestAt(v, true))
        expectUnknownTopLevelTagsSkipped(listOffsetsCodec, 'response', v, responseAt(v, true))
      })
    }

    it('throws only ProtocolError on truncated, corrupted and lying input', () => {
      const req = encode(listOffsetsCodec, 'request', v, requestAt(v, false))
      const res = encode(listOffsetsCodec, 'response', v, responseAt(v, false))
      expectCorruptionThrowsProtocolError(listOffsetsCodec, 'request', v, req, 5000 + v)
      expectCorruptionThrowsProtocolError(listOffsetsCodec, 'response', v, res, 6000 + v)
      expectLyingLengthsThrowOnlyProtocolError(listOffsetsCodec, 'request', v, req)
      expectLyingLengthsThrowOnlyProtocolError(listOffsetsCodec, 'response', v, res)
    })
  })

  it('refuses to encode non-ignorable fields a version lacks, as Kafka does', () => {
    expect(() => encode(listOffsetsCodec, 'request', 1, REQUEST)).toThrow(/isolationLevel/)
    expect(() => encode(listOffsetsCodec, 'response', 3, { ...RESPONSE, topics: responseAt(9, true).topics })).toThrow(/leaderEpoch/)
  })

  it('refuses versions it does not serve', () => {
    expect(() => decode(listOffsetsCodec, 'request', 10, Buffer.alloc(16))).toThrow(ProtocolError)
    expect(() => encode(listOffsetsCodec, 'response', -1, RESPONSE)).toThrow(ProtocolError)
  })

  it('refuses v0, which Kafka 4.4 neither serves nor sends, on either side', () => {
    // A v0 request and response as a Kafka 3.x broker knew them (maxNumOffsets, old-style offsets).
    const v0Request = golden(`
      ffffffff           // replicaId -1 (a consumer)
      00000001 0001 74   // topics: int32 count 1, name: int16 length 1, "t"
        00000001           // partitions: 1
          00000000           // partitionIndex 0
          ffffffffffffffff   // timestamp -1 (latest)
          00000001           // maxNumOffsets 1 (v0 only)
    `)
    const v0Response = golden(`
      00000001 0001 74   // topics: 1, "t"
        00000001           // partitions: 1
          00000000           // partitionIndex 0
          0000               // errorCode 0
          00000001 000000000000002a   // oldStyleOffsets: [42]
    `)
    expect(() => decode(listOffsetsCodec, 'request', 0, v0Request)).toThrow(ProtocolError)
    expect(() => decode(listOffsetsCodec, 'response', 0, v0Response)).toThrow(ProtocolError)
    expect(() => encode(listOffsetsCodec, 'request', 0, requestAt(1, true))).toThrow(ProtocolError)
    expect(() => encode(listOffsetsCodec, 'response', 0, responseAt(1, true))).toThrow(ProtocolError)
  })
})

describe('ListOffsets golden bytes', () => {
  const goldenBoth = (kind: 'request' | 'response', v: number, bytes: Buffer, value: unknown) => expectGolden(listOffsetsCodec, kind, v, value, bytes)

  it('request and response v4 (classic, isolation level and leader epochs)', () => {
    goldenBoth(
      'request',
      4,
      golden(`
        ffffffff           // replicaId -1
        01                 // isolationLevel READ_COMMITTED (v2+)
        00000001 0001 74   // topics: 1, "t"
          00000001           // partitions: 1
            00000002           // partitionIndex 2
            00000003           // currentLeaderEpoch 3 (v4+)
            fffffffffffffffe   // timestamp -2 (earliest)
      `),
      {
        replicaId: -1,
        isolationLevel: 1,
        topics: [{ name: 't', partitions: [{ partitionIndex: 2, currentLeaderEpoch: 3, timestamp: -2n }] }],
        timeoutMs: 0,
      },
    )
    goldenBoth(
      'response',
      4,
      golden(`
        00000000           // throttleTimeMs 0 (v2+)
        00000001 0001 74   // topics: 1, "t"
          00000001           // partitions: 1
            00000002           // partitionIndex 2
            0000               // errorCode 0
            ffffffffffffffff   // timestamp -1
            0000000000000005   // offset 5
            00000003           // leaderEpoch 3 (v4+)
      `),
      {
        throttleTimeMs: 0,
        topics: [{ name: 't', partitions: [{ partitionIndex: 2, errorCode: 0, timestamp: -1n, offset: 5n, leaderEpoch: 3 }] }],
      },
    )
  })

  it('request and response v6 (flexible)', () => {
    goldenBoth(
      'request',
      6,
      golden(`
        ffffffff           // replicaId -1
        00                 // isolationLevel READ_UNCOMMITTED
        02 02 74           // topics: compact count 1 + 1, name: compact length 1 + 1, "t"
          02                 // partitions: 1
            00000000           // partitionIndex 0
            00000005           // currentLeaderEpoch 5
            ffffffffffffffff   // timestamp -1 (latest)
            00                 // tagged fields: none
          00                 // topic tagged fields: none
        00                 // tagged fields: none
      `),
      {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch: 5, timestamp: -1n }] }],
        timeoutMs: 0,
      },
    )
    goldenBoth(
      'response',
      6,
      golden(`
        0000000a           // throttleTimeMs 10
        02 02 74           // topics: 1, "t"
          02                 // partitions: 1
            00000000           // partitionIndex 0
            0000               // errorCode 0
            0000018bcfe56800   // timestamp 1700000000000
            000000000000002a   // offset 42
            00000005           // leaderEpoch 5
            00                 // tagged fields: none
          00                 // topic tagged fields: none
        00                 // tagged fields: none
      `),
      {
        throttleTimeMs: 10,
        topics: [
          {
            name: 't',
            partitions: [{ partitionIndex: 0, errorCode: 0, timestamp: 1_700_000_000_000n, offset: 42n, leaderEpoch: 5 }],
          },
        ],
      },
    )
  })
})

describe('ListOffsets lying inputs', () => {
  it('counts beyond the input and negative counts', () => {
    expect(() => decode(listOffsetsCodec, 'request', 1, hex('ffffffff 7fffffff'))).toThrow(ProtocolError)
    expect(() => decode(listOffsetsCodec, 'request', 1, hex('ffffffff ffffffff'))).toThrow(ProtocolError)
    expect(() => decode(listOffsetsCodec, 'response', 1, hex('00000001 0001 74 fffffffe'))).toThrow(ProtocolError)
    expect(() => decode(listOffsetsCodec, 'request', 6, hex('ffffffff 00 8080808001'))).toThrow(ProtocolError)
  })
})
