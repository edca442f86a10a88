/**
 * The leader side of replication over the wire: a broker whose partition has a follower (broker
 * 1), played by the test with real Fetch requests carrying replicaId 1 on a socket, and a real
 * client (the client core's idempotent producer, acks=-1) producing to it. The ISR changes go
 * through the in-process AlterPartitionManager of __test__/helpers (the etcd one's rules).
 *
 * - an acks=all produce is answered once the follower's fetch says it has the records; the
 *   follower's fetch reads past the high watermark (to the log end) and is sent zero-copy;
 * - it times out with REQUEST_TIMED_OUT when the follower never fetches;
 * - min.insync.replicas (topic config, broker default): NOT_ENOUGH_REPLICAS before the append
 *   with a smaller ISR, while acks=1 still works;
 * - NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrinks below it while the produce waits;
 * - the ISR shrinks after replica.lag.time.max.ms and grows again when the follower catches up.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { NetworkClient } from '../../ts/client/network-client.js'
import { produce } from '../../ts/client/produce.js'
import { silentLogger } from '../../ts/logger.js'
import { fetchCodec, ZERO_UUID, type FetchResponse } from '../../ts/protocol/apis/fetch.js'
import { batchesOf } from '../../ts/protocol/records.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { PartitionRegistration } from '../../ts/replica/partition-registration.js'
import { Broker } from '../../ts/server/broker.js'
import { brokerConfigFrom } from '../../ts/server/config.js'
import { ConfigSource, topicConfigEntries } from '../../ts/server/handlers/describe-configs.js'
import { collectMetrics } from '../../ts/server/metrics.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { InMemoryAlterPartitionManager } from '../helpers/alter-partition.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'replicated'
const TP = { topic: TOPIC, partition: 0 }
const FOLLOWER = 1

let broker: Broker | undefined
let client: NetworkClient | undefined
let follower: KafkaWire | undefined
afterEach(async () => {
  follower?.close()
  await client?.close()
  await broker?.stop()
  broker = client = follower = undefined
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(10)
  }
}

/**
 * A broker (node 0) in cluster mode with the topic's partition 0 led by it, replicas [0, 1],
 * this ISR; a producer client and the follower's connection.
 */
async function replicatedBroker(backend: BackendName, isr: number[], props: Record<string, string> = {}, topicConfigs: Record<string, string> = {}) {
  const apm = new InMemoryAlterPartitionManager()
  const config = brokerConfigFrom({ listeners: '127.0.0.1:0', 'log.dirs': tempDir('ferrolog-replication-'), ...props })
  broker = await Broker.start(config, { backend, logger: silentLogger, alterPartitionManager: apm })
  await broker.createTopic(TOPIC, 1, topicConfigs)
  const registration: PartitionRegistration = { replicas: [0, FOLLOWER], isr, leader: 0, leaderEpoch: 0, partitionEpoch: 0 }
  broker.replicaManager.getPartition(TP)!.applyLeaderRegistration(apm.register(TP, registration))
  client = new NetworkClient({ bootstrapServers: `127.0.0.1:${broker.port}`, requestTimeoutMs: 15_000 })
  follower = new KafkaWire(await connectTo(broker.port), 'follower-1')
  return { apm, log: broker.logManager.getLog(TOPIC, 0)! }
}

