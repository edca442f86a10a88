/**
 * DelayedFetch's completion cases (docs/fetch.md "Long polls", Kafka's DelayedFetch.tryComplete) over real
 * logs of both backends: a fetch parked at the end waits for minBytes, and completes at once when
 * its partition errs, is truncated below it, moves to a new segment, or loses the fetch offset.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../ts/logger.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { decodeBatches } from '../../ts/protocol/records.js'
import { DelayedFetch, newDelayedFetchMetrics, type DelayedFetchParams } from '../../ts/replica/delayed-fetch.js'
import { ReplicaManager, type FetchPartitionResult } from '../../ts/replica/replica-manager.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { LogManager } from '../../ts/storage/log-manager.js'
import type { HighWatermarkPolicy } from '../../ts/storage/log.js'
import type { LogConfig } from '../../ts/storage/types.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 't'
let manager: LogManager | undefined
afterEach(async () => {
  await manager?.close()
  manager = undefined
})

async function setup(backend: BackendName, highWatermark: HighWatermarkPolicy = 'log-end', defaultConfig: Partial<LogConfig> = {}) {
  manager = await LogManager.open({ dataDir: tempDir('ferrolog-delayed-fetch-'), backend, highWatermark, defaultConfig, retentionCheckIntervalMs: 0, logger: silentLogger })
  const log = await manager.getOrCreateLog(TOPIC, 0)
  const rm = new ReplicaManager(manager, { brokerId: 0 })
  return { log, rm }
}

async function produce(rm: ReplicaManager, ...values: string[]): Promise<void> {
  expect((await rm.appendRecords({ topic: TOPIC, partition: 0 }, buildBatch(values.map((value) => ({ value }))))).errorCode).toBe(ErrorCode.NONE)
}

/** A DelayedFetch of partition 0 from `fetchOffset`, with the metadata of a first read as the handler makes it. */
function park(rm: ReplicaManager, fetchOffset: bigint, options: Partial<DelayedFetchParams> & { partitionMaxBytes?: number } = {}) {
  const params: DelayedFetchParams = { replicaId: -1, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false, minBytes: 1, maxWaitMs: 30_000, ...options }
  const fetchInfo = { topic: TOPIC, partition: 0, fetchOffset, partitionMaxBytes: options.partitionMaxBytes ?? 1 << 20 }
  const [first] = rm.readFromLocalLog(params, [fetchInfo])
  expect(first.errorCode).toBe(ErrorCode.NONE)
  expect(first.info!.records.size).toBe(0)
  const answers: FetchPartitionResult[][] = []
  const metrics = newDelayedFetchMetrics()
  const op = new DelayedFetch(params, [{ fetchInfo, fetchOffsetMetadata: first.info!.fetchOffsetMetadata }], rm, (r) => answers.push(r), metrics)
  const values = () =>
    answers.flatMap(([r]) => (r.info && r.info.records.size > 0 ? decodeBatches(rm.getLog(r)!.readSlice(r.info.records)).flatMap((b) => b.records.map((x) => x.value!.toString())) : []))
  return { op, answers, metrics, values }
}

