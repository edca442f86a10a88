/** JsLog truncation, log start offset, retention, offsets by timestamp, flush. */
import { existsSync, readFileSync, readdirSync, statSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildBatch } from '../../../ts/protocol/batch-builder.js'
import { tempDir } from '../../helpers/tmp.js'
import { T0, batch, expectCode, openLog } from './helpers.js'
import type { JsLog } from '../../../ts/storage/js/js-log.js'

const SIZE = batch(2).length

function segName(base: number | bigint, ext: string): string {
  return String(base).padStart(20, '0') + ext
}

/** Batches of 2 records [0-1] [2-3] ..., `perSegment` a segment, with epochs 0 then 1 from offset 6. */
async function logOf(dir: string, batches: number, perSegment: number, config = {}): Promise<JsLog> {
  const log = await openLog(dir, { segmentBytes: perSegment * SIZE, indexIntervalBytes: 0, ...config })
  for (let i = 0; i < batches; i++) log.appendAsLeader(batch(2, 2 * i), i < 3 ? 0 : 1, T0)
  log.updateHighWatermark(log.logEndOffset())
  return log
}

describe('truncateTo', () => {
  it('drops later segments, cuts the floor segment and its indexes, lowers HW and epochs', async () => {
    const dir = tempDir()
    const log = await logOf(dir, 8, 3) // segments 0, 6, 12
    await log.truncateTo(8n)
    expect(log.logEndOffset()).toBe(8n)
    expect(log.highWatermark()).toBe(8n)
    expect(log.segments().map((s) => [s.baseOffset, s.size])).toEqual([
      [0n, 3 * SIZE],
      [6n, SIZE],
    ])
    expect(existsSync(join(dir, segName(12, '.log')))).toBe(false)
    expect(readdirSync(dir).some((n) => n.endsWith('.deleted'))).toBe(false)
    // the floor segment is active again: its indexes preallocated, entries >= 8 gone
    expect(statSync(join(dir, segName(6, '.index'))).size).toBe(10 * 1024 * 1024)
    expect(log.epochEntries()).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 1, startOffset: 6n },
    ])
    await log.truncateTo(4n)
    expect(log.epochEntries()).toEqual([{ epoch: 0, startOffset: 0n }])
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'latin1')).toBe('0\n1\n0 0\n')
    expect(log.appendAsLeader(batch(1), 2, T0).firstOffset).toBe(4n)
    await log.close()
    const idx = readFileSync(join(dir, segName(0, '.index')))
    for (let i = 0; i < idx.length; i += 8) expect(idx.readUInt32BE(i)).toBeLessThan(5)
  })

  it('cuts at the batch holding an offset inside it, and ignores one at or past the LEO', async () => {
    const log = await logOf(tempDir(), 4, 10)
    await log.truncateTo(8n)
    await log.truncateTo(60n)
    expect(log.logEndOffset()).toBe(8n)
    await log.truncateTo(5n) // inside [4-5]: that whole batch goes
    expect(log.logEndOffset()).toBe(4n)
    expect(log.highWatermark()).toBe(4n)
    await expectCode(log.truncateTo(-1n), 'INVALID_ARGUMENT')
    await log.close()
  })

  it('truncates fully when the offset is below the first segment', async () => {
    const dir = tempDir()
    const log = await logOf(dir, 6, 2)
    log.maybeIncrementLogStartOffset(4n)
    await log.deleteOldSegments(T0)
    expect(log.segments()[0].baseOffset).toBe(4n)
    await log.truncateTo(2n)
    expect([log.logStartOffset(), log.logEndOffset(), log.highWatermark()]).toEqual([2n, 2n, 2n])
    expect(log.segments().map((s) => s.baseOffset)).toEqual([2n])
    await log.close()
  })
})

describe('truncateFullyAndStartAt', () => {
  it('deletes every segment and starts empty at the offset, epochs cleared', async () => {
    const dir = tempDir()
    const log = await logOf(dir, 6, 2)
    await log.truncateFullyAndStartAt(100n)
    expect([log.logStartOffset(), log.logEndOffset(), log.highWatermark(), log.recoveryPoint()]).toEqual([100n, 100n, 100n, 100n])
    expect(readdirSync(dir).sort()).toEqual([segName(100, '.index'), segName(100, '.log'), segName(100, '.timeindex'), 'leader-epoch-checkpoint'])
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'latin1')).toBe('0\n0\n')
    expect(log.epochEntries()).toEqual([])
    expect(log.appendAsFollower(buildBatch([{ value: 'x' }], { baseOffset: 100n, partitionLeaderEpoch: 9 })).firstOffset).toBe(100n)
    await log.truncateFullyAndStartAt(0n)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n])
    await log.close()
  })
})

