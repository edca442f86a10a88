/**
 * The cluster modules (registration, controller, metadata cache, topic admin, AlterPartition,
 * producer ids) through one list of cases, run on both metadata stores a broker can use: a real
 * etcd (helpers/etcd.ts, EtcdMetadataStore) and the in-memory store an in-process cluster shares
 * (InMemoryMetadataStore), as metadata-store-conformance.test.ts runs the stores themselves.
 * What only etcd has (a server that can be SIGKILLed and restarted, a history compacted away) is
 * tested on etcd alone, below the shared cases.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ClusterMetadata, EtcdMetadataStore, InMemoryMetadataStore, MetadataCache, type ClusterMetadataOptions } from '../../ts/cluster/index.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { PartitionChange } from '../../ts/replica/partition-registration.js'
import { startEtcd, type EtcdServer } from '../helpers/etcd.js'
import { until } from '../helpers/etcd-cluster.js'

const TTL_MS = 1000

let brokers: ClusterMetadata[]

/** Where the brokers of a case keep their metadata: opened before each case, closed after it. */
interface StoreUnderTest {
  open(): Promise<void>
  /** The options that point a broker at the store. */
  options(): Partial<ClusterMetadataOptions>
  close(): Promise<void>
  /**
   * Bounds on how long a lease takes to expire, checked on etcd (whose cases always had them);
   * the in-memory store's cases never had them (a broker's last keep-alive may be a third of
   * the TTL before it is abandoned).
   */
  checksLeaseTiming: boolean
}

let etcd: EtcdServer
let clusterId: string
let seq = 0
const onEtcd: StoreUnderTest = {
  async open() {
    etcd = await startEtcd()
    clusterId = `t${++seq}`
  },
  options: () => ({ cluster: etcd.clusterUrl, clusterId, requestTimeoutMs: 2000 }),
  close: () => etcd.close(),
  checksLeaseTiming: true,
}

let memory: InMemoryMetadataStore
const inMemory: StoreUnderTest = {
  open() {
    memory = new InMemoryMetadataStore()
    return Promise.resolve()
  },
  options: () => ({ store: memory }),
  close() {
    memory.close()
    return Promise.resolve()
  },
  checksLeaseTiming: false,
}

const stores: Array<[string, StoreUnderTest]> = [
  ['a real etcd', onEtcd],
  ['the in-memory store', inMemory],
]

function options(store: StoreUnderTest, id: number, extra: Partial<ClusterMetadataOptions> = {}): ClusterMetadataOptions {
  return { ...store.options(), brokerId: id, host: '127.0.0.1', port: 9000 + id, sessionTimeoutMs: TTL_MS, ...extra }
}

const controllerOf = () => brokers.find((b) => b.controller.isActive)

/**
 * Opens `store` before each case of the describe it is called in and closes it, with the case's
 * brokers, after; what it returns starts a broker on the store.
 */
function brokersOn(store: StoreUnderTest) {
  beforeEach(async () => {
    await store.open()
    brokers = []
  })
  afterEach(async () => {
    await Promise.all(brokers.map((b) => b.close().catch(() => {})))
    await store.close()
  })
  return async (id: number, extra: Partial<ClusterMetadataOptions> = {}, configure?: (cm: ClusterMetadata) => void): Promise<ClusterMetadata> => {
    const b = await ClusterMetadata.start(options(store, id, extra), configure)
    brokers.push(b)
    return b
  }
}

