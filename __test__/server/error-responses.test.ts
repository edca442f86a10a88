/**
 * Requests answered with an error the way Kafka answers them (ts/server/error-responses.ts): the
 * error lands in each partition named for Produce, Fetch, ListOffsets, ..., in each topic for
 * Metadata, per key for FindCoordinator v4+, in the top-level errorCode elsewhere; and every
 * version the broker serves of every ApiKey with a place for an error can carry it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ApiKey } from '../../ts/protocol/apis/api.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { apiMessageType } from '../../ts/protocol/messages/api-message-type.js'
import { Reader } from '../../ts/protocol/reader.js'
import { Writer } from '../../ts/protocol/writer.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import { carriesError, errorResponse, hasErrorResponse, requestPartitions } from '../../ts/server/error-responses.js'

const TOPIC_ID = Buffer.alloc(16, 7)
const ERROR = ErrorCode.NOT_LEADER_OR_FOLLOWER

/** A request of the ApiKey naming topic `t`, partition 2 where it names partitions. */
function requestOf(apiKey: number): Record<string, unknown> {
  const req = apiMessageType(apiKey)!.request.defaults() as Record<string, unknown>
  switch (apiKey) {
    case ApiKey.Produce:
      return { ...req, acks: -1, topicData: [{ name: 't', topicId: TOPIC_ID, partitionData: [{ index: 2, records: null }] }] }
    case ApiKey.Fetch:
      return { ...req, topics: [{ topic: 't', topicId: TOPIC_ID, partitions: [{ partition: 2 }] }] }
    case ApiKey.ListOffsets:
    case ApiKey.DeleteRecords:
      return { ...req, topics: [{ name: 't', partitions: [{ partitionIndex: 2 }] }] }
    case ApiKey.OffsetCommit:
    case ApiKey.TxnOffsetCommit:
      return { ...req, topics: [{ name: 't', topicId: TOPIC_ID, partitions: [{ partitionIndex: 2 }] }] }
    case ApiKey.OffsetForLeaderEpoch:
      return { ...req, topics: [{ topic: 't', partitions: [{ partition: 2 }] }] }
    case ApiKey.Metadata:
      return { ...req, topics: [{ name: 't', topicId: TOPIC_ID }] }
    case ApiKey.OffsetFetch:
      return { ...req, topics: [{ name: 't', partitionIndexes: [2] }], groups: [{ groupId: 'g', topics: [] }] }
    case ApiKey.CreateTopics:
    case ApiKey.CreatePartitions:
      return { ...req, topics: [{ name: 't' }] }
    case ApiKey.DeleteTopics:
      return { ...req, topicNames: ['t'], topics: [{ name: 't', topicId: TOPIC_ID }] }
    case ApiKey.DescribeGroups:
      return { ...req, groups: ['g'] }
    case ApiKey.DeleteGroups:
      return { ...req, groupsNames: ['g'] }
    case ApiKey.AddPartitionsToTxn:
      return { ...req, v3AndBelowTopics: [{ name: 't', partitions: [2] }] }
    case ApiKey.FindCoordinator:
      return { ...req, key: 'g', coordinatorKeys: ['g'] }
  }
  return req
}

/** The response as a client reads it at `version`. */
function onTheWire(apiKey: number, version: number, response: unknown): any {
  const codec = apiMessageType(apiKey)!.response
  const w = new Writer()
  codec.write(w, version, response)
  return codec.read(new Reader(w.finish()), version)
}

let broker: Broker
beforeAll(async () => {
  broker = await startBroker()
})
afterAll(async () => {
  await broker?.stop()
})

