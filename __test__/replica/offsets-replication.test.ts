/**
 * `__consumer_offsets-0` replicated like any partition, on real sockets and real files: three
 * Broker instances (helpers/replication.ts hands them the registrations, as the cluster
 * metadata will), the offsets partition on all three. The group coordinator is its leader's: a
 * commit is answered, and visible, only once the ISR holds it; when leadership moves, the old
 * leader's coordinator resigns (held and waiting requests answered NOT_COORDINATOR) and the new
 * leader's loads the log its fetcher copied and serves the committed offsets, to the socket and
 * to kafkajs. The offsets log is compacted: every replica's log cleaner cleans its own copy, and
 * a new leader loads the same map from its cleaned copy.
 */
import { Kafka, logLevel } from 'kafkajs'
import { afterEach, describe, expect, it } from 'vitest'
import { OFFSETS_TOPIC, type OffsetCommitEntry } from '../../ts/group/offsets-topic.js'
import { joinGroupCodec } from '../../ts/protocol/apis/join-group.js'
import { offsetCommitCodec, type OffsetCommitResponse } from '../../ts/protocol/apis/offset-commit.js'
import { offsetFetchCodec } from '../../ts/protocol/apis/offset-fetch.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { NO_LEADER } from '../../ts/replica/partition-registration.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { registration, ReplicatedCluster, waitUntil } from '../helpers/replication.js'

const TOPIC = 'orders'
const GROUP = 'replicated-group'

let cluster: ReplicatedCluster | null = null
const wires: KafkaWire[] = []

afterEach(async () => {
  for (const w of wires.splice(0)) w.close()
  await cluster?.stop()
  cluster = null
})

async function wireTo(c: ReplicatedCluster, id: number): Promise<KafkaWire> {
  const w = new KafkaWire(await connectTo(c.broker(id).port), `test-${id}`)
  wires.push(w)
  return w
}

/** A simple commit (generation -1) of one partition's offset. */
function commit(w: KafkaWire, partition: number, offset: bigint): Promise<OffsetCommitResponse> {
  return w.send(offsetCommitCodec, 8, {
    groupId: GROUP,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: partition, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
  })
}

const commitError = (r: OffsetCommitResponse) => r.topics[0].partitions[0].errorCode

/** The group's committed offsets through OffsetFetch v8: its error and partition -> offset. */
async function fetchOffsets(w: KafkaWire): Promise<{ errorCode: number; offsets: Record<number, bigint> }> {
  const r = await w.send(offsetFetchCodec, 8, { groupId: '', topics: [], groups: [{ groupId: GROUP, memberId: null, memberEpoch: -1, topics: null }], requireStable: false })
  const g = r.groups[0]
  const offsets: Record<number, bigint> = {}
  for (const t of g.topics) for (const p of t.partitions) offsets[p.partitionIndex] = p.committedOffset
  return { errorCode: g.errorCode, offsets }
}

async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false
  void promise.then(() => (settled = true))
  await new Promise((resolve) => setTimeout(resolve, ms))
  return settled
}

const coordinating = (c: ReplicatedCluster, id: number) => () => c.broker(id).groupCoordinator.statusError(GROUP) === ErrorCode.NONE

function offsetsLog(c: ReplicatedCluster, id: number) {
  const log = c.broker(id).logManager.getLog(OFFSETS_TOPIC, 0)
  if (!log) throw new Error(`broker ${id} has no offsets log`)
  return log
}

/** Small offsets-log segments and a cleaner that cleans anything dirty, at once. */
const CLEANING = { 'offsets.topic.segment.bytes': '2048', 'log.cleaner.backoff.ms': '50', 'log.cleaner.min.cleanable.ratio': '0.01' }

