/**
 * SIGKILL during log cleaning: a child appends and runs Log.clean rounds while appending
 * (__test__/storage/cleaner-crash-child.cjs) and is killed at random moments; another child
 * reopens the log (recovery of `.cleaned`/`.swap` files, docs/storage.md) and checks that every
 * key's latest acknowledged value is readable, offsets only increase, segments do not overlap and
 * no `.cleaned`/`.swap`/`.deleted` file is left. scripts/cleaner-crash-soak.mjs runs the same for
 * hundreds of kills.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const KILLS = 20

interface Figures {
  rounds: number
  cleaned: number
  swapRecoveries: number
  lastAcked: bigint
  problems: string[]
}

const SOAK = join(__dirname, '../../scripts/cleaner-crash-soak.mjs')

describe.each(['native', 'js'])('cleaning crash recovery on the %s backend', (backend) => {
  it(`keeps every key's latest value across ${KILLS} SIGKILLs during cleaning`, async () => {
    expect(existsSync(join(__dirname, '../../dist/ts/index.js')), 'run the build first (npm test does)').toBe(true)
    const { soak } = (await import(SOAK as string)) as { soak: (backend: string, rounds: number, seed: number) => Promise<Figures> }
    const figures = await soak(backend, KILLS, backend === 'native' ? 11 : 12)
    expect(figures.problems).toEqual([])
    expect(figures.lastAcked).toBeGreaterThan(0n)
    // The kills did land while rounds ran: rounds finished, and opens found a cleaning to undo or finish.
    expect(figures.cleaned).toBeGreaterThan(0)
    expect(figures.swapRecoveries).toBeGreaterThan(0)
  }, 240_000)
})
