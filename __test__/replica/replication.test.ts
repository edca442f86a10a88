/**
 * Replication end to end, with real sockets and real files: 2-3 Broker instances in this
 * process, the harness (helpers/replication.ts) handing each the same PartitionChange
 * registrations, as the cluster metadata will. Followers fetch from the leader through their
 * ReplicaFetcherThreads; the logs must end up byte for byte the same.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { produce } from '../../ts/client/produce.js'
import { fetchCodec, type FetchResponse } from '../../ts/protocol/apis/fetch.js'
import { decodeBatches } from '../../ts/protocol/records.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { fetchKafkaJars } from '../helpers/kafka-tools.js'
import { registration, ReplicatedCluster, waitUntil } from '../helpers/replication.js'

const DUMP_LOG = join(__dirname, '../../tools/kafka/dump-log.sh')
const TOPIC = 'orders'
const TP = { topic: TOPIC, partition: 0 }

let cluster: ReplicatedCluster | null = null
const clients: NetworkClient[] = []

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close()
  await cluster?.stop()
  cluster = null
})

beforeAll(() => fetchKafkaJars(), 300_000)

function clientOf(port: number): NetworkClient {
  const c = new NetworkClient({ bootstrapServers: `127.0.0.1:${port}`, requestTimeoutMs: 10_000 })
  clients.push(c)
  return c
}

function logOf(c: ReplicatedCluster, id: number) {
  const log = c.broker(id).logManager.getLog(TOPIC, 0)
  if (!log) throw new Error(`broker ${id} has no log`)
  return log
}

/** The .log files of a partition directory, by name, with their bytes. */
function segmentFiles(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>()
  for (const f of readdirSync(dir).sort()) if (f.endsWith('.log')) out.set(f, readFileSync(join(dir, f)))
  return out
}

async function produceBatches(port: number, batches: number, perBatch: number, tag: string): Promise<void> {
  const client = clientOf(port)
  for (let b = 0; b < batches; b++) {
    const records = Array.from({ length: perBatch }, (_, i) => ({ key: `k-${b}-${i}`, value: `${tag} batch ${b} record ${i} `.repeat(1 + ((b + i) % 7)) }))
    await produce(client, TOPIC, records, { acks: 1, partition: 0, compression: b % 3 === 0 ? 'gzip' : b % 3 === 1 ? 'lz4' : 'none', allowAutoTopicCreation: false })
  }
}

function caughtUp(c: ReplicatedCluster, leader: number, followers: number[]): () => boolean {
  return () => {
    const l = logOf(c, leader)
    return followers.every((f) => {
      const log = logOf(c, f)
      return log.logEndOffset() === l.logEndOffset() && log.highWatermark() === l.highWatermark() && l.highWatermark() === l.logEndOffset()
    })
  }
}

describe.each(['native', 'js'] as BackendName[])('replication on the %s backend', (backend) => {
  it("copies the leader's batches byte for byte to its followers, whose high watermark follows the leader's", async () => {
    cluster = await ReplicatedCluster.start([1, 2, 3], { backend })
    await cluster.createTopic(TOPIC, 1, { 'segment.bytes': '2048' })
    await cluster.apply(TOPIC, 0, registration(1, [1, 2, 3], 0))
    const leaderPort = cluster.broker(1).port

    await produceBatches(leaderPort, 40, 5, 'first')
    await waitUntil('the followers have every record and the high watermark is the log end', caughtUp(cluster, 1, [2, 3]))
    expect(logOf(cluster, 1).logEndOffset()).toBe(200n)
    // The leader's high watermark moved with its followers (min LEO over the ISR), not with its own appends.
    expect(logOf(cluster, 1).highWatermark()).toBe(200n)
    expect(logOf(cluster, 2).epochEntries()).toEqual(logOf(cluster, 1).epochEntries())
    expect(logOf(cluster, 1).segments().length).toBeGreaterThan(2)

    // One fetcher per source broker, fetching with a session as replica 2 and 3.
    const fm = cluster.broker(2).replicaManager.replicaFetcherManager!
    expect(fm.fetcherCount).toBe(1)
    expect(fm.fetchState(TP)).toMatchObject({ fetchOffset: 200n, currentLeaderEpoch: 0, lastFetchedEpoch: 0, status: 'fetching' })
    expect(fm.allFetchers()[0].fetchesAnswered).toBeGreaterThan(0)
    expect(cluster.broker(1).fetchManager).toBeDefined()

    // More records after the followers went idle on a long poll: the append wakes them.
    await produceBatches(leaderPort, 3, 4, 'second')
    await waitUntil('the followers have the second round', caughtUp(cluster, 1, [2, 3]))
    expect(logOf(cluster, 3).logEndOffset()).toBe(212n)

    const dirs = [1, 2, 3].map((id) => logOf(cluster!, id).dir)
    await cluster.stop()
    const [leader, ...followers] = dirs.map(segmentFiles)
    expect(leader.size).toBeGreaterThan(2)
    for (const f of followers) {
      expect([...f.keys()]).toEqual([...leader.keys()])
      for (const [name, bytes] of leader) expect(f.get(name)!.equals(bytes), name).toBe(true)
      expect(readFileSync(join(dirs[1], 'leader-epoch-checkpoint'), 'utf8')).toBe(readFileSync(join(dirs[0], 'leader-epoch-checkpoint'), 'utf8'))
    }

    // Kafka's DumpLogSegments reads a follower's segments as valid, with the leader's batches.
    const run = spawnSync('bash', [DUMP_LOG, dirs[2]], { encoding: 'utf8', maxBuffer: 64 << 20 })
    expect(run.stderr).not.toMatch(/PROBLEM/)
    expect(run.status).toBe(0)
    const batchLines = run.stdout.split('\n').filter((l) => l.startsWith('baseOffset: '))
    expect(batchLines).toHaveLength(43)
    expect(batchLines.every((l) => /isvalid: true/.test(l) && /partitionLeaderEpoch: 0 /.test(l))).toBe(true)
    expect(run.stdout.split('\n').filter((l) => l.startsWith('| offset: '))).toHaveLength(212)
  }, 120_000)
})