async function startCluster(backend: BackendName, props: Record<string, string> = {}): Promise<ReplicatedCluster> {
  const c = await ReplicatedCluster.start([1, 2, 3], {
    backend,
    fetchBackOffMs: 50,
    fetchWaitMaxMs: 200,
    // A join is held (the first generation waits), and commits may wait long for their ISR.
    // One offsets partition: the one whose leadership the tests move (partitions: coordinator-partitions-cluster.test.ts).
    props: { 'group.initial.rebalance.delay.ms': '60000', 'offsets.commit.timeout.ms': '20000', 'offsets.topic.num.partitions': '1', ...props },
  })
  await c.createTopic(TOPIC, 2)
  // The offsets topic's id is derived from the cluster id: the same on every broker.
  c.topicIds.set(OFFSETS_TOPIC, c.broker(1).offsetsTopic.topicId)
  return c
}

describe.each(['native', 'js'] as BackendName[])('__consumer_offsets replicated on the %s backend', (backend) => {
  it('a commit waits for the ISR; a change of leader moves the coordinator, which loads what its log holds', async () => {
    const c = (cluster = await startCluster(backend))
    // Replicated: no broker coordinates before the metadata names a leader.
    expect(c.broker(1).groupCoordinator.statusError(GROUP)).toBe(ErrorCode.NOT_COORDINATOR)
    await c.apply(OFFSETS_TOPIC, 0, registration(1, [1, 2, 3], 0))
    await waitUntil('broker 1 coordinates', coordinating(c, 1))
    expect(c.broker(2).groupCoordinator.statusError(GROUP)).toBe(ErrorCode.NOT_COORDINATOR)
    expect(c.broker(3).groupCoordinator.statusError(GROUP)).toBe(ErrorCode.NOT_COORDINATOR)

    const w1 = await wireTo(c, 1)
    const fetch1 = await wireTo(c, 1)
    expect(commitError(await commit(w1, 0, 10n))).toBe(ErrorCode.NONE)
    expect(await fetchOffsets(fetch1)).toEqual({ errorCode: ErrorCode.NONE, offsets: { 0: 10n } })
    const w2 = await wireTo(c, 2)
    expect((await fetchOffsets(w2)).errorCode).toBe(ErrorCode.NOT_COORDINATOR)
    expect(commitError(await commit(w2, 0, 11n))).toBe(ErrorCode.NOT_COORDINATOR)

    // Broker 3 stops fetching (alive, in the ISR, its leader unknown to it): the ISR cannot hold a new commit.
    await c.apply(OFFSETS_TOPIC, 0, registration(NO_LEADER, [1, 2, 3], 1), [3])
    const pending = commit(w1, 1, 42n)
    await waitUntil('broker 2 has the commit', () => offsetsLog(c, 2).logEndOffset() === offsetsLog(c, 1).logEndOffset() && offsetsLog(c, 1).logEndOffset() === 2n)
    expect(await settledWithin(pending, 300)).toBe(false)
    expect(offsetsLog(c, 1).highWatermark()).toBe(1n)
    expect(await fetchOffsets(fetch1)).toEqual({ errorCode: ErrorCode.NONE, offsets: { 0: 10n } })

    // Leadership moves to broker 2 (broker 3 not told yet): broker 1 resigns. Its held join and
    // the commit waiting for its acks are answered NOT_COORDINATOR.
    const joinNew = (await wireTo(c, 1)).send(joinGroupCodec, 3, {
      groupId: 'other',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.from('sub') }],
      reason: null,
    })
    expect(await settledWithin(joinNew, 100)).toBe(false)
    await c.apply(OFFSETS_TOPIC, 0, registration(2, [1, 2, 3], 2), [1, 2])
    expect(commitError(await pending)).toBe(ErrorCode.NOT_COORDINATOR)
    expect((await joinNew).errorCode).toBe(ErrorCode.NOT_COORDINATOR)
    expect((await fetchOffsets(fetch1)).errorCode).toBe(ErrorCode.NOT_COORDINATOR)
    expect(c.broker(1).groupCoordinator.listGroups()).toEqual([])

    // Broker 2 loads its log to its end: the commit broker 1's client was refused is there (its
    // client retries it), as Kafka's coordinator loads it too.
    await waitUntil('broker 2 coordinates', coordinating(c, 2))
    expect(await fetchOffsets(w2)).toEqual({ errorCode: ErrorCode.NONE, offsets: { 0: 10n, 1: 42n } })

    // Broker 2's own commit waits for broker 3 too, which fetches once told the leader. (A
    // connection's requests are answered in order: the fetches go on another.)
    const fetch2 = await wireTo(c, 2)
    const next = commit(w2, 0, 50n)
    expect(await settledWithin(next, 300)).toBe(false)
    expect((await fetchOffsets(fetch2)).offsets[0]).toBe(10n)
    await c.apply(OFFSETS_TOPIC, 0, registration(2, [1, 2, 3], 2), [3])
    expect(commitError(await next)).toBe(ErrorCode.NONE)
    expect(await fetchOffsets(fetch2)).toEqual({ errorCode: ErrorCode.NONE, offsets: { 0: 50n, 1: 42n } })

    // A real client asks broker 2 (FindCoordinator, OffsetFetch) and sees the same.
    const admin = new Kafka({ clientId: 'offsets-test', brokers: [`127.0.0.1:${c.broker(2).port}`], logLevel: logLevel.NOTHING, retry: { retries: 3 } }).admin()
    await admin.connect()
    try {
      const [topic] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] })
      expect(topic.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual([
        [0, '50'],
        [1, '42'],
      ])
    } finally {
      await admin.disconnect()
    }
    // Every replica holds the same offsets log.
    await waitUntil('the followers have every record', () => [1, 3].every((id) => offsetsLog(c, id).logEndOffset() === offsetsLog(c, 2).logEndOffset()))
  }, 120_000)

  it('the log cleaner cleans every replica of the offsets log on its own, and a new leader loads the same offsets from its cleaned copy', async () => {
    const c = (cluster = await startCluster(backend, CLEANING))
    await c.apply(OFFSETS_TOPIC, 0, registration(1, [1, 2, 3], 0))
    await waitUntil('broker 1 coordinates', coordinating(c, 1))
    const coordinator = c.broker(1).groupCoordinator
    const entry = (partition: number, offset: bigint): OffsetCommitEntry => ({ topic: TOPIC, partition, offset, leaderEpoch: 0, metadata: `m${offset}`, commitTimestamp: 1_700_000_000_000n })
    let n = 0n
    for (let burst = 0; burst < 12; burst++) {
      const commits = Array.from({ length: 50 }, () => {
        n++
        return coordinator.commitOffsets(GROUP, '', -1, [entry(Number(n % 2n), n)])
      })
      expect(new Set(await Promise.all(commits))).toEqual(new Set([ErrorCode.NONE]))
    }
    const leader = offsetsLog(c, 1)
    expect(leader.logEndOffset()).toBe(600n)
    // Each broker's cleaner cleans its own copy up to its active segment.
    const cleaned = (id: number) => (c.broker(id).logManager.cleaner?.manager.allCleanerCheckpoints().get(`${OFFSETS_TOPIC}-0`) ?? 0n) >= 500n
    await waitUntil('every replica cleaned its offsets log', () => [1, 2, 3].every(cleaned), 60_000)
    for (const id of [1, 2, 3]) {
      const log = offsetsLog(c, id)
      expect(log.logStartOffset()).toBe(0n)
      expect(log.readRecords(0n, { maxBytes: 1 << 24, isolation: 'LOG_END' }).length).toBeLessThan(150)
    }
    const expected = coordinator.offsets.all(GROUP).sort((a, b) => a.partition - b.partition)
    expect(expected.map((e) => [e.partition, e.offset])).toEqual([
      [0, 600n],
      [1, 599n],
    ])
    await c.apply(OFFSETS_TOPIC, 0, registration(2, [1, 2, 3], 2))
    await waitUntil('broker 2 coordinates', coordinating(c, 2))
    expect(
      c
        .broker(2)
        .groupCoordinator.offsets.all(GROUP)
        .sort((a, b) => a.partition - b.partition),
    ).toEqual(expected)
    expect(c.broker(2).groupCoordinator.listGroups()).toEqual([{ groupId: GROUP, protocolType: '', state: 'Empty' }])
  }, 120_000)
})
