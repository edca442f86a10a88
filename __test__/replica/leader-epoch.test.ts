/**
 * Leader epochs on the fetch path (ts/replica/leader-epoch.ts), on logs of both backends whose
 * leader epoch changed: epochs 0 (offsets 0-2), 2 (3-4) and 5 (5-6), log end offset 7.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { checkCurrentLeaderEpoch, divergingEpochOf } from '../../ts/replica/leader-epoch.js'
import { DelayedFetch } from '../../ts/replica/delayed-fetch.js'
import { ReplicaManager, type FetchPartitionResult } from '../../ts/replica/replica-manager.js'
import { silentLogger } from '../../ts/logger.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { LogManager } from '../../ts/storage/log-manager.js'
import type { Log } from '../../ts/storage/log.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'epochs'
let manager: LogManager | undefined
afterEach(async () => {
  await manager?.close()
  manager = undefined
})

async function openLog(backend: BackendName): Promise<Log> {
  manager = await LogManager.open({ dataDir: tempDir('ferrolog-leader-epoch-'), backend, highWatermark: 'log-end', retentionCheckIntervalMs: 0, logger: silentLogger })
  return manager.getOrCreateLog(TOPIC, 0)
}

function appendEpochs(log: Log): void {
  log.append([{ value: Buffer.from('a') }, { value: Buffer.from('b') }, { value: Buffer.from('c') }], { leaderEpoch: 0 })
  log.append([{ value: Buffer.from('d') }, { value: Buffer.from('e') }], { leaderEpoch: 2 })
  log.append([{ value: Buffer.from('f') }, { value: Buffer.from('g') }], { leaderEpoch: 5 })
}

describe('checkCurrentLeaderEpoch', () => {
  it('an older currentLeaderEpoch is FENCED_LEADER_EPOCH', () => {
    expect(checkCurrentLeaderEpoch(2, 3)).toBe(ErrorCode.FENCED_LEADER_EPOCH)
  })
  it('a newer currentLeaderEpoch is UNKNOWN_LEADER_EPOCH', () => {
    expect(checkCurrentLeaderEpoch(4, 3)).toBe(ErrorCode.UNKNOWN_LEADER_EPOCH)
    expect(checkCurrentLeaderEpoch(1)).toBe(ErrorCode.UNKNOWN_LEADER_EPOCH)
  })
  it('the same epoch, or -1, passes', () => {
    expect(checkCurrentLeaderEpoch(3, 3)).toBe(ErrorCode.NONE)
    expect(checkCurrentLeaderEpoch(-1, 3)).toBe(ErrorCode.NONE)
    expect(checkCurrentLeaderEpoch(0)).toBe(ErrorCode.NONE)
  })
})

describe.each(['native', 'js'] as BackendName[])('divergingEpochOf on the %s backend', (backend) => {
  it('the log recorded where each epoch starts', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    expect(log.epochEntries().map((e) => [e.epoch, e.startOffset])).toEqual([
      [0, 0n],
      [2, 3n],
      [5, 5n],
    ])
  })

  it('a fetcher on our latest epoch at or below the log end does not diverge', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    expect(divergingEpochOf(log, 7n, 5)).toEqual({ kind: 'ok' })
    expect(divergingEpochOf(log, 6n, 5)).toEqual({ kind: 'ok' })
  })

  it('a fetch offset at the end of its epoch does not diverge', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    expect(divergingEpochOf(log, 5n, 2)).toEqual({ kind: 'ok' })
  })

  it('a fetch offset past the end of its epoch diverges at that end', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    expect(divergingEpochOf(log, 6n, 2)).toEqual({ kind: 'diverging', divergingEpoch: { epoch: 2, endOffset: 5n } })
  })

  it('an epoch we never had diverges at the end of the largest older epoch', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    expect(divergingEpochOf(log, 4n, 3)).toEqual({ kind: 'diverging', divergingEpoch: { epoch: 2, endOffset: 5n } })
  })

  it('an epoch newer than any in the cache has no end offset: OFFSET_OUT_OF_RANGE', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    expect(divergingEpochOf(log, 7n, 7)).toEqual({ kind: 'error', errorCode: ErrorCode.OFFSET_OUT_OF_RANGE })
  })

  it('lastFetchedEpoch -1 is not checked', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    expect(divergingEpochOf(log, 100n, -1)).toEqual({ kind: 'ok' })
  })

  it('a log with no epochs yet counts as led at epoch 0 from its start', async () => {
    const log = await openLog(backend)
    expect(divergingEpochOf(log, 0n, 0)).toEqual({ kind: 'ok' })
    expect(divergingEpochOf(log, 0n, 1)).toEqual({ kind: 'error', errorCode: ErrorCode.OFFSET_OUT_OF_RANGE })
  })

  it('readFromLocalLog answers divergingEpoch and no records when the fetcher diverged', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    const rm = new ReplicaManager(manager!, { brokerId: 0 })
    const params = { replicaId: 1, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false }
    const [diverged] = rm.readFromLocalLog(params, [{ topic: TOPIC, partition: 0, fetchOffset: 6n, partitionMaxBytes: 1 << 20, lastFetchedEpoch: 2 }])
    expect(diverged.errorCode).toBe(ErrorCode.NONE)
    expect(diverged.info).toBeNull()
    expect(diverged.divergingEpoch).toEqual({ epoch: 2, endOffset: 5n })
    const [ok] = rm.readFromLocalLog(params, [{ topic: TOPIC, partition: 0, fetchOffset: 5n, partitionMaxBytes: 1 << 20, lastFetchedEpoch: 5 }])
    expect(ok.divergingEpoch).toBeUndefined()
    expect(ok.info!.records.size).toBeGreaterThan(0)
  })

  it('readFromLocalLog fences an old currentLeaderEpoch and rejects a newer one before reading', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    const rm = new ReplicaManager(manager!, { brokerId: 0 })
    rm.getPartition({ topic: TOPIC, partition: 0 })!.makeLeader({ leaderEpoch: 5 })
    const params = { replicaId: -1, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false }
    const read = (currentLeaderEpoch: number) => rm.readFromLocalLog(params, [{ topic: TOPIC, partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch }])[0]
    expect(read(4).errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH)
    expect(read(4).info).toBeNull()
    expect(read(6).errorCode).toBe(ErrorCode.UNKNOWN_LEADER_EPOCH)
    expect(read(5).errorCode).toBe(ErrorCode.NONE)
    expect(read(-1).info!.records.size).toBeGreaterThan(0)
  })

  it('a parked fetch completes with FENCED_LEADER_EPOCH when the leader epoch moves past it', async () => {
    const log = await openLog(backend)
    appendEpochs(log)
    const rm = new ReplicaManager(manager!, { brokerId: 0 })
    const params = { replicaId: -1, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false, minBytes: 1, maxWaitMs: 30_000 }
    const fetchInfo = { topic: TOPIC, partition: 0, fetchOffset: 7n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: 0 }
    const [first] = rm.readFromLocalLog(params, [fetchInfo])
    const answers: FetchPartitionResult[][] = []
    const op = new DelayedFetch(params, [{ fetchInfo, fetchOffsetMetadata: first.info!.fetchOffsetMetadata }], rm, (r) => answers.push(r))
    expect(op.tryComplete()).toBe(false)
    rm.getPartition({ topic: TOPIC, partition: 0 })!.makeLeader({ leaderEpoch: 1 })
    expect(op.tryComplete()).toBe(true)
    expect(answers.map(([r]) => r.errorCode)).toEqual([ErrorCode.FENCED_LEADER_EPOCH])
    rm.shutdown()
  })

  it('a parked follower fetch completes with divergingEpoch when its epoch no longer ends at its offset', async () => {
    const log = await openLog(backend)
    log.append([{ value: Buffer.from('a') }], { leaderEpoch: 0 })
    const rm = new ReplicaManager(manager!, { brokerId: 0 })
    const params = { replicaId: 1, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false, minBytes: 1, maxWaitMs: 30_000 }
    const fetchInfo = { topic: TOPIC, partition: 0, fetchOffset: 1n, partitionMaxBytes: 1 << 20, lastFetchedEpoch: 0 }
    const [first] = rm.readFromLocalLog(params, [fetchInfo])
    expect(first.divergingEpoch).toBeUndefined()
    const answers: FetchPartitionResult[][] = []
    const op = new DelayedFetch({ ...params, minBytes: 1 << 20 }, [{ fetchInfo, fetchOffsetMetadata: first.info!.fetchOffsetMetadata }], rm, (r) => answers.push(r))
    expect(op.tryComplete()).toBe(false)
    // A new epoch starts at offset 1: epoch 0 still ends at 1, no divergence.
    log.append([{ value: Buffer.from('b') }], { leaderEpoch: 3 })
    expect(op.tryComplete()).toBe(false)
    // A fetcher at offset 2 that last fetched epoch 0: epoch 0 ends at 1 now, below its offset.
    const diverged = new DelayedFetch(
      { ...params, minBytes: 1 << 20 },
      [{ fetchInfo: { ...fetchInfo, fetchOffset: 2n, lastFetchedEpoch: 0 }, fetchOffsetMetadata: first.info!.fetchOffsetMetadata }],
      rm,
      (r) => answers.push(r),
    )
    expect(diverged.tryComplete()).toBe(true)
    expect(answers.at(-1)![0].divergingEpoch).toEqual({ epoch: 0, endOffset: 1n })
    rm.shutdown()
  })
})
