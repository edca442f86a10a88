import { describe, expect, it } from 'vitest'
import {
  CONSUMER_REPLICA_ID,
  DEBUGGING_REPLICA_ID,
  offsetForLeaderEpochCodec,
  type OffsetForLeaderEpochRequest,
  type OffsetForLeaderEpochResponse,
} from '../../../ts/protocol/apis/offset-for-leader-epoch.js'
import { describeCodecVersions, expectGolden, hex, utf8 } from './codec-harness.js'

const codec = offsetForLeaderEpochCodec

function request(version: number) {
  const input: OffsetForLeaderEpochRequest = {
    replicaId: CONSUMER_REPLICA_ID, // ignorable in Kafka: dropped before v3
    topics: [
      {
        topic: 'orders',
        partitions: [
          { partition: 0, currentLeaderEpoch: 5, leaderEpoch: 4 },
          { partition: 1, currentLeaderEpoch: -1, leaderEpoch: 0 },
        ],
      },
    ],
  }
  return { input, expected: { ...input, replicaId: version >= 3 ? input.replicaId : DEBUGGING_REPLICA_ID } }
}

function response(_version: number) {
  const input: OffsetForLeaderEpochResponse = {
    throttleTimeMs: 4,
    topics: [
      {
        topic: 'orders',
        partitions: [
          { errorCode: 0, partition: 0, leaderEpoch: 4, endOffset: 1500n },
          { errorCode: 74, partition: 1, leaderEpoch: -1, endOffset: -1n },
        ],
      },
    ],
  }
  return { input, expected: input }
}

describeCodecVersions(codec, { request, response })

describe('OffsetForLeaderEpoch', () => {
  it('serves v2-v4 (v0-v1 are gone since Kafka 4.0), flexible from v4', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([23, 2, 4, 4])
  })

  it('golden v3 request (non-flexible)', () => {
    const value: OffsetForLeaderEpochRequest = {
      replicaId: -1,
      topics: [{ topic: 'orders', partitions: [{ partition: 0, currentLeaderEpoch: 5, leaderEpoch: 4 }] }],
    }
    const bytes = hex(
      'ffffffff // replicaId -1 (consumer, v3+)',
      '00000001 // topics: 1',
      `0006 ${utf8('orders')} // topic`,
      '00000001 // partitions: 1',
      '00000000 00000005 00000004 // partition 0, currentLeaderEpoch 5, leaderEpoch 4',
    )
    expectGolden(codec, 'request', 3, value, bytes)
  })

  it('golden v2 request: no replicaId', () => {
    const value: OffsetForLeaderEpochRequest = {
      replicaId: DEBUGGING_REPLICA_ID,
      topics: [{ topic: 'a', partitions: [] }],
    }
    expectGolden(codec, 'request', 2, value, hex('00000001 // topics: 1', `0001 ${utf8('a')} 00000000 // topic, no partitions`))
  })

  it('golden v4 request (flexible)', () => {
    const value: OffsetForLeaderEpochRequest = {
      replicaId: -1,
      topics: [{ topic: 'orders', partitions: [{ partition: 0, currentLeaderEpoch: 5, leaderEpoch: 4 }] }],
    }
    const bytes = hex(
      'ffffffff // replicaId -1',
      '02 // topics: compact count 1',
      `07 ${utf8('orders')} // topic`,
      '02 // partitions: 1',
      '00000000 00000005 00000004 00 // partition 0, currentLeaderEpoch 5, leaderEpoch 4, no tagged fields',
      '00 00 // topic and request: no tagged fields',
    )
    expectGolden(codec, 'request', 4, value, bytes)
  })

  it('golden v2 response (non-flexible)', () => {
    const value: OffsetForLeaderEpochResponse = {
      throttleTimeMs: 0,
      topics: [{ topic: 'orders', partitions: [{ errorCode: 0, partition: 0, leaderEpoch: 4, endOffset: 1500n }] }],
    }
    const bytes = hex(
      '00000000 // throttleTimeMs',
      '00000001 // topics: 1',
      `0006 ${utf8('orders')} // topic`,
      '00000001 // partitions: 1',
      '0000 00000000 00000004 00000000000005dc // errorCode 0, partition 0, leaderEpoch 4, endOffset 1500',
    )
    expectGolden(codec, 'response', 2, value, bytes)
  })

  it('golden v4 response (flexible)', () => {
    const value: OffsetForLeaderEpochResponse = {
      throttleTimeMs: 0,
      topics: [{ topic: 'orders', partitions: [{ errorCode: 74, partition: 1, leaderEpoch: -1, endOffset: -1n }] }],
    }
    const bytes = hex(
      '00000000 // throttleTimeMs',
      '02 // topics: 1',
      `07 ${utf8('orders')} // topic`,
      '02 // partitions: 1',
      '004a 00000001 ffffffff ffffffffffffffff 00 // FENCED_LEADER_EPOCH, partition 1, epoch -1, endOffset -1',
      '00 00 // topic and response: no tagged fields',
    )
    expectGolden(codec, 'response', 4, value, bytes)
  })
})
