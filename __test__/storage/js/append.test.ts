/** JsLog appends: leader offset assignment, epochs, validation, follower rules, the index rule, rolls. */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { validateBatch, updateCrc, CONTROL_FLAG_MASK, ATTRIBUTES_OFFSET } from '../../../ts/protocol/batch-header.js'
import { decodeBatch } from '../../../ts/protocol/records.js'
import { tempDir } from '../../helpers/tmp.js'
import { T0, batch, expectCode, openLog, replicaBatch } from './helpers.js'

const SEG0 = '00000000000000000000'

function indexEntries(file: string): Array<[number, number]> {
  const b = readFileSync(file)
  const out: Array<[number, number]> = []
  for (let i = 0; i + 8 <= b.length; i += 8) out.push([b.readUInt32BE(i), b.readUInt32BE(i + 4)])
  return out
}

function timeEntries(file: string): Array<[bigint, number]> {
  const b = readFileSync(file)
  const out: Array<[bigint, number]> = []
  for (let i = 0; i + 12 <= b.length; i += 12) out.push([b.readBigInt64BE(i), b.readUInt32BE(i + 8)])
  return out
}

describe('leader appends', () => {
  it('assign offsets from the LEO and stamp the leader epoch, keeping a valid CRC', async () => {
    const dir = tempDir()
    const log = await openLog(dir)
    const input = batch(3)
    const copy = Buffer.from(input)
    log.appendAsLeader(batch(1), 7, T0)
    await log.truncateTo(0n)
    const a = log.appendAsLeader(input, 7, T0)
    expect(input).toEqual(copy) // the caller's buffer is not modified
    expect(a).toMatchObject({ firstOffset: 0n, lastOffset: 2n, recordCount: 3, batchCount: 1, logAppendTime: -1n })
    const b = log.appendAsLeader(Buffer.concat([batch(2, 3), batch(4, 5)]), 7, T0)
    expect(b).toMatchObject({ firstOffset: 3n, lastOffset: 8n, recordCount: 6, batchCount: 2, maxTimestamp: BigInt(T0 + 8), offsetOfMaxTimestamp: 8n })
    expect(log.logEndOffset()).toBe(9n)
    const bytes = readFileSync(join(dir, `${SEG0}.log`))
    let at = 0
    const seen: Array<[bigint, bigint, number]> = []
    while (at < bytes.length) {
      const h = validateBatch(bytes, at) // throws on a bad CRC
      seen.push([h.baseOffset, h.baseOffset + BigInt(h.lastOffsetDelta), h.partitionLeaderEpoch])
      at += 12 + h.batchLength
    }
    expect(seen).toEqual([
      [0n, 2n, 7],
      [3n, 4n, 7],
      [5n, 8n, 7],
    ])
    expect(decodeBatch(bytes, 0).records.map((r) => r.offset)).toEqual([0n, 1n, 2n])
    expect(log.epochEntries()).toEqual([{ epoch: 7, startOffset: 0n }])
    await log.close()
  })

  it('with LogAppendTime set the timestamp type and maxTimestamp = now, with a new CRC', async () => {
    const dir = tempDir()
    const log = await openLog(dir, { messageTimestampType: 'LogAppendTime' })
    const info = log.appendAsLeader(batch(2), 0, T0 + 5000)
    expect(info.logAppendTime).toBe(BigInt(T0 + 5000))
    expect(info.maxTimestamp).toBe(BigInt(T0 + 5000))
    const [got] = log.readBatches(0n, 1 << 20, 'LOG_END')
    expect(got.timestampType).toBe('LogAppendTime')
    expect(got.maxTimestamp).toBe(BigInt(T0 + 5000))
    expect(got.records.map((r) => r.timestamp)).toEqual([BigInt(T0 + 5000), BigInt(T0 + 5000)])
    expect(() => validateBatch(readFileSync(join(dir, `${SEG0}.log`)))).not.toThrow()
    await log.close()
  })

  it('refuse the whole append when any batch is bad, writing nothing', async () => {
    const dir = tempDir()
    const log = await openLog(dir, { maxMessageBytes: 500 })
    log.appendAsLeader(batch(1), 0, T0)
    const size = statSync(join(dir, `${SEG0}.log`)).size
    const badCrc = batch(1)
    badCrc[badCrc.length - 1] ^= 0xff
    await expectCode(() => log.appendAsLeader(Buffer.concat([batch(1), badCrc]), 0, T0), 'CORRUPT_RECORD')
    await expectCode(() => log.appendAsLeader(batch(1, 0, { valueBytes: 600 }), 0, T0), 'RECORD_TOO_LARGE')
    await expectCode(() => log.appendAsLeader(batch(2).subarray(0, 70), 0, T0), 'CORRUPT_RECORD')
    const control = batch(1)
    control.writeInt16BE(control.readInt16BE(ATTRIBUTES_OFFSET) | CONTROL_FLAG_MASK, ATTRIBUTES_OFFSET)
    updateCrc(control)
    await expectCode(() => log.appendAsLeader(control, 0, T0), 'INVALID_RECORD')
    const lying = batch(3)
    lying.writeInt32BE(5, 57) // recordsCount 5 with lastOffsetDelta 2
    updateCrc(lying)
    await expectCode(() => log.appendAsLeader(lying, 0, T0), 'INVALID_RECORD')
    const magic1 = batch(1)
    magic1[16] = 1
    await expectCode(() => log.appendAsLeader(magic1, 0, T0), 'UNSUPPORTED_MAGIC')
    // Kafka's order: sizes before the magic, so garbage reads as a truncated batch
    await expectCode(() => log.appendAsLeader(Buffer.from('not a record batch at all, but long enough for a header......'), 0, T0), 'CORRUPT_RECORD')
    const tiny = batch(1)
    tiny.writeInt32BE(10, 8)
    await expectCode(() => log.appendAsLeader(tiny, 0, T0), 'CORRUPT_RECORD')
    expect(log.logEndOffset()).toBe(1n)
    expect(statSync(join(dir, `${SEG0}.log`)).size).toBe(size)
    await log.close()
  })

  it('record each new leader epoch in leader-epoch-checkpoint', async () => {
    const dir = tempDir()
    const log = await openLog(dir)
    expect(existsSync(join(dir, 'leader-epoch-checkpoint'))).toBe(false)
    log.appendAsLeader(batch(2), 0, T0)
    log.appendAsLeader(batch(2), 0, T0)
    log.appendAsLeader(batch(1), 3, T0)
    log.appendAsLeader(batch(1), 5, T0)
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'latin1')).toBe('0\n3\n0 0\n3 4\n5 5\n')
    expect(log.latestEpoch()).toBe(5)
    expect(log.endOffsetForEpoch(3)).toEqual({ epoch: 3, endOffset: 5n })
    expect(log.endOffsetForEpoch(5)).toEqual({ epoch: 5, endOffset: 6n })
    await log.close()
  })
})

