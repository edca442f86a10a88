/**
 * LogCleanerManager over real logs in a real data directory, on both engines: where each
 * compacted log's dirty section starts and ends (checkpoint, active segment, last stable offset,
 * min.compaction.lag.ms), which log is the filthiest, the cleaner-offset-checkpoint across a
 * restart, and the pauses that deletion, truncation and retention take.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName, type LogConfig } from '../../ts/index.js'
import type { Log } from '../../ts/storage/log.js'
import { CLEANER_OFFSET_CHECKPOINT_FILE, cleanableOffsets, LogCleanerManager, sectionSizes } from '../../ts/storage/log-cleaner-manager.js'
import { DEFAULT_CLEANER_CONFIG } from '../../ts/storage/log-cleaner.js'
import { tempDir } from '../helpers/tmp.js'

const COMPACT: Partial<LogConfig> = { cleanupPolicy: ['compact'], minCleanableDirtyRatio: 0.5 }
/** A cleaner whose manager exists but which runs no round by itself (no threads). */
const NO_THREADS = { ...DEFAULT_CLEANER_CONFIG, numThreads: 0 }
const T0 = 1_700_000_000_000

/** `segments` sealed segments of `perSegment` records each (key k<i % 5>), then an active one with one record. */
function fill(log: Log, segments: number, perSegment = 10, timestamp = (i: number) => T0 + i): void {
  let i = 0
  for (let s = 0; s < segments; s++) {
    for (let r = 0; r < perSegment; r++, i++) log.append([{ key: `k${i % 5}`, value: `v${i}`, timestamp: timestamp(i) }])
    log.roll()
  }
  log.append([{ key: 'k0', value: 'last', timestamp: timestamp(i) }])
}

async function open(backend: BackendName, dataDir: string, topicConfig: (topic: string) => Partial<LogConfig> | undefined, extra: Partial<Parameters<typeof LogManager.open>[0]> = {}) {
  return LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0, topicConfig, ...extra })
}

