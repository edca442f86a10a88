/**
 * Real crashes of the offsets store: a child process commits in a loop while the log cleaner
 * cleans the offsets log (small segments, no backoff), and is SIGKILLed at random moments, often
 * in the middle of a cleaning round. After each kill the store is reopened: no `.cleaned` or
 * `.swap` file is left, every commit the child saw return is there (or a later one of the same
 * partition), and across the kills the log was cleaned (the cleaner's checkpoint moved on, far
 * fewer records than offsets are left). The parent runs a round after each check as well, so
 * that every load after the first reads a cleaned log on both engines.
 */
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { OffsetStore } from '../../ts/group/offset-store.js'
import { OFFSETS_TOPIC, offsetsLogConfig } from '../../ts/group/offsets-topic.js'
import { DEFAULT_CLEANER_CONFIG } from '../../ts/storage/log-cleaner.js'
import { LogManager, silentLogger, type BackendName } from '../../ts/index.js'
import { ReplicaManager } from '../../ts/replica/replica-manager.js'
import { runUntilKilled } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'
import { offsetsLogShape } from './harness.js'

const CHILD = join(__dirname, 'offsets-crash-child.cjs')
const KILLS = 12

/** Runs the child until it has acknowledged commits, waits `delayMs`, kills it; the last acknowledged offset per partition. */
async function runAndKill(dataDir: string, backend: BackendName, first: bigint, delayMs: number): Promise<Map<number, bigint>> {
  const acked = new Map<number, bigint>()
  for (const line of await runUntilKilled(CHILD, [dataDir, backend, String(first)], delayMs)) {
    const m = /^(\d+) (\d+)$/.exec(line)
    if (m) acked.set(Number(m[1]), BigInt(m[2]))
  }
  return acked
}

describe.each(['native', 'js'] as BackendName[])('offsets store crashes on the %s backend', (backend) => {
  it(`keeps every acknowledged commit across ${KILLS} SIGKILLs while the log cleaner cleans its log`, async () => {
    expect(existsSync(join(__dirname, '../../dist/ts/index.js')), 'run the build first (npm test does)').toBe(true)
    const dataDir = tempDir('ferrolog-offsets-crash-')
    const last = new Map<number, bigint>()
    let next = 0n
    let seed = backend === 'native' ? 7 : 11
    for (let kill = 0; kill < KILLS; kill++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      const acked = await runAndKill(dataDir, backend, next, 20 + (seed % 300))
      expect(acked.size).toBeGreaterThan(0)
      for (const [partition, offset] of acked) {
        last.set(partition, offset)
        if (offset >= next) next = offset + 1n
      }
      // The parent's cleaner has no thread: it runs one round itself, below.
      const manager = await LogManager.open({
        dataDir,
        backend,
        logger: silentLogger,
        retentionCheckIntervalMs: 0,
        topicConfig: (topic) => (topic === OFFSETS_TOPIC ? offsetsLogConfig(16384) : undefined),
        cleaner: { ...DEFAULT_CLEANER_CONFIG, numThreads: 0 },
      })
      const leftovers = readdirSync(join(dataDir, `${OFFSETS_TOPIC}-0`)).filter((f) => f.endsWith('.cleaned') || f.endsWith('.swap'))
      expect(leftovers, `after kill ${kill + 1}`).toEqual([])
      const replicaManager = new ReplicaManager(manager, { brokerId: 0, logger: silentLogger })
      const store = await OffsetStore.open(replicaManager, silentLogger)
      for (const [partition, offset] of last) {
        const committed = store.get('g', 't', partition)
        expect(committed, `partition ${partition} after kill ${kill + 1}`).toBeDefined()
        expect(committed!.offset >= offset, `partition ${partition}: ${committed!.offset} < acknowledged ${offset}`).toBe(true)
        // The next child starts above whatever reached the log.
        if (committed!.offset >= next) next = committed!.offset + 1n
      }
      // One round here too (the twin's rounds, slower, are often all killed), checked by the next load.
      await manager.cleaner!.cleanFilthiestLog()
      if (kill === KILLS - 1) {
        const log = manager.getLog(OFFSETS_TOPIC, 0)!
        expect(manager.cleaner!.manager.allCleanerCheckpoints().get(`${OFFSETS_TOPIC}-0`) ?? 0n).toBeGreaterThan(0n)
        expect(offsetsLogShape(log).records).toBeLessThan(Number(log.logEndOffset()) / 2)
      }
      await replicaManager.shutdown()
      await manager.close()
    }
  }, 300_000)
})
