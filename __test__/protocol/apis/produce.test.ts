/**
 * Produce v3-v11: round trips of every version, golden bytes laid out from ProduceRequest.json and
 * ProduceResponse.json, the KIP-951 tags of v10+, and hostile input.
 */
import { describe, expect, it } from 'vitest'
import { type PartitionProduceResponse, type ProduceRequest, type ProduceResponse, produceCodec } from '../../../ts/protocol/apis/produce.js'
import { buildBatch } from '../../../ts/protocol/batch-builder.js'
import { ZERO_UUID } from '../../../ts/protocol/message-codec.js'
import { ProtocolError } from '../../../ts/protocol/protocol-error.js'
import { decode, encode, expectCorruptionThrowsProtocolError, expectGolden, expectRoundTrip, expectUnknownTopLevelTagsSkipped, hex, versionsOf } from './codec-harness.js'
import { expectLyingLengthsThrowOnlyProtocolError, golden } from './data-path-helpers.js'

const RECORDS = buildBatch([
  { key: 'k', value: 'hello', timestamp: 1_700_000_000_000 },
  { key: null, value: null, timestamp: 1_700_000_000_500 },
])

const REQUEST: ProduceRequest = {
  transactionalId: 'tx-ü',
  acks: -1,
  timeoutMs: 30_000,
  topicData: [
    {
      name: 'orders',
      partitionData: [
        { index: 0, records: RECORDS },
        { index: 1, records: null },
        { index: 2, records: Buffer.alloc(0) },
      ],
    },
    { name: 'empty', partitionData: [] },
  ],
}

const NON_TRANSACTIONAL: ProduceRequest = { transactionalId: null, acks: 1, timeoutMs: 0, topicData: [] }

const RESPONSE: ProduceResponse = {
  responses: [
    {
      name: 'orders',
      partitionResponses: [
        {
          index: 0,
          errorCode: 0,
          baseOffset: 1_234_567_890_123n,
          logAppendTimeMs: 1_700_000_000_000n,
          logStartOffset: 17n,
          recordErrors: [],
          errorMessage: null,
        },
        {
          index: 1,
          errorCode: 87, // INVALID_RECORD
          baseOffset: -1n,
          logAppendTimeMs: -1n,
          logStartOffset: -1n,
          recordErrors: [
            { batchIndex: 3, batchIndexErrorMessage: 'bad timestamp' },
            { batchIndex: 4, batchIndexErrorMessage: null },
          ],
          errorMessage: 'batch dropped',
        },
        {
          index: 2,
          errorCode: 6, // NOT_LEADER_OR_FOLLOWER
          baseOffset: -1n,
          logAppendTimeMs: -1n,
          logStartOffset: -1n,
          recordErrors: [],
          errorMessage: null,
          currentLeader: { leaderId: 3, leaderEpoch: 12 },
        },
      ],
    },
  ],
  throttleTimeMs: 25,
  nodeEndpoints: [{ nodeId: 3, host: 'broker-3.example', port: 9092, rack: 'rack-b' }],
}

/**
 * RESPONSE at version `v`. `decoded`: every field the version lacks at Kafka's default. Otherwise
 * only the non-ignorable ones (currentLeader, nodeEndpoints): the encoder drops the others.
 */
function responseAt(v: number, decoded: boolean): ProduceResponse {
  const lacks = (present: boolean, ignorable: boolean) => !present && (decoded || !ignorable)
  const out: ProduceResponse = {
    responses: RESPONSE.responses.map((t) => ({
      name: t.name,
      partitionResponses: t.partitionResponses.map((p) => {
        const { currentLeader, ...rest } = p
        const q: PartitionProduceResponse = {
          ...rest,
          logStartOffset: lacks(v >= 5, true) ? -1n : p.logStartOffset,
          recordErrors: lacks(v >= 8, true) ? [] : p.recordErrors,
          errorMessage: lacks(v >= 8, true) ? null : p.errorMessage,
        }
        if (currentLeader && !lacks(v >= 10, false)) q.currentLeader = currentLeader
        return q
      }),
    })),
    throttleTimeMs: RESPONSE.throttleTimeMs,
  }
  if (!lacks(v >= 10, false)) out.nodeEndpoints = RESPONSE.nodeEndpoints
  return out
}

