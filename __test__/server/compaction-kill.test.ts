/**
 * SIGKILL of a whole broker process while its log cleaner compacts (issue #18): a standalone
 * `ferrolog broker` with a fast cleaner and 4 KiB segments on a compacted topic, a kafkajs
 * producer (acks=all) recording what was acknowledged, the broker killed at random moments. After
 * each kill a broker started on the directory (cleaner off, so the files are recovery's) must
 * start, leave no .cleaned/.swap/.deleted file, keep cleaner-offset-checkpoint within the log,
 * and serve from the beginning offsets that only increase and every key's latest acknowledged
 * value or a later one. scripts/compaction-kill-soak.mjs runs the same for hundreds of kills.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const KILLS = 8
const SOAK = join(__dirname, '../../scripts/compaction-kill-soak.mjs')

interface Figures {
  kills: number
  acknowledged: number
  cleanerRuns: number
  killedMidRound: number
  killsLeavingCleaningFiles: number
  keys: number
  problems: string[]
}

describe('broker SIGKILL during log cleaning', () => {
  it(`${KILLS} SIGKILLs of a compacting broker: it restarts with no cleaning files left, every acknowledged key's latest value served once`, async () => {
    expect(existsSync(join(__dirname, '../../dist/ts/cli/main.js')), 'run the build first (npm test does)').toBe(true)
    const { soak } = (await import(SOAK as string)) as { soak: (options: { kills: number; seed: number }) => Promise<Figures> }
    const figures = await soak({ kills: KILLS, seed: 18 })
    expect(figures.problems).toEqual([])
    expect(figures.kills).toBe(KILLS)
    expect(figures.acknowledged).toBeGreaterThan(0)
    expect(figures.keys).toBeGreaterThan(0)
    // The cleaner did work between the kills (rounds ended, so the log was compacted under the checks).
    expect(figures.cleanerRuns).toBeGreaterThan(0)
    // And kills landed inside rounds (a round began and did not end before the SIGKILL).
    expect(figures.killedMidRound).toBeGreaterThan(0)
  }, 300_000)
})