describe('follower appends', () => {
  it('keep offsets and epochs and must continue the log exactly', async () => {
    const dir = tempDir()
    const log = await openLog(dir)
    const info = log.appendAsFollower(Buffer.concat([replicaBatch(0n, 3, 1), replicaBatch(3n, 2, 2)]))
    expect(info).toMatchObject({ firstOffset: 0n, lastOffset: 4n, batchCount: 2 })
    expect(log.epochEntries()).toEqual([
      { epoch: 1, startOffset: 0n },
      { epoch: 2, startOffset: 3n },
    ])
    await expectCode(() => log.appendAsFollower(replicaBatch(6n, 1)), 'UNEXPECTED_APPEND_OFFSET') // gap
    await expectCode(() => log.appendAsFollower(replicaBatch(4n, 1)), 'UNEXPECTED_APPEND_OFFSET') // overlap
    await expectCode(() => log.appendAsFollower(Buffer.concat([replicaBatch(5n, 2), replicaBatch(8n, 1)])), 'UNEXPECTED_APPEND_OFFSET')
    const bad = replicaBatch(5n, 1)
    bad[bad.length - 2] ^= 1
    await expectCode(() => log.appendAsFollower(bad), 'CORRUPT_RECORD')
    expect(log.logEndOffset()).toBe(5n)
    await log.close()
  })

  it('leave out a partial trailing batch (a fetch response can end inside one)', async () => {
    const log = await openLog(tempDir())
    const whole = replicaBatch(0n, 2)
    const next = replicaBatch(2n, 2)
    const info = log.appendAsFollower(Buffer.concat([whole, next.subarray(0, 30)]))
    expect(info.validBytes).toBe(whole.length)
    expect(log.logEndOffset()).toBe(2n)
    expect(log.appendAsFollower(next.subarray(0, 10)).batchCount).toBe(0)
    await log.close()
  })
})

