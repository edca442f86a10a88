/**
 * A real broker (`ferrolog broker` from dist/) with its data dir on a small tmpfs, acks=-1
 * producers writing while the disk fills up and is freed again, DISK_FULL_ROUNDS times (5 by
 * default); then SIGKILL, restart, read everything back: every acknowledged record at its
 * offset, no offset twice, nothing that was refused, and a KAFKA_STORAGE_ERROR for every refused
 * produce. scripts/disk-full-soak.mjs runs the same with many rounds. And a broker started on a
 * disk that is already full, cleanly stopped before or not: it starts and serves.
 */
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { CLEAN_SHUTDOWN_FILE } from '../../ts/storage/log-manager.js'
import { startBroker } from '../helpers/broker.js'
import { Filler, mountTmpfs } from '../helpers/tmpfs.js'
// @ts-expect-error a plain ES module script, without types
import { soak } from '../../scripts/disk-full-soak.mjs'

const ROUNDS = Number(process.env.DISK_FULL_ROUNDS ?? 5)

describe.each(['native', 'js'])('a broker on a disk that fills up (%s backend)', (backend) => {
  it(`loses no acknowledged record and reuses no offset over ${ROUNDS} fill/free rounds and a SIGKILL`, async () => {
    expect(existsSync(join(__dirname, '../../dist/ts/cli/main.js')), 'run the build first (npm test does)').toBe(true)
    const f = await soak({ backend, rounds: ROUNDS, diskBytes: Math.max(24, ROUNDS) << 20 })
    expect(f.acknowledged).toBeGreaterThan(0)
    expect(f.produceErrors.KAFKA_STORAGE_ERROR ?? 0, JSON.stringify(f)).toBeGreaterThan(0)
    expect({ lost: f.lost, reused: f.reused, unacknowledged: f.unacknowledged, brokerCrashed: f.brokerCrashed }, JSON.stringify(f)).toEqual({
      lost: 0,
      reused: 0,
      unacknowledged: 0,
      brokerCrashed: false,
    })
    expect(
      Object.keys(f.produceErrors).filter((k) => k !== 'KAFKA_STORAGE_ERROR'),
      JSON.stringify(f),
    ).toEqual([])
  }, 120_000)
})

describe.each(['native', 'js'] as const)('a broker started on a full disk (%s backend)', (backend) => {
  it('starts, after a clean stop and after a crash, serves every record, and refuses appends with KAFKA_STORAGE_ERROR', async () => {
    const dir = mountTmpfs(8 << 20)
    const dataDir = join(dir, 'data')
    let broker = await startBroker({ dataDir, backend })
    await broker.createTopic('full', 2, {})
    const values = Array.from({ length: 200 }, (_, i) => `value-${i}`)
    for (const value of values) expect((await broker.replicaManager.appendRecords({ topic: 'full', partition: 0 }, buildBatch([{ value }]))).errorCode).toBe(ErrorCode.NONE)
    await broker.stop()
    const filler = new Filler(join(dir, 'filler'))
    filler.fill()
    const read = () =>
      broker.logManager
        .getLog('full', 0)!
        .readRecords(0n, { maxBytes: 1 << 20 })
        .map((r) => r.value!.toString())

    broker = await startBroker({ dataDir, backend })
    try {
      expect(read()).toEqual(values)
      expect((await broker.replicaManager.appendRecords({ topic: 'full', partition: 0 }, buildBatch([{ value: 'x'.repeat(64 * 1024) }]))).errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR)
    } finally {
      await broker.stop().catch(() => undefined)
    }
    // As after a crash: no clean-shutdown marker, so every log is recovered, on the full disk.
    rmSync(join(dataDir, CLEAN_SHUTDOWN_FILE), { force: true })
    broker = await startBroker({ dataDir, backend })
    try {
      expect(read()).toEqual(values)
    } finally {
      await broker.stop().catch(() => undefined)
      filler.remove()
    }
  }, 60_000)
})
