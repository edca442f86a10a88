/**
 * The LogCleaner's loop over real logs on both engines: it cleans the compacted logs by itself
 * (latest value per key, offsets kept, the checkpoint written), leaves delete logs and excluded
 * topics alone, and a round that fails (a corrupt segment) makes that log uncleanable, counted,
 * while the other logs are still cleaned; shutdown waits for the round under way.
 */
import { openSync, readFileSync, writeSync, closeSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName, type LogConfig } from '../../ts/index.js'
import type { Log } from '../../ts/storage/log.js'
import { CLEANER_OFFSET_CHECKPOINT_FILE } from '../../ts/storage/log-cleaner-manager.js'
import { DEFAULT_CLEANER_CONFIG } from '../../ts/storage/log-cleaner.js'
import { tempDir } from '../helpers/tmp.js'

const COMPACT: Partial<LogConfig> = { cleanupPolicy: ['compact'], minCleanableDirtyRatio: 0.01 }
const FAST = { ...DEFAULT_CLEANER_CONFIG, backOffMs: 20, dedupeBufferSize: 1024 * 1024 }

/** 10 sealed segments of 20 records over keys k0..k9 (each key 20 values), then one record in the active segment. */
function fill(log: Log): void {
  let i = 0
  for (let s = 0; s < 10; s++) {
    for (let r = 0; r < 20; r++, i++) log.append([{ key: `k${i % 10}`, value: `v${i}` }])
    log.roll()
  }
  log.append([{ key: 'k0', value: 'last' }])
}

async function waitFor(done: () => boolean, what: string, ms = 30_000): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    if (waited >= ms) throw new Error(`gave up waiting for ${what}`)
    await sleep(20)
  }
}

describe.each(['native', 'js'] as BackendName[])('LogCleaner on the %s engine', (backend) => {
  it('cleans compacted logs by itself, leaves the others, and gives up on a log whose round fails', async () => {
    const dataDir = tempDir()
    const configs: Record<string, Partial<LogConfig>> = { good: COMPACT, bad: COMPACT, plain: {}, internal: COMPACT }
    const manager = await LogManager.open({
      dataDir,
      backend,
      logger: silentLogger,
      retentionCheckIntervalMs: 0,
      topicConfig: (t) => configs[t],
      cleanable: (t) => t !== 'internal',
      cleaner: { ...FAST, enableCleaner: false },
    })
    const logs: Record<string, Log> = {}
    try {
      for (const t of Object.keys(configs)) {
        logs[t] = await manager.getOrCreateLog(t, 0)
        fill(logs[t])
      }
    } finally {
      await manager.close()
    }
    // Corrupt a record of `bad`'s first segment (its CRC no longer holds).
    const badSegment = join(dataDir, 'bad-0', '00000000000000000000.log')
    const size = readFileSync(badSegment).length
    const fd = openSync(badSegment, 'r+')
    writeSync(fd, Buffer.from('XXXX'), 0, 4, size - 3)
    closeSync(fd)

    const running = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0, topicConfig: (t) => configs[t], cleanable: (t) => t !== 'internal', cleaner: FAST })
    try {
      const cleaner = running.cleaner!
      await waitFor(() => cleaner.manager.allCleanerCheckpoints().get('good-0') === 200n, 'good-0 cleaned')
      await waitFor(() => cleaner.manager.uncleanablePartitionsCount === 1, 'bad-0 uncleanable')
      expect(cleaner.manager.isUncleanable('bad-0')).toBe(true)
      expect(cleaner.stats.failures).toBe(1)
      const good = running.getLog('good', 0)!
      const records = good.readRecords(0n, { maxBytes: 1 << 20 })
      // The latest of each key k1..k9 from the cleaned segments, then k0's in the active segment.
      expect(records.map((r) => [r.offset, r.key!.toString(), r.value!.toString()])).toEqual([
        ...Array.from({ length: 10 }, (_, k) => [BigInt(190 + k), `k${k}`, `v${190 + k}`]),
        [200n, 'k0', 'last'],
      ])
      for (const t of ['plain', 'internal']) expect(running.getLog(t, 0)!.readRecords(0n, { maxBytes: 1 << 20 })).toHaveLength(201)
      expect([...cleaner.manager.allCleanerCheckpoints().keys()].sort()).toEqual(['good-0'])
      // Another round is not tried on bad-0 (it stays uncleanable until restart), and its records stay.
      const failures = cleaner.stats.failures
      await sleep(200)
      expect(cleaner.stats.failures).toBe(failures)
    } finally {
      await running.close()
    }
    expect(readFileSync(join(dataDir, CLEANER_OFFSET_CHECKPOINT_FILE), 'utf8')).toBe('0\n1\ngood 0 200\n')
  })
})