describe.each(stores)('cluster metadata on %s', (_name, store) => {
  const broker = brokersOn(store)

  it('registers brokers under a lease; an abandoned broker vanishes after its TTL; a second live node.id is refused', async () => {
    const b1 = await broker(1, { rack: 'a' })
    const b2 = await broker(2)
    await until('both brokers seen', () => b1.cache.liveBrokers().length === 2)
    expect(b1.cache.liveBrokers()).toEqual([
      { id: 1, host: '127.0.0.1', port: 9001, rack: 'a' },
      { id: 2, host: '127.0.0.1', port: 9002, rack: null },
    ])
    expect(b1.cache.broker(2)!.epoch).toBe(b2.registration.brokerEpoch)

    await expect(ClusterMetadata.start(options(store, 2))).rejects.toMatchObject({
      name: 'DuplicateBrokerRegistrationError',
      errorCode: ErrorCode.DUPLICATE_BROKER_REGISTRATION,
      message: expect.stringContaining('node.id 2 is already registered'),
    })

    const gone = new Promise<number>((r) => b1.cache.once('brokerUnregistered', r))
    const t0 = Date.now()
    brokers.splice(brokers.indexOf(b2), 1)
    await b2.abandon()
    expect(await gone).toBe(2)
    if (store.checksLeaseTiming) {
      const elapsed = Date.now() - t0
      expect(elapsed).toBeGreaterThanOrEqual(TTL_MS - 200)
      expect(elapsed).toBeLessThan(TTL_MS + 1500)
    }
    // the node.id is free again
    await broker(2)
    await until('broker 2 back', () => b1.cache.isAlive(2))
  })

  it('elects one controller and another when it dies', async () => {
    await broker(1)
    await broker(2)
    await broker(3)
    const first = await until('a controller', controllerOf)
    expect(brokers.filter((b) => b.controller.isActive)).toHaveLength(1)
    for (const b of brokers) await until('all caches agree', () => b.cache.controllerId() === first.brokerId)
    const epoch = first.controller.epoch!
    brokers.splice(brokers.indexOf(first), 1)
    await first.abandon()
    const second = await until('a new controller', () => controllerOf(), TTL_MS + 4000)
    expect(second.brokerId).not.toBe(first.brokerId)
    expect(second.controller.epoch! > epoch).toBe(true)
  })

  it('creates topics with rack-aware placement, refuses what Kafka refuses, creates partitions, alters configs, deletes; every broker sees it', async () => {
    const events = new Map<number, PartitionChange[]>()
    const created: string[] = []
    for (let id = 1; id <= 6; id++) {
      await broker(id, { rack: `rack${id % 3}` }, (cm) => {
        events.set(id, [])
        cm.cache.on('partitionChanges', (c) => events.get(id)!.push(...c))
        if (id === 1) cm.cache.on('topicCreated', (t) => created.push(t.name))
      })
    }
    const [b1, b2] = brokers
    await until('six brokers', () => b1.cache.liveBrokers().length === 6)
    const res = await b2.admin.createTopic({ name: 'orders', numPartitions: 12, replicationFactor: 3, configs: { 'cleanup.policy': 'compact' } })
    for (const b of brokers) await b.cache.waitForRevision(res.revision)
    const topic = b1.cache.topic('orders')!
    expect(topic.topicId.equals(res.topicId)).toBe(true)
    expect(topic.configs).toEqual({ 'cleanup.policy': 'compact' })
    expect(created).toEqual(['orders'])
    for (let p = 0; p < 12; p++) {
      const reg = b1.cache.partition('orders', p)!
      expect(new Set(reg.replicas.map((id) => id % 3)).size).toBe(3) // distinct racks
      expect(reg).toEqual({ replicas: reg.replicas, isr: reg.replicas, leader: reg.replicas[0], leaderEpoch: 0, partitionEpoch: 0 })
    }
    // each broker got exactly its partitions' changes
    for (const b of brokers) {
      const mine = b1.cache
        .partitionStates()
        .filter((p) => p.registration.replicas.includes(b.brokerId))
        .map((p) => p.partition)
      expect(
        events
          .get(b.brokerId)!
          .map((c) => c.partition)
          .sort((x, y) => x - y),
      ).toEqual(mine)
    }

    await expect(b1.admin.createTopic({ name: 'orders', numPartitions: 1, replicationFactor: 1 })).rejects.toMatchObject({ errorCode: ErrorCode.TOPIC_ALREADY_EXISTS })
    await expect(b1.admin.createTopic({ name: 'big', numPartitions: 1, replicationFactor: 7 })).rejects.toMatchObject({ errorCode: ErrorCode.INVALID_REPLICATION_FACTOR })
    await expect(b1.admin.createTopic({ name: 'bad/name' })).rejects.toMatchObject({ errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION })
    await expect(b1.admin.createTopic({ name: 'x', assignment: [[1, 1]] })).rejects.toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT })
    await expect(b1.admin.createTopic({ name: 'x', assignment: [[1, 9]] })).rejects.toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT })
    const explicit = await b1.admin.createTopic({
      name: 'explicit',
      assignment: [
        [3, 1],
        [1, 2],
      ],
    })
    await b1.cache.waitForRevision(explicit.revision)
    expect(b1.cache.partition('explicit', 0)).toMatchObject({ replicas: [3, 1], leader: 3 })

    // two brokers racing for one name: one wins
    const race = await Promise.allSettled([b1.admin.createTopic({ name: 'race' }), b2.admin.createTopic({ name: 'race' })])
    expect(race.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect(race.find((r) => r.status === 'rejected')).toMatchObject({ reason: { errorCode: ErrorCode.TOPIC_ALREADY_EXISTS } })

    await expect(b1.admin.createPartitions('orders', 12)).rejects.toMatchObject({ errorCode: ErrorCode.INVALID_PARTITIONS })
    const rev = await b1.admin.createPartitions('orders', 15)
    await b2.cache.waitForRevision(rev)
    expect(b2.cache.topic('orders')!.assignment).toHaveLength(15)
    expect(b2.cache.partition('orders', 14)!.replicas).toHaveLength(3)

    const cfg = await b2.admin.alterTopicConfigs('orders', { 'retention.ms': '1000', 'cleanup.policy': null })
    await b1.cache.waitForRevision(cfg)
    expect(b1.cache.topic('orders')!.configs).toEqual({ 'retention.ms': '1000' })

    const deleted = new Promise<string>((r) => b1.cache.once('topicDeleted', (t) => r(t.name)))
    const before = events.get(3)!.length
    const del = await b2.admin.deleteTopic('orders')
    await b1.cache.waitForRevision(del)
    await brokers[2].cache.waitForRevision(del)
    expect(await deleted).toBe('orders')
    expect(b1.cache.topic('orders')).toBeUndefined()
    expect(b1.cache.partition('orders', 0)).toBeUndefined()
    expect(
      events
        .get(3)!
        .slice(before)
        .every((c) => c.topic === 'orders' && c.registration === null),
    ).toBe(true)
    await expect(b2.admin.deleteTopic('orders')).rejects.toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION })
  })

  it('fails over: the dead broker leaves ISRs, its partitions get leaders from the ISR with bumped epochs; no live ISR -> -1 until it returns', async () => {
    const b1 = await broker(1)
    await broker(2)
    await broker(3)
    await until('three brokers', () => b1.cache.liveBrokers().length === 3)
    await until('a controller', controllerOf)
    const t = await b1.admin.createTopic({
      name: 'ha',
      assignment: [
        [3, 1, 2],
        [1, 3, 2],
        [3, 2, 1],
      ],
    })
    const solo = await b1.admin.createTopic({ name: 'solo', assignment: [[3]] })
    await b1.cache.waitForRevision(solo.revision)
    void t

    // broker 3 dies (the controller if it was one is elected again)
    const b3 = brokers.find((b) => b.brokerId === 3)!
    brokers.splice(brokers.indexOf(b3), 1)
    const t0 = Date.now()
    await b3.abandon()
    await until(
      'new leaders',
      () => b1.cache.partition('ha', 0)!.leader === 1 && b1.cache.partition('ha', 2)!.leader === 2 && b1.cache.partition('ha', 1)!.isr.length === 2 && b1.cache.partition('solo', 0)!.leader === -1,
      TTL_MS + 5000,
    )
    if (store.checksLeaseTiming) expect(Date.now() - t0).toBeLessThan(TTL_MS + 3000)
    expect(b1.cache.partition('ha', 0)).toEqual({ replicas: [3, 1, 2], isr: [1, 2], leader: 1, leaderEpoch: 1, partitionEpoch: 1 })
    expect(b1.cache.partition('ha', 1)).toEqual({ replicas: [1, 3, 2], isr: [1, 2], leader: 1, leaderEpoch: 0, partitionEpoch: 1 })
    expect(b1.cache.partition('ha', 2)).toEqual({ replicas: [3, 2, 1], isr: [2, 1], leader: 2, leaderEpoch: 1, partitionEpoch: 1 })
    expect(b1.cache.partition('solo', 0)).toEqual({ replicas: [3], isr: [3], leader: -1, leaderEpoch: 1, partitionEpoch: 1 })

    // broker 3 comes back: it leads the partition whose ISR holds it, not the others (they have other leaders)
    const back = await broker(3)
    await until('solo led again', () => b1.cache.partition('solo', 0)!.leader === 3)
    expect(b1.cache.partition('solo', 0)).toEqual({ replicas: [3], isr: [3], leader: 3, leaderEpoch: 2, partitionEpoch: 2 })
    expect(b1.cache.partition('ha', 0)!.leader).toBe(1)
    expect(
      back.cache
        .partitionsFor(3)
        .map((p) => `${p.topic}-${p.partition}`)
        .sort(),
    ).toEqual(['ha-0', 'ha-1', 'ha-2', 'solo-0'])
  })

  it('AlterPartition is a compare-and-swap: stale epochs, ineligible members and a fenced leader are refused; a concurrent controller change is not lost', async () => {
    const b1 = await broker(1)
    await broker(2)
    await broker(3)
    await until('a controller', controllerOf)
    const { topicId, revision } = await b1.admin.createTopic({ name: 'isr', assignment: [[1, 2, 3]] })
    await b1.cache.waitForRevision(revision)
    const tp = { topic: 'isr', partition: 0, topicId }
    const apm = b1.alterPartitionManager

    const shrunk = await apm.submit(tp, { leaderEpoch: 0, partitionEpoch: 0, isr: [1, 2] })
    expect(shrunk).toEqual({ replicas: [1, 2, 3], isr: [1, 2], leader: 1, leaderEpoch: 0, partitionEpoch: 1 })
    await expect(apm.submit(tp, { leaderEpoch: 0, partitionEpoch: 0, isr: [1] })).rejects.toMatchObject({ name: 'AlterPartitionError', errorCode: ErrorCode.INVALID_UPDATE_VERSION })
    await expect(apm.submit(tp, { leaderEpoch: -1 + 0, partitionEpoch: 1, isr: [1] })).rejects.toMatchObject({ errorCode: ErrorCode.FENCED_LEADER_EPOCH })
    await expect(apm.submit(tp, { leaderEpoch: 0, partitionEpoch: 1, isr: [2, 3] })).rejects.toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST })
    await expect(brokers[1].alterPartitionManager.submit(tp, { leaderEpoch: 0, partitionEpoch: 1, isr: [1, 2] })).rejects.toMatchObject({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER })
    await expect(apm.submit({ ...tp, partition: 5 }, { leaderEpoch: 0, partitionEpoch: 1, isr: [1] })).rejects.toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION })

    // broker 3 dies while the leader drops 2 from the ISR: the controller's change (3 out) and the
    // leader's (2 out) race; the loser retries (the controller by itself, the leader on
    // INVALID_UPDATE_VERSION / INELIGIBLE_REPLICA from the newer registration) and both are applied
    const b3 = brokers.find((b) => b.brokerId === 3)!
    brokers.splice(brokers.indexOf(b3), 1)
    const { revision: r2 } = await b1.admin.createTopic({ name: 'race', assignment: [[1, 2, 3]] })
    await b1.cache.waitForRevision(r2)
    const rtp = { topic: 'race', partition: 0, topicId: b1.cache.topic('race')!.topicId }
    const closing = b3.close()
    let view = b1.cache.partition('race', 0)!
    let outcome
    for (let attempt = 0; ; attempt++) {
      try {
        outcome = await apm.submit(rtp, { leaderEpoch: view.leaderEpoch, partitionEpoch: view.partitionEpoch, isr: view.isr.filter((b) => b !== 2) })
        break
      } catch (e) {
        expect([ErrorCode.INVALID_UPDATE_VERSION, ErrorCode.INELIGIBLE_REPLICA]).toContain((e as { errorCode: number }).errorCode)
        if (attempt > 50) throw e
        const seen = view.partitionEpoch
        await until('a newer registration', () => b1.cache.partition('race', 0)!.partitionEpoch > seen || !b1.cache.isAlive(3))
        view = b1.cache.partition('race', 0)!
      }
    }
    await closing
    await until('both changes', () => sameIsr(b1.cache.partition('race', 0)!.isr, [1]))
    expect(b1.cache.partition('race', 0)).toEqual({ replicas: [1, 2, 3], isr: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 2 })
    void outcome

    // 3 is gone: it cannot be proposed; and a closed (fenced) broker changes nothing
    await expect(apm.submit(rtp, { leaderEpoch: 0, partitionEpoch: 2, isr: [1, 3] })).rejects.toMatchObject({ errorCode: ErrorCode.INELIGIBLE_REPLICA })
    await expect(b3.alterPartitionManager.submit(rtp, { leaderEpoch: 0, partitionEpoch: 2, isr: [1] })).rejects.toMatchObject({ errorCode: ErrorCode.STALE_BROKER_EPOCH })
  })

  it('the controller never overwrites a leader AlterPartition it had not seen: its CAS fails, it reads again and keeps both changes', async () => {
    for (let id = 1; id <= 4; id++) await broker(id)
    const ctl = await until('a controller', controllerOf)
    const [leader, member, victim] = brokers.filter((b) => b !== ctl).map((b) => b.brokerId)
    const { topicId, revision } = await ctl.admin.createTopic({ name: 'lost-update', assignment: [[leader, member, victim]] })
    for (const b of brokers) await b.cache.waitForRevision(revision)
    // the controller's view stays at partition epoch 0 ...
    const stale = ctl.cache.partitionStates()
    // ... while the leader drops `member` (partition epoch 1), then `victim` dies
    const lb = brokers.find((b) => b.brokerId === leader)!
    await lb.alterPartitionManager.submit({ topic: 'lost-update', partition: 0, topicId }, { leaderEpoch: 0, partitionEpoch: 0, isr: [leader, victim] })
    await until('controller saw it', () => ctl.cache.partition('lost-update', 0)!.partitionEpoch === 1)
    const real = ctl.cache.partitionStates.bind(ctl.cache)
    let served = 0
    ctl.cache.partitionStates = () => {
      if (served > 0 || ctl.cache.isAlive(victim)) return real()
      served++
      return stale // the pass that handles the death computes from partition epoch 0
    }
    const vb = brokers.find((b) => b.brokerId === victim)!
    brokers.splice(brokers.indexOf(vb), 1)
    await vb.close()
    await until('victim out of the ISR', () => lb.cache.partition('lost-update', 0)!.partitionEpoch === 2)
    expect(served).toBe(1)
    // a blind write from the stale view would have left [leader, member]
    expect(lb.cache.partition('lost-update', 0)).toEqual({ replicas: [leader, member, victim], isr: [leader], leader, leaderEpoch: 0, partitionEpoch: 2 })
  })

  it('controlled shutdown moves leadership away and takes the broker out of the ISRs before it resolves', async () => {
    const b1 = await broker(1)
    const b2 = await broker(2)
    await broker(3)
    await until('a controller', controllerOf)
    await b1.admin.createTopic({
      name: 'cs',
      assignment: [
        [2, 1, 3],
        [2, 3, 1],
        [1, 2, 3],
      ],
    })
    const { revision } = await b1.admin.createTopic({ name: 'cs-solo', assignment: [[2]] })
    await b1.cache.waitForRevision(revision)
    await b2.controlledShutdown(10_000)
    // done is written after the moves: once b1's cache (applying in revision order) has it, it has them
    await until('done seen', () => b1.cache.shutdownRequests().find((r) => r.brokerId === 2)?.done)
    expect(b1.cache.partition('cs', 0)).toEqual({ replicas: [2, 1, 3], isr: [1, 3], leader: 1, leaderEpoch: 1, partitionEpoch: 1 })
    expect(b1.cache.partition('cs', 1)).toEqual({ replicas: [2, 3, 1], isr: [3, 1], leader: 3, leaderEpoch: 1, partitionEpoch: 1 })
    expect(b1.cache.partition('cs', 2)).toEqual({ replicas: [1, 2, 3], isr: [1, 3], leader: 1, leaderEpoch: 0, partitionEpoch: 1 })
    // the last ISR member: no other leader to move to (Kafka: offline until it returns)
    expect(b1.cache.partition('cs-solo', 0)).toEqual({ replicas: [2], isr: [2], leader: -1, leaderEpoch: 1, partitionEpoch: 1 })
  })

  it('hands out producer id blocks without a duplicate under concurrent allocators', async () => {
    const bs = [await broker(1), await broker(2), await broker(3)]
    const ids = await Promise.all(
      bs.map(async (b) => {
        const out: bigint[] = []
        for (let i = 0; i < 2500; i++) out.push(await b.producerIds.generateProducerId())
        return out
      }),
    )
    const blocks = await Promise.all(Array.from({ length: 10 }, (_, i) => bs[i % 3].producerIds.allocateBlock()))
    const all = [...ids.flat(), ...blocks.flatMap((b) => Array.from({ length: b.size }, (_, i) => b.firstProducerId + BigInt(i)))]
    expect(new Set(all).size).toBe(all.length)
    expect(all.length).toBe(7500 + 10_000)
  })

  it('controlled shutdown moves leadership away before it resolves; producer id blocks are never handed out twice', async () => {
    const b1 = await broker(1)
    const b2 = await broker(2)
    await until('a controller', controllerOf)
    const t = await b1.admin.createTopic({ name: 'moving', assignment: [[2, 1]] })
    await b2.cache.waitForRevision(t.revision)
    await b2.controlledShutdown(10_000)
    expect(b2.cache.partition('moving', 0)).toMatchObject({ leader: 1, isr: [1] })

    const ids = await Promise.all(
      [b1, b2].map(async (b) => {
        const out: bigint[] = []
        for (let i = 0; i < 2500; i++) out.push(await b.producerIds.generateProducerId())
        return out
      }),
    )
    expect(new Set(ids.flat()).size).toBe(5000)
  })
})

