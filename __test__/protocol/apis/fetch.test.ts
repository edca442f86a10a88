/**
 * Fetch v4-v17: round trips of every version, golden bytes laid out from FetchRequest.json and
 * FetchResponse.json, tagged fields, the split writer for zero-copy, and hostile input.
 */
import { describe, expect, it } from 'vitest'
import { type FetchRequest, type FetchResponse, type PartitionData, type RecordsRef, ZERO_UUID, encodeFetchResponseCuts, fetchCodec } from '../../../ts/protocol/apis/fetch.js'
import { writeFetchResponse } from '../../../ts/protocol/messages/fetch-response.js'
import { buildBatch } from '../../../ts/protocol/batch-builder.js'
import { ProtocolError } from '../../../ts/protocol/protocol-error.js'
import { Reader } from '../../../ts/protocol/reader.js'
import { Writer } from '../../../ts/protocol/writer.js'
import { decode, encode, expectCorruptionThrowsProtocolError, expectGolden, expectRoundTrip, expectUnknownTopLevelTagsSkipped, hex, versionsOf } from './codec-harness.js'
import { expectLyingLengthsThrowOnlyProtocolError, golden, uuid } from './data-path-helpers.js'

const RECORDS = buildBatch(
  [
    { key: 'k1', value: 'v1', timestamp: 1_700_000_000_000 },
    { key: null, value: 'second', timestamp: 1_700_000_000_001, headers: [{ key: 'h', value: 'x' }] },
  ],
  { baseOffset: 90n },
)

const REQUEST: FetchRequest = {
  clusterId: 'cluster-é',
  replicaId: 3,
  replicaState: { replicaId: 3, replicaEpoch: 17n },
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 52_428_800,
  isolationLevel: 1,
  sessionId: 77,
  sessionEpoch: 4,
  topics: [
    {
      topic: 'orders',
      topicId: uuid(1),
      partitions: [
        {
          partition: 0,
          currentLeaderEpoch: 5,
          fetchOffset: 1_234_567_890_123n,
          lastFetchedEpoch: 4,
          logStartOffset: 10n,
          partitionMaxBytes: 1_048_576,
          replicaDirectoryId: uuid(9),
        },
        {
          partition: 7,
          currentLeaderEpoch: 6,
          fetchOffset: 0n,
          lastFetchedEpoch: 2,
          logStartOffset: 0n,
          partitionMaxBytes: 65_536,
        },
      ],
    },
    { topic: 'ünïcödé', topicId: uuid(2), partitions: [] },
  ],
  forgottenTopicsData: [
    { topic: 'old', topicId: uuid(3), partitions: [1, 2, 3] },
    { topic: 'older', topicId: uuid(4), partitions: [] },
  ],
  rackId: 'rack-a',
}

/**
 * REQUEST at version `v`. `decoded`: what decoding gives, every field the version lacks at Kafka's
 * default. Otherwise: what may be encoded, only the non-ignorable fields the version lacks at
 * their defaults (Kafka's encoder refuses them); the ignorable ones are dropped by the encoder.
 */
