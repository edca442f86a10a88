import { describe, expect, it } from 'vitest'
import { txnOffsetCommitCodec, type TxnOffsetCommitRequest } from '../../../ts/protocol/apis/txn-offset-commit.js'
import { describeCodecVersions, encode } from './codec-harness.js'

const codec = txnOffsetCommitCodec

describeCodecVersions(codec, {
  request(version) {
    const input: TxnOffsetCommitRequest = {
      transactionalId: 'tx',
      groupId: 'g',
      producerId: 9n,
      producerEpoch: 4,
      generationIdOrMemberEpoch: version >= 3 ? 7 : -1,
      memberId: version >= 3 ? 'm-1' : '',
      groupInstanceId: version >= 3 ? 'static' : null,
      topics: [{ name: 'in', topicId: Buffer.alloc(16), partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: version >= 2 ? 3 : -1, committedMetadata: null }] }],
    }
    return { input, expected: input }
  },
  response: () => {
    const input = { throttleTimeMs: 0, topics: [{ name: 'in', topicId: Buffer.alloc(16), partitions: [{ partitionIndex: 0, errorCode: 47 }] }] }
    return { input, expected: input }
  },
})

describe('TxnOffsetCommit', () => {
  it('serves v0-v5 (v5: transaction version 2), flexible from v3; the group metadata only from v3', () => {
    expect([codec.apiKey, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([28, 0, 5, 3])
    const req: TxnOffsetCommitRequest = { transactionalId: 'tx', groupId: 'g', producerId: 1n, producerEpoch: 0, generationIdOrMemberEpoch: 5, memberId: 'm', groupInstanceId: null, topics: [] }
    expect(() => encode(codec, 'request', 2, req)).toThrow(/cannot carry/)
  })
})
