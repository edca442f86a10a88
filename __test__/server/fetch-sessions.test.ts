/**
 * Fetch sessions (KIP-227) over a socket, as a client sees them: each request is written by this
 * test (header + fetchCodec, size-prefixed) and each response decoded from the wire.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { fetchCodec, type FetchRequest, type FetchResponse, type FetchTopic, type ForgottenTopic } from '../../ts/protocol/apis/fetch.js'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { decodeBatches } from '../../ts/protocol/records.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

/** One connection that sends fetch requests and reads their responses in order. */
class Wire extends KafkaWire {
  static async open(port: number): Promise<Wire> {
    return new Wire(await connectTo(port), 'fetch-sessions-test')
  }

  fetch(version: number, request: Partial<FetchRequest> & Pick<FetchRequest, 'topics'>): Promise<FetchResponse> {
    return this.send(fetchCodec, version, fetchRequest(request))
  }
}

let broker: Broker | undefined
let wire: Wire | undefined
afterEach(async () => {
  wire?.close()
  await broker?.stop()
  broker = wire = undefined
})

const TOPIC = 'sessions'

async function setup(props: Record<string, string> = {}, partitions = 3): Promise<{ b: Broker; w: Wire }> {
  broker = await startBroker({ props })
  await broker.createTopic(TOPIC, partitions, {})
  wire = await Wire.open(broker.port)
  return { b: broker, w: wire }
}

async function produce(b: Broker, partition: number, ...values: string[]): Promise<void> {
  const r = await b.replicaManager.appendRecords({ topic: TOPIC, partition }, buildBatch(values.map((value) => ({ value }))))
  expect(r.errorCode).toBe(ErrorCode.NONE)
}

function topics(partitions: Array<[number, bigint]>, topic = TOPIC): FetchTopic[] {
  return [
    {
      topic,
      topicId: ZERO_UUID,
      partitions: partitions.map(([partition, fetchOffset]) => ({ partition, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1024 * 1024 })),
    },
  ]
}

function forgotten(partitions: number[], topic = TOPIC): ForgottenTopic[] {
  return [{ topic, topicId: ZERO_UUID, partitions }]
}

/** [partition, errorCode, highWatermark, values] of every partition answered, in order. */
function summary(res: FetchResponse): Array<[number, number, bigint, string[]]> {
  return res.responses.flatMap((t) =>
    t.partitions.map((p): [number, number, bigint, string[]] => [
      p.partitionIndex,
      p.errorCode,
      p.highWatermark,
      p.records && p.records.length > 0 ? decodeBatches(p.records).flatMap((b) => b.records.map((r) => r.value!.toString())) : [],
    ]),
  )
}

