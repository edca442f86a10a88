/**
 * Real crashes of the offsets store: a child process commits in a loop while the store compacts
 * its log, and is SIGKILLed at random moments, often in the middle of a compaction. After each
 * kill the store is reopened: every commit the child saw return is there (or a later one of the
 * same partition), and across the kills the log was compacted (its start offset moved on).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { OffsetStore } from '../../ts/group/offset-store.js'
import { OFFSETS_TOPIC } from '../../ts/group/offsets-topic.js'
import { LogManager, silentLogger, type BackendName } from '../../ts/index.js'
import { ReplicaManager } from '../../ts/replica/replica-manager.js'
import { runUntilKilled } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

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
  it(`keeps every acknowledged commit across ${KILLS} SIGKILLs while it compacts its log`, async () => {
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
      const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
      const replicaManager = new ReplicaManager(manager, { brokerId: 0, logger: silentLogger })
      const store = await OffsetStore.open(replicaManager, silentLogger, { compactionMinRecords: 1 << 30 })
      for (const [partition, offset] of last) {
        const committed = store.get('g', 't', partition)
        expect(committed, `partition ${partition} after kill ${kill + 1}`).toBeDefined()
        expect(committed!.offset >= offset, `partition ${partition}: ${committed!.offset} < acknowledged ${offset}`).toBe(true)
        // The next child starts above whatever reached the log.
        if (committed!.offset >= next) next = committed!.offset + 1n
      }
      if (kill === KILLS - 1) expect(manager.getLog(OFFSETS_TOPIC, 0)!.logStartOffset()).toBeGreaterThan(0n)
      await replicaManager.shutdown()
      await manager.close()
    }
  }, 300_000)
})
