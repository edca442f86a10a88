/** Opening a log: recovery after an unclean stop, index rebuilds, the epoch checkpoint, Kafka's files. */
import { appendFileSync, cpSync, existsSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { tempDir } from '../../helpers/tmp.js'
import { T0, batch, openLog } from './helpers.js'

const SEG0 = '00000000000000000000'
const SIZE = batch(2).length
const FIXTURE = join(__dirname, '../../fixtures/kafka/fixture-0')

/** Writes `n` batches of 2 records, `perSegment` batches a segment, closes, returns the dir. */
async function writeLog(n: number, perSegment = 1000, config = {}): Promise<string> {
  const dir = tempDir()
  const log = await openLog(dir, { segmentBytes: perSegment * SIZE, indexIntervalBytes: SIZE, ...config })
  for (let i = 0; i < n; i++) log.appendAsLeader(batch(2, 2 * i), 0, T0)
  await log.close()
  return dir
}

function segName(base: number, ext: string): string {
  return String(base).padStart(20, '0') + ext
}

describe('recovery after an unclean stop', () => {
  it('cuts a partial trailing batch and says where and why', async () => {
    const dir = await writeLog(5)
    const file = join(dir, segName(0, '.log'))
    truncateSync(file, 4 * SIZE + 30)
    const log = await openLog(dir, {}, { hadCleanShutdown: false })
    expect(log.logEndOffset()).toBe(8n)
    const r = log.recoveryReport()
    expect(r).toMatchObject({ segmentsRecovered: 1, bytesTruncated: 30, segmentsDeleted: 0 })
    expect(r.messages.join('\n')).toContain(`${file}: partial batch`)
    expect(r.messages.join('\n')).toContain(`position ${4 * SIZE}`)
    expect(statSync(file).size).toBe(4 * SIZE)
    expect(log.recoveryPoint()).toBe(0n)
    expect(log.highWatermark()).toBe(8n)
    await log.close()
  })

  it('cuts at a corrupt batch in the middle and deletes every later segment', async () => {
    const dir = await writeLog(9, 3) // segments 0, 6, 12
    const file = join(dir, segName(6, '.log'))
    const bytes = readFileSync(file)
    bytes[SIZE + 70] ^= 0xff // inside the second batch of segment 6
    writeFileSync(file, bytes)
    const log = await openLog(dir, {}, { hadCleanShutdown: false, recoveryPoint: 6n })
    const r = log.recoveryReport()
    expect(r).toMatchObject({ segmentsRecovered: 1, bytesTruncated: 2 * SIZE, segmentsDeleted: 1 })
    expect(r.messages.join('\n')).toMatch(/CRC mismatch/)
    expect(log.logEndOffset()).toBe(8n)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 6n])
    expect(existsSync(join(dir, segName(12, '.log')))).toBe(false)
    expect(existsSync(join(dir, segName(12, '.index')))).toBe(false)
    log.appendAsLeader(batch(1), 0, T0)
    expect(log.logEndOffset()).toBe(9n)
    await log.close()
  })

  it('walks only the segments from the one holding the recovery point', async () => {
    const dir = await writeLog(9, 3)
    const log = await openLog(dir, {}, { hadCleanShutdown: false, recoveryPoint: 13n })
    expect(log.recoveryReport().segmentsRecovered).toBe(1)
    expect(log.recoveryPoint()).toBe(13n)
    await log.close()
    const again = await openLog(dir, {}, { hadCleanShutdown: false, recoveryPoint: 0n })
    expect(again.recoveryReport().segmentsRecovered).toBe(3)
    await again.close()
  })

  it('refuses offsets that go backwards', async () => {
    const dir = await writeLog(3)
    const file = join(dir, segName(0, '.log'))
    appendFileSync(file, batch(2, 0, { baseOffset: 2n })) // overlaps [2-3]
    const log = await openLog(dir, {}, { hadCleanShutdown: false })
    expect(log.logEndOffset()).toBe(6n)
    expect(log.recoveryReport().messages.join('\n')).toMatch(/baseOffset 2 is below the expected 6/)
    await log.close()
  })

  it('rebuilds the same indexes that appends wrote, also from a preallocated (never trimmed) index', async () => {
    const dir = await writeLog(12, 1000, { indexIntervalBytes: 2 * SIZE })
    const index = readFileSync(join(dir, segName(0, '.index')))
    const timeindex = readFileSync(join(dir, segName(0, '.timeindex')))
    expect(index.length).toBeGreaterThan(0)
    // A crash leaves the active index preallocated: zeros after the entries.
    writeFileSync(join(dir, segName(0, '.index')), Buffer.concat([index, Buffer.alloc(4096)]))
    const log = await openLog(dir, { indexIntervalBytes: 2 * SIZE }, { hadCleanShutdown: false })
    expect(log.logEndOffset()).toBe(24n)
    await log.close()
    expect(readFileSync(join(dir, segName(0, '.index')))).toEqual(index)
    expect(readFileSync(join(dir, segName(0, '.timeindex')))).toEqual(timeindex)
  })
})