/** The follower's Fetch (v12: replicaId in the body) at `fetchOffset`, its log end. */
function followerFetch(fetchOffset: bigint, maxWaitMs = 0): Promise<FetchResponse> {
  return follower!.send(fetchCodec, 12, {
    replicaId: FOLLOWER,
    maxWaitMs,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic: TOPIC, topicId: ZERO_UUID, partitions: [{ partition: 0, currentLeaderEpoch: 0, fetchOffset, lastFetchedEpoch: -1, logStartOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: '',
  })
}

function recordsOf(response: FetchResponse): number {
  const records = response.responses[0].partitions[0].records as Buffer | null
  let n = 0
  for (const batch of batchesOf(records ?? Buffer.alloc(0))) n += batch.header.recordsCount
  return n
}

/** A produce whose settlement the test can watch. */
function producing(values: string[], options: { acks?: 0 | 1 | -1; timeoutMs?: number } = {}) {
  const state: { settled: boolean; offsets?: bigint[]; error?: { code: string } } = { settled: false }
  const done = produce(
    client!,
    TOPIC,
    values.map((value) => ({ value })),
    { acks: options.acks ?? -1, partition: 0, timeoutMs: options.timeoutMs ?? 10_000, retries: 0, allowAutoTopicCreation: false },
  ).then(
    (metadata) => {
      state.offsets = metadata.map((m) => m.offset)
      state.settled = true
    },
    (err: { code: string }) => {
      state.error = err
      state.settled = true
    },
  )
  return { state, done }
}

describe.each(['native', 'js'] as BackendName[])('acks=all to a partition with a follower (%s backend)', (backend) => {
  it("is answered once the follower's fetch says it has the records; the follower reads past the high watermark, zero-copy", async () => {
    const { log } = await replicatedBroker(backend, [0, FOLLOWER])
    const { state, done } = producing(['a', 'b'])
    // The follower's long poll at 0 is woken by the append and gets both records, though the
    // high watermark is still 0 (a consumer would get nothing yet).
    const first = await followerFetch(0n, 5000)
    expect(recordsOf(first)).toBe(2)
    expect(first.responses[0].partitions[0].highWatermark).toBe(0n)
    if (broker!.transfer !== null) expect(broker!.transfer.stats.bytes).toBeGreaterThan(0)
    await sleep(100)
    expect(state.settled).toBe(false) // the leader does not know the follower has them yet
    expect(log.highWatermark()).toBe(0n)
    // Its next fetch, at 2, tells it: the high watermark moves and the produce is answered.
    const second = await followerFetch(2n)
    expect(second.responses[0].partitions[0].errorCode).toBe(ErrorCode.NONE)
    await done
    expect(state).toMatchObject({ settled: true, offsets: [0n, 1n] })
    expect(log.highWatermark()).toBe(2n)
    expect(collectMetrics(broker!).delayedProduce).toMatchObject({ parkedTotal: 1, completed: 1, expired: 0 })
  })

  it('times out with REQUEST_TIMED_OUT when the follower never fetches', async () => {
    const { log } = await replicatedBroker(backend, [0, FOLLOWER])
    const started = Date.now()
    const { state, done } = producing(['a'], { timeoutMs: 300 })
    await done
    expect(state.error?.code).toBe('REQUEST_TIMED_OUT')
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    expect(log.logEndOffset()).toBe(1n) // appended on the leader, not acknowledged
    expect(log.highWatermark()).toBe(0n)
    expect(collectMetrics(broker!).delayedProduce).toMatchObject({ expired: 1, expiredPartitions: 1 })
  })

  it('a produce waiting for acks is dropped when its client goes away; the records stay appended', async () => {
    const { log } = await replicatedBroker(backend, [0, FOLLOWER])
    const { done } = producing(['a'], { timeoutMs: 60_000 })
    await waitFor('the produce to wait', () => broker!.replicaManager.delayedProduceStats().parked === 1)
    await client!.close()
    client = undefined
    await done
    await waitFor('the produce to be dropped', () => broker!.replicaManager.delayedProduceStats().dropped === 1)
    expect(broker!.replicaManager.delayedProduceStats()).toMatchObject({ parked: 0, completed: 0, expired: 0 })
    expect(log.logEndOffset()).toBe(1n)
  })

  it('min.insync.replicas: NOT_ENOUGH_REPLICAS before the append when the ISR is smaller; acks=1 still works', async () => {
    const { log } = await replicatedBroker(backend, [0], {}, { 'min.insync.replicas': '2' })
    const refused = producing(['a'])
    await refused.done
    expect(refused.state.error?.code).toBe('NOT_ENOUGH_REPLICAS')
    expect(log.logEndOffset()).toBe(0n) // nothing appended
    const one = producing(['b'], { acks: 1 })
    await one.done
    expect(one.state).toMatchObject({ settled: true, offsets: [0n] })
    expect(collectMetrics(broker!).isr.underMinIsrPartitions).toBe(1)
  })

  it("min.insync.replicas from the broker's default", async () => {
    const { log } = await replicatedBroker(backend, [0], { 'min.insync.replicas': '2' })
    const refused = producing(['a'])
    await refused.done
    expect(refused.state.error?.code).toBe('NOT_ENOUGH_REPLICAS')
    expect(log.logEndOffset()).toBe(0n)
  })

  it('NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrinks below min.insync.replicas while the produce waits', async () => {
    const { apm, log } = await replicatedBroker(backend, [0, FOLLOWER], { 'replica.lag.time.max.ms': '300' }, { 'min.insync.replicas': '2' })
    const { state, done } = producing(['a'], { timeoutMs: 10_000 })
    await done
    expect(state.error?.code).toBe('NOT_ENOUGH_REPLICAS_AFTER_APPEND')
    expect(apm.get(TP)).toMatchObject({ isr: [0], partitionEpoch: 1 })
    expect(log.highWatermark()).toBe(1n) // on the ISR that is left: the leader
  })

  it('the ISR shrinks after replica.lag.time.max.ms and grows when the follower catches up', async () => {
    // The follower never fetches: it was last caught up when the partition got its leader, after
    // this moment, so it cannot leave the ISR less than 300 ms after it (checked every 150 ms).
    const silentFrom = Date.now()
    const { apm, log } = await replicatedBroker(backend, [0, FOLLOWER], { 'replica.lag.time.max.ms': '300' })
    const one = producing(['a', 'b'], { acks: 1 })
    await one.done
    expect(one.state.offsets).toEqual([0n, 1n])
    await waitFor('the ISR to shrink', () => apm.get(TP)!.isr.length === 1)
    expect(Date.now() - silentFrom).toBeGreaterThanOrEqual(300)
    expect(broker!.replicaManager.getPartition(TP)!.isr).toEqual(new Set([0]))
    expect(log.highWatermark()).toBe(2n) // the leader alone holds the records
    // It catches up: its fetch at 0 gets the records, its fetch at 2 (the high watermark) brings it back.
    expect(recordsOf(await followerFetch(0n))).toBe(2)
    await followerFetch(2n)
    await waitFor('the ISR to grow', () => apm.get(TP)!.isr.length === 2)
    expect(apm.get(TP)).toMatchObject({ isr: [0, FOLLOWER], partitionEpoch: 2 })
    expect(collectMetrics(broker!).isr).toMatchObject({ shrinks: 1, expands: 1 })
    // In sync again: an acks=all produce waits for it, and is answered when it fetches.
    const all = producing(['c'])
    expect(recordsOf(await followerFetch(2n, 5000))).toBe(1)
    await followerFetch(3n)
    await all.done
    expect(all.state.offsets).toEqual([2n])
  })
})

describe('min.insync.replicas and replica.lag.time.max.ms as configs', () => {
  it('a topic value below 1 is refused (CreateTopics, AlterConfigs); DescribeConfigs shows the broker default', async () => {
    broker = await Broker.start(brokerConfigFrom({ listeners: '127.0.0.1:0', 'log.dirs': tempDir('ferrolog-replication-'), 'min.insync.replicas': '2', 'replica.lag.time.max.ms': '500' }), {
      logger: silentLogger,
    })
    await expect(broker.createTopic('bad', 1, { 'min.insync.replicas': '0' })).rejects.toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG })
    await broker.createTopic('good', 1, {})
    await expect(broker.alterTopicConfigs('good', { 'min.insync.replicas': 'two' }, false)).rejects.toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG })
    await broker.alterTopicConfigs('good', { 'min.insync.replicas': '1' }, false)
    expect(broker.topics.get('good')!.configs).toEqual({ 'min.insync.replicas': '1' })
    const entries = new Map(topicConfigEntries(broker, {}, true).map((e) => [e.name, e]))
    expect(entries.get('min.insync.replicas')).toMatchObject({ value: '2', configSource: ConfigSource.STATIC_BROKER_CONFIG })
    expect(topicConfigEntries(broker, { 'min.insync.replicas': '3' }, false).find((e) => e.name === 'min.insync.replicas')).toMatchObject({ value: '3' })
    expect(() => brokerConfigFrom({ 'min.insync.replicas': '0' })).toThrow(/min.insync.replicas must be an integer >= 1/)
    expect(broker.replicaManager.replicaLagTimeMaxMs).toBe(500)
  })
})
