/**
 * The storage engine's behaviour through the public `Log` API, run against both backends
 * (the Rust engine and the pure-TypeScript twin). docs/storage.md is the rulebook.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, RecordError, StorageError, buildBatch, kafkaErrorCodeOf, silentLogger, type BackendName, type CompressionType, type Log, type LogManagerOptions } from '../../ts/index.js'
import { tempDir } from '../helpers/tmp.js'
import { crc32c } from '../../ts/protocol/crc32c.js'

const BACKEND_NAMES: BackendName[] = ['native', 'js']

function open(dataDir: string, backend: BackendName, extra: Partial<LogManagerOptions> = {}) {
  return LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0, ...extra })
}

function records(n: number, from = 0, timestamp = 1_700_000_000_000) {
  return Array.from({ length: n }, (_, i) => ({
    key: `key-${from + i}`,
    value: `value-${from + i}`,
    headers: [{ key: 'h', value: `hv-${from + i}` }],
    timestamp: timestamp + from + i,
  }))
}

function expectCode(fn: () => unknown, code: string) {
  try {
    fn()
  } catch (err) {
    expect((err as { code?: string }).code).toBe(code)
    return err
  }
  throw new Error(`expected an error with code ${code}`)
}

async function expectCodeAsync(p: Promise<unknown>, code: string) {
  await expect(p).rejects.toMatchObject({ code })
}

describe.each(BACKEND_NAMES)('Log on the %s backend', (backend) => {
  it('appends records and reads them back exactly, with bigint offsets and timestamps', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('orders', 0)
    const first = log.append(records(3))
    expect(first.firstOffset).toBe(0n)
    expect(first.lastOffset).toBe(2n)
    const second = log.append(records(2, 3))
    expect(second.firstOffset).toBe(3n)
    expect(log.logEndOffset()).toBe(5n)
    expect(log.highWatermark()).toBe(5n)
    const got = log.readRecords(0n)
    expect(got.map((r) => r.offset)).toEqual([0n, 1n, 2n, 3n, 4n])
    expect(got.map((r) => r.key?.toString())).toEqual(['key-0', 'key-1', 'key-2', 'key-3', 'key-4'])
    expect(got[4].value?.toString()).toBe('value-4')
    expect(got[4].timestamp).toBe(1_700_000_000_004n)
    expect(got[1].headers).toEqual([{ key: 'h', value: Buffer.from('hv-1') }])
    await manager.close()
  })

  it('keeps null keys and values apart from empty ones', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0)
    log.append([
      { key: null, value: null },
      { key: '', value: '' },
    ])
    const [a, b] = log.readRecords(0n)
    expect(a.key).toBeNull()
    expect(a.value).toBeNull()
    expect(b.key).toEqual(Buffer.alloc(0))
    expect(b.value).toEqual(Buffer.alloc(0))
    await manager.close()
  })

  it.each(['none', 'gzip', 'snappy', 'lz4', 'zstd'] as CompressionType[])('round-trips %s batches', async (compression) => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('c', 0)
    log.append(records(50), { compression })
    const batches = log.readBatches(0n)
    expect(batches).toHaveLength(1)
    expect(batches[0].compression).toBe(compression)
    expect(batches[0].records.map((r) => r.value?.toString())).toEqual(records(50).map((r) => r.value))
    await manager.close()
  })

  it('returns the whole batch for a fetch offset inside it', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0)
    log.append(records(10))
    log.append(records(10, 10))
    const info = log.read(15n)
    expect(info.fetchOffsetMetadata.messageOffset).toBe(15n)
    const bytes = log.readSlice(info.records)
    expect(bytes.readBigInt64BE(0)).toBe(10n)
    expect(bytes.length).toBe(12 + bytes.readInt32BE(8))
    expect(log.readRecords(15n).map((r) => r.offset)).toEqual([15n, 16n, 17n, 18n, 19n])
    await manager.close()
  })

  it('reads nothing at the bound and OFFSET_OUT_OF_RANGE past the log end', async () => {
    const manager = await open(tempDir(), backend, { highWatermark: 'managed' })
    const log = await manager.getOrCreateLog('t', 0)
    log.append(records(5))
    log.append(records(5, 5))
    expect(log.highWatermark()).toBe(0n)
    log.updateHighWatermark(5n)
    expect(log.read(5n).records.size).toBe(0)
    expect(log.read(7n, { isolation: 'HIGH_WATERMARK' }).records.size).toBe(0)
    const upToHw = log.readSlice(log.read(0n).records)
    expect(upToHw.readInt32BE(23)).toBe(4) // one batch: lastOffsetDelta 4, the second is above the HW
    expect(upToHw.length).toBe(12 + upToHw.readInt32BE(8))
    expect(log.read(7n, { isolation: 'LOG_END' }).records.size).toBeGreaterThan(0)
    expect(log.read(10n, { isolation: 'LOG_END' }).records.size).toBe(0)
    const err = expectCode(() => log.read(11n, { isolation: 'LOG_END' }), 'OFFSET_OUT_OF_RANGE')
    expect(kafkaErrorCodeOf(err)).toBe(1)
    expect(log.updateHighWatermark(100n)).toBe(10n)
    await manager.close()
  })

  it('a managed log keeps its high watermark across restarts (replication-offset-checkpoint), bounded by its log end', async () => {
    const dir = tempDir()
    let manager = await open(dir, backend, { highWatermark: 'managed', highWatermarkCheckpointIntervalMs: 20 })
    const log = await manager.getOrCreateLog('t', 0)
    log.append(records(10))
    log.updateHighWatermark(7n)
    await manager.close()
    expect(readFileSync(join(dir, 'replication-offset-checkpoint'), 'utf8')).toBe('0\n1\nt 0 7\n')
    manager = await open(dir, backend, { highWatermark: 'managed', highWatermarkCheckpointIntervalMs: 20 })
    const reopened = manager.getLog('t', 0)!
    expect(reopened.highWatermark()).toBe(7n)
    reopened.updateHighWatermark(9n)
    // The periodic checkpoint, without a clean close: a checkpoint past the log end (a log
    // truncated by recovery) is bounded by it.
    // Every 20 ms; a loaded machine may take longer to get there than a quiet one, so wait up to 10 s.
    const checkpoint = () => readFileSync(join(dir, 'replication-offset-checkpoint'), 'utf8')
    for (let i = 0; i < 200 && checkpoint() !== '0\n1\nt 0 9\n'; i++) await new Promise((r) => setTimeout(r, 50))
    expect(checkpoint()).toBe('0\n1\nt 0 9\n')
    await manager.close()
    writeFileSync(join(dir, 'replication-offset-checkpoint'), '0\n1\nt 0 100\n')
    manager = await open(dir, backend, { highWatermark: 'managed' })
    expect(manager.getLog('t', 0)!.highWatermark()).toBe(10n)
    await manager.close()
    // Garbage: a warning, and the high watermark starts at the log start (followers and the
    // leader's fetches move it again).
    writeFileSync(join(dir, 'replication-offset-checkpoint'), 'garbage')
    manager = await open(dir, backend, { highWatermark: 'managed' })
    expect(manager.getLog('t', 0)!.highWatermark()).toBe(0n)
    expect(manager.getLog('t', 0)!.logEndOffset()).toBe(10n)
    await manager.close()
    // The log-end policy writes no such file (its high watermark is its log end).
    const plain = tempDir()
    manager = await open(plain, backend)
    ;(await manager.getOrCreateLog('t', 0)).append(records(1))
    await manager.close()
    expect(existsSync(join(plain, 'replication-offset-checkpoint'))).toBe(false)
  })

  it('returns one batch larger than maxBytes with minOneMessage, and cuts it without', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0)
    log.append([{ value: Buffer.alloc(5000, 1) }])
    log.append([{ value: Buffer.alloc(10, 2) }])
    const one = log.read(0n, { maxBytes: 100, minOneMessage: true })
    expect(one.firstEntryIncomplete).toBe(false)
    expect(one.records.size).toBeGreaterThan(5000)
    expect(one.records.size).toBeLessThan(5200)
    const cut = log.read(0n, { maxBytes: 100, minOneMessage: false })
    expect(cut.records.size).toBe(100)
    expect(cut.firstEntryIncomplete).toBe(true)
    await manager.close()
  })

  it('refuses a corrupt batch with CORRUPT_RECORD and writes nothing', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0)
    log.append(records(2))
    const batch = buildBatch(records(3), { nowMs: 1 })
    batch[batch.length - 1] ^= 0xff
    const err = expectCode(() => log.append(batch), 'CORRUPT_RECORD')
    expect(kafkaErrorCodeOf(err)).toBe(2)
    expect(log.logEndOffset()).toBe(2n)
    // Garbage whose batchLength claims more bytes than there are: a truncated batch (Kafka's order).
    expectCode(() => log.append(Buffer.from('definitely not a record batch, but long enough to have a header....')), 'CORRUPT_RECORD')
    const oldMagic = buildBatch(records(1), { nowMs: 1 })
    oldMagic[16] = 1
    expectCode(() => log.append(oldMagic), 'UNSUPPORTED_MAGIC')
    expect(log.logEndOffset()).toBe(2n)
    const tooLarge = buildBatch([{ value: Buffer.alloc(2000) }], { nowMs: 1 })
    const small = await manager.getOrCreateLog('small', 0, { config: { maxMessageBytes: 1000 } })
    expectCode(() => small.append(tooLarge), 'RECORD_TOO_LARGE')
    await manager.close()
  })

  it("a read's records carry what a fetch sends (Kafka's FetchDataInfo.records): the file range or its bytes, none once the log is closed", async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0)
    log.append(records(4))
    const info = log.read(1n)
    const bytes = info.records.toSend(false) as Buffer
    expect(Buffer.isBuffer(bytes)).toBe(true)
    expect(bytes.equals(log.readSlice(info.records))).toBe(true)
    const file = info.records.toSend(true)
    expect(Buffer.isBuffer(file)).toBe(false)
    const asFile = file as Exclude<typeof file, Buffer | null>
    expect(asFile.sizeInBytes).toBe(info.records.size)
    expect(asFile.read().equals(bytes)).toBe(true)
    asFile.close()
    expect(log.read(4n).records.toSend(true)).toBeNull()
    await manager.close()
    expect(info.records.toSend(false)).toBeNull()
  })

  it('errors of the record format (ts/protocol RecordError) leave the log as StorageErrors with the same code', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0)
    const batch = buildBatch(records(3), { nowMs: 1 })
    batch[batch.length - 1] ^= 0xff
    for (const err of [
      expectCode(() => log.append(batch), 'CORRUPT_RECORD'),
      await log.appendAsync(batch).catch((e: unknown) => e),
      expectCode(() => log.append([{ value: 'v', timestamp: 2 ** 60 }]), 'INVALID_ARGUMENT'),
    ]) {
      expect(err).toBeInstanceOf(StorageError)
      expect(err).not.toBeInstanceOf(RecordError)
    }
    // The record format itself throws its own type (the protocol layer knows nothing of storage).
    expect(() => buildBatch([{ value: 'v', timestamp: 2 ** 60 }])).toThrow(RecordError)
    expect(log.logEndOffset()).toBe(0n)
    await manager.close()
  })

  it('accepts compressed records larger than max.message.bytes in a batch within it (as Kafka), and refuses records inflating past 100 MiB with RECORD_TOO_LARGE as they inflate, for every codec', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('bounded', 0, { config: { maxMessageBytes: 256 * 1024 } })
    const roomy = await manager.getOrCreateLog('roomy', 0, { config: { maxMessageBytes: 8 << 20 } })
    for (const compression of ['gzip', 'snappy', 'lz4', 'zstd'] as CompressionType[]) {
      // A record of 1 MiB of zeros: a batch of a few KB, past max.message.bytes once inflated.
      // Kafka bounds the batch as sent, not the records inside it: appended.
      const large = buildBatch([{ value: 'small' }, { value: Buffer.alloc(1 << 20) }], { compression, nowMs: 1 })
      expect(large.length).toBeLessThan(256 * 1024)
      log.append(large)
      // Many small records that inflate past max(max.message.bytes, 100 MiB) together.
      const many = buildBatch(
        Array.from({ length: 1700 }, () => ({ value: Buffer.alloc(63 * 1024) })),
        { compression, nowMs: 1 },
      )
      expect(many.length).toBeLessThan(8 << 20)
      const err2 = expectCode(() => roomy.append(many), 'RECORD_TOO_LARGE')
      expect(kafkaErrorCodeOf(err2)).toBe(10)
      expect(err2.message).toMatch(/records of the batch decompress to more than 104857600 bytes/)
      log.append(buildBatch([{ value: Buffer.alloc(200 * 1024) }], { compression, nowMs: 1 }))
    }
    expect(log.logEndOffset()).toBe(12n)
    expect(roomy.logEndOffset()).toBe(0n)
    await manager.close()
  })

  it('appendAsync checks as append does (off the event loop) for every codec', async () => {
    const refusal = (p: Promise<unknown>): Promise<{ code?: string; message: string }> =>
      p.then(
        () => {
          throw new Error('appended')
        },
        (e: { code?: string; message: string }) => e,
      )
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('bounded', 0, { config: { maxMessageBytes: 256 * 1024 } })
    const roomy = await manager.getOrCreateLog('roomy', 0, { config: { maxMessageBytes: 8 << 20 } })
    for (const compression of ['gzip', 'snappy', 'lz4', 'zstd'] as CompressionType[]) {
      // Records larger than max.message.bytes in a batch within it: appended, as Kafka does.
      const large = buildBatch([{ value: 'small' }, { value: Buffer.alloc(1 << 20) }], { compression, nowMs: 1 })
      expect((await log.appendAsync(large)).recordCount).toBe(2)
      const many = buildBatch(
        Array.from({ length: 1700 }, () => ({ value: Buffer.alloc(63 * 1024) })),
        { compression, nowMs: 1 },
      )
      const err2 = await refusal(roomy.appendAsync(many))
      expect(err2.code).toBe('RECORD_TOO_LARGE')
      expect(err2.message).toMatch(/records of the batch decompress to more than 104857600 bytes/)
      // Damaged compressed data (CRC made valid again) is refused as append refuses it.
      const damaged = buildBatch([{ value: Buffer.alloc(4096, 7) }], { compression, nowMs: 1 })
      damaged.fill(0xff, 61 + 4, damaged.length)
      damaged.writeUInt32BE(crc32c(damaged, 21, damaged.length), 17)
      let syncCode: string | undefined
      try {
        log.append(damaged)
      } catch (e) {
        syncCode = (e as { code?: string }).code
      }
      expect(syncCode).toMatch(/CORRUPT_RECORD|INVALID_RECORD/)
      expect((await refusal(log.appendAsync(damaged))).code).toBe(syncCode)
      const first = log.logEndOffset()
      const info = await log.appendAsync(buildBatch([{ value: `a-${compression}` }, { value: Buffer.alloc(200 * 1024) }], { compression, nowMs: 1 }), { leaderEpoch: 2 })
      expect(info).toMatchObject({ firstOffset: first, lastOffset: first + 1n, recordCount: 2, batchCount: 1 })
      expect(log.highWatermark()).toBe(first + 2n)
      expect(log.readRecords(first)[0].value!.toString()).toBe(`a-${compression}`)
    }
    expect(log.logEndOffset()).toBe(16n)
    expect(roomy.logEndOffset()).toBe(0n)
    expect(log.latestEpoch()).toBe(2)
    await manager.close()
    expect((await refusal(log.appendAsync(buildBatch([{ value: 'late' }], { compression: 'zstd' })))).code).toBe('LOG_CLOSED')
  })

  it('assigns offsets and stamps the leader epoch on a raw batch, keeping its CRC valid', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0)
    log.append(records(4), { leaderEpoch: 3 })
    log.append(buildBatch(records(2), { baseOffset: 999n, nowMs: 1 }), { leaderEpoch: 5 })
    const batches = log.readBatches(0n)
    expect(batches.map((b) => [b.baseOffset, b.partitionLeaderEpoch])).toEqual([
      [0n, 3],
      [4n, 5],
    ])
    expect(log.epochEntries()).toEqual([
      { epoch: 3, startOffset: 0n },
      { epoch: 5, startOffset: 4n },
    ])
    expect(log.endOffsetForEpoch(3)).toEqual({ epoch: 3, endOffset: 4n })
    // Written by the append (js) or by the log's next flush, here the close's (native).
    await manager.close()
    expect(readFileSync(join(log.dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n2\n3 0\n5 4\n')
  })

  it('appends as follower keeping offsets, refusing gaps and overlaps', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0)
    log.appendAsFollower(buildBatch(records(3), { baseOffset: 0n, nowMs: 1 }))
    expect(log.logEndOffset()).toBe(3n)
    expectCode(() => log.appendAsFollower(buildBatch(records(1), { baseOffset: 5n, nowMs: 1 })), 'UNEXPECTED_APPEND_OFFSET')
    expectCode(() => log.appendAsFollower(buildBatch(records(1), { baseOffset: 2n, nowMs: 1 })), 'UNEXPECTED_APPEND_OFFSET')
    log.appendAsFollower(buildBatch(records(2), { baseOffset: 3n, nowMs: 1 }))
    expect(log.logEndOffset()).toBe(5n)
    await manager.close()
  })

  it("rolls when a relative offset would pass Integer.MAX_VALUE (Kafka's canConvertToRelativeOffset)", async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0)
    // A one-record batch claiming lastOffsetDelta offsets (as compaction leaves them), CRC fixed.
    const spanning = (baseOffset: bigint, lastOffsetDelta: number): Buffer => {
      const b = buildBatch(records(1), { baseOffset, nowMs: 1 })
      b.writeInt32BE(lastOffsetDelta, 23)
      b.writeUInt32BE(crc32c(b, 21), 17)
      return b
    }
    log.appendAsFollower(spanning(0n, 0x7fffffff - 1)) // 0 .. 2^31-2
    log.appendAsFollower(spanning(2n ** 31n - 1n, 0)) // relative offset 2^31-1 still fits
    expect(log.segments()).toHaveLength(1)
    log.appendAsFollower(spanning(2n ** 31n, 0)) // relative offset 2^31: a new segment
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 2n ** 31n])
    expect(log.logEndOffset()).toBe(2n ** 31n + 1n)
    await manager.close()
  })

  it('rolls segments at segment.bytes with 20-digit names and trims their indexes', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 4096, indexIntervalBytes: 100 } })
    for (let i = 0; i < 100; i++) log.append(records(5, i * 5))
    const segments = log.segments()
    expect(segments.length).toBeGreaterThan(3)
    const files = readdirSync(log.dir)
    expect(files).toContain('00000000000000000000.log')
    for (const s of segments) {
      expect(s.size).toBeLessThanOrEqual(4096)
      const base = join(log.dir, s.baseOffset.toString().padStart(20, '0'))
      expect(s.file).toBe(`${base}.log`)
    }
    // Rolled segments have their indexes trimmed to their entries.
    const firstIndex = statSync(join(log.dir, '00000000000000000000.index')).size
    expect(firstIndex % 8).toBe(0)
    expect(firstIndex).toBeGreaterThan(0)
    expect(firstIndex).toBeLessThan(4096)
    expect(log.readRecords(0n, { maxBytes: 1 << 20 })).toHaveLength(500)
    expect(log.readRecords(123n).at(0)?.offset).toBe(123n)
    await manager.close()
  })

  it('survives a clean close and reopen with everything in place', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 2, { topicId: Buffer.alloc(16, 7) })
    log.append(records(10))
    await manager.close()
    expect(existsSync(join(dataDir, '.kafka_cleanshutdown'))).toBe(true)
    expect(readFileSync(join(dataDir, 'recovery-point-offset-checkpoint'), 'utf8')).toBe('0\n1\nt 2 10\n')
    expect(statSync(join(dataDir, 't-2', '00000000000000000000.index')).size % 8).toBe(0)
    manager = await open(dataDir, backend)
    expect(manager.hadCleanShutdown).toBe(true)
    expect(existsSync(join(dataDir, '.kafka_cleanshutdown'))).toBe(false)
    log = manager.getLog('t', 2)!
    expect(log.topicId).toEqual(Buffer.alloc(16, 7))
    expect(log.logEndOffset()).toBe(10n)
    expect(log.readRecords(0n)).toHaveLength(10)
    await manager.close()
  })

  it('finds offsets by timestamp: earliest, latest, max timestamp and a time', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0, { config: { indexIntervalBytes: 1 } })
    for (let i = 0; i < 10; i++) log.append(records(10, i * 10, 1_000_000))
    expect(log.fetchOffsetByTimestamp(-2n)?.offset).toBe(0n)
    expect(log.fetchOffsetByTimestamp(-1n)?.offset).toBe(100n)
    expect(log.fetchOffsetByTimestamp(-3n)).toMatchObject({ offset: 99n, timestamp: 1_000_099n })
    expect(log.fetchOffsetByTimestamp(1_000_042n)).toMatchObject({ offset: 42n, timestamp: 1_000_042n })
    expect(log.fetchOffsetByTimestamp(0n)?.offset).toBe(0n)
    expect(log.fetchOffsetByTimestamp(2_000_000n)).toBeNull()
    await manager.close()
  })

  it('truncates to an offset and starts over at another', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 2048 } })
    for (let i = 0; i < 20; i++) log.append(records(5, i * 5), { leaderEpoch: i < 10 ? 1 : 2 })
    await log.truncateTo(25n)
    expect(log.logEndOffset()).toBe(25n)
    expect(log.highWatermark()).toBe(25n)
    expect(
      log
        .readRecords(0n, { maxBytes: 1 << 20 })
        .map((r) => r.offset)
        .at(-1),
    ).toBe(24n)
    expect(log.epochEntries()).toEqual([{ epoch: 1, startOffset: 0n }])
    log.append(records(1))
    expect(log.logEndOffset()).toBe(26n)
    await log.truncateFullyAndStartAt(1000n)
    expect(log.logStartOffset()).toBe(1000n)
    expect(log.logEndOffset()).toBe(1000n)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([1000n])
    expect(log.append(records(1)).firstOffset).toBe(1000n)
    await manager.close()
  })

  it('applies retention by size, by time and by the log start offset', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 1024, retentionBytes: 3000, retentionMs: -1 } })
    for (let i = 0; i < 30; i++) log.append(records(3, i * 3))
    const before = log.segments().length
    const deleted = await log.deleteOldSegments()
    expect(deleted).toBeGreaterThan(0)
    expect(log.segments().length).toBe(before - deleted)
    const total = log.segments().reduce((n, s) => n + s.size, 0)
    expect(total - log.segments()[0].size).toBeLessThan(3000)
    expect(log.logStartOffset()).toBe(log.segments()[0].baseOffset)
    expectCode(() => log.read(0n), 'OFFSET_OUT_OF_RANGE')

    const byTime = await manager.getOrCreateLog('old', 0, { config: { segmentBytes: 1024, retentionMs: 1000 } })
    for (let i = 0; i < 10; i++) byTime.append(records(3, i * 3, 1000))
    const segments = byTime.segments().length
    expect(await byTime.deleteOldSegments(Date.now())).toBe(segments) // the active one too
    expect(byTime.logStartOffset()).toBe(byTime.segments()[0].baseOffset)

    const byStart = await manager.getOrCreateLog('start', 0, { config: { segmentBytes: 1024, retentionMs: -1 } })
    for (let i = 0; i < 10; i++) byStart.append(records(3, i * 3))
    byStart.deleteRecordsBefore(20n)
    expect(byStart.logStartOffset()).toBe(20n)
    expectCode(() => byStart.read(19n), 'OFFSET_OUT_OF_RANGE')
    expect(byStart.readRecords(20n)[0].offset).toBe(20n)
    await byStart.deleteOldSegments()
    expect(byStart.segments()[0].baseOffset).toBeLessThanOrEqual(20n)
    expect(byStart.logStartOffset()).toBe(20n)
    await manager.close()
  })

  it('retention deletes the active segment too: an empty one rolled at the LEO, kept across a reopen', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 1024, retentionMs: 1000 } })
    for (let i = 0; i < 10; i++) log.append(records(3, i * 3, 1000))
    const before = log.segments().length
    expect(before).toBeGreaterThan(1)
    expect(log.segments().at(-1)!.size).toBeGreaterThan(0)
    expect(await log.deleteOldSegments(Date.now())).toBe(before)
    expect(log.segments()).toEqual([{ baseOffset: 30n, file: join(log.dir, '00000000000000000030.log'), size: 0 }])
    expect([log.logStartOffset(), log.logEndOffset(), log.highWatermark()]).toEqual([30n, 30n, 30n])
    // The roll at the LEO wrote the producer state snapshot there (as Kafka's roll does).
    expect(
      readdirSync(log.dir)
        .filter((f) => /^\d{20}\./.test(f))
        .sort(),
    ).toEqual(['00000000000000000030.index', '00000000000000000030.log', '00000000000000000030.snapshot', '00000000000000000030.timeindex'])
    expect(await log.deleteOldSegments(Date.now())).toBe(0) // an empty active segment stays
    expectCode(() => log.read(29n), 'OFFSET_OUT_OF_RANGE')
    await manager.close()
    manager = await open(dataDir, backend)
    log = manager.getLog('t', 0)!
    expect([log.logStartOffset(), log.logEndOffset()]).toEqual([30n, 30n])
    expect(log.segments().map((s) => s.baseOffset)).toEqual([30n])
    expect(log.append(records(2, 30)).firstOffset).toBe(30n)
    expect(log.readRecords(30n).map((r) => r.offset)).toEqual([30n, 31n])
    await manager.close()
  })

  it('retention.bytes 0 reaches into the active segment, but never past the high watermark', async () => {
    const manager = await open(tempDir(), backend, { highWatermark: 'managed' })
    const log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 1024, retentionBytes: 0, retentionMs: -1 } })
    for (let i = 0; i < 10; i++) log.append(records(3, i * 3))
    const bases = log.segments().map((s) => s.baseOffset)
    const activeBase = bases.at(-1)!
    expect(bases.length).toBeGreaterThan(1)
    log.updateHighWatermark(29n) // below the LEO: the active segment must stay
    expect(await log.deleteOldSegments()).toBe(bases.length - 1)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([activeBase])
    expect(log.logStartOffset()).toBe(activeBase)
    log.updateHighWatermark(30n)
    expect(await log.deleteOldSegments()).toBe(1)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([30n])
    expect([log.logStartOffset(), log.logEndOffset(), log.highWatermark()]).toEqual([30n, 30n, 30n])
    expect(log.append(records(1, 30)).firstOffset).toBe(30n)

    // The log start offset rule needs a next segment: it never takes the active one.
    const byStart = await manager.getOrCreateLog('start', 0, { config: { segmentBytes: 1024, retentionMs: -1 } })
    for (let i = 0; i < 10; i++) byStart.append(records(3, i * 3))
    byStart.updateHighWatermark(30n)
    const lastBase = byStart.segments().at(-1)!.baseOffset
    byStart.deleteRecordsBefore(30n)
    await byStart.deleteOldSegments()
    expect(byStart.segments().map((s) => s.baseOffset)).toEqual([lastBase])
    expect(byStart.logStartOffset()).toBe(30n)
    await manager.close()
  })

  it('recovers after an unclean stop: a corrupt middle of the last segment is cut, nothing before lost', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 4096 } })
    const positions: number[] = []
    for (let i = 0; i < 30; i++) log.append(records(4, i * 4))
    const last = log.segments().at(-1)!
    const lastBase = last.baseOffset
    // Find the batches of the last segment, then damage the middle one.
    const bytes = readFileSync(last.file)
    for (let at = 0; at < bytes.length; at += 12 + bytes.readInt32BE(at + 8)) positions.push(at)
    expect(positions.length).toBeGreaterThan(2)
    const victim = positions[Math.floor(positions.length / 2)]
    const survivingEnd = bytes.readBigInt64BE(victim)
    // An unclean stop: no close (no marker), files left as they are, then damage.
    await manager.checkpoint()
    const fd = openSync(last.file, 'r+')
    writeSync(fd, Buffer.from('garbage!garbage!'), 0, 16, victim + 30)
    closeSync(fd)
    manager = await open(dataDir, backend)
    expect(manager.hadCleanShutdown).toBe(false)
    log = manager.getLog('t', 0)!
    expect(log.logEndOffset()).toBe(survivingEnd)
    expect(log.recoveryReport().bytesTruncated).toBe(bytes.length - victim)
    expect(log.recoveryReport().messages.join('\n')).toMatch(/\.log/)
    const all = log.readRecords(0n, { maxBytes: 1 << 24 })
    expect(all.map((r) => r.offset)).toEqual(Array.from({ length: Number(survivingEnd) }, (_, i) => BigInt(i)))
    expect(log.segments().at(-1)!.baseOffset).toBe(lastBase)
    expect(log.append(records(1)).firstOffset).toBe(survivingEnd)
    await manager.close()
  })

  it('rebuilds a corrupt or missing index with a report line', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 4096, indexIntervalBytes: 128 } })
    for (let i = 0; i < 30; i++) log.append(records(4, i * 4))
    const first = join(log.dir, '00000000000000000000.index')
    const second = log.segments()[1].file.replace(/\.log$/, '.index')
    await manager.close()
    const goodFirst = readFileSync(first)
    const goodSecond = readFileSync(second)
    expect(goodFirst.length).toBeGreaterThan(0)
    expect(goodSecond.length).toBeGreaterThan(0)
    writeFileSync(first, Buffer.alloc(goodFirst.length, 0xee))
    rmSync(second)
    manager = await open(dataDir, backend, { topicConfig: () => ({ segmentBytes: 4096, indexIntervalBytes: 128 }) })
    log = manager.getLog('t', 0)!
    expect(log.recoveryReport().indexesRebuilt).toBe(2)
    expect(log.recoveryReport().messages.join('\n')).toMatch(/index/)
    expect(log.readRecords(57n)[0].offset).toBe(57n)
    await manager.close()
    expect(readFileSync(first)).toEqual(goodFirst)
    expect(readFileSync(second)).toEqual(goodSecond)
  })
})

describe('the two backends', () => {
  it('write byte-identical files for the same appends', async () => {
    const dirs: Record<BackendName, string> = { native: tempDir(), js: tempDir() }
    for (const backend of BACKEND_NAMES) {
      const manager = await open(dirs[backend], backend)
      const log = await manager.getOrCreateLog('same', 0, {
        config: { segmentBytes: 4096, indexIntervalBytes: 300 },
        topicId: Buffer.alloc(16, 1),
      })
      for (let i = 0; i < 60; i++) {
        log.append(buildBatch(records(1 + (i % 7), i * 10, 5_000_000 + i), { nowMs: 1 }), { leaderEpoch: i < 30 ? 0 : 4 })
      }
      await manager.close()
    }
    const list = (dir: string) => readdirSync(join(dir, 'same-0')).sort()
    expect(list(dirs.js)).toEqual(list(dirs.native))
    expect(list(dirs.native).filter((f) => f.endsWith('.log')).length).toBeGreaterThan(2)
    for (const file of list(dirs.native)) {
      expect(readFileSync(join(dirs.js, 'same-0', file)), file).toEqual(readFileSync(join(dirs.native, 'same-0', file)))
    }
  })

  it('leave the same files after retention that deletes the active segment', async () => {
    const dirs: Record<BackendName, string> = { native: tempDir(), js: tempDir() }
    const listings: Record<BackendName, string[][]> = { native: [], js: [] }
    const list = (dir: string) => readdirSync(join(dir, 'kept-0')).sort()
    for (const backend of BACKEND_NAMES) {
      const manager = await open(dirs[backend], backend)
      const log = await manager.getOrCreateLog('kept', 0, {
        config: { segmentBytes: 1024, indexIntervalBytes: 300, retentionBytes: 1500, retentionMs: 1000 },
        topicId: Buffer.alloc(16, 2),
      })
      const append = (from: number, n: number) => {
        for (let i = from; i < from + n; i++) log.append(buildBatch(records(1 + (i % 5), i * 10, 5_000_000 + i), { nowMs: 1 }))
      }
      append(0, 40)
      // By size first (the active segment holds less than retention.bytes), then by time: all of it.
      expect(await log.deleteOldSegments(5_000_000)).toBeGreaterThan(0)
      listings[backend].push(list(dirs[backend]))
      expect(await log.deleteOldSegments(5_000_000 + 60_000)).toBeGreaterThan(0)
      expect(log.logStartOffset()).toBe(log.logEndOffset())
      listings[backend].push(list(dirs[backend]))
      append(40, 20)
      await manager.close()
      listings[backend].push(list(dirs[backend]))
    }
    expect(listings.js).toEqual(listings.native)
    expect(listings.native[0].filter((f) => f.endsWith('.log')).length).toBeGreaterThan(1)
    expect(listings.native[1].filter((f) => f.endsWith('.log'))).toHaveLength(1)
    expect(listings.native.flat().some((f) => f.endsWith('.deleted'))).toBe(false)
    for (const file of list(dirs.native)) {
      expect(readFileSync(join(dirs.js, 'kept-0', file)), file).toEqual(readFileSync(join(dirs.native, 'kept-0', file)))
    }
    for (const file of ['log-start-offset-checkpoint', 'recovery-point-offset-checkpoint']) {
      expect(readFileSync(join(dirs.js, file), 'utf8'), file).toBe(readFileSync(join(dirs.native, file), 'utf8'))
    }
  })

  it('answer every read alike, for logs read in turns, across sealed segments, truncation and a reopen', async () => {
    // Sealed segments are read through a map on the native backend, and its reads of all logs
    // share one array: interleave two logs and compare every answer with the twin's.
    const dirs: Record<BackendName, string> = { native: tempDir(), js: tempDir() }
    const logs: Record<BackendName, { manager: LogManager; a: Log; b: Log }> = {} as never
    for (const backend of BACKEND_NAMES) {
      const manager = await open(dirs[backend], backend)
      const a = await manager.getOrCreateLog('a', 0, { config: { segmentBytes: 8192, indexIntervalBytes: 500 } })
      const b = await manager.getOrCreateLog('b', 0, { config: { segmentBytes: 4096, indexIntervalBytes: 300 } })
      for (let i = 0; i < 200; i++) {
        const batch = buildBatch(records(1 + (i % 5), i * 10), { nowMs: 1 })
        a.append(batch)
        if (i % 3 === 0) b.append(batch)
      }
      logs[backend] = { manager, a, b }
    }
    const answers = (backend: BackendName) => {
      const out: string[] = []
      const { a, b } = logs[backend]
      const ends = [Number(a.logEndOffset()), Number(b.logEndOffset())]
      for (let i = -2; i < ends[0] + 2; i++) {
        for (const [n, log] of [a, b].entries()) {
          const offset = BigInt(i % (ends[n] + 2))
          for (const options of [{ maxBytes: 1 << 20 }, { maxBytes: 10, minOneMessage: false }, { maxBytes: 0, isolation: 'LOG_END' as const }]) {
            try {
              const r = log.read(offset, options)
              out.push(JSON.stringify({ ...r, records: { ...r.records, file: r.records.file.slice(-24) } }, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)))
            } catch (err) {
              out.push(`error ${(err as { code?: string }).code}`)
            }
          }
        }
      }
      return out
    }
    const compare = () => expect(answers('native')).toEqual(answers('js'))
    compare()
    for (const backend of BACKEND_NAMES) {
      await logs[backend].a.truncateTo(logs[backend].a.logEndOffset() / 3n)
      logs[backend].a.append(buildBatch(records(4, 9000), { nowMs: 1 }))
    }
    compare()
    for (const backend of BACKEND_NAMES) {
      await logs[backend].manager.close()
      const manager = await open(dirs[backend], backend)
      logs[backend] = { manager, a: await manager.getOrCreateLog('a', 0), b: await manager.getOrCreateLog('b', 0) }
    }
    compare()
    for (const backend of BACKEND_NAMES) await logs[backend].manager.close()
  })
})
