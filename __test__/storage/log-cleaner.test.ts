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
      expect(records.map((r) => [r.offset, r.key!.toString(), r.value!.toString()])).toEqual([...Array.from({ length: 10 }, (_, k) => [BigInt(190 + k), `k${k}`, `v${190 + k}`]), [200n, 'k0', 'last']])
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

/** The batch headers of a segment file: base offset, attributes, base timestamp, record count. */
function batchHeaders(file: string): Array<{ baseOffset: bigint; attributes: number; baseTimestamp: bigint; records: number }> {
  const buf = readFileSync(file)
  const out = []
  for (let pos = 0; pos + 61 <= buf.length; pos += 12 + buf.readInt32BE(pos + 8)) {
    out.push({ baseOffset: buf.readBigInt64BE(pos), attributes: buf.readInt16BE(pos + 21), baseTimestamp: buf.readBigInt64BE(pos + 27), records: buf.readInt32BE(pos + 57) })
  }
  return out
}

const DELETE_HORIZON_FLAG = 0x40

describe.each(['native', 'js'] as BackendName[])('Tombstones without new dirty data on the %s engine (KIP-534)', (backend) => {
  it('serves the tombstones until their delete horizon, then a round of its own removes them', async () => {
    const dataDir = tempDir()
    const config: Partial<LogConfig> = { ...COMPACT, deleteRetentionMs: 1500 }
    const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0, topicConfig: () => config, cleaner: FAST })
    try {
      const cleaner = manager.cleaner!
      const log = await manager.getOrCreateLog('t', 0)
      for (let k = 0; k < 5; k++) log.append([{ key: `k${k}`, value: `v${k}` }])
      log.roll()
      log.append([
        { key: 'k0', value: null },
        { key: 'k1', value: null },
        { key: 'k2', value: null },
      ])
      log.roll()
      const end = log.logEndOffset()
      // The first round (brought by the dirty data): the values go, the tombstones stay and
      // their batch carries its delete horizon (attribute bit 6, the horizon as base timestamp).
      await waitFor(() => cleaner.manager.allCleanerCheckpoints().get('t-0') === end, 'the first round')
      const horizon = cleaner.manager.latestDeleteHorizon('t-0')
      expect(horizon).toBeDefined()
      const read = () => log.readRecords(0n, { maxBytes: 1 << 20 }).map((r) => [r.offset, r.key!.toString(), r.value?.toString() ?? null])
      const served = read()
      expect(served).toEqual([
        [3n, 'k3', 'v3'],
        [4n, 'k4', 'v4'],
        [5n, 'k0', null],
        [6n, 'k1', null],
        [7n, 'k2', null],
      ])
      const flagged = log
        .segments()
        .flatMap((s) => batchHeaders(s.file))
        .filter((b) => (b.attributes & DELETE_HORIZON_FLAG) !== 0)
      expect(flagged.map((b) => [b.baseOffset, b.baseTimestamp, b.records])).toEqual([[5n, horizon, 3]])
      const runs = cleaner.stats.runs

      // Nothing more is produced: once the horizon has passed a round of its own removes them.
      await waitFor(() => read().length === 2 && cleaner.stats.runs > runs, 'the tombstones gone and the round ended')
      expect(BigInt(Date.now())).toBeGreaterThanOrEqual(horizon!)
      expect(read()).toEqual([
        [3n, 'k3', 'v3'],
        [4n, 'k4', 'v4'],
      ])
      expect(log.logEndOffset()).toBe(end)
      expect(cleaner.manager.latestDeleteHorizon('t-0')).toBeUndefined()
      expect(cleaner.manager.allCleanerCheckpoints().get('t-0')).toBe(end)
      // And then no more rounds: nothing is left for a horizon to remove.
      const after = cleaner.stats.runs
      await sleep(300)
      expect(cleaner.stats.runs).toBe(after)
    } finally {
      await manager.close()
    }
  })
})