// The generated codecs decode every field: those a value leaves out (topic ids, which the served
// versions lack; the v10+ tags) come back at Kafka's defaults.
const NO_LEADER = { leaderId: -1, leaderEpoch: -1 }

/** `r` as decoded: with every field. */
function fullRequest(r: ProduceRequest): ProduceRequest {
  return { ...r, topicData: r.topicData.map((t) => ({ ...t, topicId: ZERO_UUID })) }
}

/** `r` as decoded: with every field. */
function fullResponse(r: ProduceResponse): ProduceResponse {
  return {
    ...r,
    nodeEndpoints: r.nodeEndpoints ?? [],
    responses: r.responses.map((t) => ({ ...t, topicId: ZERO_UUID, partitionResponses: t.partitionResponses.map((p) => ({ ...p, currentLeader: p.currentLeader ?? NO_LEADER })) })),
  }
}

describe('Produce codec', () => {
  it('serves v3-v12 (v12: transaction version 2), flexible from v9', () => {
    expect([produceCodec.apiKey, produceCodec.minVersion, produceCodec.maxVersion, produceCodec.flexibleFrom]).toEqual([0, 3, 12, 9])
  })

  describe.each(versionsOf(produceCodec))('v%i', (v) => {
    it('round-trips a request, records as views into the input', () => {
      const bytes = expectRoundTrip(produceCodec, 'request', v, REQUEST, fullRequest(REQUEST))
      expectRoundTrip(produceCodec, 'request', v, NON_TRANSACTIONAL, fullRequest(NON_TRANSACTIONAL))
      const records = (decode(produceCodec, 'request', v, bytes) as ProduceRequest).topicData[0].partitionData[0].records!
      expect(records.buffer).toBe(bytes.buffer)
      expect(records.equals(RECORDS)).toBe(true)
    })

    it('round-trips a response', () => {
      expectRoundTrip(produceCodec, 'response', v, responseAt(v, false), fullResponse(responseAt(v, true)))
      const empty: ProduceResponse = { responses: [], throttleTimeMs: 0 }
      expectRoundTrip(produceCodec, 'response', v, empty, fullResponse(empty))
    })

    if (v >= produceCodec.flexibleFrom) {
      it('skips unknown top-level tagged fields', () => {
        expectUnknownTopLevelTagsSkipped(produceCodec, 'request', v, REQUEST)
        expectUnknownTopLevelTagsSkipped(produceCodec, 'response', v, { ...responseAt(v, true), nodeEndpoints: undefined })
      })
    }

    it('throws only ProtocolError on truncated, corrupted and lying input', () => {
      const req = encode(produceCodec, 'request', v, REQUEST)
      const res = encode(produceCodec, 'response', v, responseAt(v, false))
      expectCorruptionThrowsProtocolError(produceCodec, 'request', v, req, 3000 + v)
      expectCorruptionThrowsProtocolError(produceCodec, 'response', v, res, 4000 + v)
      expectLyingLengthsThrowOnlyProtocolError(produceCodec, 'request', v, req)
      expectLyingLengthsThrowOnlyProtocolError(produceCodec, 'response', v, res)
    })
  })

  it('refuses to encode the KIP-951 leader hints before v10, as Kafka does', () => {
    expect(() => encode(produceCodec, 'response', 9, RESPONSE)).toThrow(/currentLeader/)
    expect(() => encode(produceCodec, 'response', 9, { ...responseAt(9, true), nodeEndpoints: RESPONSE.nodeEndpoints })).toThrow(/nodeEndpoints/)
    // An empty list is the default: nothing to refuse.
    expect(() => encode(produceCodec, 'response', 9, { ...responseAt(9, true), nodeEndpoints: [] })).not.toThrow()
  })

  it('refuses versions it does not serve', () => {
    expect(() => encode(produceCodec, 'request', 2, NON_TRANSACTIONAL)).toThrow(ProtocolError)
    expect(() => decode(produceCodec, 'request', 12, Buffer.alloc(16))).toThrow(ProtocolError)
  })
})