describe('fetch sessions over the wire', () => {
  it('a full fetch (epoch 0) opens a session and answers every partition', async () => {
    const { b, w } = await setup()
    await produce(b, 0, 'a')
    const res = await w.fetch(12, {
      sessionId: 0,
      sessionEpoch: 0,
      topics: topics([
        [0, 0n],
        [1, 0n],
        [2, 0n],
      ]),
    })
    expect(res.errorCode).toBe(ErrorCode.NONE)
    expect(res.sessionId).toBeGreaterThan(0)
    expect(summary(res)).toEqual([
      [0, 0, 1n, ['a']],
      [1, 0, 0n, []],
      [2, 0, 0n, []],
    ])
    expect(b.fetchManager.cache.metrics).toMatchObject({ sessions: 1, partitionsCached: 3 })
  })

  it('incremental fetches with growing epochs return only the changed partitions', async () => {
    const { b, w } = await setup()
    await produce(b, 0, 'a')
    const { sessionId } = await w.fetch(12, {
      sessionEpoch: 0,
      topics: topics([
        [0, 0n],
        [1, 0n],
        [2, 0n],
      ]),
    })

    // Nothing new: an empty answer, the same session.
    let res = await w.fetch(12, { sessionId, sessionEpoch: 1, topics: topics([[0, 1n]]) })
    expect(res).toMatchObject({ errorCode: 0, sessionId })
    expect(summary(res)).toEqual([])

    await produce(b, 2, 'b', 'c')
    res = await w.fetch(12, { sessionId, sessionEpoch: 2, topics: [] })
    expect(summary(res)).toEqual([[2, 0, 2n, ['b', 'c']]])

    // Partition 2 is still at offset 0 in the session: the client must name its new offset.
    await produce(b, 1, 'd')
    res = await w.fetch(12, { sessionId, sessionEpoch: 3, topics: topics([[2, 2n]]) })
    expect(summary(res)).toEqual([[1, 0, 1n, ['d']]])

    res = await w.fetch(12, { sessionId, sessionEpoch: 4, topics: topics([[1, 1n]]) })
    expect(summary(res)).toEqual([])
  })

  it('forgotten partitions are no longer read or answered', async () => {
    const { b, w } = await setup()
    const { sessionId } = await w.fetch(12, {
      sessionEpoch: 0,
      topics: topics([
        [0, 0n],
        [1, 0n],
        [2, 0n],
      ]),
    })
    let res = await w.fetch(12, { sessionId, sessionEpoch: 1, topics: [], forgottenTopicsData: forgotten([0, 2]) })
    expect(summary(res)).toEqual([])
    await produce(b, 0, 'x')
    await produce(b, 1, 'y')
    await produce(b, 2, 'z')
    res = await w.fetch(12, { sessionId, sessionEpoch: 2, topics: [] })
    expect(summary(res)).toEqual([[1, 0, 1n, ['y']]])
    expect(b.fetchManager.cache.get(sessionId)!.size).toBe(1)
  })

  it('a wrong epoch is INVALID_FETCH_SESSION_EPOCH; the session goes on at the right one', async () => {
    const { b, w } = await setup()
    const { sessionId } = await w.fetch(12, { sessionEpoch: 0, topics: topics([[0, 0n]]) })
    const res = await w.fetch(12, { sessionId, sessionEpoch: 5, topics: [] })
    expect(res).toEqual({ throttleTimeMs: 0, errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: 0, responses: [], nodeEndpoints: [] })
    await produce(b, 0, 'a')
    const ok = await w.fetch(12, { sessionId, sessionEpoch: 1, topics: [] })
    expect(ok.sessionId).toBe(sessionId)
    expect(summary(ok)).toEqual([[0, 0, 1n, ['a']]])
  })

  it('an unknown session is FETCH_SESSION_ID_NOT_FOUND with no partitions', async () => {
    const { w } = await setup()
    const res = await w.fetch(12, { sessionId: 424242, sessionEpoch: 1, topics: topics([[0, 0n]]) })
    expect(res).toEqual({ throttleTimeMs: 0, errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, responses: [], nodeEndpoints: [] })
  })

  it('a session closed with epoch -1 is answered sessionless and is gone', async () => {
    const { b, w } = await setup()
    await produce(b, 0, 'a')
    const { sessionId } = await w.fetch(12, { sessionEpoch: 0, topics: topics([[0, 0n]]) })
    const res = await w.fetch(12, { sessionId, sessionEpoch: -1, topics: topics([[0, 0n]]) })
    expect(res.sessionId).toBe(0)
    expect(summary(res)).toEqual([[0, 0, 1n, ['a']]])
    expect(b.fetchManager.cache.metrics.sessions).toBe(0)
    const after = await w.fetch(12, { sessionId, sessionEpoch: 1, topics: [] })
    expect(after.errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
  })

  it('a full cache: a new consumer session gets sessionId 0; a follower evicts a consumer', async () => {
    const { b, w } = await setup({ 'max.incremental.fetch.session.cache.slots': '1' })
    const first = await w.fetch(12, { sessionEpoch: 0, topics: topics([[0, 0n]]) })
    expect(first.sessionId).toBeGreaterThan(0)
    // A consumer cannot evict a young consumer session: answered in full, without a session.
    await produce(b, 1, 'a')
    const second = await w.fetch(12, { sessionEpoch: 0, topics: topics([[1, 0n]]) })
    expect(second.sessionId).toBe(0)
    expect(summary(second)).toEqual([[1, 0, 1n, ['a']]])
    // A follower (replicaId >= 0) does evict it.
    const follower = await w.fetch(12, { replicaId: 1, sessionEpoch: 0, topics: topics([[1, 0n]]) })
    expect(follower.sessionId).toBeGreaterThan(0)
    expect(b.fetchManager.cache.metrics).toMatchObject({ sessions: 1, evictions: 1 })
    const evicted = await w.fetch(12, { sessionId: first.sessionId, sessionEpoch: 1, topics: [] })
    expect(evicted.errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
  })

  it('a full fetch naming an existing session replaces it', async () => {
    const { b, w } = await setup()
    const first = await w.fetch(12, { sessionEpoch: 0, topics: topics([[0, 0n]]) })
    const second = await w.fetch(12, { sessionId: first.sessionId, sessionEpoch: 0, topics: topics([[1, 0n]]) })
    expect(second.sessionId).toBeGreaterThan(0)
    expect(second.sessionId).not.toBe(first.sessionId)
    expect(b.fetchManager.cache.metrics.sessions).toBe(1)
  })

  it('fairness: with a small maxBytes, partitions that returned data go to the back of the line', async () => {
    const { b, w } = await setup()
    for (const round of ['a', 'b']) for (const p of [0, 1, 2]) await produce(b, p, `${p}${round}`)
    const maxBytes = 1 // minOneMessage: one batch per response
    const offsets = [0n, 0n, 0n]
    const all = (): Array<[number, bigint]> => offsets.map((o, p) => [p, o])
    const served: string[] = []
    const take = (res: FetchResponse) => {
      for (const [p, , , values] of summary(res)) {
        served.push(...values)
        offsets[p] += BigInt(values.length)
      }
    }
    const open = await w.fetch(12, { sessionEpoch: 0, maxBytes, topics: topics(all()) })
    take(open)
    for (let epoch = 1; epoch <= 5; epoch++) take(await w.fetch(12, { sessionId: open.sessionId, sessionEpoch: epoch, maxBytes, topics: topics(all()) }))
    // Without the move to the back, partition 0 would drain before 1 got anything.
    expect(served).toEqual(['0a', '0b', '1a', '2a', '1b', '2b'])
  })

  it('v13+ sessions name topics by id; unknown ids are UNKNOWN_TOPIC_ID per partition', async () => {
    const { b, w } = await setup()
    await produce(b, 0, 'a')
    const topicId = b.topics.get(TOPIC)!.topicId
    const unknownId = Buffer.alloc(16, 7)
    const byId = (id: Buffer, partitions: Array<[number, bigint]>): FetchTopic => ({ ...topics(partitions, '')[0], topicId: id })
    const res = await w.fetch(13, { sessionEpoch: 0, topics: [byId(topicId, [[0, 0n]]), byId(unknownId, [[0, 0n]])] })
    expect(res.sessionId).toBeGreaterThan(0)
    expect(res.responses.map((t) => t.topicId.toString('hex'))).toEqual([topicId.toString('hex'), unknownId.toString('hex')])
    expect(summary(res)).toEqual([
      [0, 0, 1n, ['a']],
      [0, ErrorCode.UNKNOWN_TOPIC_ID, -1n, []],
    ])
    // Incremental: the unknown topic keeps erring, so it is answered again; the known one is not.
    const inc = await w.fetch(13, { sessionId: res.sessionId, sessionEpoch: 1, topics: [byId(topicId, [[0, 1n]])] })
    expect(summary(inc)).toEqual([[0, ErrorCode.UNKNOWN_TOPIC_ID, -1n, []]])
    // The same session asked without topic ids.
    const mixed = await w.fetch(12, { sessionId: res.sessionId, sessionEpoch: 2, topics: [] })
    expect(mixed.errorCode).toBe(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
  })

  it('sessionless fetches (epoch -1, and v4) keep answering every partition', async () => {
    const { b, w } = await setup()
    await produce(b, 0, 'a')
    for (const version of [4, 11, 12, 16]) {
      const req =
        version >= 13
          ? [
              {
                ...topics(
                  [
                    [0, 0n],
                    [1, 0n],
                  ],
                  '',
                )[0],
                topicId: b.topics.get(TOPIC)!.topicId,
              },
            ]
          : topics([
              [0, 0n],
              [1, 0n],
            ])
      const res = await w.fetch(version, { topics: req })
      expect(res.sessionId).toBe(0)
      expect(summary(res)).toEqual([
        [0, 0, 1n, ['a']],
        [1, 0, 0n, []],
      ])
    }
    expect(b.fetchManager.cache.metrics.sessions).toBe(0)
  })
})