describe('error responses', () => {
  it('every served version of every ApiKey with a place for an error carries it', () => {
    const cannot: string[] = []
    const none: string[] = []
    for (const { apiKey, minVersion, maxVersion } of broker.supportedApis()) {
      const name = apiMessageType(apiKey)!.name
      if (!hasErrorResponse(apiKey)) {
        none.push(name)
        continue
      }
      // Produce is advertised from v0 as Kafka 4.x does, but served (and so answered) from v3.
      for (let v = apiKey === ApiKey.Produce ? produceCodec.minVersion : minVersion; v <= maxVersion; v++) {
        const response = errorResponse(apiKey, v, requestOf(apiKey), ERROR)
        if (!carriesError(apiKey, v, response, ERROR)) cannot.push(`${name} v${v}`)
      }
    }
    // Before v3 DescribeLogDirs has no top-level error (Kafka's getErrorResponse loses it too).
    expect(cannot).toEqual(['DescribeLogDirs v1', 'DescribeLogDirs v2'])
    // Per-resource results whose error answers are not built (inject() refuses an error for them).
    expect(none.sort()).toEqual(
      [
        'WriteTxnMarkers',
        'CreateAcls',
        'DeleteAcls',
        'DescribeConfigs',
        'AlterConfigs',
        'IncrementalAlterConfigs',
        'AlterUserScramCredentials',
        'DescribeProducers',
        'DescribeTransactions',
        'ConsumerGroupDescribe',
        'ShareGroupDescribe',
        'DescribeShareGroupOffsets',
        'AlterClientQuotas',
        // The share coordinator's inter-broker APIs: errors per partition.
        'InitializeShareGroupState',
        'ReadShareGroupState',
        'WriteShareGroupState',
        'DeleteShareGroupState',
        'ReadShareGroupStateSummary',
      ].sort(),
    )
  })

  it('Produce, Fetch and ListOffsets: the error in each partition named, with no offsets', () => {
    const produce = onTheWire(ApiKey.Produce, 11, errorResponse(ApiKey.Produce, 11, requestOf(ApiKey.Produce), ERROR))
    expect(produce.responses).toEqual([
      { name: 't', topicId: expect.any(Buffer), partitionResponses: [expect.objectContaining({ index: 2, errorCode: ERROR, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n })] },
    ])
    expect(errorResponse(ApiKey.Produce, 11, { ...requestOf(ApiKey.Produce), acks: 0 }, ERROR)).toBeNull()

    for (const v of [4, 12, 16]) {
      const fetch = onTheWire(ApiKey.Fetch, v, errorResponse(ApiKey.Fetch, v, requestOf(ApiKey.Fetch), ERROR))
      expect(fetch.responses[0].partitions).toEqual([expect.objectContaining({ partitionIndex: 2, errorCode: ERROR, highWatermark: -1n, records: null })])
      expect(fetch.errorCode).toBe(0)
    }
    // An incremental fetch naming no partition: the top-level error.
    const incremental = onTheWire(ApiKey.Fetch, 12, errorResponse(ApiKey.Fetch, 12, { ...requestOf(ApiKey.Fetch), topics: [] }, ErrorCode.FETCH_SESSION_ID_NOT_FOUND))
    expect(incremental).toMatchObject({ errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, responses: [] })

    const listOffsets = onTheWire(ApiKey.ListOffsets, 7, errorResponse(ApiKey.ListOffsets, 7, requestOf(ApiKey.ListOffsets), ERROR))
    expect(listOffsets.topics).toEqual([{ name: 't', partitions: [{ partitionIndex: 2, errorCode: ERROR, timestamp: -1n, offset: -1n, leaderEpoch: -1 }] }])
  })

  it('top-level where the API has one; per key for FindCoordinator v4+; per group for OffsetFetch v8+', () => {
    expect(onTheWire(ApiKey.InitProducerId, 4, errorResponse(ApiKey.InitProducerId, 4, requestOf(ApiKey.InitProducerId), ERROR)).errorCode).toBe(ERROR)
    expect(onTheWire(ApiKey.FindCoordinator, 3, errorResponse(ApiKey.FindCoordinator, 3, requestOf(ApiKey.FindCoordinator), ERROR)).errorCode).toBe(ERROR)
    expect(onTheWire(ApiKey.FindCoordinator, 4, errorResponse(ApiKey.FindCoordinator, 4, requestOf(ApiKey.FindCoordinator), ERROR)).coordinators).toEqual([
      expect.objectContaining({ key: 'g', errorCode: ERROR, nodeId: -1 }),
    ])
    expect(onTheWire(ApiKey.OffsetFetch, 1, errorResponse(ApiKey.OffsetFetch, 1, requestOf(ApiKey.OffsetFetch), ERROR)).topics[0].partitions[0].errorCode).toBe(ERROR)
    expect(onTheWire(ApiKey.OffsetFetch, 7, errorResponse(ApiKey.OffsetFetch, 7, requestOf(ApiKey.OffsetFetch), ERROR)).errorCode).toBe(ERROR)
    expect(onTheWire(ApiKey.OffsetFetch, 8, errorResponse(ApiKey.OffsetFetch, 8, requestOf(ApiKey.OffsetFetch), ERROR)).groups).toEqual([expect.objectContaining({ groupId: 'g', errorCode: ERROR })])
  })

  it('names the partitions a request names, for matching rules', () => {
    expect(requestPartitions(ApiKey.Produce, requestOf(ApiKey.Produce))).toEqual([{ topic: 't', topicId: TOPIC_ID, partition: 2 }])
    expect(requestPartitions(ApiKey.Metadata, requestOf(ApiKey.Metadata))).toEqual([{ topic: 't', topicId: TOPIC_ID, partition: null }])
    expect(requestPartitions(ApiKey.Fetch, { ...requestOf(ApiKey.Fetch), topics: [{ topic: '', topicId: TOPIC_ID, partitions: [{ partition: 0 }] }] })).toEqual([
      { topic: null, topicId: TOPIC_ID, partition: 0 },
    ])
    expect(requestPartitions(ApiKey.ApiVersions, requestOf(ApiKey.ApiVersions))).toEqual([])
  })
})
