/**
 * A cleaning round on a real full disk (a small tmpfs), for both backends: writing the cleaned
 * segments fails, the round is refused with an error, no `.cleaned` or `.swap` file is left, and
 * the log serves exactly what it held before; with space back, the next round cleans it.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName, type Log } from '../../ts/index.js'
import { latestValues } from '../helpers/compacted-log.js'
import { Filler, mountTmpfs } from '../helpers/tmpfs.js'

const KEYS = 50

function allRecords(log: Log): string[] {
  const out: string[] = []
  for (let offset = log.logStartOffset(); offset < log.logEndOffset();) {
    const records = log.readRecords(offset, { isolation: 'LOG_END', maxBytes: 1 << 20 })
    if (records.length === 0) break
    for (const r of records) out.push(`${r.offset}:${r.key}:${r.value}`)
    offset = records[records.length - 1].offset + 1n
  }
  return out
}

function round(log: Log) {
  const segments = log.segments()
  return log.clean({
    firstDirtyOffset: log.logStartOffset(),
    firstUncleanableOffset: segments[segments.length - 1].baseOffset,
    currentTimeMs: BigInt(Date.now()),
    deleteRetentionMs: 86_400_000n,
    dedupeBufferSize: 1 << 20,
  })
}

describe.each(['native', 'js'] as BackendName[])('cleaning on a full disk (%s engine)', (backend) => {
  it('fails the round, leaves no cleaning files and the log as it was; cleans once space is back', async () => {
    const disk = mountTmpfs(4 * 1024 * 1024)
    const dataDir = join(disk, 'data')
    const manager = await LogManager.open({
      dataDir,
      backend,
      logger: silentLogger,
      retentionCheckIntervalMs: 0,
      checkpointIntervalMs: 3_600_000,
      defaultConfig: { cleanupPolicy: ['compact'], segmentBytes: 64 * 1024, segmentIndexBytes: 4096 },
    })
    const filler = new Filler(join(disk, 'filler'))
    try {
      const log = await manager.getOrCreateLog('table', 0)
      for (let i = 0; i < 2_000; i++) log.append([{ key: `k${i % KEYS}`, value: `v${i}`.padEnd(100, '.') }])
      expect(log.segments().length).toBeGreaterThan(2)
      await log.flush()
      const before = allRecords(log)
      filler.fill()

      // An I/O error (ENOSPC), as Kafka's cleaner gets one: the log is marked uncleanable, not changed.
      await expect(round(log)).rejects.toMatchObject({ code: expect.stringMatching(/^(STORAGE_ERROR|KAFKA_STORAGE_ERROR)$/) })
      const left = readdirSync(log.dir).filter((f) => /\.(cleaned|swap|deleted)$/.test(f) || f.endsWith('.scratch'))
      expect(left).toEqual([])
      expect(allRecords(log)).toEqual(before)

      filler.free(Number.MAX_SAFE_INTEGER)
      const cleaned = await round(log)
      expect(cleaned.aborted).toBe(false)
      expect(cleaned.recordsRetained).toBeLessThan(cleaned.recordsRead)
      const latest = latestValues(log)
      for (let k = 0; k < KEYS; k++) {
        const last = [...before].reverse().find((r) => r.split(':')[1] === `k${k}`)!
        expect(latest.get(`k${k}`), `k${k}`).toBe(last.split(':')[2])
      }
      expect(allRecords(log).length).toBeLessThan(before.length)
    } finally {
      filler.remove()
      await manager.close()
    }
  })
})
