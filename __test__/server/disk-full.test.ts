/**
 * A real broker (`ferrolog broker` from dist/) with its data dir on a small tmpfs, acks=-1
 * producers writing while the disk fills up and is freed again, DISK_FULL_ROUNDS times (5 by
 * default); then SIGKILL, restart, read everything back: every acknowledged record at its
 * offset, no offset twice, nothing that was refused, and a KAFKA_STORAGE_ERROR for every refused
 * produce. scripts/disk-full-soak.mjs runs the same with many rounds.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
// @ts-expect-error a plain ES module script, without types
import { soak } from '../../scripts/disk-full-soak.mjs'

const ROUNDS = Number(process.env.DISK_FULL_ROUNDS ?? 5)

describe.each(['native', 'js'])('a broker on a disk that fills up (%s backend)', (backend) => {
  it(`loses no acknowledged record and reuses no offset over ${ROUNDS} fill/free rounds and a SIGKILL`, async () => {
    expect(existsSync(join(__dirname, '../../dist/ts/cli/main.js')), 'run the build first (npm test does)').toBe(true)
    const f = await soak({ backend, rounds: ROUNDS, diskBytes: Math.max(24, ROUNDS) << 20 })
    expect(f.acknowledged).toBeGreaterThan(0)
    expect(f.produceErrors.KAFKA_STORAGE_ERROR ?? 0, JSON.stringify(f)).toBeGreaterThan(0)
    expect(
      { lost: f.lost, reused: f.reused, unacknowledged: f.unacknowledged, brokerCrashed: f.brokerCrashed },
      JSON.stringify(f),
    ).toEqual({ lost: 0, reused: 0, unacknowledged: 0, brokerCrashed: false })
    expect(Object.keys(f.produceErrors).filter((k) => k !== 'KAFKA_STORAGE_ERROR'), JSON.stringify(f)).toEqual([])
  }, 120_000)
})
