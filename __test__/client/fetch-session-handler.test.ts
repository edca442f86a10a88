/**
 * FetchSessionHandler: the requests it builds (unit), and sessions with a ferrolog broker over
 * real sockets: a full fetch opens one, later fetches are incremental and list only what
 * changed (measured in request bytes over 100 idle partitions), partitions added, altered and
 * forgotten mid-session, and a broker restart that drops the session, after which the handler
 * starts again with a full fetch and no offset is skipped or repeated. The same against Apache
 * Kafka is in kafka-broker.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Fetcher, type ConsumerRecord } from '../../ts/client/fetcher.js'
import { FetchMetadata, FetchSessionHandler, fetchRequestFor, type FetchRequestData, type PartitionFetchState } from '../../ts/client/fetch-session-handler.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { produce } from '../../ts/client/produce.js'
import type { FetchResponse } from '../../ts/protocol/apis/fetch.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { createTopicOn } from '../helpers/broker-process.js'
import { tempDir } from '../helpers/tmp.js'

const ID_A = Buffer.alloc(16, 0xa)
const ID_B = Buffer.alloc(16, 0xb)
const state = (fetchOffset: bigint, topicId = ID_A): PartitionFetchState => ({ topicId, fetchOffset, logStartOffset: -1n, maxBytes: 1000, currentLeaderEpoch: -1, lastFetchedEpoch: -1 })
const keys = (m: Map<string, { tp: { topic: string; partition: number } }>) => [...m.values()].map((e) => `${e.tp.topic}-${e.tp.partition}`)
const response = (sessionId: number, partitions: Array<[Buffer, number]>, errorCode = 0): FetchResponse => ({
  throttleTimeMs: 0,
  errorCode,
  sessionId,
  responses: partitions.map(([topicId, p]) => ({
    topic: '',
    topicId,
    partitions: [{ partitionIndex: p, errorCode: 0, highWatermark: 0n, lastStableOffset: 0n, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records: null }],
  })),
})

describe('FetchSessionHandler requests', () => {
  it('full, then incremental with only the added, altered, forgotten and replaced partitions', () => {
    const h = new FetchSessionHandler(1)
    const full = h.newBuilder().add({ topic: 'a', partition: 0 }, state(0n)).add({ topic: 'a', partition: 1 }, state(0n)).build()
    expect(full.metadata).toEqual(FetchMetadata.INITIAL)
    expect(keys(full.toSend)).toEqual(['a-0', 'a-1'])
    expect(
      h.handleResponse(
        response(77, [
          [ID_A, 0],
          [ID_A, 1],
        ]),
        17,
      ),
    ).toBe(true)
    expect(h.metadata).toEqual(new FetchMetadata(77, 1))

    // Nothing changed: an empty incremental request.
    const idle = h.newBuilder().add({ topic: 'a', partition: 0 }, state(0n)).add({ topic: 'a', partition: 1 }, state(0n)).build()
    expect(idle.metadata).toEqual(new FetchMetadata(77, 1))
    expect(keys(idle.toSend)).toEqual([])
    expect(h.handleResponse(response(77, []), 17)).toBe(true)

    // a-1 altered, a-0 forgotten, b-0 added, then a-1's topic replaced under a new id.
    const changed = h.newBuilder().add({ topic: 'a', partition: 1 }, state(5n)).add({ topic: 'b', partition: 0 }, state(0n, ID_B)).build()
    expect(changed.metadata).toEqual(new FetchMetadata(77, 2))
    expect(keys(changed.toSend)).toEqual(['b-0', 'a-1'])
    expect(changed.toForget.map((t) => `${t.topic}-${t.partition}`)).toEqual(['a-0'])
    expect(keys(changed.sessionPartitions)).toEqual(['a-1', 'b-0'])
    const wire = fetchRequestFor(changed, 17, { maxWaitMs: 0, minBytes: 1, maxBytes: 100, isolationLevel: 0 })
    expect(wire.sessionId).toBe(77)
    expect(wire.sessionEpoch).toBe(2)
    expect(wire.topics.map((t) => [t.topicId.toString('hex'), t.partitions.map((p) => [p.partition, p.fetchOffset])])).toEqual([
      [ID_B.toString('hex'), [[0, 0n]]],
      [ID_A.toString('hex'), [[1, 5n]]],
    ])
    expect(wire.forgottenTopicsData).toEqual([{ topic: '', topicId: ID_A, partitions: [0] }])
    expect(h.handleResponse(response(77, [[ID_B, 0]]), 17)).toBe(true)

    const NEW_A = Buffer.alloc(16, 0xc)
    const replaced = h.newBuilder().add({ topic: 'a', partition: 1 }, state(0n, NEW_A)).add({ topic: 'b', partition: 0 }, state(0n, ID_B)).build()
    expect(keys(replaced.toSend)).toEqual(['a-1'])
    expect(replaced.toReplace).toEqual([{ topic: 'a', partition: 1, topicId: ID_A }])
    // v13+: forgotten under the old id in the same request; v12 names topics and cannot.
    expect(fetchRequestFor(replaced, 13, { maxWaitMs: 0, minBytes: 1, maxBytes: 100, isolationLevel: 0 }).forgottenTopicsData).toEqual([{ topic: '', topicId: ID_A, partitions: [1] }])
    expect(fetchRequestFor(replaced, 12, { maxWaitMs: 0, minBytes: 1, maxBytes: 100, isolationLevel: 0 }).forgottenTopicsData).toEqual([])
  })

  it('verifies responses against the session and resets on session errors', () => {
    const h = new FetchSessionHandler(1)
    const build = () => h.newBuilder().add({ topic: 'a', partition: 0 }, state(0n)).add({ topic: 'a', partition: 1 }, state(0n)).build()
    build()
    // A full response that omits a partition is refused; the next request is full again.
    expect(h.handleResponse(response(5, [[ID_A, 0]]), 17)).toBe(false)
    expect(h.lastProblem).toMatch(/omittedPartitions=\(a-1\)/)
    expect(h.metadata.isFull).toBe(true)
    build()
    expect(
      h.handleResponse(
        response(5, [
          [ID_A, 0],
          [ID_A, 1],
        ]),
        17,
      ),
    ).toBe(true)
    // An incremental response naming an unknown topic id is refused and the session restarted.
    build()
    expect(h.handleResponse(response(5, [[ID_B, 0]]), 17)).toBe(false)
    expect(h.lastProblem).toMatch(/extraIds/)
    expect(h.metadata).toEqual(new FetchMetadata(5, 0))
    build()
    expect(
      h.handleResponse(
        response(6, [
          [ID_A, 0],
          [ID_A, 1],
        ]),
        17,
      ),
    ).toBe(true)
    build()
    // INVALID_FETCH_SESSION_EPOCH closes and reopens (epoch 0, same id); FETCH_SESSION_ID_NOT_FOUND starts afresh.
    expect(h.handleResponse(response(0, [], ErrorCode.INVALID_FETCH_SESSION_EPOCH), 17)).toBe(false)
    expect(h.metadata).toEqual(new FetchMetadata(6, 0))
    build()
    expect(h.handleResponse(response(0, [], ErrorCode.FETCH_SESSION_ID_NOT_FOUND), 17)).toBe(false)
    expect(h.metadata).toEqual(FetchMetadata.INITIAL)
    // A full fetch always lists everything after a reset.
    expect(keys(build().toSend)).toEqual(['a-0', 'a-1'])
    // Close: epoch -1.
    h.notifyClose()
    expect(h.metadata.epoch).toBe(-1)
    expect(FetchMetadata.nextEpoch(0x7fffffff)).toBe(1)
  })
})

interface Sent {
  bytes: number
  data: FetchRequestData
}

let broker: Broker | undefined
let client: NetworkClient | undefined
let fetcher: Fetcher | undefined
afterEach(async () => {
  await fetcher?.close()
  await client?.close()
  await broker?.stop()
  broker = client = fetcher = undefined
})

async function pollUntil(f: Fetcher, done: (all: ConsumerRecord[]) => boolean, into: ConsumerRecord[] = [], limit = 200): Promise<ConsumerRecord[]> {
  for (let i = 0; i < limit && !done(into); i++) into.push(...(await f.poll()))
  return into
}

describe('fetch sessions with a ferrolog broker', () => {
  it('incremental fetches list only what changed: add, alter, forget; bytes over 100 idle partitions', async () => {
    broker = await startBroker()
    const bootstrap = `127.0.0.1:${broker.port}`
    await createTopicOn(broker.port, 'idle', 100)
    await createTopicOn(broker.port, 'later', 2)
    client = new NetworkClient({ bootstrapServers: bootstrap })
    const sent: Sent[] = []
    fetcher = new Fetcher(client, { maxWaitMs: 20, onRequest: (_node, bytes, data) => sent.push({ bytes, data }) })
    await fetcher.assign('idle', null, 'earliest')

    await fetcher.poll()
    const full = sent.at(-1)!
    expect(full.data.metadata.isFull).toBe(true)
    expect(full.data.toSend.size).toBe(100)
    const handler = [...fetcher.sessionHandlers.values()][0]
    expect(handler.sessionId).not.toBe(0)
    for (let i = 0; i < 3; i++) await fetcher.poll()
    const idle = sent.slice(-3)
    for (const s of idle) {
      expect(s.data.metadata.isFull).toBe(false)
      expect(s.data.toSend.size).toBe(0)
    }
    const ratio = idle[0].bytes / full.bytes
    console.log(`fetch session (ferrolog): full request ${full.bytes} B over 100 partitions, incremental ${idle[0].bytes} B (${(ratio * 100).toFixed(1)}%)`)
    expect(ratio).toBeLessThan(0.05)

    // New records in one partition: the next request after they are read lists only it.
    await produce(client, 'idle', [{ value: 'x' }, { value: 'y' }], { partition: 7 })
    const got = await pollUntil(fetcher, (r) => r.length >= 2)
    expect(got.map((r) => [r.partition, r.offset, r.value!.toString()])).toEqual([
      [7, 0n, 'x'],
      [7, 1n, 'y'],
    ])
    await fetcher.poll()
    expect(keys(sent.at(-1)!.data.toSend)).toEqual(['idle-7'])
    expect(sent.at(-1)!.data.metadata.isFull).toBe(false)

    // Add: another topic mid-session.
    await fetcher.assign('later', null, 'earliest')
    await fetcher.poll()
    let last = sent.at(-1)!.data
    expect(last.metadata.isFull).toBe(false)
    expect(keys(last.toSend)).toEqual(['later-0', 'later-1'])
    // Forget: one partition dropped.
    fetcher.unassign('idle', 3)
    await fetcher.poll()
    last = sent.at(-1)!.data
    expect(last.metadata.isFull).toBe(false)
    expect(last.toForget.map((t) => `${t.topic}-${t.partition}`)).toEqual(['idle-3'])
    expect(last.toSend.size).toBe(0)
    // Alter: a seek back re-reads from offset 0.
    fetcher.seek('idle', 7, 0n)
    const again = await pollUntil(fetcher, (r) => r.length >= 2)
    expect(keys(sent.find((s) => s.data.toSend.size > 0 && s.data.metadata.epoch > last.metadata.epoch)!.data.toSend)).toEqual(['idle-7'])
    expect(again.map((r) => r.offset)).toEqual([0n, 1n])
    // One session all along.
    expect(sent.filter((s) => s.data.metadata.isFull)).toHaveLength(1)
  })

  it('a broker restarted mid-consume drops the session: the handler recovers with a full fetch, no offset skipped or repeated', async () => {
    const dataDir = tempDir('ferrolog-session-restart-')
    broker = await startBroker({ dataDir })
    const port = broker.port
    await createTopicOn(port, 'steady', 4)
    const producer = new NetworkClient({ bootstrapServers: `127.0.0.1:${port}` })
    client = new NetworkClient({ bootstrapServers: `127.0.0.1:${port}`, reconnectBackoffMs: 20, reconnectBackoffMaxMs: 200 })
    const sent: Sent[] = []
    fetcher = new Fetcher(client, { maxWaitMs: 20, onRequest: (_node, bytes, data) => sent.push({ bytes, data }) })
    await fetcher.assign('steady', null, 'earliest')
    const got: ConsumerRecord[] = []
    let produced = 0
    const round = async (c: NetworkClient) => {
      const values = Array.from({ length: 40 }, (_, i) => ({ key: `k${produced + i}`, value: `v${produced + i}` }))
      await produce(c, 'steady', values)
      produced += values.length
    }
    await round(producer)
    await pollUntil(fetcher, (r) => r.length >= produced, got)
    const before = sent.length
    await round(producer)
    await producer.close()

    // Restart on the same port and data dir while the consumer keeps polling.
    let restarted = false
    const restart = (async () => {
      await broker!.stop()
      await new Promise((resolve) => setTimeout(resolve, 300))
      broker = await startBroker({ dataDir, props: { listeners: `127.0.0.1:${port}` } })
      restarted = true
    })()
    await pollUntil(fetcher, (r) => restarted && r.length >= produced, got, 2000)
    await restart
    const producer2 = new NetworkClient({ bootstrapServers: `127.0.0.1:${port}` })
    await round(producer2)
    await producer2.close()
    await pollUntil(fetcher, (r) => r.length >= produced, got)

    expect(got.length).toBe(produced)
    const byPartition = new Map<number, bigint[]>()
    for (const r of got) byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), r.offset])
    for (const [, offsets] of byPartition) expect(offsets).toEqual(offsets.map((_, i) => BigInt(i)))
    expect(new Set(got.map((r) => r.value!.toString())).size).toBe(produced)
    // After the restart, a new full fetch opened a new session.
    const fulls = sent.slice(before).filter((s) => s.data.metadata.isFull)
    expect(fulls.length).toBeGreaterThanOrEqual(1)
    expect(fulls.every((s) => s.data.toSend.size === 4)).toBe(true)
  })
})