describe('the offset index rule (index.interval.bytes)', () => {
  it('checks the bytes appended before a batch, then adds the batch: entries at batches 3, 6, 9', async () => {
    const dir = tempDir()
    const size = batch(1).length
    const log = await openLog(dir, { indexIntervalBytes: 2 * size })
    for (let i = 0; i < 11; i++) log.appendAsLeader(batch(1, i), 0, T0)
    await log.close()
    expect(indexEntries(join(dir, `${SEG0}.index`))).toEqual([
      [3, 3 * size],
      [6, 6 * size],
      [9, 9 * size],
    ])
    // time index: the same moments, plus the segment's max timestamp on close
    expect(timeEntries(join(dir, `${SEG0}.timeindex`))).toEqual([
      [BigInt(T0 + 3), 3],
      [BigInt(T0 + 6), 6],
      [BigInt(T0 + 9), 9],
      [BigInt(T0 + 10), 10],
    ])
  })

  it('indexes each batch of a multi-batch append by its own lastOffset and position', async () => {
    const dir = tempDir()
    const size = batch(2).length
    const log = await openLog(dir, { indexIntervalBytes: 0 })
    log.appendAsLeader(Buffer.concat([batch(2), batch(2), batch(2)]), 0, T0)
    await log.close()
    expect(indexEntries(join(dir, `${SEG0}.index`))).toEqual([
      [3, size],
      [5, 2 * size],
    ])
  })

  it('writes a time index entry only when the max timestamp grew', async () => {
    const dir = tempDir()
    const log = await openLog(dir, { indexIntervalBytes: 0 })
    log.appendAsLeader(batch(1, 50), 0, T0) // ts T0+50
    log.appendAsLeader(batch(1, 60), 0, T0) // entry (T0+60, 1)
    log.appendAsLeader(batch(1, 10), 0, T0) // older: no time entry
    log.appendAsLeader(batch(1, 70), 0, T0) // entry (T0+70, 3)
    await log.close()
    expect(indexEntries(join(dir, `${SEG0}.index`)).map(([r]) => r)).toEqual([1, 2, 3])
    expect(timeEntries(join(dir, `${SEG0}.timeindex`))).toEqual([
      [BigInt(T0 + 60), 1],
      [BigInt(T0 + 70), 3],
    ])
  })
})