describe.each(['native', 'js'] as BackendName[])('LogCleanerManager on the %s engine', (backend) => {
  it('the dirty section ends at the active segment, the last stable offset, and the first segment younger than min.compaction.lag.ms', async () => {
    const manager = await open(backend, tempDir(), () => COMPACT, { highWatermark: 'managed' })
    try {
      const log = await manager.getOrCreateLog('c', 0)
      // Segments [0,10) [10,20) [20,30) [30,40), active from 40; records 25 on are recent.
      fill(log, 4, 10, (i) => (i < 25 ? T0 : T0 + 100_000))
      const now = T0 + 100_000
      log.updateHighWatermark(log.logEndOffset())
      expect(await cleanableOffsets(log, undefined, now)).toEqual({ firstDirtyOffset: 0n, firstUncleanableOffset: 40n, forceUpdateCheckpoint: false })
      // The last stable offset (here the high watermark) comes first when it is lower.
      log.updateHighWatermark(33n)
      expect((await cleanableOffsets(log, undefined, now)).firstUncleanableOffset).toBe(33n)
      log.updateHighWatermark(log.logEndOffset())
      // min.compaction.lag.ms: the segment [20,30) holds records newer than a minute: it and what follows wait.
      log.updateConfig({ ...log.config, minCompactionLagMs: 60_000 })
      expect((await cleanableOffsets(log, undefined, now)).firstUncleanableOffset).toBe(20n)
      expect((await cleanableOffsets(log, 10n, now)).firstUncleanableOffset).toBe(20n)
      // A longer lag holds back from the first dirty segment on; a checkpoint inside it keeps that segment's base.
      log.updateConfig({ ...log.config, minCompactionLagMs: 200_000 })
      expect((await cleanableOffsets(log, 15n, now)).firstUncleanableOffset).toBe(10n)
    } finally {
      await manager.close()
    }
  })

  it('a checkpoint outside the log is reset to the log start and rewritten', async () => {
    const manager = await open(backend, tempDir(), () => COMPACT)
    try {
      const log = await manager.getOrCreateLog('c', 0)
      fill(log, 3)
      log.deleteRecordsBefore(12n)
      await log.deleteOldSegments()
      expect(log.logStartOffset()).toBe(12n)
      expect(await cleanableOffsets(log, 5n, T0)).toMatchObject({ firstDirtyOffset: 12n, forceUpdateCheckpoint: true })
      expect(await cleanableOffsets(log, 999n, T0)).toMatchObject({ firstDirtyOffset: 12n, forceUpdateCheckpoint: true })
      expect(await cleanableOffsets(log, 20n, T0)).toMatchObject({ firstDirtyOffset: 20n, forceUpdateCheckpoint: false })
      expect(await cleanableOffsets(log, undefined, T0)).toMatchObject({ firstDirtyOffset: 12n, forceUpdateCheckpoint: false })
    } finally {
      await manager.close()
    }
  })

  it('grabs the filthiest compacted log past its ratio, passing over the others, and marks it in progress', async () => {
    const configs: Record<string, Partial<LogConfig>> = {
      a: COMPACT,
      b: COMPACT,
      retained: { cleanupPolicy: ['delete'] },
      internal: COMPACT,
      strict: { ...COMPACT, minCleanableDirtyRatio: 1 },
    }
    const dataDir = tempDir()
    const logManager = await open(backend, dataDir, (t) => configs[t])
    try {
      const logs: Record<string, Log> = {}
      for (const t of Object.keys(configs)) {
        logs[t] = await logManager.getOrCreateLog(t, 0)
        fill(logs[t], 4)
      }
      const manager = await LogCleanerManager.open({ dataDir, logs: () => logManager.allLogs(), cleanable: (t) => t !== 'internal', logger: silentLogger })
      // a: all dirty (ratio 1); b: three quarters cleaned already (checkpoint at 30: ratio about 0.25).
      manager.doneCleaning('b-0', null) // not in progress: only warns
      ;(manager as unknown as { checkpoints: Map<string, bigint> }).checkpoints.set('b-0', 30n)
      const first = await manager.grabFilthiestCompactedLog(T0)
      expect(first).toMatchObject({ key: 'a-0', firstDirtyOffset: 0n, firstUncleanableOffset: 40n, cleanBytes: 0, cleanableRatio: 1 })
      expect(first!.cleanableBytes).toBe(
        logs.a
          .segments()
          .slice(0, 4)
          .reduce((n, s) => n + s.size, 0),
      )
      expect(manager.cleaningState('a-0')).toEqual({ kind: 'in-progress' })
      expect(manager.lastPreCleanStats).toMatchObject({ maxDirtyRatio: 1, cleanablePartitions: 3 })
      // a is in progress, b and strict below their ratios: none now.
      expect(await manager.grabFilthiestCompactedLog(T0)).toBeNull()
      // A lower ratio for b makes it cleanable.
      logs.b.updateConfig({ ...logs.b.config, minCleanableDirtyRatio: 0.1 })
      const b = await manager.grabFilthiestCompactedLog(T0)
      expect(b).toMatchObject({ key: 'b-0', firstDirtyOffset: 30n })
      expect(b!.cleanableRatio).toBeCloseTo(0.25, 1)
      // max.compaction.lag.ms passed makes strict cleanable below its ratio.
      logs.strict.updateConfig({ ...logs.strict.config, maxCompactionLagMs: 1000 })
      expect(await manager.grabFilthiestCompactedLog(T0 + 60_000)).toMatchObject({ key: 'strict-0', maxCompactionDelayMs: 59_000 })
      // Uncleanable and paused logs are passed over.
      manager.doneCleaning('a-0', null)
      manager.markPartitionUncleanable('a-0')
      expect(manager.uncleanablePartitionsCount).toBe(1)
      expect(await manager.grabFilthiestCompactedLog(T0)).toBeNull()
    } finally {
      await logManager.close()
    }
  })

  it('checkpoints where a round ended and reads it back after a restart', async () => {
    const dataDir = tempDir()
    let logManager = await open(backend, dataDir, () => COMPACT, { cleaner: NO_THREADS })
    try {
      fill(await logManager.getOrCreateLog('c', 0), 4)
      fill(await logManager.getOrCreateLog('c', 1), 4)
      const manager = logManager.cleaner!.manager
      const ltc = await manager.grabFilthiestCompactedLog(T0)
      manager.doneCleaning(ltc!.key, 40n)
      await manager.flushCheckpoints()
      expect(readFileSync(join(dataDir, CLEANER_OFFSET_CHECKPOINT_FILE), 'utf8')).toBe(`0\n1\nc ${ltc!.log.partition} 40\n`)
    } finally {
      await logManager.close()
    }
    logManager = await open(backend, dataDir, () => COMPACT, { cleaner: NO_THREADS })
    try {
      const manager = logManager.cleaner!.manager
      expect([...manager.allCleanerCheckpoints()]).toHaveLength(1)
      const [[key, offset]] = [...manager.allCleanerCheckpoints()]
      expect(offset).toBe(40n)
      // The cleaned log is clean up to its active segment: the other one is chosen.
      const next = await manager.grabFilthiestCompactedLog(T0)
      expect(next!.key).not.toBe(key)
      expect(sectionSizes(logManager.getLog('c', Number(key.slice(2)))!.segments(), 40n, 40n).cleanableBytes).toBe(0)
    } finally {
      await logManager.close()
    }
  })

  it('abortAndPauseCleaning waits for the round under way, which is not checkpointed; pauses nest until resumed', async () => {
    const dataDir = tempDir()
    const logManager = await open(backend, dataDir, () => COMPACT, { cleaner: NO_THREADS })
    try {
      fill(await logManager.getOrCreateLog('c', 0), 4)
      const manager = logManager.cleaner!.manager
      const ltc = await manager.grabFilthiestCompactedLog(T0)
      let paused = false
      const pausing = manager.abortAndPauseCleaning('c-0').then(() => (paused = true))
      const second = manager.abortAndPauseCleaning('c-0')
      expect(manager.cleaningState('c-0')).toEqual({ kind: 'aborted' })
      expect(manager.abortSignal('c-0')!.aborted).toBe(true)
      await new Promise((r) => setImmediate(r))
      expect(paused).toBe(false)
      manager.doneCleaning(ltc!.key, 40n)
      await Promise.all([pausing, second])
      expect(manager.cleaningState('c-0')).toEqual({ kind: 'paused', count: 2 })
      expect(manager.allCleanerCheckpoints().get('c-0')).toBeUndefined()
      expect(await manager.grabFilthiestCompactedLog(T0)).toBeNull()
      manager.resumeCleaning(['c-0'])
      expect(await manager.grabFilthiestCompactedLog(T0)).toBeNull()
      manager.resumeCleaning(['c-0'])
      expect(manager.cleaningState('c-0')).toBeUndefined()
      expect((await manager.grabFilthiestCompactedLog(T0))!.key).toBe('c-0')
      manager.doneCleaning('c-0', 40n)
    } finally {
      await logManager.close()
    }
  })

  it('truncation brings the checkpoint back within the log; deletion drops it; retention passes over a log being cleaned', async () => {
    const dataDir = tempDir()
    const logManager = await open(backend, dataDir, () => ({ ...COMPACT, minCleanableDirtyRatio: 0.1, cleanupPolicy: ['compact', 'delete'], retentionMs: 1000 }), { cleaner: NO_THREADS })
    try {
      const log = await logManager.getOrCreateLog('c', 0)
      fill(log, 4)
      fill(await logManager.getOrCreateLog('c', 1), 4)
      const manager = logManager.cleaner!.manager
      const first = await manager.grabFilthiestCompactedLog(T0)
      manager.doneCleaning(first!.key, 40n)
      const second = await manager.grabFilthiestCompactedLog(T0)
      manager.doneCleaning(second!.key, 40n)
      expect(manager.allCleanerCheckpoints()).toEqual(
        new Map([
          ['c-0', 40n],
          ['c-1', 40n],
        ]),
      )

      await logManager.truncateTo(log, 25n)
      expect(log.logEndOffset()).toBe(25n)
      expect(manager.allCleanerCheckpoints().get('c-0')).toBe(20n)
      expect(manager.cleaningState('c-0')).toBeUndefined()

      // Retention (compact,delete) skips the log being cleaned, and cleans the other.
      for (let i = 25; i < 35; i++) log.append([{ key: `k${i % 5}`, value: `v${i}`, timestamp: T0 + i }])
      log.roll()
      const inProgress = await manager.grabFilthiestCompactedLog(T0)
      expect(inProgress!.key).toBe('c-0')
      expect(await logManager.cleanupLogs(Date.now())).toBeGreaterThan(0)
      expect(log.logStartOffset()).toBe(0n)
      expect(logManager.getLog('c', 1)!.logStartOffset()).toBe(41n)
      manager.doneCleaning('c-0', 35n)
      expect(await logManager.cleanupLogs(Date.now())).toBeGreaterThan(0)
      expect(log.logStartOffset()).toBe(35n)

      await logManager.deleteLog('c', 1)
      await manager.flushCheckpoints()
      expect(manager.allCleanerCheckpoints()).toEqual(new Map([['c-0', 35n]]))
      expect(readFileSync(join(dataDir, CLEANER_OFFSET_CHECKPOINT_FILE), 'utf8')).toBe('0\n1\nc 0 35\n')
    } finally {
      await logManager.close()
    }
  })
})