describe('log start offset', () => {
  it('rises only up to the high watermark and moves the first epoch start', async () => {
    const log = await logOf(tempDir(), 6, 10)
    log.updateHighWatermark(6n)
    await expectCode(() => log.maybeIncrementLogStartOffset(7n), 'OFFSET_OUT_OF_RANGE')
    log.maybeIncrementLogStartOffset(3n)
    log.maybeIncrementLogStartOffset(1n)
    expect(log.logStartOffset()).toBe(3n)
    expect(log.epochEntries()[0]).toEqual({ epoch: 0, startOffset: 3n })
    expect(log.fetchOffsetByTimestamp(-2n)).toEqual({ timestamp: -1n, offset: 3n, leaderEpoch: 0 })
    await log.close()
  })
})

describe('deleteOldSegments', () => {
  it('by time: segments whose largest timestamp is older than retention.ms, the active one too', async () => {
    const dir = tempDir()
    const ab = (i: number) => buildBatch([{ value: 'a' }, { value: 'b' }], { nowMs: T0 + i * 1000 })
    const log = await openLog(dir, { segmentBytes: 2 * ab(0).length, retentionMs: 1000 })
    for (let i = 0; i < 5; i++) log.appendAsLeader(ab(i), 0, T0)
    log.updateHighWatermark(log.logEndOffset())
    const sizes = log.segments().map((s) => s.baseOffset)
    expect(sizes).toEqual([0n, 4n, 8n])
    // segment 0: max T0+1000; segment 4: T0+3000; segment 8 (active): T0+4000
    expect(await log.deleteOldSegments(T0 + 2000)).toBe(0)
    expect(await log.deleteOldSegments(T0 + 2001)).toBe(1)
    expect(log.logStartOffset()).toBe(4n)
    // The active segment goes too: a new empty one at the LEO takes its place.
    expect(await log.deleteOldSegments(T0 + 100_000)).toBe(2)
    expect(log.segments().map((s) => [s.baseOffset, s.size])).toEqual([[10n, 0]])
    expect(log.logStartOffset()).toBe(10n)
    expect(existsSync(join(dir, segName(0, '.log')))).toBe(false)
    expect(
      readdirSync(dir)
        .filter((n) => /^\d{20}\./.test(n))
        .sort(),
    ).toEqual(
      // The roll at the LEO wrote the producer state snapshot there, as Kafka's roll does.
      ['.index', '.log', '.snapshot', '.timeindex'].map((ext) => segName(10, ext)),
    )
    expect(await log.deleteOldSegments(T0 + 100_000)).toBe(0)
    await log.close()
  })

  it('by time falls back to the file modification time for segments without timestamps', async () => {
    const dir = tempDir()
    const log = await openLog(dir, { segmentBytes: SIZE, retentionMs: 1000 })
    for (let i = 0; i < 2; i++) log.appendAsLeader(buildBatch([{ value: 'a' }, { value: 'b' }], { nowMs: -1 }), 0, T0)
    log.updateHighWatermark(log.logEndOffset())
    utimesSync(join(dir, segName(0, '.log')), 1000, 1000)
    expect(await log.deleteOldSegments(1_000_000 + 500)).toBe(0)
    expect(await log.deleteOldSegments(1_000_000 + 1001)).toBe(1)
    await log.close()
  })

  it('by size: oldest first while the rest still holds retention.bytes', async () => {
    const log = await logOf(tempDir(), 7, 2, { retentionBytes: 3 * SIZE, retentionMs: -1 }) // 0,4,8,12(1 batch)
    expect(await log.deleteOldSegments(T0)).toBe(2)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([8n, 12n])
    expect(log.logStartOffset()).toBe(8n)
    await log.close()
  })

  it('by log start offset: segments wholly below it', async () => {
    const log = await logOf(tempDir(), 7, 2, { retentionMs: -1 })
    log.maybeIncrementLogStartOffset(9n)
    expect(await log.deleteOldSegments(T0)).toBe(2)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([8n, 12n])
    expect(log.logStartOffset()).toBe(9n)
    expect(log.epochEntries()).toEqual([{ epoch: 1, startOffset: 9n }])
    await log.close()
  })

  it('keeps segments that reach the high watermark', async () => {
    const log = await logOf(tempDir(), 7, 2, { retentionMs: 0 })
    log.updateHighWatermark(5n)
    expect(await log.deleteOldSegments(T0 + 100_000)).toBe(1) // [0-3] ends below 5; [4-7] does not
    expect(log.segments().map((s) => s.baseOffset)).toEqual([4n, 8n, 12n])
    await log.close()
  })
})