describe('segment roll', () => {
  it('rolls when segment.bytes would be exceeded, the new base being the batch base offset', async () => {
    const dir = tempDir()
    const size = batch(2).length
    const log = await openLog(dir, { segmentBytes: 3 * size })
    for (let i = 0; i < 7; i++) log.appendAsLeader(batch(2, 2 * i), 0, T0)
    expect(log.segments().map((s) => [s.baseOffset, s.size])).toEqual([
      [0n, 3 * size],
      [6n, 3 * size],
      [12n, size],
    ])
    await log.close()
  })

  it('rolls a non-empty segment once segment.ms has passed since its first append', async () => {
    const log = await openLog(tempDir(), { segmentMs: 1000 })
    // The clock after the records' timestamps (T0 on): records an hour ahead of it are refused.
    log.appendAsLeader(batch(1), 0, T0 + 10_000)
    log.appendAsLeader(batch(1), 0, T0 + 11_000)
    expect(log.segments()).toHaveLength(1)
    log.appendAsLeader(batch(1), 0, T0 + 11_001)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 2n])
    log.appendAsLeader(batch(1), 0, T0 + 11_900)
    expect(log.segments()).toHaveLength(2)
    await log.close()
  })

  it('rolls when an index is full (the time index keeps a slot for the roll entry)', async () => {
    const dir = tempDir()
    // offset index: 3 entries; time index: 2 slots, full at 1
    const log = await openLog(dir, { segmentIndexBytes: 24, indexIntervalBytes: 0 })
    for (let i = 0; i < 5; i++) log.appendAsLeader(batch(1, i), 0, T0)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 2n, 4n])
    expect(timeEntries(join(dir, `${SEG0}.timeindex`))).toEqual([[BigInt(T0 + 1), 1]])
    await log.close()
  })

  it("rolls when a relative offset would pass Integer.MAX_VALUE (Kafka's canConvertToRelativeOffset)", async () => {
    const log = await openLog(tempDir())
    const big = (base: bigint, lastOffsetDelta: number) => {
      const b = replicaBatch(base, 1)
      b.writeInt32BE(lastOffsetDelta, 23)
      updateCrc(b)
      return b
    }
    log.appendAsFollower(big(0n, 0x7fffffff - 1)) // 0 .. 2^31-2
    log.appendAsFollower(big(2n ** 31n - 1n, 0)) // 2^31-1: relative offset 2^31-1 still fits
    expect(log.segments()).toHaveLength(1)
    log.appendAsFollower(big(2n ** 31n, 0)) // relative 2^31: rolls
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 2n ** 31n])
    expect(log.logEndOffset()).toBe(2n ** 31n + 1n)
    await log.close()
  })

  it('trims the old segment indexes on roll and keeps the active ones preallocated', async () => {
    const dir = tempDir()
    const size = batch(1).length
    const log = await openLog(dir, { segmentBytes: 2 * size, indexIntervalBytes: 0, segmentIndexBytes: 1000 })
    for (let i = 0; i < 3; i++) log.appendAsLeader(batch(1, i), 0, T0)
    const base2 = '00000000000000000002'
    expect(statSync(join(dir, `${SEG0}.index`)).size).toBe(8)
    // one entry from the append rule, one for the max timestamp on roll
    expect(timeEntries(join(dir, `${SEG0}.timeindex`))).toEqual([[BigInt(T0 + 1), 1]])
    expect(statSync(join(dir, `${base2}.index`)).size).toBe(1000)
    expect(statSync(join(dir, `${base2}.timeindex`)).size).toBe(996)
    await log.close()
    expect(statSync(join(dir, `${base2}.index`)).size).toBe(0)
    expect(timeEntries(join(dir, `${base2}.timeindex`))).toEqual([[BigInt(T0 + 2), 0]])
    // Producer state snapshots (Kafka's): at the roll (2) and at close (the LEO, 3).
    expect(readdirSync(dir).sort()).toEqual(
      [
        `${SEG0}.index`,
        `${SEG0}.log`,
        `${SEG0}.timeindex`,
        `${base2}.index`,
        `${base2}.log`,
        `${base2}.snapshot`,
        `${base2}.timeindex`,
        '00000000000000000003.snapshot',
        'leader-epoch-checkpoint',
      ].sort(),
    )
  })

  it('roll() starts a new segment at the LEO, and does nothing on an empty active segment', async () => {
    const log = await openLog(tempDir())
    log.roll()
    expect(log.segments()).toHaveLength(1)
    log.appendAsLeader(batch(2), 0, T0)
    log.roll()
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 2n])
    await log.close()
  })
})

describe('a closed log', () => {
  it('refuses every call with LOG_CLOSED', async () => {
    const log = await openLog(tempDir())
    await log.close()
    await log.close()
    await expectCode(() => log.appendAsLeader(batch(1), 0, T0), 'LOG_CLOSED')
    await expectCode(() => log.read(0n, 100, 'LOG_END', true), 'LOG_CLOSED')
    await expectCode(log.truncateTo(0n), 'LOG_CLOSED')
  })
})