function requestAt(v: number, decoded: boolean): FetchRequest {
  const lacks = (present: boolean, ignorable: boolean) => !present && (decoded || !ignorable)
  const out: FetchRequest = {
    replicaId: lacks(v <= 14, false) ? -1 : REQUEST.replicaId,
    maxWaitMs: REQUEST.maxWaitMs,
    minBytes: REQUEST.minBytes,
    maxBytes: REQUEST.maxBytes,
    isolationLevel: REQUEST.isolationLevel,
    sessionId: lacks(v >= 7, true) ? 0 : REQUEST.sessionId,
    sessionEpoch: lacks(v >= 7, true) ? -1 : REQUEST.sessionEpoch,
    topics: REQUEST.topics.map((t) => ({
      topic: lacks(v <= 12, true) ? '' : t.topic,
      topicId: lacks(v >= 13, true) ? ZERO_UUID : t.topicId,
      partitions: t.partitions.map((p) => {
        const { replicaDirectoryId, ...rest } = p
        return {
          ...rest,
          currentLeaderEpoch: lacks(v >= 9, true) ? -1 : p.currentLeaderEpoch,
          lastFetchedEpoch: lacks(v >= 12, false) ? -1 : p.lastFetchedEpoch,
          logStartOffset: lacks(v >= 5, true) ? -1n : p.logStartOffset,
          ...(replicaDirectoryId && !lacks(v >= 17, true) ? { replicaDirectoryId } : {}),
        }
      }),
    })),
    forgottenTopicsData: lacks(v >= 7, false)
      ? []
      : REQUEST.forgottenTopicsData.map((t) => ({
          topic: lacks(v <= 12, true) ? '' : t.topic,
          topicId: lacks(v >= 13, true) ? ZERO_UUID : t.topicId,
          partitions: t.partitions,
        })),
    rackId: lacks(v >= 11, true) ? '' : REQUEST.rackId,
  }
  if (!lacks(v >= 12, true)) out.clusterId = REQUEST.clusterId
  if (!lacks(v >= 15, false)) out.replicaState = REQUEST.replicaState
  return out
}

const RESPONSE: FetchResponse = {
  throttleTimeMs: 12,
  errorCode: 0,
  sessionId: 77,
  responses: [
    {
      topic: 'orders',
      topicId: uuid(1),
      partitions: [
        {
          partitionIndex: 0,
          errorCode: 0,
          highWatermark: 100n,
          lastStableOffset: 92n,
          logStartOffset: 5n,
          divergingEpoch: { epoch: 3, endOffset: 80n },
          snapshotId: { endOffset: 4n, epoch: 1 },
          abortedTransactions: [{ producerId: 1000n, firstOffset: 91n }],
          preferredReadReplica: 2,
          records: RECORDS,
        },
        {
          partitionIndex: 1,
          errorCode: 6,
          highWatermark: -1n,
          lastStableOffset: -1n,
          logStartOffset: -1n,
          currentLeader: { leaderId: 2, leaderEpoch: 9 },
          abortedTransactions: null,
          preferredReadReplica: -1,
          records: null,
        },
        {
          partitionIndex: 2,
          errorCode: 0,
          highWatermark: 7n,
          lastStableOffset: 7n,
          logStartOffset: 0n,
          abortedTransactions: [],
          preferredReadReplica: -1,
          records: Buffer.alloc(0),
        },
      ],
    },
    { topic: 'empty', topicId: uuid(5), partitions: [] },
  ],
  nodeEndpoints: [
    { nodeId: 2, host: 'broker-2.example', port: 9092, rack: null },
    { nodeId: 3, host: 'broker-3', port: 19092, rack: 'rack-c' },
  ],
}

/** RESPONSE at version `v`, `decoded` as in requestAt. */
function responseAt(v: number, decoded: boolean): FetchResponse {
  const lacks = (present: boolean, ignorable: boolean) => !present && (decoded || !ignorable)
  const out: FetchResponse = {
    throttleTimeMs: RESPONSE.throttleTimeMs,
    errorCode: lacks(v >= 7, true) ? 0 : RESPONSE.errorCode,
    sessionId: lacks(v >= 7, false) ? 0 : RESPONSE.sessionId,
    responses: RESPONSE.responses.map((t) => ({
      topic: lacks(v <= 12, true) ? '' : t.topic,
      topicId: lacks(v >= 13, true) ? ZERO_UUID : t.topicId,
      partitions: t.partitions.map((p) => {
        const { divergingEpoch, currentLeader, snapshotId, ...rest } = p
        const q: PartitionData = {
          ...rest,
          logStartOffset: lacks(v >= 5, true) ? -1n : p.logStartOffset,
          preferredReadReplica: lacks(v >= 11, false) ? -1 : p.preferredReadReplica,
        }
        if (v >= 12) Object.assign(q, divergingEpoch && { divergingEpoch }, currentLeader && { currentLeader }, snapshotId && { snapshotId })
        return q
      }),
    })),
  }
  if (v >= 16) out.nodeEndpoints = RESPONSE.nodeEndpoints
  return out
}

