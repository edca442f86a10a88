/**
 * New settings for an open log (`Log.updateConfig`, `LogManager.reconfigureTopic`), on both
 * backends: each setting takes effect from its next use, a bad value changes nothing.
 */
import { describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName, type LogConfig } from '../../ts/index.js'
import { tempDir } from '../helpers/tmp.js'

const value = (i: number) => ({ value: `value-${String(i).padStart(6, '0')}`, timestamp: 1_700_000_000_000 + i })

describe.each(['native', 'js'] as BackendName[])('log settings changed while open, on the %s backend', (backend) => {
  it('segment.bytes and max.message.bytes apply from the next append, retention.ms from the next check', async () => {
    const overrides: Partial<LogConfig> = {}
    const manager = await LogManager.open({ dataDir: tempDir(), backend, logger: silentLogger, retentionCheckIntervalMs: 0, topicConfig: () => overrides })
    try {
      const log = await manager.getOrCreateLog('t', 0)
      for (let i = 0; i < 20; i++) log.append([value(i)])
      expect(log.segments()).toHaveLength(1)

      overrides.segmentBytes = 200
      manager.reconfigureTopic('t')
      expect(log.config.segmentBytes).toBe(200)
      for (let i = 20; i < 40; i++) log.append([value(i)])
      const segments = log.segments()
      expect(segments.length).toBeGreaterThan(5)
      // Every segment rolled under the new setting holds at most 200 bytes (one batch may pass it alone).
      for (const s of segments.slice(1, -1)) expect(s.size).toBeLessThanOrEqual(200)

      overrides.maxMessageBytes = 10
      manager.reconfigureTopic('t')
      expect(() => log.append([value(99)])).toThrow(expect.objectContaining({ code: 'RECORD_TOO_LARGE' }))
      expect(log.logEndOffset()).toBe(40n)
      delete overrides.maxMessageBytes

      overrides.retentionMs = 1000
      manager.reconfigureTopic('t')
      // Timestamps are from 2023: every segment is past a second's retention, the active one too
      // (Kafka rolls a new empty one in its place).
      expect(await log.deleteOldSegments(Date.now())).toBe(segments.length)
      expect(log.logStartOffset()).toBe(40n)
    } finally {
      await manager.close()
    }
  })

  it('refuses a bad value and keeps the old settings', async () => {
    const manager = await LogManager.open({ dataDir: tempDir(), backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
    try {
      const log = await manager.getOrCreateLog('t', 0)
      const before = log.config
      expect(() => log.updateConfig({ ...before, segmentBytes: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
      expect(log.config).toEqual(before)
      log.append([value(1)])
      expect(log.logEndOffset()).toBe(1n)
    } finally {
      await manager.close()
    }
  })
})