/** A consumer's Fetch of partition 0 at `version` (v11+ carries client metadata; older does not). */
async function consumerFetch(client: NetworkClient, version: number, offset: bigint, topicId: Buffer): Promise<FetchResponse['responses'][number]['partitions'][number]> {
  const res = await client.send(fetchCodec, version, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic: version < 13 ? TOPIC : '',
        topicId: version >= 13 ? topicId : Buffer.alloc(16),
        partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }],
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  })
  return res.responses[0].partitions[0]
}

function valuesIn(records: Buffer | null): string[] {
  if (!records || records.length === 0) return []
  return decodeBatches(records).flatMap((b) => b.records.map((r) => r.value?.toString() ?? ''))
}

describe('leadership changes', () => {
  it('a former leader truncates the records the new leader never got (divergingEpoch) and never serves them', async () => {
    cluster = await ReplicatedCluster.start([1, 2, 3])
    const topicId = await cluster.createTopic(TOPIC, 1)
    await cluster.apply(TOPIC, 0, registration(1, [1, 2, 3], 0))
    await produceBatches(cluster.broker(1).port, 5, 2, 'committed')
    await waitUntil('replicated', caughtUp(cluster, 1, [2, 3]))

    // Brokers 2 and 3 learn of epoch 1 (leader 2, broker 1 out of the ISR); broker 1 does not
    // yet: a stale leader.
    const epoch1 = registration(2, [1, 2, 3], 1, 1, [2, 3])
    await cluster.apply(TOPIC, 0, epoch1, [2, 3])
    await produceBatches(cluster.broker(1).port, 3, 2, 'divergent')
    expect(logOf(cluster, 1).logEndOffset()).toBe(16n)
    // Nobody in its ISR fetched them: its high watermark stayed, so no consumer saw them.
    expect(logOf(cluster, 1).highWatermark()).toBe(10n)
    const stale = await consumerFetch(clientOf(cluster.broker(1).port), 12, 10n, topicId)
    expect(valuesIn(stale.records)).toEqual([])

    await produceBatches(cluster.broker(2).port, 4, 2, 'epoch1')
    await waitUntil('broker 3 follows broker 2', caughtUp(cluster, 2, [3]))
    expect(logOf(cluster, 2).logEndOffset()).toBe(18n)

    // Broker 1 learns: it follows broker 2, is told its log diverged at offset 10, truncates, catches up.
    await cluster.apply(TOPIC, 0, epoch1, [1])
    await waitUntil('broker 1 caught up with broker 2', caughtUp(cluster, 2, [1, 3]))
    const l1 = logOf(cluster, 1)
    const all = l1.readRecords(0n, { isolation: 'LOG_END', maxBytes: 1 << 20 }).map((r) => r.value!.toString())
    expect(all).toHaveLength(18)
    expect(all.some((v) => v.startsWith('divergent'))).toBe(false)
    expect(all.filter((v) => v.startsWith('epoch1'))).toHaveLength(8)
    expect(l1.epochEntries()).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 1, startOffset: 10n },
    ])
    expect(l1.epochEntries()).toEqual(logOf(cluster, 2).epochEntries())
    // Served to a consumer that may read a follower (Fetch v11+): the new leader's records only.
    const served = await consumerFetch(clientOf(cluster.broker(1).port), 12, 10n, topicId)
    expect(served.errorCode).toBe(0)
    expect(valuesIn(served.records).every((v) => v.startsWith('epoch1'))).toBe(true)
    expect(valuesIn(served.records)).toHaveLength(8)

    const dirs = [1, 2].map((id) => logOf(cluster!, id).dir)
    await cluster.stop()
    const [a, b] = dirs.map(segmentFiles)
    expect([...a.keys()]).toEqual([...b.keys()])
    for (const [name, bytes] of b) expect(a.get(name)!.equals(bytes), name).toBe(true)
  }, 60_000)
})