const MINIMAL_REQUEST: FetchRequest = {
  replicaId: -1,
  maxWaitMs: 0,
  minBytes: 0,
  maxBytes: 0x7fffffff,
  isolationLevel: 0,
  sessionId: 0,
  sessionEpoch: -1,
  topics: [],
  forgottenTopicsData: [],
  rackId: '',
}

const MINIMAL_RESPONSE: FetchResponse = { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [] }

// The generated codecs decode every field: the tagged ones a value leaves out come back at
// Kafka's defaults.
const NO_REPLICA_STATE = { replicaId: -1, replicaEpoch: -1n }
const NO_DIVERGING_EPOCH = { epoch: -1, endOffset: -1n }
const NO_LEADER = { leaderId: -1, leaderEpoch: -1 }
const NO_SNAPSHOT_ID = { endOffset: -1n, epoch: -1 }

/** `r` as decoded: with every field. */
function fullRequest(r: FetchRequest): FetchRequest {
  return {
    ...r,
    clusterId: r.clusterId ?? null,
    replicaState: r.replicaState ?? NO_REPLICA_STATE,
    topics: r.topics.map((t) => ({
      ...t,
      partitions: t.partitions.map((p) => ({ ...p, replicaDirectoryId: p.replicaDirectoryId ?? ZERO_UUID, highWatermark: p.highWatermark ?? 0x7fffffffffffffffn })),
    })),
  }
}

/** `r` as decoded: with every field. */
function fullResponse<R>(r: FetchResponse<R>): FetchResponse<R> {
  return {
    ...r,
    nodeEndpoints: r.nodeEndpoints ?? [],
    responses: r.responses.map((t) => ({
      ...t,
      partitions: t.partitions.map((p) => ({
        ...p,
        divergingEpoch: p.divergingEpoch ?? NO_DIVERGING_EPOCH,
        currentLeader: p.currentLeader ?? NO_LEADER,
        snapshotId: p.snapshotId ?? NO_SNAPSHOT_ID,
      })),
    })),
  }
}

