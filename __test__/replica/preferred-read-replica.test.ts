/**
 * KIP-392 on the leader, end to end through the ReplicaManager with real logs: with Kafka's
 * RackAwareReplicaSelector (replica.selector.class) and the brokers' racks, a consumer that
 * sends its rack is sent to the in-sync follower of its rack once that follower holds the fetch
 * offset; a consumer of the leader's rack, one without a rack, and every consumer under the
 * default LeaderSelector read from the leader. The broker setting takes Kafka's class names.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../ts/logger.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import type { FetchPartitionResult } from '../../ts/replica/fetch-params.js'
import { ReplicaManager } from '../../ts/replica/replica-manager.js'
import { LeaderSelector, RackAwareReplicaSelector, type ReplicaSelector } from '../../ts/replica/replica-selector.js'
import { brokerConfigFrom, ConfigError } from '../../ts/server/config.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { LogManager } from '../../ts/storage/log-manager.js'
import { InMemoryAlterPartitionManager } from '../helpers/alter-partition.js'
import { tempDir } from '../helpers/tmp.js'

const TP = { topic: 't', partition: 0 }
const RACKS = new Map([
  [0, 'rack-a'],
  [1, 'rack-b'],
  [2, 'rack-c'],
])

let manager: LogManager | undefined
afterEach(async () => {
  await manager?.close()
  manager = undefined
})

async function leaderOf(backend: BackendName, replicaSelector: ReplicaSelector) {
  manager = await LogManager.open({ dataDir: tempDir('ferrolog-kip392-'), backend, highWatermark: 'managed', retentionCheckIntervalMs: 0, logger: silentLogger })
  await manager.getOrCreateLog(TP.topic, TP.partition)
  const apm = new InMemoryAlterPartitionManager()
  const rm = new ReplicaManager(manager, { brokerId: 0, alterPartitionManager: apm, replicaLagTimeMaxMs: 60_000, replicaSelector, rackOf: (id) => RACKS.get(id) ?? null })
  const p = rm.getPartition(TP)!
  p.applyLeaderRegistration(apm.register(TP, { replicas: [0, 1, 2], isr: [0, 1, 2], leader: 0, leaderEpoch: 1, partitionEpoch: 0 }))
  await rm.appendRecords(TP, buildBatch(['a', 'b', 'c'].map((value) => ({ value }))), 1)
  return rm
}

function fetch(rm: ReplicaManager, replicaId: number, fetchOffset: bigint, rackId?: string): Promise<FetchPartitionResult> {
  return new Promise((resolve) =>
    rm.fetchMessages(
      { replicaId, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false, minBytes: 1, maxWaitMs: 0, clientMetadata: rackId === undefined ? undefined : { rackId, clientId: 'c' } },
      [{ ...TP, fetchOffset, partitionMaxBytes: 1 << 20 }],
      (r) => resolve(r[0]),
    ),
  )
}

describe.each(['native', 'js'] as BackendName[])('the preferred read replica on the %s backend', (backend) => {
  it('sends a consumer to the in-sync follower of its rack once it holds the offset, else reads at the leader', async () => {
    const rm = await leaderOf(backend, new RackAwareReplicaSelector())
    // Follower 1 (rack-b) has fetched nothing yet: it does not hold offset 0 as far as the leader knows.
    // (Nothing is committed yet either: the consumer reads to the high watermark, 0.)
    const before = await fetch(rm, -1, 0n, 'rack-b')
    expect(before.preferredReadReplica ?? -1).toBe(-1)
    expect([before.errorCode, before.highWatermark, before.info?.records.size]).toEqual([0, 0n, 0])
    // Both followers fetch everything.
    for (const id of [1, 2]) await fetch(rm, id, 0n)
    for (const id of [1, 2]) await fetch(rm, id, 3n)
    const sent = await fetch(rm, -1, 0n, 'rack-b')
    expect(sent.preferredReadReplica).toBe(1)
    expect(sent.info).toBeNull()
    expect((await fetch(rm, -1, 0n, 'rack-c')).preferredReadReplica).toBe(2)
    // The leader's rack, an unknown rack, no rack: the leader serves.
    for (const rack of ['rack-a', 'rack-z', '']) {
      const here = await fetch(rm, -1, 0n, rack)
      expect(here.preferredReadReplica ?? -1).toBe(-1)
      expect(here.info?.records.size).toBeGreaterThan(0)
    }
  })

  it('the default LeaderSelector keeps every consumer at the leader', async () => {
    const rm = await leaderOf(backend, new LeaderSelector())
    for (const id of [1, 2]) await fetch(rm, id, 3n)
    const here = await fetch(rm, -1, 0n, 'rack-b')
    expect(here.preferredReadReplica ?? -1).toBe(-1)
    expect(here.info?.records.size).toBeGreaterThan(0)
  })
})

describe('replica.selector.class', () => {
  it("takes Kafka's class names, defaults to the leader, refuses others", () => {
    expect(brokerConfigFrom({}).replicaSelector).toBe('leader')
    expect(brokerConfigFrom({ 'replica.selector.class': 'org.apache.kafka.common.replica.RackAwareReplicaSelector' }).replicaSelector).toBe('rack-aware')
    expect(brokerConfigFrom({ 'replica.selector.class': 'org.apache.kafka.common.replica.LeaderSelector' }).replicaSelector).toBe('leader')
    expect(() => brokerConfigFrom({ 'replica.selector.class': 'com.example.Mine' })).toThrow(ConfigError)
  })
})