describe('cluster metadata on a real etcd, what only etcd has', () => {
  const broker = brokersOn(onEtcd)

  it('survives etcd SIGKILL and restart: caches resume, registrations come back, changes flow again', async () => {
    const b1 = await broker(1)
    const b2 = await broker(2)
    await until('a controller', controllerOf)
    const { revision } = await b1.admin.createTopic({ name: 'before', assignment: [[1, 2]] })
    await b2.cache.waitForRevision(revision)
    const fenced = new Promise((r) => b1.registration.once('fenced', r))
    const epoch = b1.registration.brokerEpoch!
    await etcd.kill()
    await fenced // etcd away for more than the TTL
    await new Promise((r) => setTimeout(r, 300))
    await etcd.start()
    await until('re-registered', () => b1.registration.brokerEpoch !== null && b2.registration.brokerEpoch !== null, 10_000)
    expect(b1.registration.brokerEpoch! > epoch).toBe(true)
    const after = await until('a controller again', controllerOf, 10_000)
    const created = await after.admin.createTopic({ name: 'after', assignment: [[2, 1]] })
    await b1.cache.waitForRevision(created.revision)
    await b2.cache.waitForRevision(created.revision)
    expect(b1.cache.topics().map((t) => t.name)).toEqual(['after', 'before'])
    // Every cache shows each broker with the epoch of its registration now. (Not compared at one
    // instant: with a 1 s lease, a loaded machine may fence and re-register a broker meanwhile,
    // and the cache hears of the new registration a watch event later.)
    await until(
      "both brokers live in every cache, at their registration's epoch",
      () => b1.cache.liveBrokers().length === 2 && b2.cache.liveBrokers().length === 2 && b1.registration.brokerEpoch !== null && b2.cache.broker(1)?.epoch === b1.registration.brokerEpoch,
    )
    // nothing moved: the brokers came back as themselves, not as new processes
    expect(b1.cache.partition('before', 0)).toMatchObject({ leader: 1, leaderEpoch: 0 })
  })
})