describe('Fetch codec', () => {
  it('serves v4-v17, flexible from v12', () => {
    expect([fetchCodec.apiKey, fetchCodec.minVersion, fetchCodec.maxVersion, fetchCodec.flexibleFrom]).toEqual([1, 4, 17, 12])
  })

  describe.each(versionsOf(fetchCodec))('v%i', (v) => {
    it('round-trips a request', () => {
      expectRoundTrip(fetchCodec, 'request', v, requestAt(v, false), fullRequest(requestAt(v, true)))
      expectRoundTrip(fetchCodec, 'request', v, MINIMAL_REQUEST, fullRequest(MINIMAL_REQUEST))
    })

    it('round-trips a response, records as views into the input', () => {
      const bytes = expectRoundTrip(fetchCodec, 'response', v, responseAt(v, false), fullResponse(responseAt(v, true)))
      expectRoundTrip(fetchCodec, 'response', v, MINIMAL_RESPONSE, fullResponse(MINIMAL_RESPONSE))
      const records = (decode(fetchCodec, 'response', v, bytes) as FetchResponse).responses[0].partitions[0].records!
      expect(records.buffer).toBe(bytes.buffer)
      expect(records.equals(RECORDS)).toBe(true)
    })

    if (v >= fetchCodec.flexibleFrom) {
      it('skips unknown top-level tagged fields', () => {
        expectUnknownTopLevelTagsSkipped(fetchCodec, 'request', v, MINIMAL_REQUEST)
        expectUnknownTopLevelTagsSkipped(fetchCodec, 'response', v, { ...responseAt(v, true), nodeEndpoints: undefined })
      })
    }

    it('throws only ProtocolError on truncated, corrupted and lying input', () => {
      const req = encode(fetchCodec, 'request', v, requestAt(v, false))
      const res = encode(fetchCodec, 'response', v, responseAt(v, false))
      expectCorruptionThrowsProtocolError(fetchCodec, 'request', v, req, 1000 + v)
      expectCorruptionThrowsProtocolError(fetchCodec, 'response', v, res, 2000 + v)
      expectLyingLengthsThrowOnlyProtocolError(fetchCodec, 'request', v, req)
      expectLyingLengthsThrowOnlyProtocolError(fetchCodec, 'response', v, res)
    })
  })

  it('refuses to encode non-ignorable fields a version lacks, as Kafka does', () => {
    const enc = (kind: 'request' | 'response', v: number, value: unknown) => () => encode(fetchCodec, kind, v, value)
    expect(enc('request', 15, { ...MINIMAL_REQUEST, replicaId: 1 })).toThrow(/replicaId/)
    expect(enc('request', 14, { ...MINIMAL_REQUEST, replicaState: { replicaId: 1, replicaEpoch: 1n } })).toThrow(/replicaState/)
    expect(enc('request', 6, { ...MINIMAL_REQUEST, forgottenTopicsData: [{ topic: 't', topicId: ZERO_UUID, partitions: [0] }] })).toThrow(/forgottenTopicsData/)
    // (replicaState left out: Kafka's writer refuses it first.)
    expect(enc('request', 11, { ...requestAt(17, true), replicaState: undefined })).toThrow(/lastFetchedEpoch/)
    expect(enc('response', 6, { ...MINIMAL_RESPONSE, sessionId: 5 })).toThrow(/sessionId/)
    expect(enc('response', 15, { ...MINIMAL_RESPONSE, nodeEndpoints: [{ nodeId: 1, host: 'h', port: 1, rack: null }] })).toThrow(/nodeEndpoints/)
    const partition = RESPONSE.responses[0].partitions[0]
    const withPartition = (p: PartitionData): FetchResponse => ({
      ...MINIMAL_RESPONSE,
      responses: [{ topic: 't', topicId: ZERO_UUID, partitions: [p] }],
    })
    expect(enc('response', 10, withPartition({ ...partition, divergingEpoch: undefined, snapshotId: undefined }))).toThrow(/preferredReadReplica/)
    expect(enc('response', 11, withPartition(partition))).toThrow(/divergingEpoch/)
    // Ignorable fields are dropped without a word.
    expect(enc('request', 4, { ...MINIMAL_REQUEST, sessionId: 9, rackId: 'r', clusterId: 'c' })).not.toThrow()
  })

  it('refuses versions it does not serve', () => {
    expect(() => fetchCodec.decodeRequest(new Reader(Buffer.alloc(64)), 3)).toThrow(ProtocolError)
    expect(() => fetchCodec.encodeResponse(new Writer(), 18, MINIMAL_RESPONSE)).toThrow(ProtocolError)
  })
})

