/** JsLog reads: whole batches, the isolation bound, minOneMessage, ranges, slices, decoded batches. */
import { describe, expect, it } from 'vitest'
import { tempDir } from '../../helpers/tmp.js'
import { T0, batch, expectCode, openLog } from './helpers.js'
import type { JsLog } from '../../../ts/storage/js/js-log.js'

const SIZE3 = batch(3).length

/** Batches of 3 records: [0-2] [3-5] [6-8] [9-11]. */
async function logOf4(config = {}): Promise<JsLog> {
  const log = await openLog(tempDir(), config)
  for (let i = 0; i < 4; i++) log.appendAsLeader(batch(3, 3 * i), 0, T0)
  log.updateHighWatermark(log.logEndOffset())
  return log
}

describe('read', () => {
  it('returns the whole batch holding a mid-batch offset, from its start', async () => {
    const log = await logOf4()
    const info = log.read(4n, 1 << 20, 'LOG_END', false)
    expect(info.fetchOffsetMetadata).toEqual({ messageOffset: 4n, segmentBaseOffset: 0n, relativePositionInSegment: SIZE3 })
    expect(info.records).toMatchObject({ position: SIZE3, size: 3 * SIZE3 })
    const bytes = log.readSlice(info.records)
    expect(bytes.readBigInt64BE(0)).toBe(3n)
    await log.close()
  })

  it('stops at the high watermark: the start of the batch holding it', async () => {
    const log = await logOf4()
    log.updateHighWatermark(6n)
    expect(log.read(0n, 1 << 20, 'HIGH_WATERMARK', false).records.size).toBe(2 * SIZE3)
    expect(log.read(0n, 1 << 20, 'TXN_COMMITTED', false).records.size).toBe(2 * SIZE3)
    expect(log.read(0n, 1 << 20, 'LOG_END', false).records.size).toBe(4 * SIZE3)
    log.updateHighWatermark(7n) // inside [6-8]: that batch is not readable yet
    expect(log.read(3n, 1 << 20, 'HIGH_WATERMARK', false).records.size).toBe(SIZE3)
    await log.close()
  })

  it('answers an offset at or past the bound (but <= LEO) with no records and its position', async () => {
    const log = await logOf4()
    log.updateHighWatermark(6n)
    const atHw = log.read(6n, 1000, 'HIGH_WATERMARK', true)
    expect(atHw.records.size).toBe(0)
    expect(atHw.fetchOffsetMetadata).toEqual({ messageOffset: 6n, segmentBaseOffset: 0n, relativePositionInSegment: 2 * SIZE3 })
    const past = log.read(10n, 1000, 'HIGH_WATERMARK', true)
    expect(past.records.size).toBe(0)
    expect(past.fetchOffsetMetadata.relativePositionInSegment).toBe(3 * SIZE3)
    const leo = log.read(12n, 1000, 'LOG_END', true)
    expect(leo.records.size).toBe(0)
    expect(leo.fetchOffsetMetadata).toEqual({ messageOffset: 12n, segmentBaseOffset: 0n, relativePositionInSegment: 4 * SIZE3 })
    await log.close()
  })

  it('throws OFFSET_OUT_OF_RANGE below the log start offset or past the LEO', async () => {
    const log = await logOf4()
    await expectCode(() => log.read(13n, 1000, 'LOG_END', true), 'OFFSET_OUT_OF_RANGE')
    log.maybeIncrementLogStartOffset(3n)
    await expectCode(() => log.read(2n, 1000, 'LOG_END', true), 'OFFSET_OUT_OF_RANGE')
    expect(log.read(3n, 1000, 'LOG_END', true).records.position).toBe(SIZE3)
    await log.close()
  })

  it('with minOneMessage returns one whole batch larger than maxBytes, else marks it incomplete', async () => {
    const log = await logOf4()
    const one = log.read(0n, 10, 'LOG_END', true)
    expect(one.records.size).toBe(SIZE3)
    expect(one.firstEntryIncomplete).toBe(false)
    const cut = log.read(0n, 10, 'LOG_END', false)
    expect(cut.records.size).toBe(10)
    expect(cut.firstEntryIncomplete).toBe(true)
    const partial = log.read(0n, SIZE3 + 10, 'LOG_END', false)
    expect(partial.records.size).toBe(SIZE3 + 10) // slices may end inside a batch
    expect(partial.firstEntryIncomplete).toBe(false)
    const none = log.read(0n, 0, 'LOG_END', false)
    expect(none.records.size).toBe(0)
    expect(none.firstEntryIncomplete).toBe(false)
    await log.close()
  })

  it('reads from the segment holding the offset, one segment at a time', async () => {
    const log = await logOf4({ segmentBytes: 2 * SIZE3 })
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 6n])
    const first = log.read(1n, 1 << 20, 'LOG_END', false)
    expect(first.records).toMatchObject({ position: 0, size: 2 * SIZE3 })
    expect(first.records.file).toMatch(/00000000000000000000\.log$/)
    const second = log.read(9n, 1 << 20, 'LOG_END', false)
    expect(second.fetchOffsetMetadata).toEqual({ messageOffset: 9n, segmentBaseOffset: 6n, relativePositionInSegment: SIZE3 })
    expect(second.records.file).toMatch(/00000000000000000006\.log$/)
    await log.close()
  })

  it('readBatches decodes whole batches across segments up to maxBytes, at least one', async () => {
    const log = await logOf4({ segmentBytes: 2 * SIZE3 })
    const all = log.readBatches(4n, 1 << 20, 'LOG_END')
    expect(all.map((b) => b.baseOffset)).toEqual([3n, 6n, 9n])
    expect(all[0].records.map((r) => r.offset)).toEqual([3n, 4n, 5n])
    expect(log.readBatches(0n, 1, 'LOG_END').map((b) => b.baseOffset)).toEqual([0n])
    expect(log.readBatches(0n, 2 * SIZE3 + 5, 'LOG_END').map((b) => b.baseOffset)).toEqual([0n, 3n])
    log.updateHighWatermark(9n)
    expect(log.readBatches(0n, 1 << 20, 'HIGH_WATERMARK').map((b) => b.baseOffset)).toEqual([0n, 3n, 6n])
    expect(log.readBatches(12n, 1 << 20, 'LOG_END')).toEqual([])
    await log.close()
  })

  it('readSlice returns the bytes of a slice, even after the segment is gone if the file is', async () => {
    const log = await logOf4()
    const info = log.read(0n, 1 << 20, 'LOG_END', false)
    expect(log.readSlice(info.records).length).toBe(4 * SIZE3)
    expect(log.readSlice({ ...info.records, size: 0 }).length).toBe(0)
    await log.close()
  })
})
