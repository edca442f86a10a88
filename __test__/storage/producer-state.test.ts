/**
 * The log's producer state as the idempotence window sees it (`Log.producerStateEntries`, Kafka's
 * `activeProducers`), on both backends: kept across a clean close and a crash (newest `.snapshot`
 * plus the batches after it), cut back by truncation, unchanged by retention and compaction
 * deleting segments (their snapshots go with them), and expired (`removeExpiredProducers`,
 * producer.id.expiration.ms) for good: the next snapshot no longer holds the producer. Unreadable
 * snapshots are deleted and the state rebuilt from the log, from its first segment when none is
 * readable (Kafka's rule of scanning only the last two segments holds only where no snapshot
 * file exists at all).
 */
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, buildBatch, silentLogger, type BackendName, type Log, type LogManagerOptions } from '../../ts/index.js'
import { decodeProducerSnapshot } from '../../ts/storage/js/producer-snapshot.js'
import { tempDir } from '../helpers/tmp.js'

const BACKEND_NAMES: BackendName[] = ['native', 'js']
const NOW = 1_700_000_000_000

function open(dataDir: string, backend: BackendName, extra: Partial<LogManagerOptions> = {}) {
  return LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0, ...extra })
}

/** One idempotent batch of `n` records of producer `id` from `seq`, keyed so compaction keeps the last of each key. */
function idempotent(id: bigint, seq: number, n = 1, timestamp = NOW): Buffer {
  const records = Array.from({ length: n }, (_, i) => ({ key: `p${id}-k${(seq + i) % 3}`, value: `p${id}-s${seq + i}`, timestamp }))
  return buildBatch(records, { producerId: id, producerEpoch: 0, baseSequence: seq, nowMs: timestamp })
}

/** Producer 1 writes first and then never again; 2 and 3 keep writing across rolls; 3's last batch lies after the last roll. */
function scenario(log: Log): void {
  log.append(idempotent(1n, 0, 2)) // 0..1
  log.append(idempotent(1n, 2, 3)) // 2..4
  log.roll() // 5.snapshot
  for (let seq = 0; seq < 6; seq++) log.append(idempotent(2n, seq)) // 5..10
  log.roll() // 11.snapshot
  log.append(idempotent(3n, 0, 2)) // 11..12
  log.append(idempotent(2n, 6)) // 13
  log.roll() // 14.snapshot
  log.append(idempotent(3n, 2, 4)) // 14..17
}

function snapshotOffsets(dir: string): bigint[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.snapshot'))
    .map((n) => BigInt(basename(n, '.snapshot')))
    .sort((a, b) => (a < b ? -1 : 1))
}

/** Spoils every `.snapshot` of `dir` a different way: a flipped byte (CRC), torn, a wrong version, empty. */
function corruptSnapshots(dir: string): void {
  readdirSync(dir)
    .filter((n) => n.endsWith('.snapshot'))
    .forEach((name, i) => {
      const file = join(dir, name)
      const bytes = readFileSync(file)
      if (i % 4 === 0) bytes[bytes.length - 1]! ^= 0xff
      else if (i % 4 === 2) bytes.writeInt16BE(7, 0)
      writeFileSync(file, i % 4 === 1 ? bytes.subarray(0, bytes.length - 3) : i % 4 === 3 ? Buffer.alloc(0) : bytes)
    })
}

function lastBatches(log: Log): Array<[bigint, number, bigint, number]> {
  return log.producerStateEntries().map((e) => [e.producerId, e.lastSequence, e.lastOffset, e.offsetDelta])
}