describe('Fetch golden bytes', () => {
  const goldenBoth = (kind: 'request' | 'response', v: number, bytes: Buffer, value: unknown) =>
    expectGolden(fetchCodec, kind, v, kind === 'request' ? fullRequest(value as FetchRequest) : fullResponse(value as FetchResponse), bytes)

  it('request v4 (classic encoding)', () => {
    const bytes = golden(`
      ffffffff           // replicaId -1
      000001f4           // maxWaitMs 500
      00000001           // minBytes 1
      7fffffff           // maxBytes
      01                 // isolationLevel READ_COMMITTED
      00000001           // topics: int32 count 1
        0001 74          //   topic: int16 length 1, "t"
        00000001         //   partitions: count 1
          00000000           // partition 0
          0000000000000005   // fetchOffset 5
          00100000           // partitionMaxBytes 1 MiB
    `)
    goldenBoth('request', 4, bytes, {
      replicaId: -1,
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: 0x7fffffff,
      isolationLevel: 1,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic: 't',
          topicId: ZERO_UUID,
          partitions: [
            {
              partition: 0,
              currentLeaderEpoch: -1,
              fetchOffset: 5n,
              lastFetchedEpoch: -1,
              logStartOffset: -1n,
              partitionMaxBytes: 1_048_576,
            },
          ],
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    })
  })

  it('request v11 (classic, sessions and rack)', () => {
    const bytes = golden(`
      ffffffff 000001f4 00000001 7fffffff 00   // replicaId, maxWaitMs, minBytes, maxBytes, isolation
      0000002a           // sessionId 42
      00000003           // sessionEpoch 3
      00000001 0001 74   // topics: 1, "t"
        00000001           // partitions: 1
          00000002           // partition 2
          00000004           // currentLeaderEpoch 4 (v9+)
          0000000000000064   // fetchOffset 100
          0000000000000000   // logStartOffset 0 (v5+)
          00010000           // partitionMaxBytes 65536
      00000001 0001 75   // forgottenTopicsData: 1, "u"
        00000002 00000000 00000001   // partitions [0, 1]
      0002 7231          // rackId "r1"
    `)
    goldenBoth('request', 11, bytes, {
      replicaId: -1,
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: 0x7fffffff,
      isolationLevel: 0,
      sessionId: 42,
      sessionEpoch: 3,
      topics: [
        {
          topic: 't',
          topicId: ZERO_UUID,
          partitions: [
            {
              partition: 2,
              currentLeaderEpoch: 4,
              fetchOffset: 100n,
              lastFetchedEpoch: -1,
              logStartOffset: 0n,
              partitionMaxBytes: 65_536,
            },
          ],
        },
      ],
      forgottenTopicsData: [{ topic: 'u', topicId: ZERO_UUID, partitions: [0, 1] }],
      rackId: 'r1',
    })
  })

  it('request v17 (flexible: topic ids, ClusterId, ReplicaState, ReplicaDirectoryId)', () => {
    const bytes = golden(`
      000001f4           // maxWaitMs 500 (no replicaId from v15)
      00000001           // minBytes 1
      03200000           // maxBytes 50 MiB
      00                 // isolationLevel READ_UNCOMMITTED
      00000000           // sessionId 0
      ffffffff           // sessionEpoch -1
      02                 // topics: compact count 1 + 1
        00112233445566778899aabbccddeeff   // topicId
        02                 // partitions: 1
          00000000           // partition 0
          00000007           // currentLeaderEpoch 7
          0000000000000064   // fetchOffset 100
          00000006           // lastFetchedEpoch 6
          0000000000000000   // logStartOffset 0
          00100000           // partitionMaxBytes 1 MiB
          01                 // tagged fields: 1
            00 10 0f0e0d0c0b0a09080706050403020100   // tag 0 ReplicaDirectoryId, 16 bytes
        00                 // topic tagged fields: none
      02                 // forgottenTopicsData: 1
        ffeeddccbbaa99887766554433221100   // topicId
        03 00000001 00000002               // partitions [1, 2]
        00                                 // tagged fields: none
      03 7231            // rackId: compact length 2 + 1, "r1"
      02                 // tagged fields: 2
        00 02 02 63        // tag 0 ClusterId, 2 bytes: compact string "c"
        01 0d              // tag 1 ReplicaState, 13 bytes:
          00000001           //   replicaId 1
          0000000000000009   //   replicaEpoch 9
          00                 //   its tagged fields: none
    `)
    goldenBoth('request', 17, bytes, {
      clusterId: 'c',
      replicaId: -1,
      replicaState: { replicaId: 1, replicaEpoch: 9n },
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: 52_428_800,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic: '',
          topicId: hex('00112233445566778899aabbccddeeff'),
          partitions: [
            {
              partition: 0,
              currentLeaderEpoch: 7,
              fetchOffset: 100n,
              lastFetchedEpoch: 6,
              logStartOffset: 0n,
              partitionMaxBytes: 1_048_576,
              replicaDirectoryId: hex('0f0e0d0c0b0a09080706050403020100'),
            },
          ],
        },
      ],
      forgottenTopicsData: [{ topic: '', topicId: hex('ffeeddccbbaa99887766554433221100'), partitions: [1, 2] }],
      rackId: 'r1',
    })
  })

  it('response v4 (classic encoding)', () => {
    const bytes = golden(`
      00000000           // throttleTimeMs 0
      00000001 0001 74   // responses: 1, topic "t"
        00000001           // partitions: 1
          00000000           // partitionIndex 0
          0000               // errorCode 0
          000000000000000a   // highWatermark 10
          000000000000000a   // lastStableOffset 10
          00000001           // abortedTransactions: 1
            0000000000000007   // producerId 7
            0000000000000003   // firstOffset 3
          00000003 010203    // records: int32 length 3, bytes
    `)
    goldenBoth('response', 4, bytes, {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [
        {
          topic: 't',
          topicId: ZERO_UUID,
          partitions: [
            {
              partitionIndex: 0,
              errorCode: 0,
              highWatermark: 10n,
              lastStableOffset: 10n,
              logStartOffset: -1n,
              abortedTransactions: [{ producerId: 7n, firstOffset: 3n }],
              preferredReadReplica: -1,
              records: hex('010203'),
            },
          ],
        },
      ],
    })
  })

  it('response v11 (classic, session, null aborted transactions and records)', () => {
    const bytes = golden(`
      00000064           // throttleTimeMs 100
      0000               // errorCode 0
      0000007b           // sessionId 123
      00000001 0001 74   // responses: 1, "t"
        00000001           // partitions: 1
          00000001           // partitionIndex 1
          0001               // errorCode OFFSET_OUT_OF_RANGE
          ffffffffffffffff   // highWatermark -1
          ffffffffffffffff   // lastStableOffset -1
          ffffffffffffffff   // logStartOffset -1
          ffffffff           // abortedTransactions null
          00000002           // preferredReadReplica 2
          ffffffff           // records null
    `)
    goldenBoth('response', 11, bytes, {
      throttleTimeMs: 100,
      errorCode: 0,
      sessionId: 123,
      responses: [
        {
          topic: 't',
          topicId: ZERO_UUID,
          partitions: [
            {
              partitionIndex: 1,
              errorCode: 1,
              highWatermark: -1n,
              lastStableOffset: -1n,
              logStartOffset: -1n,
              abortedTransactions: null,
              preferredReadReplica: 2,
              records: null,
            },
          ],
        },
      ],
    })
  })

  it('response v16 (flexible: DivergingEpoch, CurrentLeader, SnapshotId, NodeEndpoints)', () => {
    const bytes = golden(`
      00000000           // throttleTimeMs 0
      0000               // errorCode 0
      0000007b           // sessionId 123
      02                 // responses: compact count 1 + 1
        00112233445566778899aabbccddeeff   // topicId
        02                 // partitions: 1
          00000000           // partitionIndex 0
          0006               // errorCode NOT_LEADER_OR_FOLLOWER
          000000000000000a   // highWatermark 10
          000000000000000a   // lastStableOffset 10
          0000000000000000   // logStartOffset 0
          00                 // abortedTransactions: null (compact 0)
          ffffffff           // preferredReadReplica -1
          04 010203          // records: compact length 3 + 1, bytes
          03                 // tagged fields: 3
            00 0d              // tag 0 DivergingEpoch, 13 bytes:
              00000004 0000000000000008 00   //   epoch 4, endOffset 8, no tags
            01 09              // tag 1 CurrentLeader, 9 bytes:
              00000002 00000005 00           //   leaderId 2, leaderEpoch 5, no tags
            02 0d              // tag 2 SnapshotId, 13 bytes:
              0000000000000014 00000003 00   //   endOffset 20, epoch 3, no tags
        00                 // topic tagged fields: none
      01                 // tagged fields: 1
        00 0d              // tag 0 NodeEndpoints, 13 bytes:
          02                 // compact count 1
            00000002           // nodeId 2
            02 68              // host "h"
            00002384           // port 9092
            00                 // rack null
            00                 // tagged fields: none
    `)
    goldenBoth('response', 16, bytes, {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 123,
      responses: [
        {
          topic: '',
          topicId: hex('00112233445566778899aabbccddeeff'),
          partitions: [
            {
              partitionIndex: 0,
              errorCode: 6,
              highWatermark: 10n,
              lastStableOffset: 10n,
              logStartOffset: 0n,
              divergingEpoch: { epoch: 4, endOffset: 8n },
              currentLeader: { leaderId: 2, leaderEpoch: 5 },
              snapshotId: { endOffset: 20n, epoch: 3 },
              abortedTransactions: null,
              preferredReadReplica: -1,
              records: hex('010203'),
            },
          ],
        },
      ],
      nodeEndpoints: [{ nodeId: 2, host: 'h', port: 9092, rack: null }],
    })
  })
})

