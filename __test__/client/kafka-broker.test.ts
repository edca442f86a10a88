/**
 * The client core against a real Apache Kafka broker (tools/kafka/run-broker.sh, one for the
 * file): the versions negotiated from Kafka's ApiVersions, fetch sessions (a full fetch opens
 * one, incremental fetches over 100 idle partitions are a small fraction of its bytes, partitions
 * added, altered and forgotten mid-session), and a broker restarted mid-consume: the client
 * reconnects, its session is gone, and the handler recovers with a full fetch with no offset
 * skipped or repeated.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Fetcher, type ConsumerRecord } from '../../ts/client/fetcher.js'
import type { FetchRequestData } from '../../ts/client/fetch-session-handler.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { produce } from '../../ts/client/produce.js'
import { createTopicsCodec } from '../../ts/protocol/apis/create-topics.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { metadataCodec } from '../../ts/protocol/apis/metadata.js'
import { produceCodec } from '../../ts/protocol/apis/produce.js'
import { runProcess } from '../helpers/process.js'

const ROOT = join(__dirname, '../..')
let dir: string
let port: number
let bootstrap: string

async function startKafka(extra: string[] = []): Promise<void> {
  const out = await runProcess('bash', [join(ROOT, 'tools/kafka/run-broker.sh'), '--data-dir', dir, ...extra], '', 120_000)
  if (out.status !== 0) throw new Error(`run-broker.sh: ${out.stdout}\n${out.stderr}`)
  bootstrap = /bootstrap=(\S+)/.exec(out.stdout)![1]
  port = Number(bootstrap.split(':')[1])
}

const stopKafka = () => runProcess('bash', [join(ROOT, 'tools/kafka/stop-broker.sh'), dir], '', 90_000)

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ferrolog-kafka-client-'))
  await startKafka()
}, 150_000)

afterAll(() => {
  if (!dir) return
  execFileSync('bash', [join(ROOT, 'tools/kafka/stop-broker.sh'), dir], { stdio: 'ignore' })
  rmSync(dir, { recursive: true, force: true })
}, 90_000)

async function createTopic(client: NetworkClient, name: string, partitions: number): Promise<void> {
  const nodeId = client.candidateNodes()[0]
  const r = await client.request(nodeId, createTopicsCodec, {
    topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 30_000,
    validateOnly: false,
  })
  expect(r.topics[0].errorCode).toBe(0)
  // Kafka's metadata propagates asynchronously: wait for leaders.
  for (let i = 0; i < 100; i++) {
    const md = await client.refreshMetadata([name])
    if (md.topic(name)?.partitions.length === partitions && md.topic(name)!.partitions.every((p) => p.leaderId >= 0)) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${name} has no leaders`)
}

async function pollUntil(f: Fetcher, done: (all: ConsumerRecord[]) => boolean, into: ConsumerRecord[] = [], limit = 300): Promise<ConsumerRecord[]> {
  for (let i = 0; i < limit && !done(into); i++) into.push(...(await f.poll()))
  return into
}

describe('the client core against Apache Kafka', () => {
  it('negotiates the versions Kafka advertises', async () => {
    const client = new NetworkClient({ bootstrapServers: bootstrap })
    try {
      const md = await client.refreshMetadata(null)
      const node = md.nodes[0].nodeId
      await client.ready(node)
      // Kafka 4.4 serves newer versions of Metadata than this client speaks: ours are used.
      expect(client.versionFor(node, fetchCodec)).toBe(fetchCodec.maxVersion)
      expect(client.versionFor(node, metadataCodec)).toBe(metadataCodec.maxVersion)
      expect(client.versionFor(node, produceCodec)).toBe(produceCodec.maxVersion)
      expect(client.versionFor(node, produceCodec, 9)).toBe(9)
    } finally {
      await client.close()
    }
  })

  it('fetch sessions: full, then incremental listing only what changed', { timeout: 90_000 }, async () => {
    const client = new NetworkClient({ bootstrapServers: bootstrap })
    const sent: Array<{ bytes: number; data: FetchRequestData }> = []
    const fetcher = new Fetcher(client, { maxWaitMs: 20, onRequest: (_n, bytes, data) => sent.push({ bytes, data }) })
    try {
      await createTopic(client, 'idle-100', 100)
      await createTopic(client, 'added', 2)
      await fetcher.assign('idle-100', null, 'earliest')
      await fetcher.poll()
      const full = sent.at(-1)!
      expect(full.data.metadata.isFull).toBe(true)
      expect(full.data.toSend.size).toBe(100)
      for (let i = 0; i < 3; i++) await fetcher.poll()
      const idle = sent.at(-1)!
      expect(idle.data.metadata.isFull).toBe(false)
      expect(idle.data.toSend.size).toBe(0)
      const ratio = idle.bytes / full.bytes
      console.log(`fetch session (Apache Kafka): full request ${full.bytes} B over 100 partitions, incremental ${idle.bytes} B (${(ratio * 100).toFixed(1)}%)`)
      expect(ratio).toBeLessThan(0.05)

      await produce(
        client,
        'idle-100',
        [
          { key: 'a', value: '1' },
          { key: 'a', value: '2' },
        ],
        { partition: 42 },
      )
      const got = await pollUntil(fetcher, (r) => r.length >= 2)
      expect(got.map((r) => [r.partition, r.offset, r.value!.toString()])).toEqual([
        [42, 0n, '1'],
        [42, 1n, '2'],
      ])
      await fetcher.poll()
      expect([...sent.at(-1)!.data.toSend.keys()].map((k) => k.replace('\u0000', '-'))).toEqual(['idle-100-42'])

      await fetcher.assign('added', null, 'earliest')
      await fetcher.poll()
      expect([...sent.at(-1)!.data.toSend.keys()].map((k) => k.replace('\u0000', '-'))).toEqual(['added-0', 'added-1'])
      fetcher.unassign('idle-100', 0)
      await fetcher.poll()
      expect(sent.at(-1)!.data.toForget.map((t) => `${t.topic}-${t.partition}`)).toEqual(['idle-100-0'])
      fetcher.seek('idle-100', 42, 1n)
      const again = await pollUntil(fetcher, (r) => r.length >= 1)
      expect(again.map((r) => r.offset)).toEqual([1n])
      // Kafka accepted every incremental request of the one session.
      expect(sent.filter((s) => s.data.metadata.isFull)).toHaveLength(1)
    } finally {
      await fetcher.close()
      await client.close()
    }
  })

  it('a Kafka broker restarted mid-consume: the client reconnects, a new session, no offset skipped or repeated', { timeout: 150_000 }, async () => {
    const producer = new NetworkClient({ bootstrapServers: bootstrap })
    const client = new NetworkClient({ bootstrapServers: bootstrap, reconnectBackoffMs: 50, reconnectBackoffMaxMs: 500 })
    const sent: Array<{ bytes: number; data: FetchRequestData }> = []
    const fetcher = new Fetcher(client, { maxWaitMs: 50, onRequest: (_n, bytes, data) => sent.push({ bytes, data }) })
    let produced = 0
    const round = async (c: NetworkClient) => {
      const values = Array.from({ length: 50 }, (_, i) => ({ key: `k${produced + i}`, value: `v${produced + i}` }))
      await produce(c, 'restarted', values)
      produced += values.length
    }
    try {
      await createTopic(producer, 'restarted', 3)
      await fetcher.assign('restarted', null, 'earliest')
      await round(producer)
      const got = await pollUntil(fetcher, (r) => r.length >= produced)
      await round(producer)
      await producer.close()
      const before = sent.length
      let restarted = false
      const restart = (async () => {
        const stopped = await stopKafka()
        if (stopped.status !== 0) throw new Error(`stop-broker.sh: ${stopped.stderr}`)
        await startKafka(['--port', String(port)])
        restarted = true
      })()
      await pollUntil(fetcher, (r) => restarted && r.length >= produced, got, 100_000)
      await restart
      const producer2 = new NetworkClient({ bootstrapServers: bootstrap })
      await round(producer2)
      await producer2.close()
      await pollUntil(fetcher, (r) => r.length >= produced, got)
      expect(got.length).toBe(produced)
      const byPartition = new Map<number, bigint[]>()
      for (const r of got) byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), r.offset])
      for (const offsets of byPartition.values()) expect(offsets).toEqual(offsets.map((_, i) => BigInt(i)))
      expect(new Set(got.map((r) => r.value!.toString())).size).toBe(produced)
      expect(sent.slice(before).some((s) => s.data.metadata.isFull && s.data.toSend.size === 3)).toBe(true)
    } finally {
      await fetcher.close()
      await client.close()
    }
  })
})
