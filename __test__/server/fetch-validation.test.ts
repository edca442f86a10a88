/**
 * Fetch's per-partition checks before a read, over a socket (docs/fetch.md "Long polls" and "Versions and errors"): the
 * currentLeaderEpoch (v9+), the lastFetchedEpoch (v12+, divergingEpoch) and the preferred read
 * replica (v11+, KIP-392). Each answers at once, even with maxWaitMs 30 s and minBytes 1.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { fetchCodec, type FetchRequest, type FetchResponse, type PartitionData } from '../../ts/protocol/apis/fetch.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { decodeBatches } from '../../ts/protocol/records.js'
import { RackAwareReplicaSelector, type ReplicaSelector } from '../../ts/replica/replica-selector.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, fetchRequest, KafkaWire } from '../helpers/kafka-socket.js'

const TOPIC = 'validated'
const LONG_WAIT = { maxWaitMs: 30_000, minBytes: 1 }

let broker: Broker | undefined
let wire: KafkaWire | undefined
afterEach(async () => {
  wire?.close()
  wire = undefined
  await broker?.stop()
  broker = undefined
})

/** A broker whose partition 0 was led at epochs 0 (offsets 0-2), 2 (3-4) and 5 (5-6). */
async function setup(): Promise<Broker> {
  broker = await startBroker()
  await broker.createTopic(TOPIC, 1, {})
  const log = broker.replicaManager.getLog({ topic: TOPIC, partition: 0 })!
  const values = (...vs: string[]) => vs.map((v) => ({ value: Buffer.from(v) }))
  log.append(values('a', 'b', 'c'), { leaderEpoch: 0 })
  log.append(values('d', 'e'), { leaderEpoch: 2 })
  log.append(values('f', 'g'), { leaderEpoch: 5 })
  wire = new KafkaWire(await connectTo(broker.port), 'fetch-validation-test')
  return broker
}

async function fetchOne(
  version: number,
  partition: { fetchOffset: bigint; currentLeaderEpoch?: number; lastFetchedEpoch?: number },
  request: Partial<FetchRequest> = {},
): Promise<{ p: PartitionData<Buffer | null>; ms: number }> {
  const start = Date.now()
  const res: FetchResponse = await wire!.send(
    fetchCodec,
    version,
    fetchRequest({
      ...LONG_WAIT,
      ...request,
      topics: [
        {
          topic: TOPIC,
          topicId: ZERO_UUID,
          partitions: [{ partition: 0, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20, ...partition }],
        },
      ],
    }),
  )
  return { p: res.responses[0].partitions[0], ms: Date.now() - start }
}

const values = (p: PartitionData<Buffer | null>) => (p.records && p.records.length > 0 ? decodeBatches(p.records).flatMap((b) => b.records.map((r) => r.value!.toString())) : [])

describe('Fetch validation over the wire', { timeout: 10_000 }, () => {
  it('currentLeaderEpoch newer than the leader epoch: UNKNOWN_LEADER_EPOCH at once', async () => {
    await setup()
    const { p, ms } = await fetchOne(9, { fetchOffset: 7n, currentLeaderEpoch: 1 })
    expect(p.errorCode).toBe(ErrorCode.UNKNOWN_LEADER_EPOCH)
    expect(ms).toBeLessThan(5000)
    expect(values(p)).toEqual([])
  })

  it('currentLeaderEpoch older than the leader epoch: FENCED_LEADER_EPOCH at once', async () => {
    const b = await setup()
    b.replicaManager.getPartition({ topic: TOPIC, partition: 0 })!.makeLeader({ leaderEpoch: 3 })
    const { p, ms } = await fetchOne(12, { fetchOffset: 7n, currentLeaderEpoch: 2 })
    expect(p.errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH)
    expect(ms).toBeLessThan(5000)
  })

  it('currentLeaderEpoch equal to the leader epoch, or -1: records as usual', async () => {
    await setup()
    expect(values((await fetchOne(9, { fetchOffset: 0n, currentLeaderEpoch: 0 })).p)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g'])
    expect(values((await fetchOne(12, { fetchOffset: 5n, currentLeaderEpoch: -1 })).p)).toEqual(['f', 'g'])
  })

  it('a follower past the end of its lastFetchedEpoch gets divergingEpoch and no records at once', async () => {
    await setup()
    const { p, ms } = await fetchOne(12, { fetchOffset: 6n, lastFetchedEpoch: 2 }, { replicaId: 1 })
    expect(p.errorCode).toBe(ErrorCode.NONE)
    expect(p.divergingEpoch).toEqual({ epoch: 2, endOffset: 5n })
    expect(values(p)).toEqual([])
    expect(ms).toBeLessThan(5000)
  })

  it('a consumer on an epoch we never had gets the end of the largest older epoch', async () => {
    await setup()
    const { p } = await fetchOne(12, { fetchOffset: 4n, lastFetchedEpoch: 3 })
    expect(p.divergingEpoch).toEqual({ epoch: 2, endOffset: 5n })
  })

  it('a fetcher whose lastFetchedEpoch matches reads on without divergingEpoch', async () => {
    await setup()
    const { p } = await fetchOne(12, { fetchOffset: 5n, lastFetchedEpoch: 2 }, { replicaId: 1, maxWaitMs: 0 })
    expect(p.divergingEpoch).toEqual({ epoch: -1, endOffset: -1n }) // Kafka's default: none
    expect(values(p)).toEqual(['f', 'g'])
  })

  it('a single-replica partition never names a preferred read replica', async () => {
    const b = await setup()
    ;(b.replicaManager as { replicaSelector: ReplicaSelector }).replicaSelector = new RackAwareReplicaSelector()
    const { p } = await fetchOne(11, { fetchOffset: 0n }, { rackId: 'b' })
    expect(p.preferredReadReplica).toBe(-1)
    expect(values(p)).toHaveLength(7)
  })

  it('a consumer sent to a follower of its rack gets preferredReadReplica and no records at once', async () => {
    const b = await setup()
    ;(b.replicaManager as { replicaSelector: ReplicaSelector }).replicaSelector = new RackAwareReplicaSelector()
    const follower = { brokerId: 2, rack: 'b', logStartOffset: 0n, logEndOffset: 7n, timeSinceLastCaughtUpMs: 0 }
    b.replicaManager.leaderReplicaState = (_tp, log) => ({
      leader: { brokerId: 0, rack: 'a', logStartOffset: log.logStartOffset(), logEndOffset: log.logEndOffset(), timeSinceLastCaughtUpMs: 0 },
      followers: [follower],
      isr: new Set([0, 2]),
    })
    const { p, ms } = await fetchOne(11, { fetchOffset: 7n }, { rackId: 'b' })
    expect(p.errorCode).toBe(ErrorCode.NONE)
    expect(p.preferredReadReplica).toBe(2)
    expect(values(p)).toEqual([])
    expect(ms).toBeLessThan(5000)
    // The same consumer in the leader's rack reads here, and waits for data as usual (maxWait 0 here).
    const here = await fetchOne(11, { fetchOffset: 0n }, { rackId: 'a', maxWaitMs: 0 })
    expect(here.p.preferredReadReplica).toBe(-1)
    expect(values(here.p)).toHaveLength(7)
  })
})