describe('fetchOffsetByTimestamp', () => {
  it('answers earliest, latest, max timestamp and the first record at or after a timestamp', async () => {
    const log = await openLog(tempDir(), { segmentBytes: 200, indexIntervalBytes: 0 })
    const ts = [10, 30, 20, 50, 40, 50, 60, 55]
    ts.forEach((t, i) => log.appendAsLeader(buildBatch([{ value: `v${i}`, timestamp: T0 + t }]), i < 4 ? 1 : 2, T0))
    expect(log.segments().length).toBeGreaterThan(1)
    expect(log.fetchOffsetByTimestamp(-2n)).toEqual({ timestamp: -1n, offset: 0n, leaderEpoch: 1 })
    expect(log.fetchOffsetByTimestamp(-1n)).toEqual({ timestamp: -1n, offset: 8n, leaderEpoch: 2 })
    expect(log.fetchOffsetByTimestamp(-3n)).toEqual({ timestamp: BigInt(T0 + 60), offset: 6n, leaderEpoch: 2 })
    expect(log.fetchOffsetByTimestamp(BigInt(T0 + 25))).toEqual({ timestamp: BigInt(T0 + 30), offset: 1n, leaderEpoch: 1 })
    expect(log.fetchOffsetByTimestamp(BigInt(T0 + 45))).toMatchObject({ timestamp: BigInt(T0 + 50), offset: 3n })
    expect(log.fetchOffsetByTimestamp(BigInt(T0 + 56))).toMatchObject({ timestamp: BigInt(T0 + 60), offset: 6n })
    expect(log.fetchOffsetByTimestamp(BigInt(T0 + 61))).toBeNull()
    await log.close()
  })

  it('scans the records inside a batch', async () => {
    const log = await openLog(tempDir())
    log.appendAsLeader(buildBatch([10, 40, 20, 60].map((t) => ({ value: 'x', timestamp: T0 + t }))), 0, T0)
    expect(log.fetchOffsetByTimestamp(BigInt(T0 + 30))).toMatchObject({ offset: 1n, timestamp: BigInt(T0 + 40) })
    expect(log.fetchOffsetByTimestamp(-3n)).toMatchObject({ offset: 3n, timestamp: BigInt(T0 + 60) })
    expect((await openLog(tempDir())).fetchOffsetByTimestamp(-3n)).toBeNull()
    await log.close()
  })
})

describe('flush', () => {
  it('moves the recovery point to the LEO', async () => {
    const log = await logOf(tempDir(), 3, 10)
    expect(log.recoveryPoint()).toBe(0n)
    await log.flush()
    expect(log.recoveryPoint()).toBe(6n)
    await log.close()
  })

  it('runs in the background once flush.messages are unflushed', async () => {
    const log = await openLog(tempDir(), { flushMessages: 4 })
    log.appendAsLeader(batch(2), 0, T0)
    log.appendAsLeader(batch(2), 0, T0)
    await log.close() // waits for the queued flush
    expect(log.recoveryPoint()).toBe(4n)
  })

  it('does not move the recovery point past a truncation that overlapped it', async () => {
    const log = await logOf(tempDir(), 3, 10)
    const flushing = log.flush()
    const truncating = log.truncateTo(2n)
    await Promise.all([flushing, truncating])
    expect(log.recoveryPoint()).toBe(2n)
    log.appendAsLeader(batch(2), 0, T0)
    await log.flush()
    expect(log.recoveryPoint()).toBe(4n)
    await log.close()
  })

  it('lets queued operations finish on close, then refuses new ones', async () => {
    const log = await logOf(tempDir(), 3, 10)
    const truncating = log.truncateTo(2n)
    const closing = log.close()
    expect(log.close()).toBe(closing)
    await truncating
    await closing
    expect(log.logEndOffset()).toBe(2n)
    await expectCode(log.flush(), 'LOG_CLOSED')
    await expectCode(log.deleteOldSegments(T0), 'LOG_CLOSED')
    await expectCode(log.truncateFullyAndStartAt(0n), 'LOG_CLOSED')
  })

  it('answers readSlice of a deleted segment with STORAGE_ERROR', async () => {
    const log = await logOf(tempDir(), 6, 2, { retentionMs: -1 })
    const slice = log.read(0n, 1 << 20, 'LOG_END', false).records
    log.maybeIncrementLogStartOffset(4n)
    await log.deleteOldSegments(T0)
    await expectCode(() => log.readSlice(slice), 'STORAGE_ERROR')
    await log.close()
  })

  it('delete() closes and removes the directory', async () => {
    const dir = tempDir()
    const log = await logOf(dir, 2, 10)
    await log.delete()
    expect(existsSync(dir)).toBe(false)
  })
})
