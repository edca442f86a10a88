/**
 * The follower fetcher's recovery paths and the non-leaders' refusals, with Broker instances in
 * this process on real sockets and files (helpers/replication.ts plays the metadata's part):
 * OFFSET_OUT_OF_RANGE with the follower ahead of the leader (it truncates to the leader's end)
 * and behind its log start (it truncates fully and starts there), a follower stopped and started
 * again on its data directory (catching up), and what a follower answers to clients.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { KafkaClientError } from '../../ts/client/errors.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { produce, ProduceError } from '../../ts/client/produce.js'
import { fetchCodec } from '../../ts/protocol/apis/fetch.js'
import { listOffsetsCodec } from '../../ts/protocol/apis/list-offsets.js'
import { offsetForLeaderEpochCodec } from '../../ts/protocol/apis/offset-for-leader-epoch.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { CLEAN_SHUTDOWN_FILE } from '../../ts/storage/log-manager.js'
import { registration, ReplicatedCluster, waitUntil } from '../helpers/replication.js'

const TOPIC = 'events'
const TP = { topic: TOPIC, partition: 0 }

let cluster: ReplicatedCluster | null = null
const clients: NetworkClient[] = []

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close()
  await cluster?.stop()
  cluster = null
})

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

async function produceTo(c: ReplicatedCluster, id: number, count: number, tag: string): Promise<void> {
  const client = clientOf(c.broker(id).port)
  for (let i = 0; i < count; i++) await produce(client, TOPIC, [{ key: `${tag}-${i}`, value: `${tag} ${i}` }], { acks: 1, partition: 0, allowAutoTopicCreation: false })
}

function caughtUp(c: ReplicatedCluster, leader: number, followers: number[]): () => boolean {
  return () => {
    const l = logOf(c, leader)
    return followers.every((f) => {
      const log = logOf(c, f)
      return log.logStartOffset() === l.logStartOffset() && log.logEndOffset() === l.logEndOffset() && log.highWatermark() === l.highWatermark() && l.highWatermark() === l.logEndOffset()
    })
  }
}

function values(c: ReplicatedCluster, id: number): string[] {
  const log = logOf(c, id)
  return log.readRecords(log.logStartOffset(), { isolation: 'LOG_END', maxBytes: 1 << 22 }).map((r) => r.value!.toString())
}

function segmentBytes(dir: string): Buffer {
  return Buffer.concat(
    readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .sort()
      .map((f) => readFileSync(join(dir, f))),
  )
}

describe('OFFSET_OUT_OF_RANGE', () => {
  it("a follower behind the leader's log start (DeleteRecords) truncates fully and starts at the leader's log start", async () => {
    cluster = await ReplicatedCluster.start([1, 2])
    await cluster.createTopic(TOPIC)
    await cluster.apply(TOPIC, 0, registration(1, [1, 2], 0))
    await produceTo(cluster, 1, 10, 'early')
    await waitUntil('replicated', caughtUp(cluster, 1, [2]))

    await cluster.stopBroker(2)
    // The metadata takes broker 2 out of the ISR: broker 1's high watermark follows its log end alone.
    await cluster.apply(TOPIC, 0, registration(1, [1, 2], 0, 1, [1]), [1])
    await produceTo(cluster, 1, 20, 'late')
    expect(logOf(cluster, 1).highWatermark()).toBe(30n)
    expect(cluster.broker(1).replicaManager.deleteRecords(TP, 25n)).toEqual({ errorCode: ErrorCode.NONE, lowWatermark: 25n })

    await cluster.startBroker(2)
    await cluster.replay(2)
    await waitUntil("broker 2 starts at the leader's log start and catches up", caughtUp(cluster, 1, [2]))
    expect(logOf(cluster, 2).logStartOffset()).toBe(25n)
    expect(logOf(cluster, 2).logEndOffset()).toBe(30n)
    expect(values(cluster, 2)).toEqual(['late 15', 'late 16', 'late 17', 'late 18', 'late 19'])
    // Its old segments are gone: the log was emptied, not kept below the gap.
    expect(
      logOf(cluster, 2)
        .segments()
        .map((s) => s.baseOffset),
    ).toEqual([25n])
  }, 60_000)

  it("a follower ahead of its leader (a leader with a shorter log) truncates to the leader's log end", async () => {
    cluster = await ReplicatedCluster.start([1, 2])
    const topicId = await cluster.createTopic(TOPIC)
    // Logs from before leader epochs (batches stamped -1, no epoch cache): broker 2 holds the
    // leader's 10 records and 20 more the leader never had.
    const leaderLog = await cluster.broker(1).logManager.getOrCreateLog(TOPIC, 0, { topicId })
    for (let i = 0; i < 10; i++) leaderLog.append([{ key: `k${i}`, value: `shared ${i}` }], { leaderEpoch: -1 })
    const shared = leaderLog.readSlice(leaderLog.read(0n, { isolation: 'LOG_END', maxBytes: 1 << 20 }).records)
    const followerLog = await cluster.broker(2).logManager.getOrCreateLog(TOPIC, 0, { topicId })
    followerLog.appendAsFollower(shared)
    for (let i = 0; i < 20; i++) followerLog.append([{ key: `x${i}`, value: `extra ${i}` }], { leaderEpoch: -1 })
    expect(followerLog.latestEpoch()).toBeNull()
    // Started again, its high watermark is its log end (its checkpoint): nothing to cut back to before fetching.
    followerLog.updateHighWatermark(30n)
    await cluster.stopBroker(2)
    await cluster.startBroker(2)
    expect(logOf(cluster, 2).highWatermark()).toBe(30n)

    await cluster.apply(TOPIC, 0, registration(1, [1, 2], 0))
    await waitUntil("broker 2 truncated to the leader's log end", () => logOf(cluster!, 2).logEndOffset() === 10n)
    await produceTo(cluster, 1, 5, 'new')
    await waitUntil('broker 2 caught up', caughtUp(cluster, 1, [2]))
    expect(values(cluster, 2)).toEqual(values(cluster, 1))
    expect(values(cluster, 2).some((v) => v.startsWith('extra'))).toBe(false)
    expect(logOf(cluster, 2).epochEntries()).toEqual([{ epoch: 0, startOffset: 10n }])
    const dirs = [1, 2].map((id) => logOf(cluster!, id).dir)
    await cluster.stop()
    expect(segmentBytes(dirs[1]).equals(segmentBytes(dirs[0]))).toBe(true)
  }, 60_000)
})

describe('a follower stopped and started again', () => {
  it("recovers its log, fetches from its log end and catches up; the leader's high watermark waits for it", async () => {
    cluster = await ReplicatedCluster.start([1, 2, 3])
    await cluster.createTopic(TOPIC, 1, { 'segment.bytes': '1024' })
    await cluster.apply(TOPIC, 0, registration(1, [1, 2, 3], 0))
    await produceTo(cluster, 1, 20, 'before')
    await waitUntil('replicated', caughtUp(cluster, 1, [2, 3]))

    const dir3 = cluster.dataDirs.get(3)!
    await cluster.stopBroker(3)
    // As after a kill: no clean-shutdown marker, so the logs are recovered on start.
    rmSync(join(dir3, CLEAN_SHUTDOWN_FILE), { force: true })
    await produceTo(cluster, 1, 30, 'during')
    await waitUntil('broker 2 has the records', () => logOf(cluster!, 2).logEndOffset() === 50n)
    // Broker 3 is still in the ISR: the high watermark waits for it.
    expect(logOf(cluster, 1).highWatermark()).toBe(20n)

    await cluster.startBroker(3)
    expect(cluster.broker(3).logManager.hadCleanShutdown).toBe(false)
    expect(logOf(cluster, 3).logEndOffset()).toBe(20n)
    await cluster.replay(3)
    await waitUntil('broker 3 caught up', caughtUp(cluster, 1, [2, 3]))
    expect(logOf(cluster, 1).highWatermark()).toBe(50n)
    expect(values(cluster, 3)).toEqual(values(cluster, 1))
  }, 60_000)
})

describe('non-leaders refuse', () => {
  it('Produce, consumer Fetch before v11, a replica Fetch, ListOffsets and OffsetForLeaderEpoch on a follower answer NOT_LEADER_OR_FOLLOWER', async () => {
    cluster = await ReplicatedCluster.start([1, 2, 3])
    const topicId = await cluster.createTopic(TOPIC)
    await cluster.apply(TOPIC, 0, registration(1, [1, 2], 0))
    await produceTo(cluster, 1, 3, 'v')
    await waitUntil('replicated', caughtUp(cluster, 1, [2]))
    const follower = clientOf(cluster.broker(2).port)

    const err = await produce(follower, TOPIC, [{ key: 'a', value: 'b' }], { acks: 1, partition: 0, retries: 0, allowAutoTopicCreation: false }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ProduceError)
    expect((err as ProduceError).unacknowledged[0].error).toBeInstanceOf(KafkaClientError)
    expect((err as ProduceError).unacknowledged[0].error.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    expect(logOf(cluster, 2).logEndOffset()).toBe(3n)

    const fetch = async (client: NetworkClient, version: number, replicaId: number, currentLeaderEpoch = -1) => {
      const res = await client.send(fetchCodec, version, {
        replicaId: version < 15 ? replicaId : -1,
        ...(version >= 15 && replicaId >= 0 ? { replicaState: { replicaId, replicaEpoch: -1n } } : {}),
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
            partitions: [{ partition: 0, currentLeaderEpoch, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }],
          },
        ],
        forgottenTopicsData: [],
        rackId: '',
      })
      return res.responses[0].partitions[0]
    }
    // A consumer without client metadata (before v11) may read only the leader.
    expect((await fetch(follower, 10, -1)).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    // From v11 a follower serves consumers up to its high watermark (KIP-392).
    const served = await fetch(follower, 13, -1)
    expect(served.errorCode).toBe(ErrorCode.NONE)
    expect(served.highWatermark).toBe(3n)
    expect(served.records!.length).toBeGreaterThan(0)
    // A replica fetches only from the leader.
    expect((await fetch(follower, 15, 3, 0)).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    // The leader refuses a replica id that is not one of the partition's replicas.
    const leader = clientOf(cluster.broker(1).port)
    expect((await fetch(leader, 15, 3, 0)).errorCode).toBe(ErrorCode.UNKNOWN_LEADER_EPOCH)
    expect((await fetch(leader, 12, 3, -1)).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    expect((await fetch(leader, 15, 2, 0)).errorCode).toBe(ErrorCode.NONE)

    const listOffsets = async (client: NetworkClient, replicaId: number) => {
      const res = await client.send(listOffsetsCodec, 7, {
        replicaId,
        isolationLevel: 0,
        topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
      })
      return res.topics[0].partitions[0]
    }
    expect((await listOffsets(follower, -1)).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    expect(await listOffsets(follower, -2)).toMatchObject({ errorCode: ErrorCode.NONE, offset: 3n })
    expect(await listOffsets(leader, -1)).toMatchObject({ errorCode: ErrorCode.NONE, offset: 3n })

    const epochEnd = async (client: NetworkClient) => {
      const res = await client.send(offsetForLeaderEpochCodec, 4, { replicaId: 2, topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch: 0, leaderEpoch: 0 }] }] })
      return res.topics[0].partitions[0]
    }
    expect((await epochEnd(follower)).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    expect(await epochEnd(leader)).toMatchObject({ errorCode: ErrorCode.NONE, leaderEpoch: 0, endOffset: 3n })

    expect(cluster.broker(2).replicaManager.deleteRecords(TP, 1n).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    // A broker the metadata did not name holds no partition, even for a topic it knows.
    const outsider = clientOf(cluster.broker(3).port)
    const e3 = await produce(outsider, TOPIC, [{ key: 'a', value: 'b' }], { acks: 1, partition: 0, retries: 0, allowAutoTopicCreation: false }).catch((e: unknown) => e)
    expect((e3 as ProduceError).unacknowledged[0].error.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
  }, 60_000)

  it("a registration older than the partition's is ignored; a null one stops the replica and calls the hook", async () => {
    cluster = await ReplicatedCluster.start([1, 2])
    await cluster.createTopic(TOPIC)
    await cluster.apply(TOPIC, 0, registration(1, [1, 2], 3))
    await produceTo(cluster, 1, 2, 'v')
    await waitUntil('replicated', caughtUp(cluster, 1, [2]))
    // Epoch 2 (older) naming broker 2 leader: ignored by both.
    await cluster.apply(TOPIC, 0, registration(2, [1, 2], 2))
    expect(cluster.broker(1).replicaManager.getPartition(TP)!.isLeader).toBe(true)
    expect(cluster.broker(2).replicaManager.getPartition(TP)).toMatchObject({ leaderId: 1, leaderEpoch: 3 })
    expect(cluster.broker(2).replicaManager.replicaFetcherManager!.fetchState(TP)).toMatchObject({ currentLeaderEpoch: 3 })

    // Broker 2 is moved off the partition: it stops fetching and the hook hears of it.
    await cluster.apply(TOPIC, 0, registration(1, [1], 4))
    expect(cluster.broker(2).replicaManager.replicaFetcherManager!.fetchState(TP)).toBeUndefined()
    expect(cluster.broker(2).replicaManager.replicaFetcherManager!.fetcherCount).toBe(0)
    expect(cluster.broker(2).replicaManager.getPartition(TP)).toBeUndefined()
    expect(cluster.stopped.map((s) => [s.brokerId, s.change.registration?.leaderEpoch, s.log?.dir])).toEqual([[2, 4, logOf(cluster, 2).dir]])
    // A leader alone in its assignment moves its high watermark itself.
    await produceTo(cluster, 1, 2, 'alone')
    expect(logOf(cluster, 1).highWatermark()).toBe(4n)
  }, 60_000)
})
