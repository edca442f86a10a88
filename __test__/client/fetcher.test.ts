/**
 * The consumer Fetcher against ferrolog's in-process broker (real sockets, real responses):
 * partitions with a fetch in flight are not fetched again, those with one response buffered are
 * fetched again from its end at once (the prefetch) and not with two, buffered data up to
 * fetch.max.bytes stops new fetches, responses are parsed only when collected (and dropped when a
 * seek made them stale), OFFSET_OUT_OF_RANGE resets by the partition's strategy, and a partial
 * batch at the end of a response is ignored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CompletedFetch } from '../../ts/client/completed-fetch.js'
import { Consumer } from '../../ts/client/consumer.js'
import type { FetchRequestData } from '../../ts/client/fetch-session-handler.js'
import { Fetcher } from '../../ts/client/fetcher.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { produce } from '../../ts/client/produce.js'
import { SubscriptionState } from '../../ts/client/subscription-state.js'
import { batchesOf } from '../../ts/protocol/records.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../../ts/server/embedded-broker.js'
import { createTopic } from './consumer-scenarios.js'

let broker: Broker
let bootstrap: string
const clients: NetworkClient[] = []

beforeAll(async () => {
  broker = await startBroker()
  bootstrap = broker.bootstrapServers
  await createTopic(bootstrap, 'two', 2)
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  // Several batches per partition: 10 produce calls of 20 records each.
  for (let i = 0; i < 10; i++) {
    await produce(
      client,
      'two',
      Array.from({ length: 20 }, (_, j) => ({ value: `a${i * 20 + j}` })),
      { partition: 0 },
    )
    await produce(
      client,
      'two',
      Array.from({ length: 20 }, (_, j) => ({ value: `b${i * 20 + j}` })),
      { partition: 1 },
    )
  }
  await client.close()
})

afterAll(async () => {
  for (const c of clients) await c.close()
  await broker?.stop()
})

function newFetcher(options: ConstructorParameters<typeof Fetcher>[1] = {}) {
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  clients.push(client)
  const requests: FetchRequestData[] = []
  const subscriptions = new SubscriptionState('earliest')
  const fetcher = new Fetcher(client, { maxWaitMs: 50, ...options, onRequest: (_node, _bytes, data) => requests.push(data) }, subscriptions)
  subscriptions.assignFromUser([
    { topic: 'two', partition: 0 },
    { topic: 'two', partition: 1 },
  ])
  return { fetcher, subscriptions, requests }
}

/** Until no fetch is in flight (awaitFetches returns at once while data is buffered: poll instead). */
async function settle(fetcher: Fetcher): Promise<void> {
  for (let i = 0; i < 1000 && fetcher.hasInFlightFetches; i++) await new Promise((resolve) => setTimeout(resolve, 5))
}

const sent = (data: FetchRequestData) => [...data.sessionPartitions.values()].map((p) => p.tp.partition).sort()
const fetchOffsets = (data: FetchRequestData) => [...data.sessionPartitions.values()].sort((x, y) => x.tp.partition - y.tp.partition).map((p) => p.data.fetchOffset)

