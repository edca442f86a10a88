/**
 * On the wire (raw frames on a real socket): `__consumer_offsets` in Metadata as Kafka lists it
 * (is_internal, by name, by id and among all topics), readable with ListOffsets and Fetch,
 * neither writable nor deletable; Metadata v10/v11 with a nameless topic answered INVALID_REQUEST
 * as Kafka answers it (not a closed connection); FindCoordinator for a transactional id
 * answered with this broker, the leader of `__transaction_state-0`.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import type { ApiCodec } from '../../ts/protocol/apis/api.js'
import { deleteTopicsCodec } from '../../ts/protocol/apis/delete-topics.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { CoordinatorType, findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { listOffsetsCodec } from '../../ts/protocol/apis/list-offsets.js'
import { metadataCodec, type MetadataRequest } from '../../ts/protocol/apis/metadata.js'
import { offsetCommitCodec } from '../../ts/protocol/apis/offset-commit.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { decodeBatches } from '../../ts/protocol/records.js'
import { decodeOffsetKey, decodeOffsetValue } from '../../ts/group/offsets-topic.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

const OFFSETS = '__consumer_offsets'

let broker: Broker | undefined
let wire: KafkaWire | undefined
afterEach(async () => {
  wire?.close()
  await broker?.stop()
  broker = wire = undefined
})

async function started(): Promise<KafkaWire> {
  broker = await startBroker()
  await broker.createTopic('plain', 1, {})
  wire = new KafkaWire(await connectTo(broker.port), 'internal-topics-test')
  return wire
}

/** `wire.send`, failing (instead of waiting forever) if the broker closes the connection. */
function send<Req, Res>(codec: ApiCodec<Req, Res>, version: number, request: Req): Promise<Res> {
  const closed = new Promise<never>((_, reject) => wire!.socket.once('close', () => reject(new Error('the broker closed the connection'))))
  return Promise.race([wire!.send(codec, version, request), closed])
}

const metadata = (topics: MetadataRequest['topics']): MetadataRequest => ({
  topics,
  allowAutoTopicCreation: false,
  includeClusterAuthorizedOperations: false,
  includeTopicAuthorizedOperations: false,
})

describe('__consumer_offsets on the wire', () => {
  it('Metadata lists it with is_internal: by name, among all topics, and by id (v12)', async () => {
    await started()
    for (const version of [4, 9, 12]) {
      const byName = await send(metadataCodec, version, metadata([{ name: OFFSETS, topicId: ZERO_UUID }]))
      expect(byName.topics).toHaveLength(1)
      expect(byName.topics[0]).toMatchObject({ errorCode: ErrorCode.NONE, name: OFFSETS, isInternal: true })
      // offsets.topic.num.partitions (50), every one led by the broker alone.
      expect(byName.topics[0].partitions.map((p) => [p.partitionIndex, p.leaderId, p.errorCode])).toEqual(Array.from({ length: 50 }, (_, i) => [i, broker!.config.nodeId, 0]))

      const all = await send(metadataCodec, version, metadata(null))
      expect(all.topics.map((t) => [t.name, t.isInternal]).sort()).toEqual([
        [OFFSETS, true],
        ['__transaction_state', true],
        ['plain', false],
      ])
    }
    const all = await send(metadataCodec, 12, metadata(null))
    const id = all.topics.find((t) => t.name === OFFSETS)!.topicId
    expect(id.equals(ZERO_UUID)).toBe(false)
    const byId = await send(metadataCodec, 12, metadata([{ name: null, topicId: id }]))
    expect(byId.topics[0]).toMatchObject({ errorCode: ErrorCode.NONE, name: OFFSETS, isInternal: true })
  })

  it('is readable (ListOffsets, Fetch by name and by id) in Kafka record format, and not deletable', async () => {
    await started()
    const commit = await send(offsetCommitCodec, 2, {
      groupId: 'g',
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1n,
      topics: [{ name: 'plain', partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: 'm' }] }],
    })
    expect(commit.topics[0].partitions[0].errorCode).toBe(ErrorCode.NONE)
    // The group's partition: Kafka's abs("g".hashCode()) % 50 = 103 % 50.
    const partition = 3
    expect(broker!.groupCoordinator.partitionFor('g')).toBe(partition)

    const offsets = await send(listOffsetsCodec, 1, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: OFFSETS, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
    })
    expect(offsets.topics[0].partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, offset: 1n })

    const topicId = broker!.offsetsTopic.topicId
    for (const [version, asked] of [
      [12, { topic: OFFSETS, topicId: ZERO_UUID }],
      [13, { topic: '', topicId }],
    ] as const) {
      const fetched = await send(
        fetchCodec,
        version,
        fetchRequest({
          topics: [{ ...asked, partitions: [{ partition, fetchOffset: 0n, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
        }),
      )
      const p = fetched.responses[0].partitions[0]
      expect(p.errorCode).toBe(ErrorCode.NONE)
      const records = decodeBatches(p.records as Buffer).flatMap((b) => b.records)
      expect(records.map((r) => [decodeOffsetKey(r.key!), decodeOffsetValue(r.value!).offset])).toEqual([[{ group: 'g', topic: 'plain', partition: 0 }, 42n]])
    }

    const byName = await send(deleteTopicsCodec, 4, { topics: [], topicNames: [OFFSETS], timeoutMs: 1000 })
    expect(byName.responses[0]).toMatchObject({ name: OFFSETS, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION })
    const byId = await send(deleteTopicsCodec, 6, { topics: [{ name: null, topicId }], topicNames: [], timeoutMs: 1000 })
    expect(byId.responses[0]).toMatchObject({ name: OFFSETS, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION })
    expect(byId.responses[0].errorMessage).toContain('internal topic')
    expect(broker!.logManager.getLog(OFFSETS, 0)).toBeDefined()
    expect((await send(metadataCodec, 12, metadata([{ name: OFFSETS, topicId: ZERO_UUID }]))).topics[0].errorCode).toBe(ErrorCode.NONE)
  })
})