describe('Fetch tagged fields', () => {
  const base = golden(`
    000001f4 00000001 7fffffff 00 00000000 ffffffff   // v12 request: replicaId first
  `)
  const v12Request = (tags: string) => Buffer.concat([hex('ffffffff'), base, hex(`01 01 01 ${tags}`)]) // no topics, no forgotten, rackId ""

  it('skips unknown tags and tags the version does not define', () => {
    // Tag 1 (ReplicaState) exists from v15: in v12 it is skipped, like tag 7.
    const bytes = v12Request('02 01 0d 00000001 0000000000000009 00 07 02 abcd')
    const req = decode(fetchCodec, 'request', 12, bytes) as FetchRequest
    expect(req.replicaState).toEqual(NO_REPLICA_STATE)
    expect(req.replicaId).toBe(-1)
  })

  it('skips unknown tags inside a partition', () => {
    const bytes = golden(`
      00000000 0000 00000000   // throttleTimeMs, errorCode, sessionId
      02 02 74                 // responses: 1, topic "t"
        02                       // partitions: 1
          00000001 0000 0000000000000001 0000000000000001 0000000000000000   // index .. logStartOffset
          01 ffffffff 00         // abortedTransactions [], preferredReadReplica -1, records null
          02                     // tagged fields: 2
            00 0d 00000004 0000000000000008 00   // tag 0 DivergingEpoch
            05 02 abcd                           // tag 5: unknown, skipped
        00                       // topic tagged fields
      00                       // tagged fields
    `)
    const res = decode(fetchCodec, 'response', 12, bytes) as FetchResponse
    expect(res.responses[0].partitions[0]).toStrictEqual({
      partitionIndex: 1,
      errorCode: 0,
      highWatermark: 1n,
      lastStableOffset: 1n,
      logStartOffset: 0n,
      divergingEpoch: { epoch: 4, endOffset: 8n },
      currentLeader: NO_LEADER,
      snapshotId: NO_SNAPSHOT_ID,
      abortedTransactions: [],
      preferredReadReplica: -1,
      records: null,
    })
  })

  it('throws a ProtocolError when a known tag holds more or fewer bytes than its field', () => {
    expect(() => decode(fetchCodec, 'request', 12, v12Request('01 00 03 02 63 00'))).toThrow(ProtocolError)
    expect(() => decode(fetchCodec, 'request', 15, v12Request('01 01 04 00000001').subarray(4))).toThrow(ProtocolError)
  })

  it("reads tags out of order, as Kafka's generated readers do", () => {
    // The hand-written codec refused them; Kafka's readers (and the generated ones, checked
    // against Kafka's by the differential test) take each tag as it comes.
    expect((decode(fetchCodec, 'request', 12, v12Request('02 07 00 00 02 02 63')) as FetchRequest).clusterId).toBe('c')
  })

  it('drops ignorable tags a version lacks', () => {
    const withDirectory = requestAt(17, true)
    const without: FetchRequest = {
      ...withDirectory,
      topics: withDirectory.topics.map((t) => ({
        ...t,
        partitions: t.partitions.map(({ replicaDirectoryId: _, ...p }) => p),
      })),
    }
    expect(withDirectory.topics[0].partitions[0].replicaDirectoryId).toBeDefined()
    expect(encode(fetchCodec, 'request', 16, withDirectory).equals(encode(fetchCodec, 'request', 16, without))).toBe(true)
  })
})

