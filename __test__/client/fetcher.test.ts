/**
 * The consumer Fetcher against ferrolog's in-process broker (real sockets, real responses):
 * partitions with buffered data or a fetch in flight are not fetched again, buffered data up to
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
    await produce(client, 'two', Array.from({ length: 20 }, (_, j) => ({ value: `a${i * 20 + j}` })), { partition: 0 })
    await produce(client, 'two', Array.from({ length: 20 }, (_, j) => ({ value: `b${i * 20 + j}` })), { partition: 1 })
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

async function settle(fetcher: Fetcher): Promise<void> {
  for (let i = 0; i < 100 && fetcher.hasInFlightFetches; i++) await fetcher.awaitFetches(1000)
}

const sent = (data: FetchRequestData) => [...data.sessionPartitions.values()].map((p) => p.tp.partition).sort()

describe('Fetcher', () => {
  it('fetchable partitions exclude those with buffered data or a fetch in flight', async () => {
    const { fetcher, requests } = newFetcher()
    await fetcher.maybeRefreshMetadata()
    await fetcher.resetPositionsIfNeeded()
    expect(fetcher.sendFetches()).toBe(1)
    // In flight: nothing more goes to that node, nor for those partitions.
    expect(fetcher.sendFetches()).toBe(0)
    await settle(fetcher)
    expect(requests.length).toBe(1)
    expect(sent(requests[0])).toEqual([0, 1])
    // Both partitions' data is queued, unparsed: nothing is fetchable.
    expect(fetcher.hasCompletedFetches).toBe(true)
    expect(fetcher.sendFetches()).toBe(0)
    // Part of the first partition's data read: it stays buffered, still nothing fetchable.
    const first = fetcher.collectFetch(5)
    expect(first.length).toBe(1)
    expect(first[0].records.map((r) => r.offset)).toEqual([0n, 1n, 2n, 3n, 4n])
    expect(fetcher.sendFetches()).toBe(0)
    // The first partition read to its end and one record of the second: the first alone is fetched.
    const firstPartition = first[0].partition
    const rest = fetcher.collectFetch(196)
    expect(rest.map((b) => [b.partition, b.records.length])).toEqual([
      [firstPartition, 195],
      [1 - firstPartition, 1],
    ])
    expect(fetcher.sendFetches()).toBe(1)
    await settle(fetcher)
    expect(sent(requests[1])).toEqual([firstPartition])
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
    const c = new CompletedFetch('two', 0, 0n, 0, { partitionIndex: 0, errorCode: 0, highWatermark: 200n, lastStableOffset: 200n, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records: cut }, false, 0)
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
    topics: [{ topic: 'two', topicId: v >= 13 ? client.metadata.topic('two')!.topicId : Buffer.alloc(16), partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: '',
  }))
  return res.responses[0].partitions[0].records!
}