function sameIsr(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x))
}

describe('metadata cache over a compacted history', () => {
  const broker = brokersOn(onEtcd)

  it('loads everything again when the revision it would resume from was compacted, emitting what changed', async () => {
    const admin = await broker(1)
    await admin.admin.createTopic({ name: 'old', assignment: [[1]] })
    const store = EtcdMetadataStore.connect({ cluster: etcd.clusterUrl, clusterId, requestTimeoutMs: 2000 })
    const cache = new MetadataCache({ store, brokerId: 1, resumeDelayMs: 1500 })
    const seen: string[] = []
    const errors: string[] = []
    cache.on('watchError', (e) => errors.push(e.message))
    cache.on('topicCreated', (t) => seen.push(`+${t.name}`))
    cache.on('topicDeleted', (t) => seen.push(`-${t.name}`))
    cache.on('partitionChanges', (cs) => seen.push(...cs.map((c) => `${c.topic}-${c.partition}:${c.registration ? c.registration.leader : 'gone'}`)))
    try {
      await cache.start()
      expect(seen).toEqual(['+old', 'old-0:1'])
      await etcd.restart()
      // while the cache waits to resume: changes, then the history compacted away
      await until('re-registered', () => admin.registration.brokerEpoch !== null, 10_000)
      await admin.admin.deleteTopic('old')
      const { revision } = await admin.admin.createTopic({ name: 'new', assignment: [[1]] })
      await store.compact(revision)
      await cache.waitForRevision(revision, 10_000)
      expect(seen.slice(2)).toEqual(['+new', 'new-0:1', 'old-0:gone', '-old'])
      expect(errors.join('\n')).toMatch(/Watcher canceled/) // etcd refused the compacted revision: the reload path
      expect(cache.topics().map((t) => t.name)).toEqual(['new'])
      // and it watches again afterwards
      const more = await admin.admin.createTopic({ name: 'more', assignment: [[1]] })
      await cache.waitForRevision(more.revision)
      expect(cache.topic('more')).toBeDefined()
    } finally {
      await cache.close()
      store.close()
    }
  })
})