describe('Fetch response for a zero-copy writer', () => {
  interface Slice extends RecordsRef {
    file: string
  }
  const sliceResponse = (v: number): FetchResponse<Slice | null> => {
    const res = fullResponse(responseAt(v, false))
    const [p0, p1, p2] = res.responses[0].partitions
    return {
      ...res,
      responses: [
        {
          ...res.responses[0],
          partitions: [
            { ...p0, records: { file: 'a.log', sizeInBytes: 40 } },
            { ...p1, records: null },
            { ...p2, records: { file: 'b.log', sizeInBytes: 0 } },
            { ...p0, partitionIndex: 3, records: { file: 'c.log', sizeInBytes: 7 } },
          ],
        },
      ],
    }
  }
  const content = (s: Slice) => Buffer.alloc(s.sizeInBytes, s.file.charCodeAt(0))

  it.each([4, 11, 12, 16, 17])('v%i: bytes before, records, bytes after make the plain encoding', (v) => {
    const w = new Writer()
    const cuts = encodeFetchResponseCuts(w, v, sliceResponse(v))
    expect(cuts.map((c) => [(c.records as Slice).file, c.size])).toEqual([
      ['a.log', 40],
      ['c.log', 7],
    ])
    const head = w.finish()
    const parts: Buffer[] = []
    let at = 0
    for (const cut of cuts) {
      parts.push(head.subarray(at, cut.at), content(cut.records as Slice))
      at = cut.at
    }
    parts.push(head.subarray(at))

    const plain = new Writer()
    writeFetchResponse(plain, v, sliceResponse(v), { sizeOf: (s) => (s === null ? -1 : s.sizeInBytes), write: (w, s) => w.raw(content(s!)) })
    expect(Buffer.concat(parts).equals(plain.finish())).toBe(true)

    const decoded = decode(fetchCodec, 'response', v, Buffer.concat(parts)) as FetchResponse
    expect(decoded.responses[0].partitions.map((p) => p.records?.length ?? null)).toEqual([40, null, 0, 7])
  })
})

