/**
 * KIP-392 replica selection (ts/replica/replica-selector.ts) on a partition described by a fake
 * replica view: leader 1 in rack a, followers 2 and 3 in rack b, follower 4 in rack c.
 */
import { describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { LeaderSelector, preferredReadReplicaOf, RackAwareReplicaSelector, type LeaderReplicaState, type ReplicaView } from '../../ts/replica/replica-selector.js'
import { ReplicaManager } from '../../ts/replica/replica-manager.js'
import { silentLogger } from '../../ts/logger.js'
import { LogManager } from '../../ts/storage/log-manager.js'
import { tempDir } from '../helpers/tmp.js'

const TP = { topic: 't', partition: 0 }

function replica(brokerId: number, rack: string | null, logEndOffset: bigint, timeSinceLastCaughtUpMs = 0, logStartOffset = 0n): ReplicaView {
  return { brokerId, rack, logStartOffset, logEndOffset, timeSinceLastCaughtUpMs }
}

function partition(followers: ReplicaView[], isr: number[] = [1, ...followers.map((f) => f.brokerId)]): LeaderReplicaState {
  return { leader: replica(1, 'a', 100n), followers, isr: new Set(isr) }
}

const rackAware = new RackAwareReplicaSelector()
const consumer = (rackId: string) => ({ rackId, clientId: 'c' })

describe('RackAwareReplicaSelector', () => {
  const followers = [replica(2, 'b', 90n), replica(3, 'b', 95n), replica(4, 'c', 100n)]

  it('a consumer with no rack reads from the leader', () => {
    expect(preferredReadReplicaOf(rackAware, TP, consumer(''), 10n, partition(followers))).toBe(-1)
  })

  it('a consumer in a rack with no replica reads from the leader', () => {
    expect(preferredReadReplicaOf(rackAware, TP, consumer('z'), 10n, partition(followers))).toBe(-1)
  })

  it('a consumer in the leader rack reads from the leader', () => {
    const state = partition([...followers, replica(5, 'a', 100n)])
    expect(preferredReadReplicaOf(rackAware, TP, consumer('a'), 10n, state)).toBe(-1)
  })

  it('the most caught-up in-sync follower of the consumer rack is preferred', () => {
    expect(preferredReadReplicaOf(rackAware, TP, consumer('b'), 10n, partition(followers))).toBe(3)
    expect(preferredReadReplicaOf(rackAware, TP, consumer('c'), 10n, partition(followers))).toBe(4)
  })

  it('between equal log ends, the one caught up more recently is preferred', () => {
    const state = partition([replica(2, 'b', 95n, 50), replica(3, 'b', 95n, 10)])
    expect(preferredReadReplicaOf(rackAware, TP, consumer('b'), 10n, state)).toBe(3)
  })

  it('a follower out of the ISR is no candidate', () => {
    expect(preferredReadReplicaOf(rackAware, TP, consumer('b'), 10n, partition(followers, [1, 2, 4]))).toBe(2)
    expect(preferredReadReplicaOf(rackAware, TP, consumer('b'), 10n, partition(followers, [1, 4]))).toBe(-1)
  })

  it('a follower whose log does not hold the fetch offset is no candidate', () => {
    // 3 ends at 95, 2 at 90: offset 93 only on 3; offset 97 on neither (the leader then).
    expect(preferredReadReplicaOf(rackAware, TP, consumer('b'), 93n, partition(followers))).toBe(3)
    expect(preferredReadReplicaOf(rackAware, TP, consumer('b'), 97n, partition(followers))).toBe(-1)
    const trimmed = partition([replica(2, 'b', 90n, 0, 0n), replica(3, 'b', 95n, 0, 50n)])
    expect(preferredReadReplicaOf(rackAware, TP, consumer('b'), 20n, trimmed)).toBe(2)
  })

  it('the selector sees the leader among the candidates', () => {
    const seen: number[][] = []
    const spy = { select: (_tp: unknown, _c: unknown, view: { replicas: readonly ReplicaView[]; leader: ReplicaView }) => (seen.push(view.replicas.map((r) => r.brokerId)), view.leader) }
    expect(preferredReadReplicaOf(spy, TP, consumer('b'), 92n, partition(followers))).toBe(-1)
    expect(seen).toEqual([[1, 3, 4]])
  })
})

describe('LeaderSelector', () => {
  it('always reads from the leader, whatever the rack', () => {
    const followers = [replica(2, 'b', 100n)]
    expect(preferredReadReplicaOf(new LeaderSelector(), TP, consumer('b'), 10n, partition(followers))).toBe(-1)
  })
})

describe('ReplicaManager with a replica selector', () => {
  it('a single-replica partition always reads from its leader, whatever the selector', async () => {
    const manager = await LogManager.open({ dataDir: tempDir('ferrolog-selector-'), backend: 'js', highWatermark: 'log-end', retentionCheckIntervalMs: 0, logger: silentLogger })
    try {
      const log = await manager.getOrCreateLog(TP.topic, 0)
      log.append([{ value: Buffer.from('x') }])
      const rm = new ReplicaManager(manager, { brokerId: 0, replicaSelector: rackAware })
      const params = { replicaId: -1, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false, clientMetadata: consumer('a') }
      const [r] = rm.readFromLocalLog(params, [{ ...TP, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }])
      expect(r.errorCode).toBe(ErrorCode.NONE)
      expect(r.preferredReadReplica).toBeUndefined()
      expect(r.info!.records.size).toBeGreaterThan(0)
    } finally {
      await manager.close()
    }
  })

  it('a consumer the selector sends to a follower gets preferredReadReplica and no records', async () => {
    const manager = await LogManager.open({ dataDir: tempDir('ferrolog-selector-'), backend: 'js', highWatermark: 'log-end', retentionCheckIntervalMs: 0, logger: silentLogger })
    try {
      const log = await manager.getOrCreateLog(TP.topic, 0)
      log.append([{ value: Buffer.from('x') }])
      const rm = new ReplicaManager(manager, { brokerId: 0, replicaSelector: rackAware })
      rm.leaderReplicaState = () => partition([replica(2, 'b', 1n)])
      const consumerParams = { replicaId: -1, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false, clientMetadata: consumer('b') }
      const [r] = rm.readFromLocalLog(consumerParams, [{ ...TP, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }])
      expect(r.errorCode).toBe(ErrorCode.NONE)
      expect(r.preferredReadReplica).toBe(2)
      expect(r.info).toBeNull()
      // A follower fetch is never redirected.
      const [f] = rm.readFromLocalLog({ ...consumerParams, replicaId: 2 }, [{ ...TP, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }])
      expect(f.preferredReadReplica).toBeUndefined()
      expect(f.info!.records.size).toBeGreaterThan(0)
    } finally {
      await manager.close()
    }
  })
})