describe('opening after a clean stop', () => {
  it('trusts the segments and reads trailing zeros of a preallocated index as no entries', async () => {
    const dir = await writeLog(12, 1000, { indexIntervalBytes: 2 * SIZE })
    const index = readFileSync(join(dir, segName(0, '.index')))
    writeFileSync(join(dir, segName(0, '.index')), Buffer.concat([index, Buffer.alloc(800)]))
    const log = await openLog(dir)
    expect(log.recoveryReport()).toMatchObject({ segmentsRecovered: 0, indexesRebuilt: 0 })
    expect(log.logEndOffset()).toBe(24n)
    expect(log.recoveryPoint()).toBe(24n)
    expect(log.read(13n, 1 << 20, 'LOG_END', false).records.position).toBe(6 * SIZE)
    await log.close()
    expect(readFileSync(join(dir, segName(0, '.index')))).toEqual(index)
  })

  it('rebuilds a missing or corrupt index with a message', async () => {
    const dir = await writeLog(9, 3, { indexIntervalBytes: 0 })
    const index6 = readFileSync(join(dir, segName(6, '.index')))
    const timeindex0 = readFileSync(join(dir, segName(0, '.timeindex')))
    rmSync(join(dir, segName(6, '.index')))
    writeFileSync(join(dir, segName(0, '.timeindex')), Buffer.concat([timeindex0, Buffer.alloc(5)]))
    const log = await openLog(dir, { indexIntervalBytes: 0 })
    const r = log.recoveryReport()
    expect(r.indexesRebuilt).toBe(2)
    expect(r.messages.join('\n')).toMatch(/offset index .*00000000000000000006\.index is missing/)
    expect(r.messages.join('\n')).toMatch(/time index .* is corrupt: length/)
    await log.close()
    expect(readFileSync(join(dir, segName(6, '.index')))).toEqual(index6)
    expect(readFileSync(join(dir, segName(0, '.timeindex')))).toEqual(timeindex0)
  })

  it('recovers a last segment that does not end on a batch boundary', async () => {
    const dir = await writeLog(3)
    appendFileSync(join(dir, segName(0, '.log')), Buffer.alloc(20, 1))
    const log = await openLog(dir)
    expect(log.logEndOffset()).toBe(6n)
    expect(log.recoveryReport().bytesTruncated).toBe(20)
    await log.close()
  })

  it('deletes orphan index files and leftover .deleted files', async () => {
    const dir = await writeLog(1)
    writeFileSync(join(dir, segName(50, '.index')), Buffer.alloc(8))
    writeFileSync(join(dir, segName(40, '.log.deleted')), 'x')
    const log = await openLog(dir)
    expect(log.recoveryReport().messages.join('\n')).toMatch(/orphan index/)
    await log.close()
    expect(readdirSync(dir).some((n) => n.includes('.deleted') || n.startsWith(segName(50, '')))).toBe(false)
  })
})