describe('Fetcher', () => {
  it('fetchable partitions: not with a fetch in flight; with one response buffered, fetched again from its end at once; not with two', async () => {
    const { fetcher, requests } = newFetcher()
    await fetcher.maybeRefreshMetadata()
    await fetcher.resetPositionsIfNeeded()
    expect(fetcher.sendFetches()).toBe(1)
    // In flight: nothing more goes to that node, nor for those partitions.
    expect(fetcher.sendFetches()).toBe(0)
    await settle(fetcher)
    // The response brought both partitions' 200 records, queued unparsed; the next fetch went
    // out as it arrived, from its end (the prefetch), and came back empty after maxWaitMs. (An
    // incremental session's response leaves out partitions without news: nothing more buffered.)
    expect(requests.length).toBe(2)
    expect(sent(requests[0])).toEqual([0, 1])
    expect(fetchOffsets(requests[0])).toEqual([0n, 0n])
    expect(fetchOffsets(requests[1])).toEqual([200n, 200n])
    expect(fetcher.hasCompletedFetches).toBe(true)
    // One response buffered each: fetched again from its end; in flight, then not.
    expect(fetcher.sendFetches()).toBe(1)
    expect(fetcher.sendFetches()).toBe(0)
    await settle(fetcher)
    expect(fetchOffsets(requests[2])).toEqual([200n, 200n])
    // Part of the first partition's data read: still buffered, still nothing fetchable.
    const first = fetcher.collectFetch(5)
    expect(first.length).toBe(1)
    expect(first[0].records.map((r) => r.offset)).toEqual([0n, 1n, 2n, 3n, 4n])
    // Everything read: both partitions go from their positions.
    let read = 5
    for (let i = 0; i < 100; i++) {
      const batches = fetcher.collectFetch(1000)
      if (batches.length === 0) break
      for (const b of batches) read += b.records.length
    }
    expect(read).toBe(400)
    expect(fetcher.hasCompletedFetches).toBe(false)
    expect(fetcher.sendFetches()).toBe(1)
    await settle(fetcher)
    expect(fetchOffsets(requests.at(-1)!)).toEqual([200n, 200n])
    await fetcher.close()
  })

  it("a partition with two responses buffered is not fetched; once the first is read, it goes on from the second one's end", async () => {
    await createTopic(bootstrap, 'prefetch', 1)
    const producer = new NetworkClient({ bootstrapServers: bootstrap })
    clients.push(producer)
    for (let i = 0; i < 10; i++)
      await produce(
        producer,
        'prefetch',
        Array.from({ length: 20 }, (_, j) => ({ value: `p${i * 20 + j}` })),
        { partition: 0 },
      )
    const client = new NetworkClient({ bootstrapServers: bootstrap })
    clients.push(client)
    const requests: FetchRequestData[] = []
    const subscriptions = new SubscriptionState('earliest')
    // max.partition.fetch.bytes 1: each response holds one batch (the first batch comes whole, KIP-74).
    const fetcher = new Fetcher(client, { maxWaitMs: 50, partitionMaxBytes: 1, onRequest: (_node, _bytes, data) => requests.push(data) }, subscriptions)
    subscriptions.assignFromUser([{ topic: 'prefetch', partition: 0 }])
    await fetcher.maybeRefreshMetadata()
    await fetcher.resetPositionsIfNeeded()
    expect(fetcher.sendFetches()).toBe(1)
    await settle(fetcher)
    // The first response (offsets 0-19) buffered, the prefetch from its end (20-39) too: no more.
    expect(requests.map(fetchOffsets)).toEqual([[0n], [20n]])
    expect(fetcher.sendFetches()).toBe(0)
    // The first response read, and part of the second: one buffered, fetched from its end.
    const got = fetcher.collectFetch(25).flatMap((b) => b.records.map((r) => r.offset))
    expect(got).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i)))
    expect(fetcher.sendFetches()).toBe(1)
    await settle(fetcher)
    expect(fetchOffsets(requests[2])).toEqual([40n])
    // Read to the end, fetching as the consumer does: every record once, in order.
    for (let i = 0; i < 100 && got.length < 200; i++) {
      await settle(fetcher)
      for (const b of fetcher.collectFetch(1000)) got.push(...b.records.map((r) => r.offset))
      fetcher.sendFetches()
    }
    expect(got).toEqual(Array.from({ length: 200 }, (_, i) => BigInt(i)))
    await settle(fetcher)
    await fetcher.close()
  })

  it('stops fetching while fetch.max.bytes of data is buffered', async () => {
    const { fetcher, subscriptions } = newFetcher({ maxBytes: 1 })
    await fetcher.maybeRefreshMetadata()
    await fetcher.resetPositionsIfNeeded()
    // Only partition 0 fetchable: its response is buffered and exceeds fetch.max.bytes.
    subscriptions.assignedState('two', 1).paused = true
    expect(fetcher.sendFetches()).toBe(1)
    await settle(fetcher)
    expect(fetcher.bufferedBytes).toBeGreaterThan(0)
    subscriptions.assignedState('two', 1).paused = false
    expect(fetcher.sendFetches()).toBe(0)
    // Read it all: fetching resumes.
    while (fetcher.collectFetch(1000).length > 0);
    expect(fetcher.bufferedBytes).toBe(0)
    expect(fetcher.sendFetches()).toBe(1)
    await settle(fetcher)
    await fetcher.close()
  })

  it('a seek makes buffered and in-flight data stale: records come from the new position', async () => {
    const { fetcher, subscriptions } = newFetcher()
    subscriptions.assignFromUser([{ topic: 'two', partition: 0 }])
    await fetcher.maybeRefreshMetadata()
    await fetcher.resetPositionsIfNeeded()
    fetcher.sendFetches()
    fetcher.seek('two', 0, 150n)
    await settle(fetcher)
    expect(fetcher.collectFetch(10)).toEqual([])
    fetcher.sendFetches()
    await settle(fetcher)
    const got = fetcher.collectFetch(3)
    expect(got[0].records.map((r) => [r.offset, r.value!.toString()])).toEqual([
      [150n, 'a150'],
      [151n, 'a151'],
      [152n, 'a152'],
    ])
    await fetcher.close()
  })

  it('OFFSET_OUT_OF_RANGE resets by auto.offset.reset', async () => {
    const earliest = new Consumer({ bootstrapServers: bootstrap, 'auto.offset.reset': 'earliest', 'fetch.max.wait.ms': 50 })
    try {
      earliest.assign([{ topic: 'two', partition: 1, offset: 5000n }])
      let first
      for (let i = 0; i < 50 && !first; i++) first = (await earliest.poll(200))[0]
      expect(first!.records[0].offset).toBe(0n)
    } finally {
      await earliest.close()
    }
    const latest = new Consumer({ bootstrapServers: bootstrap, 'auto.offset.reset': 'latest', 'fetch.max.wait.ms': 50 })
    try {
      latest.assign([{ topic: 'two', partition: 1, offset: 5000n }])
      for (let i = 0; i < 50 && latest.position('two', 1) !== 200n; i++) await latest.poll(100)
      expect(latest.position('two', 1)).toBe(200n)
    } finally {
      await latest.close()
    }
  })

  it('a partial batch at the end of a response is ignored; the position stops after the last whole batch', async () => {
    const client = new NetworkClient({ bootstrapServers: bootstrap })
    clients.push(client)
    // A real response's records, cut in the middle of its third batch.
    const full = await fetchRaw(client)
    const batches = [...batchesOf(full)]
    expect(batches.length).toBeGreaterThanOrEqual(3)
    const cut = full.subarray(0, batches[2].position + 30)
    const c = new CompletedFetch(
      'two',
      0,
      0n,
      0,
      { partitionIndex: 0, errorCode: 0, highWatermark: 200n, lastStableOffset: 200n, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records: cut },
      false,
      0,
    )
    const got = c.fetchRecords(1000)
    expect(got.length).toBe(40)
    expect(got.at(-1)!.offset).toBe(39n)
    expect(c.nextFetchOffset).toBe(40n)
    expect(c.isConsumed).toBe(true)
  })
})

/** The records bytes of partition 0 from offset 0, as a plain Fetch returns them. */
async function fetchRaw(client: NetworkClient): Promise<Buffer> {
  const { fetchCodec } = await import('../../ts/protocol/apis/fetch.js')
  await client.refreshMetadata(['two'])
  const leader = client.metadata.leaderFor('two', 0)!.nodeId
  const res = await client.request(leader, fetchCodec, (v) => ({
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic: 'two',
        topicId: v >= 13 ? client.metadata.topic('two')!.topicId : Buffer.alloc(16),
        partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }],
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  }))
  return res.responses[0].partitions[0].records!
}