describe('Fetch lying inputs', () => {
  it('an array count larger than the bytes left', () => {
    // v4 request whose topics count says 2^31-1.
    const bytes = hex('ffffffff 000001f4 00000001 7fffffff 00 7fffffff 0001 74')
    expect(() => decode(fetchCodec, 'request', 4, bytes)).toThrow(ProtocolError)
  })

  it('negative lengths and counts where null is not allowed', () => {
    // topics count -1 (null array), topic name length -1 (null string)
    expect(() => decode(fetchCodec, 'request', 4, hex('ffffffff 000001f4 00000001 7fffffff 00 ffffffff'))).toThrow(ProtocolError)
    expect(() => decode(fetchCodec, 'request', 4, hex('ffffffff 000001f4 00000001 7fffffff 00 00000001 ffff 00000000'))).toThrow(ProtocolError)
    // a partitions count of -1 (null) in a response
    expect(() => decode(fetchCodec, 'response', 4, hex('00000000 00000001 0001 74 ffffffff'))).toThrow(ProtocolError)
  })

  it('a compact length beyond the input and a varint longer than 5 bytes', () => {
    expect(() => decode(fetchCodec, 'response', 12, hex('00000000 0000 00000000 02 ffffff7f 74'))).toThrow(ProtocolError)
    expect(() => decode(fetchCodec, 'response', 12, hex('00000000 0000 00000000 ffffffffff01'))).toThrow(ProtocolError)
  })
})