describe.each(['native', 'js'] as BackendName[])('DelayedFetch on the %s backend', (backend) => {
  it('waits while nothing new is readable', async () => {
    const { rm } = await setup(backend)
    await produce(rm, 'old')
    const { op, answers } = park(rm, 1n)
    expect(op.tryComplete()).toBe(false)
    expect(answers).toEqual([])
  })

  it('completes once an append makes minBytes readable, and answers from a fresh read', async () => {
    const { rm } = await setup(backend)
    const { op, values } = park(rm, 0n)
    await produce(rm, 'a')
    expect(op.tryComplete()).toBe(true)
    expect(values()).toEqual(['a'])
    expect(op.tryComplete()).toBe(false) // exactly once
  })

  it('accumulates bytes over appends until minBytes', async () => {
    const { rm } = await setup(backend)
    const one = buildBatch([{ value: 'x'.repeat(100) }]).length
    const { op, values } = park(rm, 0n, { minBytes: one + 1 })
    await produce(rm, 'x'.repeat(100))
    expect(op.tryComplete()).toBe(false)
    await produce(rm, 'y'.repeat(100))
    expect(op.tryComplete()).toBe(true)
    expect(values()).toEqual(['x'.repeat(100), 'y'.repeat(100)])
  })

  it("counts at most the partition's maxBytes", async () => {
    const { rm } = await setup(backend)
    const { op } = park(rm, 0n, { minBytes: 200, partitionMaxBytes: 50 })
    await produce(rm, 'z'.repeat(500))
    expect(op.tryComplete()).toBe(false)
  })

  it('completes when the partition is gone (UNKNOWN_TOPIC_OR_PARTITION)', async () => {
    const { rm } = await setup(backend)
    const { op, answers } = park(rm, 0n, { minBytes: 1 << 20 })
    await manager!.deleteLog(TOPIC, 0)
    expect(op.tryComplete()).toBe(true)
    expect(answers[0][0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
  })

  it('completes when the log was truncated below the fetch offset', async () => {
    const { rm, log } = await setup(backend)
    await produce(rm, 'a', 'b')
    const { op, answers } = park(rm, 2n, { minBytes: 1 << 20 })
    await log.truncateTo(1n)
    expect(op.tryComplete()).toBe(true)
    expect(answers[0][0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE)
  })

  it('completes when the end moved to a newer segment, even below minBytes', async () => {
    const { rm, log } = await setup(backend)
    await produce(rm, 'a')
    const { op, values } = park(rm, 1n, { minBytes: 1 << 20 })
    log.roll()
    // A roll alone: the end is the same offset on a new segment, nothing new to read.
    expect(op.tryComplete()).toBe(false)
    await produce(rm, 'b')
    expect(op.tryComplete()).toBe(true)
    expect(values()).toEqual(['b'])
  })

  it('completes when the log start offset passed the fetch offset (DeleteRecords)', async () => {
    const { rm } = await setup(backend)
    await produce(rm, 'a', 'b')
    const { op, answers } = park(rm, 2n, { minBytes: 1 << 20 })
    await produce(rm, 'c')
    expect(op.tryComplete()).toBe(false)
    expect(rm.deleteRecords({ topic: TOPIC, partition: 0 }, 3n).errorCode).toBe(ErrorCode.NONE)
    expect(op.tryComplete()).toBe(true)
    expect(answers[0][0].errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE)
  })

  it('retention and log deletion wake the fetches parked on the log', async () => {
    const { rm, log } = await setup(backend, 'log-end', { retentionBytes: 1 })
    await produce(rm, 'a')
    const retained = park(rm, 1n, { minBytes: 1 << 20 })
    expect(rm.parkDelayedFetch(retained.op).parked).toBe(true)
    // A roll and an append that wakes nobody (straight to the log): the fetch waits.
    log.roll()
    log.append([{ value: 'b' }])
    expect(retained.answers).toEqual([])
    expect(await manager!.cleanupLogs()).toBeGreaterThan(0)
    expect(retained.values()).toEqual(['b'])

    const deleted = park(rm, 2n, { minBytes: 1 << 20 })
    expect(rm.parkDelayedFetch(deleted.op).parked).toBe(true)
    await manager!.deleteLog(TOPIC, 0)
    expect(deleted.answers[0][0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    expect(rm.delayedFetchStats()).toMatchObject({ parked: 0, completed: 2 })
    rm.shutdown()
  })

  it('reads to the end its isolation allows: a follower to the log end, a consumer to the high watermark', async () => {
    const { rm, log } = await setup(backend, 'managed')
    const consumer = park(rm, 0n)
    const follower = park(rm, 0n, { replicaId: 1 })
    await produce(rm, 'a')
    expect(log.highWatermark()).toBe(0n)
    expect(consumer.op.tryComplete()).toBe(false)
    expect(follower.op.tryComplete()).toBe(true)
    expect(follower.values()).toEqual(['a'])
    log.updateHighWatermark(1n)
    expect(consumer.op.tryComplete()).toBe(true)
    expect(consumer.values()).toEqual(['a'])
  })

  it('expiry answers with what is there and counts an expiration', async () => {
    const { rm } = await setup(backend)
    const { op, answers, metrics } = park(rm, 0n, { minBytes: 1 << 20 })
    await produce(rm, 'a')
    expect(op.tryComplete()).toBe(false)
    op.run() // the timer's entry point
    expect(answers).toHaveLength(1)
    expect(answers[0][0].info!.records.size).toBeGreaterThan(0)
    expect(metrics).toEqual({ consumerExpired: 1, followerExpired: 0 })
  })

  it('parked in the purgatory, an append wakes it; a dropped one never answers', async () => {
    const { rm } = await setup(backend)
    const woken = park(rm, 0n)
    const dropped = park(rm, 0n)
    expect(rm.parkDelayedFetch(woken.op).parked).toBe(true)
    const { parked, drop } = rm.parkDelayedFetch(dropped.op)
    expect(parked).toBe(true)
    expect(rm.delayedFetchStats()).toMatchObject({ parked: 2, parkedTotal: 2 })
    drop()
    expect(rm.delayedFetchStats()).toMatchObject({ parked: 1, dropped: 1 })
    await produce(rm, 'a')
    expect(woken.values()).toEqual(['a'])
    expect(dropped.answers).toEqual([])
    expect(rm.delayedFetchStats()).toMatchObject({ parked: 0, completed: 1, expired: 0, dropped: 1 })
    expect(rm.delayedFetchPurgatory.watched()).toBe(0)
    rm.shutdown()
  })
})
