/**
 * The cluster modules (registration, controller, metadata cache, topic admin, producer ids) on
 * the in-memory metadata store an in-process cluster uses, through the same cases
 * cluster.test.ts runs on a real etcd: leases that expire with an abandoned broker, a duplicate
 * node.id refused, one controller and a new one when it dies, failover with bumped epochs and a
 * partition without a live ISR led again when its broker returns, producer id blocks never
 * handed out twice.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ClusterMetadata, InMemoryMetadataStore, type ClusterMetadataOptions } from '../../ts/cluster/index.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { until } from '../helpers/etcd-cluster.js'

const TTL_MS = 1000

let store: InMemoryMetadataStore
let brokers: ClusterMetadata[]

beforeEach(() => {
  store = new InMemoryMetadataStore()
  brokers = []
})

afterEach(async () => {
  await Promise.all(brokers.map((b) => b.close().catch(() => {})))
  store.close()
})

function options(id: number, extra: Partial<ClusterMetadataOptions> = {}): ClusterMetadataOptions {
  return { store, brokerId: id, host: '127.0.0.1', port: 9000 + id, sessionTimeoutMs: TTL_MS, ...extra }
}

async function broker(id: number, extra: Partial<ClusterMetadataOptions> = {}): Promise<ClusterMetadata> {
  const b = await ClusterMetadata.start(options(id, extra))
  brokers.push(b)
  return b
}

const controllerOf = () => brokers.find((b) => b.controller.isActive)

describe('cluster metadata on the in-memory store', () => {
  it('registers brokers under a lease; an abandoned broker vanishes after its TTL; a second live node.id is refused', async () => {
    const b1 = await broker(1, { rack: 'a' })
    const b2 = await broker(2)
    await until('both brokers seen', () => b1.cache.liveBrokers().length === 2)
    expect(b1.cache.liveBrokers()).toEqual([
      { id: 1, host: '127.0.0.1', port: 9001, rack: 'a' },
      { id: 2, host: '127.0.0.1', port: 9002, rack: null },
    ])
    expect(b1.cache.broker(2)!.epoch).toBe(b2.registration.brokerEpoch)
    await expect(ClusterMetadata.start(options(2))).rejects.toMatchObject({ name: 'DuplicateBrokerRegistrationError', errorCode: ErrorCode.DUPLICATE_BROKER_REGISTRATION })

    const gone = new Promise<number>((r) => b1.cache.once('brokerUnregistered', r))
    brokers.splice(brokers.indexOf(b2), 1)
    await b2.abandon()
    expect(await gone).toBe(2)
    // the node.id is free again; the store stays open for the others
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

  it('fails over: the dead broker leaves ISRs, its partitions get leaders from the ISR with bumped epochs; no live ISR -> -1 until it returns', async () => {
    const b1 = await broker(1)
    await broker(2)
    await broker(3)
    await until('three brokers', () => b1.cache.liveBrokers().length === 3)
    await until('a controller', controllerOf)
    await b1.admin.createTopic({
      name: 'ha',
      assignment: [
        [3, 1, 2],
        [1, 3, 2],
        [3, 2, 1],
      ],
    })
    const solo = await b1.admin.createTopic({ name: 'solo', assignment: [[3]] })
    await b1.cache.waitForRevision(solo.revision)

    const b3 = brokers.find((b) => b.brokerId === 3)!
    brokers.splice(brokers.indexOf(b3), 1)
    await b3.abandon()
    await until(
      'new leaders',
      () => b1.cache.partition('ha', 0)!.leader === 1 && b1.cache.partition('ha', 2)!.leader === 2 && b1.cache.partition('ha', 1)!.isr.length === 2 && b1.cache.partition('solo', 0)!.leader === -1,
      TTL_MS + 5000,
    )
    expect(b1.cache.partition('ha', 0)).toEqual({ replicas: [3, 1, 2], isr: [1, 2], leader: 1, leaderEpoch: 1, partitionEpoch: 1 })
    expect(b1.cache.partition('ha', 1)).toEqual({ replicas: [1, 3, 2], isr: [1, 2], leader: 1, leaderEpoch: 0, partitionEpoch: 1 })
    expect(b1.cache.partition('ha', 2)).toEqual({ replicas: [3, 2, 1], isr: [2, 1], leader: 2, leaderEpoch: 1, partitionEpoch: 1 })
    expect(b1.cache.partition('solo', 0)).toEqual({ replicas: [3], isr: [3], leader: -1, leaderEpoch: 1, partitionEpoch: 1 })

    await broker(3)
    await until('solo led again', () => b1.cache.partition('solo', 0)!.leader === 3)
    expect(b1.cache.partition('solo', 0)).toEqual({ replicas: [3], isr: [3], leader: 3, leaderEpoch: 2, partitionEpoch: 2 })
    expect(b1.cache.partition('ha', 0)!.leader).toBe(1)
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
