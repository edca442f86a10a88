/**
 * log.cleaner.threads=2 over several compacted logs on both engines, with appends going on: both
 * cleaner threads run rounds, and no log is ever cleaned by two rounds at once. Every
 * `Log.clean` call is watched (Log.prototype.clean wrapped before the cleaner starts): a second
 * round beginning on a log whose round has not ended fails the test, as does a thread that never
 * ran a round. After the cleaner stops, every key's latest value is in each log.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName, type LogConfig } from '../../ts/index.js'
import { Log } from '../../ts/storage/log.js'
import { DEFAULT_CLEANER_CONFIG } from '../../ts/storage/log-cleaner.js'
import type { Logger } from '../../ts/logger.js'
import { tempDir } from '../helpers/tmp.js'
import { latestValues } from '../helpers/compacted-log.js'

const LOGS = 6
const KEYS = 40
const COMPACT: Partial<LogConfig> = { cleanupPolicy: ['compact'], minCleanableDirtyRatio: 0.01 }

const originalClean = Log.prototype.clean
afterEach(() => {
  Log.prototype.clean = originalClean
})

/** A logger that hands every line to `onLine` (and drops it). */
function recordingLogger(onLine: (msg: string, fields: Record<string, unknown>) => void): Logger {
  const logger: Logger = {
    error: (msg, fields = {}) => onLine(msg, fields),
    warn: (msg, fields = {}) => onLine(msg, fields),
    info: (msg, fields = {}) => onLine(msg, fields),
    debug: () => {},
    child: () => logger,
  }
  return logger
}

describe.each(['native', 'js'] as BackendName[])('two cleaner threads on the %s engine', (backend) => {
  it(`clean ${LOGS} compacted logs together, never one log in two rounds at once`, async () => {
    const inFlight = new Map<string, number>()
    const overlaps: string[] = []
    let rounds = 0
    let maxConcurrent = 0
    let concurrent = 0
    Log.prototype.clean = async function (this: Log, request) {
      const key = `${this.topic}-${this.partition}`
      const already = inFlight.get(key) ?? 0
      if (already > 0) overlaps.push(`${key}: a round began while ${already} ran`)
      inFlight.set(key, already + 1)
      concurrent++
      maxConcurrent = Math.max(maxConcurrent, concurrent)
      try {
        return await originalClean.call(this, request)
      } finally {
        concurrent--
        inFlight.set(key, inFlight.get(key)! - 1)
        rounds++
      }
    }
    const roundsByThread = new Map<number, number>()
    const errors: string[] = []
    const logger = recordingLogger((msg, fields) => {
      if (msg === 'log cleaned') roundsByThread.set(fields.cleaner as number, (roundsByThread.get(fields.cleaner as number) ?? 0) + 1)
      if (msg.includes('failed') || msg.includes('error')) errors.push(`${msg} ${JSON.stringify(fields)}`)
    })
    const manager = await LogManager.open({
      dataDir: tempDir(),
      backend,
      logger,
      retentionCheckIntervalMs: 0,
      topicConfig: () => COMPACT,
      cleaner: { ...DEFAULT_CLEANER_CONFIG, numThreads: 2, backOffMs: 10, dedupeBufferSize: 1024 * 1024 },
    })
    const latest = new Map<string, string>()
    let logs: Log[] = []
    try {
      logs = await Promise.all(Array.from({ length: LOGS }, (_, p) => manager.getOrCreateLog('table', p)))
      // Appends to every log, a segment at a time, until both threads ran rounds (bounded).
      let i = 0
      for (let step = 0; step < 600; step++) {
        for (const log of logs) {
          for (let r = 0; r < 10; r++, i++) {
            const key = `k${i % KEYS}`
            const value = `v${i}`
            log.append([{ key, value }])
            latest.set(`${log.partition}/${key}`, value)
          }
          log.roll()
        }
        if (step >= 20 && [0, 1].every((t) => (roundsByThread.get(t) ?? 0) >= 3) && rounds >= 12) break
        await sleep(15)
      }
    } finally {
      await manager.cleaner!.shutdown()
    }
    expect(errors).toEqual([])
    expect(overlaps).toEqual([])
    expect(roundsByThread.get(0) ?? 0, 'rounds of thread 0').toBeGreaterThanOrEqual(3)
    expect(roundsByThread.get(1) ?? 0, 'rounds of thread 1').toBeGreaterThanOrEqual(3)
    // Two rounds did run at the same time (on different logs).
    expect(maxConcurrent).toBe(2)
    for (const log of logs) {
      const seen = latestValues(log)
      for (let k = 0; k < KEYS; k++) expect(seen.get(`k${k}`), `table-${log.partition} k${k}`).toBe(latest.get(`${log.partition}/k${k}`))
    }
    await manager.close()
  }, 120_000)
})