describe.each(BACKEND_NAMES)('the log producer state (%s)', (backend) => {
  it('is what the appends left, after a clean close and after a crash (newest snapshot + the batches after it)', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0)
    scenario(log)
    const expected: Array<[bigint, number, bigint, number]> = [
      [1n, 4, 4n, 2],
      [2n, 6, 13n, 0],
      [3n, 5, 17n, 3],
    ]
    expect(lastBatches(log)).toEqual(expected)
    // A crash image: the files as they are while the log is open (no clean-shutdown marker, no close snapshot).
    const crashed = tempDir()
    cpSync(dataDir, crashed, { recursive: true })
    await manager.close()
    expect(snapshotOffsets(log.dir)).toEqual([5n, 11n, 14n, 18n])

    manager = await open(dataDir, backend)
    log = manager.getLog('t', 0)!
    expect(lastBatches(log)).toEqual(expected)
    await manager.close()

    manager = await open(crashed, backend)
    log = manager.getLog('t', 0)!
    expect(snapshotOffsets(log.dir)).toEqual([5n, 11n, 14n])
    expect(lastBatches(log)).toEqual(expected)
    await manager.close()
  })

  it('every snapshot unreadable after a clean close: deleted, and the state rebuilt from the whole log', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0)
    scenario(log)
    const expected = lastBatches(log)
    const dir = log.dir
    await manager.close()
    expect(snapshotOffsets(dir)).toEqual([5n, 11n, 14n, 18n])
    corruptSnapshots(dir)

    manager = await open(dataDir, backend)
    log = manager.getLog('t', 0)!
    // Producer 1 wrote only in the first of the four segments: found by the scan from the log start.
    expect(lastBatches(log)).toEqual(expected)
    expect(snapshotOffsets(dir)).toEqual([])
    await manager.close()
    expect(snapshotOffsets(dir)).toEqual([18n])
    manager = await open(dataDir, backend)
    expect(lastBatches(manager.getLog('t', 0)!)).toEqual(expected)
    await manager.close()
  })

  it('a past close snapshot (at no segment base) is deleted at the next open but the newest, as Kafka removeStraySnapshots', async () => {
    const dataDir = tempDir()
    const opened: bigint[][] = []
    for (let round = 0; round < 3; round++) {
      const manager = await open(dataDir, backend)
      const log = await manager.getOrCreateLog('t', 0)
      opened.push(snapshotOffsets(log.dir))
      log.append(idempotent(1n, 2 * round, 2))
      if (round === 1) log.roll() // 4.snapshot, the base of the new segment
      await manager.close() // at the LEO: 2, (4), 6
    }
    // 2 is kept while it is above the last base (0), deleted once a segment starts at 4.
    expect(opened).toEqual([[], [2n], [4n]])
    const manager = await open(dataDir, backend)
    const log = manager.getLog('t', 0)!
    expect(snapshotOffsets(log.dir)).toEqual([4n, 6n])
    expect(lastBatches(log)).toEqual([[1n, 5, 5n, 1]])
    await manager.close()
  })

  it('truncation drops the state above the new log end, and its snapshots', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0)
    scenario(log)
    await log.truncateTo(8n) // 2's batches 5..7 stay, 3 never wrote below 8
    expect(lastBatches(log)).toEqual([
      [1n, 4, 4n, 2],
      [2n, 2, 7n, 0],
    ])
    expect(snapshotOffsets(log.dir)).toEqual([5n])
    await manager.close()
    manager = await open(dataDir, backend)
    log = manager.getLog('t', 0)!
    expect(lastBatches(log)).toEqual([
      [1n, 4, 4n, 2],
      [2n, 2, 7n, 0],
    ])
    await manager.close()
  })

  it('retention deleting segments takes their snapshots and leaves the state as it was', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend, { defaultConfig: { retentionMs: -1 } })
    let log = await manager.getOrCreateLog('t', 0)
    scenario(log)
    const before = lastBatches(log)
    log.deleteRecordsBefore(12n)
    await log.deleteOldSegments()
    expect(log.segments().map((s) => s.baseOffset)).toEqual([11n, 14n])
    // Kafka keeps the producers (KIP-360): their state is the log's, not the segments'.
    expect(lastBatches(log)).toEqual(before)
    expect(snapshotOffsets(log.dir)).toEqual([11n, 14n])
    for (const at of snapshotOffsets(log.dir)) expect(() => decodeProducerSnapshot(readFileSync(join(log.dir, `${String(at).padStart(20, '0')}.snapshot`)))).not.toThrow()
    await manager.close()
    manager = await open(dataDir, backend)
    log = manager.getLog('t', 0)!
    // Reloaded from the snapshot at 18 written at the close.
    expect(lastBatches(log)).toEqual(before)
    await manager.close()
  })

  it('compaction keeps every producer last batch and the snapshots in step', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend, { defaultConfig: { cleanupPolicy: 'compact' } })
    let log = await manager.getOrCreateLog('t', 0)
    scenario(log)
    const before = lastBatches(log)
    const result = await log.clean({
      firstDirtyOffset: 0n,
      firstUncleanableOffset: log.logEndOffset(),
      currentTimeMs: BigInt(NOW),
      deleteRetentionMs: 86_400_000n,
      dedupeBufferSize: 1 << 20,
    })
    expect(result.aborted).toBe(false)
    expect(lastBatches(log)).toEqual(before)
    // Cleaned segments are merged in groups; their snapshots stay, each still the state at its offset (as Kafka's do).
    expect(snapshotOffsets(log.dir)).toEqual([5n, 11n, 14n])
    for (const at of snapshotOffsets(log.dir)) expect(() => decodeProducerSnapshot(readFileSync(join(log.dir, `${String(at).padStart(20, '0')}.snapshot`)))).not.toThrow()
    // Crash after the clean: the state comes back from the snapshots and the cleaned segments.
    const crashed = tempDir()
    cpSync(dataDir, crashed, { recursive: true })
    await manager.close()
    manager = await open(crashed, backend)
    log = manager.getLog('t', 0)!
    expect(lastBatches(log)).toEqual(before)
    await manager.close()
  })

  it('expires idle producers without an open transaction, for good once a snapshot is written', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0)
    log.append(idempotent(1n, 0, 1, NOW)) // idle since NOW
    log.append(idempotent(2n, 0, 1, NOW + 50_000))
    log.append(buildBatch([{ value: 'txn', timestamp: NOW }], { producerId: 4n, producerEpoch: 0, baseSequence: 0, isTransactional: true, nowMs: NOW }))
    expect(log.removeExpiredProducers(BigInt(NOW + 60_000), 60_001n)).toBe(0)
    expect(log.removeExpiredProducers(BigInt(NOW + 60_000), 60_000n)).toBe(1)
    expect(log.producerStateEntries().map((e) => e.producerId)).toEqual([2n, 4n])
    // Producer 4's transaction is open: it stays however old, and so does the LSO.
    expect(log.removeExpiredProducers(BigInt(NOW + 10_000_000), 60_000n)).toBe(1)
    expect(log.producerStateEntries().map((e) => e.producerId)).toEqual([4n])
    expect(log.firstUnstableOffset()).toBe(2n)
    log.append(idempotent(3n, 0, 1, NOW))
    await manager.close()
    manager = await open(dataDir, backend)
    log = manager.getLog('t', 0)!
    expect(log.producerStateEntries().map((e) => e.producerId)).toEqual([3n, 4n])
    await manager.close()
  })
})