describe('opening, offsets', () => {
  it('starts an empty log with one empty segment at the log start offset', async () => {
    const dir = tempDir()
    const log = await openLog(dir, {}, { logStartOffset: 42n })
    expect(log.segments().map((s) => s.baseOffset)).toEqual([42n])
    expect([log.logStartOffset(), log.logEndOffset(), log.highWatermark()]).toEqual([42n, 42n, 42n])
    expect(statSync(join(dir, segName(42, '.index'))).size).toBe(10 * 1024 * 1024)
    await log.close()
    expect(statSync(join(dir, segName(42, '.index'))).size).toBe(0)
  })

  it('keeps a log start offset within the log, and ignores one past the LEO rather than delete anything', async () => {
    const dir = await writeLog(3)
    const log = await openLog(dir, {}, { logStartOffset: 2n })
    expect(log.logStartOffset()).toBe(2n)
    const end = log.logEndOffset()
    await log.close()
    const past = await openLog(dir, {}, { logStartOffset: 100n })
    expect(past.segments().map((s) => s.baseOffset)).toEqual([0n])
    expect([past.logStartOffset(), past.logEndOffset()]).toEqual([0n, end])
    expect(past.recoveryReport().segmentsDeleted).toBe(0)
    expect(past.recoveryReport().messages.join('\n')).toMatch(/log start offset checkpoint says 100, beyond the log end offset/)
    await past.close()
  })

  it('rebuilds an unreadable leader-epoch-checkpoint from the batch headers', async () => {
    const dir = tempDir()
    const log = await openLog(dir)
    log.appendAsLeader(batch(2), 1, T0)
    log.appendAsLeader(batch(2), 4, T0)
    await log.close()
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'latin1')).toBe('0\n2\n1 0\n4 2\n')
    writeFileSync(join(dir, 'leader-epoch-checkpoint'), 'garbage')
    const again = await openLog(dir)
    expect(again.epochEntries()).toEqual([
      { epoch: 1, startOffset: 0n },
      { epoch: 4, startOffset: 2n },
    ])
    expect(again.recoveryReport().messages.join('\n')).toMatch(/leader-epoch-checkpoint is unreadable/)
    await again.close()
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'latin1')).toBe('0\n2\n1 0\n4 2\n')
  })

  it('cuts the epoch cache to the recovered LEO', async () => {
    const dir = tempDir()
    const log = await openLog(dir)
    log.appendAsLeader(batch(2), 1, T0)
    log.appendAsLeader(batch(2), 4, T0)
    await log.close()
    truncateSync(join(dir, segName(0, '.log')), SIZE + 10)
    const again = await openLog(dir, {}, { hadCleanShutdown: false })
    expect(again.epochEntries()).toEqual([{ epoch: 1, startOffset: 0n }])
    await again.close()
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'latin1')).toBe('0\n1\n1 0\n')
  })
})

describe('a partition written by Apache Kafka 4.4', () => {
  it('recovers from scratch into the very index files Kafka wrote', async () => {
    const dir = join(tempDir(), 'fixture-0')
    cpSync(FIXTURE, dir, { recursive: true })
    const log = await openLog(dir, { segmentBytes: 16384, indexIntervalBytes: 1024, retentionMs: -1 }, { hadCleanShutdown: false })
    expect(log.recoveryReport()).toMatchObject({ segmentsRecovered: 4, bytesTruncated: 0, segmentsDeleted: 0 })
    expect(log.logEndOffset()).toBe(274n)
    expect(log.epochEntries()).toEqual([{ epoch: 0, startOffset: 0n }])
    await log.close()
    for (const base of [0, 106, 213, 264]) {
      for (const ext of ['.log', '.index', '.timeindex']) {
        expect(readFileSync(join(dir, segName(base, ext))), segName(base, ext)).toEqual(readFileSync(join(FIXTURE, segName(base, ext))))
      }
    }
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'))).toEqual(readFileSync(join(FIXTURE, 'leader-epoch-checkpoint')))
  })

  it('opens it clean, finds records by offset and timestamp, and leaves its files as they were', async () => {
    const dir = join(tempDir(), 'fixture-0')
    cpSync(FIXTURE, dir, { recursive: true })
    const log = await openLog(dir, { segmentBytes: 16384, indexIntervalBytes: 1024, retentionMs: -1 })
    expect(log.recoveryReport()).toMatchObject({ segmentsRecovered: 0, indexesRebuilt: 0 })
    expect(log.logEndOffset()).toBe(274n)
    const [b] = log.readBatches(150n, 1, 'LOG_END')
    expect([b.baseOffset, b.lastOffset, b.compression]).toEqual([139n, 158n, 'none'])
    // seq 150: 1700000150000; the first record at or after it
    expect(log.fetchOffsetByTimestamp(1_700_000_150_000n)).toMatchObject({ offset: 150n, timestamp: 1_700_000_150_000n, leaderEpoch: 0 })
    await log.close()
    for (const base of [0, 106, 213, 264]) {
      for (const ext of ['.log', '.index', '.timeindex']) {
        expect(readFileSync(join(dir, segName(base, ext))), segName(base, ext)).toEqual(readFileSync(join(FIXTURE, segName(base, ext))))
      }
    }
  })
})
