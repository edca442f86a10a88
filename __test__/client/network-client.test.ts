/**
 * NetworkClient and KafkaConnection over real sockets: versions negotiated per ApiKey with what
 * a broker advertises, the in-flight bound, a timed-out request failing alone, reconnects paced
 * by exponential backoff, and a clean close. The broker is a small fake (helpers/fake-kafka.ts)
 * where the test needs to shape the answers, and a ferrolog broker otherwise.
 */
import { createServer, type AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { ExponentialBackoff } from '../../ts/client/exponential-backoff.js'
import { KafkaClientError } from '../../ts/client/errors.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { ApiKey } from '../../ts/protocol/apis/api.js'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { fetchCodec, type FetchRequest, type FetchResponse } from '../../ts/protocol/apis/fetch.js'
import { listOffsetsCodec } from '../../ts/protocol/apis/list-offsets.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { startFakeKafka, type FakeKafka, type FakeRequest } from '../helpers/fake-kafka.js'

const API_VERSIONS = [
  { apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: 3 },
  { apiKey: ApiKey.Metadata, minVersion: 0, maxVersion: 9 },
  { apiKey: ApiKey.Fetch, minVersion: 4, maxVersion: 11 },
  { apiKey: ApiKey.ListOffsets, minVersion: 0, maxVersion: 5 },
]

const emptyFetch = (sessionId = 0): FetchResponse => ({ throttleTimeMs: 0, errorCode: 0, sessionId, responses: [] })
const fetchRequest = (maxWaitMs = 0): FetchRequest => ({
  replicaId: -1,
  maxWaitMs,
  minBytes: 1,
  maxBytes: 1024,
  isolationLevel: 0,
  sessionId: 0,
  sessionEpoch: -1,
  topics: [],
  forgottenTopicsData: [],
  rackId: '',
})

let fake: FakeKafka | undefined
let client: NetworkClient | undefined
let broker: Broker | undefined
afterEach(async () => {
  await client?.close()
  await fake?.close()
  await broker?.stop()
  client = fake = broker = undefined
})

describe('NetworkClient', () => {
  it('uses, per ApiKey, the highest version both it and the broker serve', async () => {
    fake = await startFakeKafka({ apiVersions: API_VERSIONS, topics: [{ name: 't', partitions: 2 }], onRequest: (req) => req.answer(fetchCodec, emptyFetch()) })
    client = new NetworkClient({ bootstrapServers: `127.0.0.1:${fake.port}` })
    const md = await client.refreshMetadata(['t'])
    expect(md.leaderFor('t', 1)).toEqual({ nodeId: 0, host: '127.0.0.1', port: fake.port, rack: null })
    await client.request(0, fetchCodec, fetchRequest())
    expect(client.versionFor(0, fetchCodec)).toBe(11)
    expect(client.versionFor(0, metadataCodec)).toBe(9)
    expect(client.versionFor(0, listOffsetsCodec)).toBe(5)
    const byKey = (k: number) => fake!.seen.filter((s) => s.apiKey === k).map((s) => s.apiVersion)
    expect(byKey(ApiKey.ApiVersions)[0]).toBe(apiVersionsCodec.maxVersion) // then the broker's range is known
    expect(byKey(ApiKey.Metadata)).toEqual([9])
    expect(byKey(ApiKey.Fetch)).toEqual([11])
    // Produce is not advertised: refused before anything is sent.
    const refused = await client.request(0, produceCodec, { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [] }).catch((e) => e)
    expect(refused).toBeInstanceOf(KafkaClientError)
    expect(refused.code).toBe('UNSUPPORTED_VERSION')
    expect(fake.seen.some((s) => s.apiKey === ApiKey.Produce)).toBe(false)
  })

  it('a broker that refuses its ApiVersions version is asked again at the version it serves', async () => {
    // The fake answers ApiVersions only up to v2, in the v0 shape with UNSUPPORTED_VERSION above.
    const server = createServer((socket) => {
      let buf = Buffer.alloc(0)
      socket.on('data', (d) => {
        buf = Buffer.concat([buf, d])
        while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
          const frame = buf.subarray(4, 4 + buf.readInt32BE(0))
          buf = buf.subarray(4 + frame.length)
          const version = frame.readInt16BE(2)
          const correlationId = frame.readInt32BE(4)
          const body =
            version > 2
              ? Buffer.from([0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 2]) // UNSUPPORTED_VERSION, [ApiVersions 0-2]
              : Buffer.concat([Buffer.from([0, 0, 0, 0, 0, 2, 0, 18, 0, 0, 0, 2, 0, 1, 0, 4, 0, 7]), Buffer.alloc(4)]) // NONE, ApiVersions 0-2, Fetch 4-7, throttle 0
          const out = Buffer.alloc(8)
          out.writeInt32BE(4 + body.length, 0)
          out.writeInt32BE(correlationId, 4)
          socket.write(Buffer.concat([out, body]))
        }
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      client = await NetworkClient.connect(`127.0.0.1:${(server.address() as AddressInfo).port}`)
      expect(client.versionFor(-1, fetchCodec)).toBe(7)
    } finally {
      await client?.close()
      client = undefined
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('keeps at most maxInFlight requests unanswered on a connection, the rest written as answers come', async () => {
    let unanswered = 0
    let most = 0
    fake = await startFakeKafka({
      apiVersions: API_VERSIONS,
      onRequest: (req) => {
        unanswered++
        most = Math.max(most, unanswered)
        setTimeout(() => {
          unanswered--
          req.answer(fetchCodec, emptyFetch(req.correlationId))
        }, 20)
      },
    })
    client = new NetworkClient({ bootstrapServers: `127.0.0.1:${fake.port}`, maxInFlight: 3 })
    const answers = await Promise.all(Array.from({ length: 12 }, () => client!.request(-1, fetchCodec, fetchRequest())))
    expect(most).toBe(3)
    // Each answer is matched to its own request by correlation id (the fake echoes it as sessionId).
    const fetchIds = fake.seen.filter((s) => s.apiKey === ApiKey.Fetch).map((s) => s.correlationId)
    expect(answers.map((a) => a.sessionId)).toEqual(fetchIds)
  })

  it('a request that times out fails alone: the others on the connection are answered, its late answer is dropped', async () => {
    const held: FakeRequest[] = []
    fake = await startFakeKafka({
      apiVersions: API_VERSIONS,
      onRequest: (req) => {
        const r = req.decode(fetchCodec)
        if (r.maxWaitMs === 999)
          held.push(req) // the one to time out: answered later
        else req.answer(fetchCodec, emptyFetch(7))
      },
    })
    client = new NetworkClient({ bootstrapServers: `127.0.0.1:${fake.port}` })
    const started = Date.now()
    const slow = client.request(-1, fetchCodec, fetchRequest(999), { timeoutMs: 300 }).catch((e) => e)
    const fast = await client.request(-1, fetchCodec, fetchRequest())
    expect(fast.sessionId).toBe(7)
    const err = await slow
    expect(err).toBeInstanceOf(KafkaClientError)
    expect(err.code).toBe('REQUEST_TIMED_OUT')
    expect(err.errorCode).toBe(7)
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    // The late answer arrives and is dropped; the connection serves the next request.
    held[0].answer(fetchCodec, emptyFetch(1234))
    const after = await client.request(-1, fetchCodec, fetchRequest())
    expect(after.sessionId).toBe(7)
    expect(fake.connections).toBe(1)
  })

  it('reconnects after a lost connection, attempts against a dead node spaced by exponential backoff', async () => {
    fake = await startFakeKafka({ apiVersions: API_VERSIONS, onRequest: (req) => req.answer(fetchCodec, emptyFetch()) })
    const port = fake.port
    client = new NetworkClient({ bootstrapServers: `127.0.0.1:${port}`, reconnectBackoffMs: 40, reconnectBackoffMaxMs: 400 })
    await client.request(-1, fetchCodec, fetchRequest())
    await fake.close()
    fake = undefined
    await new Promise((resolve) => setTimeout(resolve, 100)) // the client sees the connection close
    // Every attempt fails now; each waits longer than the one before (40, 80, 160, 320 ms, +-20%).
    const times: number[] = []
    for (let i = 0; i < 5; i++) {
      const err = await client.request(-1, fetchCodec, fetchRequest()).catch((e) => e)
      expect(err).toBeInstanceOf(KafkaClientError)
      expect(err.retriable).toBe(true)
      times.push(Date.now())
    }
    const gaps = times.slice(1).map((t, i) => t - times[i])
    expect(gaps[0]).toBeGreaterThanOrEqual(0.8 * 80 - 5)
    expect(gaps[1]).toBeGreaterThanOrEqual(0.8 * 160 - 5)
    expect(gaps[2]).toBeGreaterThanOrEqual(0.8 * 320 - 5)
    expect(gaps[3]).toBeLessThan(1.2 * 400 + 200) // capped at reconnect.backoff.max.ms
    // The node comes back on the same port: the next request reconnects and is answered.
    fake = await startFakeKafka({ apiVersions: API_VERSIONS, onRequest: (req) => req.answer(fetchCodec, emptyFetch(5)), port })
    expect((await client.request(-1, fetchCodec, fetchRequest())).sessionId).toBe(5)
  })

  it('ExponentialBackoff is Kafka’s: initial * 2^n, capped, with jitter', () => {
    const mid = new ExponentialBackoff(50, 1000, 2, 0.2, () => 0.5)
    expect([0, 1, 2, 3, 4, 5, 10].map((n) => mid.backoff(n))).toEqual([50, 100, 200, 400, 800, 1000, 1000])
    expect(new ExponentialBackoff(50, 1000, 2, 0.2, () => 0).backoff(1)).toBe(80)
    expect(new ExponentialBackoff(50, 1000, 2, 0.2, () => 1).backoff(1)).toBe(120)
  })

  it('against a ferrolog broker: bootstrap, Metadata, the broker’s own versions, close fails what is pending', async () => {
    broker = await startBroker({ props: { 'num.partitions': '3' } })
    client = new NetworkClient({ bootstrapServers: `127.0.0.1:${broker.port}` })
    const md = await client.refreshMetadata(['auto'], { allowAutoTopicCreation: true })
    expect(md.topic('auto')?.partitions.map((p) => p.partition)).toEqual([0, 1, 2])
    const leader = md.leaderFor('auto', 0)!
    expect(leader.port).toBe(broker.port)
    await client.ready(leader.nodeId)
    expect(client.versionFor(leader.nodeId, fetchCodec)).toBe(fetchCodec.maxVersion)
    expect(client.versionFor(leader.nodeId, metadataCodec)).toBe(metadataCodec.maxVersion)
    // A long poll in flight when the client closes fails with CLIENT_CLOSED, at once.
    const topicId = md.topic('auto')!.topicId
    const parked = client
      .request(leader.nodeId, fetchCodec, (version) => ({
        ...fetchRequest(10_000),
        topics: [
          {
            topic: version >= 13 ? '' : 'auto',
            topicId: version >= 13 ? topicId : Buffer.alloc(16),
            partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1024 }],
          },
        ],
      }))
      .catch((e) => e)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const t0 = Date.now()
    await client.close()
    const err = await parked
    expect(err.code).toBe('CLIENT_CLOSED')
    expect(Date.now() - t0).toBeLessThan(2000)
    expect((await client.request(leader.nodeId, fetchCodec, fetchRequest()).catch((e) => e)).code).toBe('CLIENT_CLOSED')
    client = undefined
  })
})