describe('Metadata topics without a name', () => {
  it('v10 and v11: every topic of the request is INVALID_REQUEST (a null name answered as ""), as Kafka answers', async () => {
    await started()
    const id = broker!.topics.get('plain')!.topicId
    for (const version of [10, 11]) {
      const res = await send(
        metadataCodec,
        version,
        metadata([
          { name: null, topicId: id },
          { name: 'plain', topicId: ZERO_UUID },
        ]),
      )
      expect(res.topics.map((t) => [t.name, t.errorCode, t.partitions.length])).toEqual([
        ['', ErrorCode.INVALID_REQUEST, 0],
        ['plain', ErrorCode.INVALID_REQUEST, 0],
      ])
      expect(res.topics[0].topicId).toEqual(id)
      // An unknown id: the answer could not carry a null name before v12, and the broker closed the connection.
      const unknown = await send(metadataCodec, version, metadata([{ name: null, topicId: Buffer.alloc(16, 7) }]))
      expect(unknown.topics.map((t) => [t.name, t.errorCode])).toEqual([['', ErrorCode.INVALID_REQUEST]])
      const withId = await send(metadataCodec, version, metadata([{ name: 'plain', topicId: id }]))
      expect(withId.topics[0].errorCode).toBe(ErrorCode.INVALID_REQUEST)
    }
    // The connection is still open and serves the next request.
    const ok = await send(metadataCodec, 11, metadata([{ name: 'plain', topicId: ZERO_UUID }]))
    expect(ok.topics[0].errorCode).toBe(ErrorCode.NONE)
  })

  it('v12: looked up by id; an unknown id is UNKNOWN_TOPIC_ID with a null name', async () => {
    await started()
    const id = broker!.topics.get('plain')!.topicId
    const res = await send(
      metadataCodec,
      12,
      metadata([
        { name: null, topicId: id },
        { name: null, topicId: Buffer.alloc(16, 7) },
      ]),
    )
    expect(res.topics.map((t) => [t.name, t.errorCode])).toEqual([
      ['plain', ErrorCode.NONE],
      [null, ErrorCode.UNKNOWN_TOPIC_ID],
    ])
  })

  it("v12: a topic id with the name left at its default '' is looked up by id, as Kafka's Java consumer asks (KIP-848 regex)", async () => {
    await started()
    const id = broker!.topics.get('plain')!.topicId
    const res = await send(metadataCodec, 12, metadata([{ name: '', topicId: id }]))
    expect(res.topics.map((t) => [t.name, t.errorCode])).toEqual([['plain', ErrorCode.NONE]])
  })
})

describe('FindCoordinator for a transactional id', () => {
  it('is this broker, the leader of __transaction_state-0 (v1 and v4); an empty id is INVALID_REQUEST; groups still have a coordinator', async () => {
    await started()
    const v1 = await send(findCoordinatorCodec, 1, { key: 'txn', keyType: CoordinatorType.TRANSACTION, coordinatorKeys: [] })
    expect(v1).toMatchObject({ errorCode: ErrorCode.NONE, nodeId: broker!.config.nodeId, port: broker!.port })
    const v4 = await send(findCoordinatorCodec, 4, { key: '', keyType: CoordinatorType.TRANSACTION, coordinatorKeys: ['a', ''] })
    expect(v4.coordinators.map((c) => [c.key, c.errorCode, c.nodeId])).toEqual([
      ['a', ErrorCode.NONE, broker!.config.nodeId],
      ['', ErrorCode.INVALID_REQUEST, -1],
    ])
    const group = await send(findCoordinatorCodec, 4, { key: '', keyType: CoordinatorType.GROUP, coordinatorKeys: ['g'] })
    expect(group.coordinators[0]).toMatchObject({ errorCode: ErrorCode.NONE, nodeId: broker!.config.nodeId, port: broker!.port })
  })
})