describe('Produce golden bytes', () => {
  const goldenBoth = (kind: 'request' | 'response', v: number, bytes: Buffer, value: unknown) =>
    expectGolden(produceCodec, kind, v, kind === 'request' ? fullRequest(value as ProduceRequest) : fullResponse(value as ProduceResponse), bytes)

  it('request v3 (classic encoding)', () => {
    const bytes = golden(`
      ffff               // transactionalId: null (int16 -1)
      ffff               // acks -1
      00007530           // timeoutMs 30000
      00000001           // topicData: int32 count 1
        0001 74            // name: int16 length 1, "t"
        00000001           // partitionData: 1
          00000000           // index 0
          00000003 010203    // records: int32 length 3, bytes
    `)
    goldenBoth('request', 3, bytes, {
      transactionalId: null,
      acks: -1,
      timeoutMs: 30_000,
      topicData: [{ name: 't', partitionData: [{ index: 0, records: hex('010203') }] }],
    })
  })

  it('request v9 (flexible)', () => {
    const bytes = golden(`
      03 7478            // transactionalId: compact length 2 + 1, "tx"
      0001               // acks 1
      000003e8           // timeoutMs 1000
      02                 // topicData: compact count 1 + 1
        02 74              // name "t"
        03                 // partitionData: 2
          00000001           // index 1
          04 010203          // records: compact length 3 + 1
          00                 // tagged fields: none
          00000002           // index 2
          00                 // records: null (compact 0)
          00                 // tagged fields: none
        00                 // topic tagged fields: none
      00                 // tagged fields: none
    `)
    goldenBoth('request', 9, bytes, {
      transactionalId: 'tx',
      acks: 1,
      timeoutMs: 1000,
      topicData: [
        {
          name: 't',
          partitionData: [
            { index: 1, records: hex('010203') },
            { index: 2, records: null },
          ],
        },
      ],
    })
  })

  it('response v5 (classic encoding)', () => {
    const bytes = golden(`
      00000001 0001 74   // responses: 1, name "t"
        00000001           // partitionResponses: 1
          00000000           // index 0
          0000               // errorCode 0
          000000000000002a   // baseOffset 42
          ffffffffffffffff   // logAppendTimeMs -1 (CreateTime)
          0000000000000000   // logStartOffset 0 (v5+)
      00000000           // throttleTimeMs 0
    `)
    goldenBoth('response', 5, bytes, {
      responses: [
        {
          name: 't',
          partitionResponses: [
            {
              index: 0,
              errorCode: 0,
              baseOffset: 42n,
              logAppendTimeMs: -1n,
              logStartOffset: 0n,
              recordErrors: [],
              errorMessage: null,
            },
          ],
        },
      ],
      throttleTimeMs: 0,
    })
  })

  it('response v8 (classic, record errors)', () => {
    const bytes = golden(`
      00000001 0001 74   // responses: 1, "t"
        00000001           // partitionResponses: 1
          00000000 0057      // index 0, errorCode 87 INVALID_RECORD
          ffffffffffffffff ffffffffffffffff ffffffffffffffff   // baseOffset, logAppendTimeMs, logStartOffset -1
          00000001           // recordErrors: 1
            00000002           // batchIndex 2
            ffff               // batchIndexErrorMessage null
          0003 626164        // errorMessage "bad"
      00000000           // throttleTimeMs
    `)
    goldenBoth('response', 8, bytes, {
      responses: [
        {
          name: 't',
          partitionResponses: [
            {
              index: 0,
              errorCode: 87,
              baseOffset: -1n,
              logAppendTimeMs: -1n,
              logStartOffset: -1n,
              recordErrors: [{ batchIndex: 2, batchIndexErrorMessage: null }],
              errorMessage: 'bad',
            },
          ],
        },
      ],
      throttleTimeMs: 0,
    })
  })

  it('response v10 (flexible: CurrentLeader and NodeEndpoints tags)', () => {
    const bytes = golden(`
      02 02 74           // responses: compact 1, name "t"
        02                 // partitionResponses: 1
          00000000           // index 0
          0006               // errorCode NOT_LEADER_OR_FOLLOWER
          ffffffffffffffff   // baseOffset -1
          ffffffffffffffff   // logAppendTimeMs -1
          ffffffffffffffff   // logStartOffset -1
          02                 // recordErrors: 1
            00000003           // batchIndex 3
            00                 // batchIndexErrorMessage null
            00                 // tagged fields: none
          04 626164          // errorMessage "bad"
          01                 // tagged fields: 1
            00 09              // tag 0 CurrentLeader, 9 bytes:
              00000002 00000005 00   // leaderId 2, leaderEpoch 5, no tags
        00                 // topic tagged fields: none
      00000000           // throttleTimeMs 0
      01                 // tagged fields: 1
        00 0d              // tag 0 NodeEndpoints, 13 bytes:
          02                 // compact count 1
            00000002 02 68 00002384 00 00   // nodeId 2, host "h", port 9092, rack null, no tags
    `)
    goldenBoth('response', 10, bytes, {
      responses: [
        {
          name: 't',
          partitionResponses: [
            {
              index: 0,
              errorCode: 6,
              baseOffset: -1n,
              logAppendTimeMs: -1n,
              logStartOffset: -1n,
              recordErrors: [{ batchIndex: 3, batchIndexErrorMessage: null }],
              errorMessage: 'bad',
              currentLeader: { leaderId: 2, leaderEpoch: 5 },
            },
          ],
        },
      ],
      throttleTimeMs: 0,
      nodeEndpoints: [{ nodeId: 2, host: 'h', port: 9092, rack: null }],
    })
  })

  it('v9 skips tag 0 (CurrentLeader from v10 only)', () => {
    const v10 = golden(`
      02 02 74 02 00000000 0000 ffffffffffffffff ffffffffffffffff ffffffffffffffff 01 00
      01 00 09 00000002 00000005 00   // CurrentLeader tag
      00 00000000 00
    `)
    const p = (decode(produceCodec, 'response', 9, v10) as ProduceResponse).responses[0].partitionResponses[0]
    expect(p.currentLeader).toEqual(NO_LEADER)
    expect((decode(produceCodec, 'response', 10, v10) as ProduceResponse).responses[0].partitionResponses[0].currentLeader).toEqual({
      leaderId: 2,
      leaderEpoch: 5,
    })
  })
})

describe('Produce lying inputs', () => {
  it('a records length beyond the input, negative lengths, a null topic name', () => {
    const v3 = (tail: string) => hex(`ffff ffff 00007530 00000001 0001 74 00000001 00000000 ${tail}`)
    expect(() => decode(produceCodec, 'request', 3, v3('7fffffff 0102'))).toThrow(ProtocolError)
    expect(decode(produceCodec, 'request', 3, v3('fffffffe'))).toMatchObject({ topicData: [{ partitionData: [{ records: null }] }] })
    expect(() => decode(produceCodec, 'request', 3, hex('ffff ffff 00007530 00000001 ffff 00000000'))).toThrow(ProtocolError)
    expect(() => decode(produceCodec, 'request', 3, hex('ffff ffff 00007530 80000000'))).toThrow(ProtocolError)
  })
})
