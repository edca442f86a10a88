/**
 * Kafka's `Partition` and `Replica` over real logs of both backends: follower fetch states and the
 * high watermark they move, leadership changes (`makeLeader`), and `ReplicaManager.fetchMessages`
 * answering at once or parking, with a follower's fetch waking a consumer parked at the high
 * watermark.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../ts/logger.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { Partition, SYNC_INFLATE_BYTES } from '../../ts/replica/partition.js'
import { Replica } from '../../ts/replica/replica.js'
import { ReplicaManager, type DelayedFetchParams, type FetchPartitionResult } from '../../ts/replica/replica-manager.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { LogManager } from '../../ts/storage/log-manager.js'
import type { HighWatermarkPolicy } from '../../ts/storage/log.js'
import { tempDir } from '../helpers/tmp.js'

const TP = { topic: 't', partition: 0 }
let manager: LogManager | undefined
afterEach(async () => {
  await manager?.close()
  manager = undefined
})

async function open(backend: BackendName, highWatermark: HighWatermarkPolicy) {
  manager = await LogManager.open({ dataDir: tempDir('ferrolog-partition-'), backend, highWatermark, retentionCheckIntervalMs: 0, logger: silentLogger })
  return manager.getOrCreateLog(TP.topic, TP.partition)
}

const records = (...values: string[]) => buildBatch(values.map((value) => ({ value })))
const consumer = (minBytes = 1): DelayedFetchParams => ({ replicaId: -1, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false, minBytes, maxWaitMs: 30_000 })
const follower = (replicaId: number): DelayedFetchParams => ({ ...consumer(), replicaId, maxWaitMs: 0 })

describe('Replica', () => {
  it("is caught up when it fetched the leader's log end, or the end of the leader's previous fetch", () => {
    const r = new Replica(1)
    expect(r.isCaughtUp(10n, 1000, 500)).toBe(false)
    r.updateFetchState(4n, 0n, 1000, 10n) // behind
    expect([r.logEndOffset, r.lastCaughtUpTimeMs]).toEqual([4n, 0])
    r.updateFetchState(10n, 0n, 2000, 12n) // has what the leader had at its previous fetch (10)
    expect(r.lastCaughtUpTimeMs).toBe(1000)
    r.updateFetchState(12n, 0n, 3000, 12n) // has the leader's end
    expect(r.lastCaughtUpTimeMs).toBe(3000)
    expect(r.isCaughtUp(15n, 3400, 500)).toBe(true)
    expect(r.isCaughtUp(15n, 3600, 500)).toBe(false)
    expect(r.isCaughtUp(12n, 99_999, 500)).toBe(true)
    r.reset(4000, 12n, false)
    expect([r.logEndOffset, r.lastCaughtUpTimeMs]).toEqual([-1n, 0])
  })
})

describe.each(['native', 'js'] as BackendName[])('Partition on the %s backend', (backend) => {
  it("a follower's truncation takes the truncated batches out of the idempotence window it leads with next", async () => {
    const log = await open(backend, 'managed')
    const p = new Partition(TP, log, { localBrokerId: 7, leaderEpoch: 0, assignment: [7, 8], isr: [7] })
    const idempotent = (seq: number) => buildBatch([{ value: `s${seq}` }], { producerId: 42n, producerEpoch: 0, baseSequence: seq })
    const produce = async (seq: number) => {
      const r = await p.appendRecordsToLeader(idempotent(seq))
      return { errorCode: r.errorCode, offset: r.info?.firstOffset }
    }
    for (let seq = 0; seq < 6; seq++) {
      expect(await produce(seq)).toEqual({ errorCode: ErrorCode.NONE, offset: BigInt(seq) })
      if (seq === 2 || seq === 4) log.roll() // snapshots at 3 and 5
    }
    expect(await produce(4)).toEqual({ errorCode: ErrorCode.NONE, offset: 4n }) // a retry
    // Broker 8 leads at epoch 1 without our last two batches: we truncate to 4 as its follower.
    p.makeFollower({ replicas: [7, 8], isr: [8], leader: 8, leaderEpoch: 1, partitionEpoch: 1 })
    await p.truncateTo(4n)
    expect(log.producerStateEntries().map((e) => [e.producerId, e.lastSequence, e.lastOffset])).toEqual([[42n, 3, 3n]])
    p.makeLeader({ leaderEpoch: 2, assignment: [7, 8], isr: [7] })
    // Seq 3 is still in the log: a duplicate. Seq 4 is gone: appended again, at the new log end; a gap is refused.
    expect(await produce(3)).toEqual({ errorCode: ErrorCode.NONE, offset: 3n })
    expect((await produce(5)).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    expect(await produce(4)).toEqual({ errorCode: ErrorCode.NONE, offset: 4n })
    expect(log.logEndOffset()).toBe(5n)
  })

  it('moves the high watermark to the smallest log end offset of the ISR as followers fetch', async () => {
    const log = await open(backend, 'managed')
    const p = new Partition(TP, log, { localBrokerId: 7, leaderEpoch: 0, assignment: [7, 8, 9], isr: [7, 8, 9] })
    log.append(records('a', 'b', 'c'))
    expect(p.maybeIncrementLeaderHW()).toBe(false) // followers 8 and 9 have nothing yet
    expect(p.updateFollowerFetchState(8, 3n, 0n, 1000)).toBe(false)
    expect(p.updateFollowerFetchState(9, 2n, 0n, 1000)).toBe(true)
    expect(p.highWatermark()).toBe(2n)
    expect(p.updateFollowerFetchState(9, 3n, 0n, 1001)).toBe(true)
    expect(p.highWatermark()).toBe(3n)
    // A broker that is not a replica of the partition changes nothing.
    expect(p.updateFollowerFetchState(5, 3n, 0n, 1002)).toBe(false)
    expect(p.followerReplica(5)).toBeUndefined()
    expect(p.leaderReplicaState(1001).followers.map((f) => [f.brokerId, f.logEndOffset])).toEqual([
      [8, 3n],
      [9, 3n],
    ])
  })

  it('a follower out of the ISR does not hold the high watermark back', async () => {
    const log = await open(backend, 'managed')
    const p = new Partition(TP, log, { localBrokerId: 0, leaderEpoch: 0, assignment: [0, 1, 2], isr: [0, 1] })
    log.append(records('a', 'b'))
    p.updateFollowerFetchState(2, 0n, 0n, 0) // far behind, long ago
    expect(p.updateFollowerFetchState(1, 2n, 0n, 100_000)).toBe(true)
    expect(p.highWatermark()).toBe(2n)
  })

  it('makeLeader moves to a new leader epoch: old epochs are fenced, followers start over', async () => {
    const log = await open(backend, 'managed')
    const p = new Partition(TP, log, { localBrokerId: 0, leaderEpoch: 0, assignment: [0, 1] })
    p.updateFollowerFetchState(1, 0n, 0n, 10)
    p.makeLeader({ leaderEpoch: 4, assignment: [0, 2], isr: [0] }, 20)
    expect([p.leaderEpoch, p.partitionEpoch, p.assignment, [...p.isr]]).toEqual([4, 1, [0, 2], [0]])
    expect(p.followerReplica(1)).toBeUndefined()
    expect(p.followerReplica(2)!.logEndOffset).toBe(-1n)
    expect(p.checkLeaderEpoch(3)).toBe(ErrorCode.FENCED_LEADER_EPOCH)
    expect(p.checkLeaderEpoch(5)).toBe(ErrorCode.UNKNOWN_LEADER_EPOCH)
    expect(p.checkLeaderEpoch(4)).toBe(ErrorCode.NONE)
    // Appends are stamped with the partition's leader epoch.
    expect((await p.appendRecordsToLeader(records('x'))).errorCode).toBe(ErrorCode.NONE)
    expect(log.latestEpoch()).toBe(4)
    expect(() => p.makeLeader({ leaderEpoch: 5, assignment: [1, 2] })).toThrow(/not among its replicas/)
  })
})

describe.each(['native', 'js'] as BackendName[])('Partition appends on the %s backend', (backend) => {
  it('check on the loop what cannot inflate past SYNC_INFLATE_BYTES (uncompressed, small gzip, snappy, lz4) and every zstd batch off it', async () => {
    const log = await open(backend, 'log-end')
    const p = new Partition(TP, log, { localBrokerId: 0, leaderEpoch: 0 })
    for (const compression of ['none', 'gzip', 'snappy', 'lz4'] as const) {
      const small = buildBatch([{ value: `small ${compression}` }], { compression })
      expect(p.appendRecordsToLeader(small)).toMatchObject({ errorCode: ErrorCode.NONE })
    }
    // zstd, however small; gzip whose compressed records could inflate past the bound.
    const zstd = p.appendRecordsToLeader(buildBatch([{ value: 'small zstd' }], { compression: 'zstd' }))
    expect(zstd).toBeInstanceOf(Promise)
    const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24))
    const gzip = p.appendRecordsToLeader(buildBatch([{ value: random }], { compression: 'gzip' }))
    expect(gzip).toBeInstanceOf(Promise)
    expect((await zstd).info?.firstOffset).toBe(4n)
    expect((await gzip).info?.firstOffset).toBe(5n)
    expect(SYNC_INFLATE_BYTES).toBe(1 << 20)
  })

  it('run one at a time in call order while compressed ones are checked off the loop: a retry in flight is a duplicate', async () => {
    const log = await open(backend, 'log-end')
    const p = new Partition(TP, log, { localBrokerId: 0, leaderEpoch: 0 })
    const idempotent = (baseSequence: number, compression: 'zstd' | 'none', ...values: string[]) =>
      buildBatch(
        values.map((value) => ({ value: compression === 'none' ? value : Buffer.concat([Buffer.from(value), Buffer.alloc(512 * 1024)]) })),
        { compression, producerId: 7n, producerEpoch: 0, baseSequence },
      )
    const first = idempotent(0, 'zstd', 'a', 'b')
    // None awaited before the next starts: a retry of the first while it is still being
    // checked, the producer's next batch (uncompressed: it would be appended at once if not
    // queued, before the first, out of sequence), and a plain compressed batch.
    const results = await Promise.all([
      p.appendRecordsToLeader(first),
      p.appendRecordsToLeader(first),
      p.appendRecordsToLeader(idempotent(2, 'none', 'c')),
      p.appendRecordsToLeader(buildBatch([{ value: 'd' }], { compression: 'lz4' })),
      p.appendRecordsToLeader(idempotent(3, 'zstd', 'e')),
    ])
    expect(results.map((r) => [r.errorCode, r.info?.firstOffset, r.info?.batchCount])).toEqual([
      [ErrorCode.NONE, 0n, 1],
      [ErrorCode.NONE, 0n, 0],
      [ErrorCode.NONE, 2n, 1],
      [ErrorCode.NONE, 3n, 1],
      [ErrorCode.NONE, 4n, 1],
    ])
    expect(log.readRecords(0n, { maxBytes: 8 << 20 }).map((r) => r.value!.subarray(0, 1).toString())).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(
      p
        .producerState()
        .lastEntry(7n)!
        .batches.map((b) => b.firstOffset),
    ).toEqual([0n, 2n, 4n])
  })
})

describe.each(['native', 'js'] as BackendName[])('ReplicaManager on the %s backend', (backend) => {
  it('fetchMessages answers at once when minBytes are there, parks otherwise, and a parked fetch can be dropped', async () => {
    await open(backend, 'log-end')
    const rm = new ReplicaManager(manager!, { brokerId: 0 })
    await rm.appendRecords(TP, records('a'))
    const now: FetchPartitionResult[][] = []
    rm.fetchMessages(consumer(), [{ ...TP, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }], (r) => now.push(r))
    expect(now).toHaveLength(1)
    expect(now[0][0].info!.records.size).toBeGreaterThan(0)

    const later: FetchPartitionResult[][] = []
    rm.fetchMessages(consumer(), [{ ...TP, fetchOffset: 1n, partitionMaxBytes: 1 << 20 }], (r) => later.push(r))
    const dropped: FetchPartitionResult[][] = []
    const drop = rm.fetchMessages(consumer(), [{ ...TP, fetchOffset: 1n, partitionMaxBytes: 1 << 20 }], (r) => dropped.push(r))
    expect(rm.delayedFetchStats()).toMatchObject({ parked: 2 })
    drop()
    await rm.appendRecords(TP, records('b'))
    expect(later).toHaveLength(1)
    expect(later[0][0].info!.records.size).toBeGreaterThan(0)
    expect(dropped).toEqual([])
    // An unknown partition is answered at once with its error, not parked.
    const unknown: FetchPartitionResult[][] = []
    rm.fetchMessages(consumer(), [{ topic: 'nope', partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 }], (r) => unknown.push(r))
    expect(unknown[0][0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    rm.shutdown()
  })

  it("a follower's fetch that moves the high watermark wakes a consumer parked at it", async () => {
    const log = await open(backend, 'managed')
    const rm = new ReplicaManager(manager!, { brokerId: 0 })
    rm.getPartition(TP)!.makeLeader({ leaderEpoch: 0, assignment: [0, 1], isr: [0, 1] })
    expect((await rm.appendRecords(TP, records('a', 'b'))).errorCode).toBe(ErrorCode.NONE)
    expect(log.highWatermark()).toBe(0n)
    const parked: FetchPartitionResult[][] = []
    rm.fetchMessages(consumer(), [{ ...TP, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }], (r) => parked.push(r))
    expect(parked).toEqual([])
    // The follower fetches from 0: it has nothing yet, the high watermark stays.
    const first: FetchPartitionResult[][] = []
    rm.fetchMessages(follower(1), [{ ...TP, fetchOffset: 0n, partitionMaxBytes: 1 << 20, logStartOffset: 0n }], (r) => first.push(r))
    expect(first[0][0].info!.records.size).toBeGreaterThan(0)
    expect(parked).toEqual([])
    // Its next fetch, at 2, says it has both records: the high watermark moves, the consumer is answered.
    rm.fetchMessages(follower(1), [{ ...TP, fetchOffset: 2n, partitionMaxBytes: 1 << 20, logStartOffset: 0n }], () => {})
    expect(log.highWatermark()).toBe(2n)
    expect(parked).toHaveLength(1)
    expect(parked[0][0].highWatermark).toBe(2n)
    expect(parked[0][0].info!.records.size).toBeGreaterThan(0)
    rm.shutdown()
  })

  it('a log deleted and created again gets a new partition, with fresh producer state', async () => {
    await open(backend, 'log-end')
    const rm = new ReplicaManager(manager!, { brokerId: 3 })
    const first = rm.getPartition(TP)!
    expect(first.localBrokerId).toBe(3)
    expect(rm.getPartition(TP)).toBe(first)
    await manager!.deleteLog(TP.topic, TP.partition)
    expect(rm.getPartition(TP)).toBeUndefined()
    await manager!.getOrCreateLog(TP.topic, TP.partition)
    const second = rm.getPartition(TP)!
    expect(second).not.toBe(first)
    expect(second.log).not.toBe(first.log)
    rm.shutdown()
  })
})
