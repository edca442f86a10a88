/**
 * The log side of transactions on both backends (docs/storage.md "Transactions"): the producer
 * state and open transactions kept by appends (leader and follower), the last stable offset,
 * `.txnindex` entries for aborted transactions, producer `.snapshot` files, and what happens to
 * them at roll, retention, truncation, close and recovery. Kafka's own files
 * (__test__/fixtures/kafka, written by Kafka 4.4) are the reference: both engines read them and,
 * fed the same batches, write them again byte for byte; and both engines write the same bytes
 * as each other for hand-made transactions.
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, buildBatch, silentLogger, type BackendName, type Log, type LogManagerOptions } from '../../ts/index.js'
import { buildEndTxnMarker } from '../../ts/protocol/control-record.js'
import { batchesOf } from '../../ts/protocol/records.js'
import { tempDir } from '../helpers/tmp.js'

const FIXTURE = join(__dirname, '../fixtures/kafka')
const FIXTURE_DIR = join(FIXTURE, 'fixture-0')
const BACKEND_NAMES: BackendName[] = ['native', 'js']
/** The topic settings Kafka wrote the fixture with. */
const FIXTURE_CONFIG = { segmentBytes: 16384, indexIntervalBytes: 1024, retentionMs: -1 }

function open(dataDir: string, backend: BackendName, extra: Partial<LogManagerOptions> = {}) {
  return LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0, ...extra })
}

function copyFixture(clean: boolean): string {
  const dataDir = tempDir()
  cpSync(FIXTURE_DIR, join(dataDir, 'fixture-0'), { recursive: true })
  if (clean) writeFileSync(join(dataDir, '.kafka_cleanshutdown'), '')
  return dataDir
}

/** Every batch of the fixture, in offset order, as Kafka stored it. */
function fixtureBatches(): Buffer[] {
  const out: Buffer[] = []
  for (const name of readdirSync(FIXTURE_DIR)
    .filter((n) => n.endsWith('.log'))
    .sort()) {
    const bytes = readFileSync(join(FIXTURE_DIR, name))
    for (const { position, size } of batchesOf(bytes)) out.push(bytes.subarray(position, position + size))
  }
  return out
}

function txnBatch(producerId: bigint, producerEpoch: number, baseSequence: number, n: number, timestamp = 1_700_000_000_000): Buffer {
  const records = Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `v${baseSequence + i}`, timestamp: timestamp + i }))
  return buildBatch(records, { producerId, producerEpoch, baseSequence, isTransactional: true, nowMs: timestamp })
}

function marker(type: 'COMMIT' | 'ABORT', producerId: bigint, producerEpoch: number, timestamp = 1_700_000_100_000): Buffer {
  return buildEndTxnMarker({ type, producerId, producerEpoch, coordinatorEpoch: 3, timestamp })
}

/** The files of a partition directory that carry data, by name (checkpoints and metadata aside). */
function dataFiles(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>()
  for (const name of readdirSync(dir).sort()) {
    if (/\.(log|index|timeindex|txnindex|snapshot)$/.test(name)) out.set(name, readFileSync(join(dir, name)))
  }
  return out
}

/**
 * Two producers' transactions, interleaved, with rolls in between: 7 commits, 8 aborts while 7's
 * second transaction is open (so the index entry's LSO is 7's first offset), 9 is idempotent only.
 */
function scenario(log: Log): void {
  const coordinator = { origin: 'COORDINATOR' } as const
  log.append(txnBatch(7n, 0, 0, 3)) // 0..2, 7 opens at 0
  log.append(txnBatch(8n, 0, 0, 2)) // 3..4, 8 opens at 3
  log.append(buildBatch([{ value: 'plain' }], { producerId: 9n, producerEpoch: 0, baseSequence: 0, nowMs: 1_700_000_000_500 })) // 5
  log.append(marker('COMMIT', 7n, 0), coordinator) // 6
  log.append(txnBatch(7n, 0, 3, 2)) // 7..8, 7 opens at 7
  log.append(marker('ABORT', 8n, 0), coordinator) // 9: aborted [3, 9], LSO then 7
  log.append(marker('COMMIT', 7n, 0), coordinator) // 10
  log.append(marker('ABORT', 8n, 0), coordinator) // 11: no open transaction, nothing indexed
}

describe.each(BACKEND_NAMES)('transactions on the %s backend', (backend) => {
  it("reads Kafka's snapshots and transaction index: stable at the LEO, one aborted transaction", async () => {
    const manager = await open(copyFixture(true), backend, { topicConfig: () => FIXTURE_CONFIG })
    const log = manager.getLog('fixture', 0)!
    expect(log.recoveryReport().segmentsRecovered).toBe(0)
    expect(log.firstUnstableOffset()).toBeNull()
    expect(log.lastStableOffset()).toBe(274n)
    expect(log.collectAbortedTransactions(0n, 274n)).toEqual([{ producerId: 5n, firstOffset: 265n }])
    expect(log.collectAbortedTransactions(269n, 274n)).toEqual([])
    expect(log.collectAbortedTransactions(0n, 265n)).toEqual([])
    expect(log.collectAbortedTransactions(268n, 269n)).toEqual([{ producerId: 5n, firstOffset: 265n }])
    // A READ_COMMITTED read answers the aborted transaction its records overlap.
    const info = log.read(264n, { isolation: 'TXN_COMMITTED' })
    expect(info.abortedTransactions).toEqual([{ producerId: 5n, firstOffset: 265n }])
    expect(log.read(269n, { isolation: 'TXN_COMMITTED' }).abortedTransactions).toEqual([])
    expect(log.read(0n, { isolation: 'HIGH_WATERMARK' }).abortedTransactions).toBeUndefined()
    await manager.close()
  })

  it('loads the state from an older snapshot and replays the batches after it', async () => {
    const dataDir = copyFixture(true)
    const dir = join(dataDir, 'fixture-0')
    rmSync(join(dir, '00000000000000000274.snapshot'))
    const manager = await open(dataDir, backend, { topicConfig: () => FIXTURE_CONFIG, highWatermark: 'managed' })
    const log = manager.getLog('fixture', 0)!
    log.updateHighWatermark(274n)
    expect(log.firstUnstableOffset()).toBeNull()
    // Truncating into the committed transaction's marker: the snapshot at 264 says 5's
    // transaction is open since 260, and the aborted one's index entry goes.
    await log.truncateTo(264n)
    expect(log.logEndOffset()).toBe(264n)
    expect(log.firstUnstableOffset()).toBe(260n)
    expect(log.lastStableOffset()).toBe(260n)
    expect(existsSync(join(dir, '00000000000000000264.txnindex'))).toBe(false)
    expect(log.collectAbortedTransactions(0n, 264n)).toEqual([])
    await manager.close()
    // The close wrote no new snapshot: 264 holds the state at the LEO already.
    expect(readFileSync(join(dir, '00000000000000000264.snapshot'))).toEqual(readFileSync(join(FIXTURE_DIR, '00000000000000000264.snapshot')))
    const again = await open(dataDir, backend, { topicConfig: () => FIXTURE_CONFIG, highWatermark: 'managed' })
    const reopened = again.getLog('fixture', 0)!
    expect(reopened.firstUnstableOffset()).toBe(260n)
    await again.close()
  })

  it('an unreadable snapshot is deleted and the next older one used; the close writes it again as Kafka did', async () => {
    const dataDir = copyFixture(true)
    const file = join(dataDir, 'fixture-0', '00000000000000000274.snapshot')
    const bytes = readFileSync(file)
    bytes[bytes.length - 1] ^= 0xff
    writeFileSync(file, bytes)
    const manager = await open(dataDir, backend, { topicConfig: () => FIXTURE_CONFIG })
    const log = manager.getLog('fixture', 0)!
    expect(log.recoveryReport().messages.some((m) => m.includes('00000000000000000274.snapshot'))).toBe(true)
    expect(existsSync(file)).toBe(false)
    expect(log.firstUnstableOffset()).toBeNull()
    await manager.close()
    expect(readFileSync(file)).toEqual(readFileSync(join(FIXTURE_DIR, '00000000000000000274.snapshot')))
  })

  it("fed Kafka's batches as a follower, writes Kafka's segments, .txnindex and .snapshot files byte for byte", async () => {
    const dataDir = tempDir()
    const manager = await open(dataDir, backend, { topicConfig: () => FIXTURE_CONFIG, highWatermark: 'managed' })
    const log = await manager.getOrCreateLog('fixture', 0)
    // Kafka rolled at 264 by segment.ms against the batches' timestamps (the COMMIT marker has
    // the broker's clock, the data 2023's); ferrolog's segment.ms counts from the segment's
    // creation, so that roll is made by hand.
    for (const batch of fixtureBatches()) {
      if (batch.readBigInt64BE(0) === 264n) log.roll()
      log.appendAsFollower(batch)
    }
    expect(log.logEndOffset()).toBe(274n)
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 106n, 213n, 264n])
    // Nothing is stable beyond the high watermark, which this test moves by hand.
    expect(log.lastStableOffset()).toBe(0n)
    log.updateHighWatermark(274n)
    expect(log.lastStableOffset()).toBe(274n)
    await manager.close()
    const ours = dataFiles(join(dataDir, 'fixture-0'))
    const kafka = dataFiles(FIXTURE_DIR)
    expect([...ours.keys()]).toEqual([...kafka.keys()])
    for (const [name, bytes] of kafka) expect(ours.get(name), name).toEqual(bytes)
  })

  it('recovery after an unclean stop rebuilds the transaction index and the state from scratch', async () => {
    const dataDir = copyFixture(false)
    const dir = join(dataDir, 'fixture-0')
    for (const name of readdirSync(dir)) if (/\.(snapshot|txnindex)$/.test(name)) rmSync(join(dir, name))
    const manager = await open(dataDir, backend, { topicConfig: () => FIXTURE_CONFIG })
    const log = manager.getLog('fixture', 0)!
    expect(log.recoveryReport().segmentsRecovered).toBe(4)
    expect(log.collectAbortedTransactions(0n, 274n)).toEqual([{ producerId: 5n, firstOffset: 265n }])
    await manager.close()
    expect(readFileSync(join(dir, '00000000000000000264.txnindex'))).toEqual(readFileSync(join(FIXTURE_DIR, '00000000000000000264.txnindex')))
    expect(readFileSync(join(dir, '00000000000000000274.snapshot'))).toEqual(readFileSync(join(FIXTURE_DIR, '00000000000000000274.snapshot')))
  })

  it('a torn .txnindex entry (a crash while appending one) makes its segment recovered and the index rebuilt', async () => {
    const dataDir = copyFixture(true)
    const file = join(dataDir, 'fixture-0', '00000000000000000264.txnindex')
    writeFileSync(file, Buffer.concat([readFileSync(file), Buffer.from([0, 0, 0])]))
    const manager = await open(dataDir, backend, { topicConfig: () => FIXTURE_CONFIG })
    const log = manager.getLog('fixture', 0)!
    expect(log.recoveryReport().indexesRebuilt).toBe(1)
    expect(log.collectAbortedTransactions(0n, 274n)).toEqual([{ producerId: 5n, firstOffset: 265n }])
    await manager.close()
    expect(readFileSync(file)).toEqual(readFileSync(join(FIXTURE_DIR, '00000000000000000264.txnindex')))
  })

  it("without snapshots: a clean log is read from its last two segments (Kafka's rule), an unclean one from its start", async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend, { defaultConfig: { retentionMs: -1 } })
    const log = await manager.getOrCreateLog('t', 0)
    const dir = log.dir
    log.append(txnBatch(7n, 0, 0, 2)) // 0..1: a transaction never ended, in the first segment
    for (let i = 0; i < 3; i++) {
      log.roll()
      log.append(buildBatch([{ value: `plain ${i}` }]))
    }
    expect(log.segments().length).toBe(4)
    expect(log.firstUnstableOffset()).toBe(0n)
    await manager.close()
    const dropSnapshots = () => {
      for (const name of readdirSync(dir)) if (name.endsWith('.snapshot')) rmSync(join(dir, name))
    }
    dropSnapshots()
    manager = await open(dataDir, backend)
    expect(manager.getLog('t', 0)!.firstUnstableOffset()).toBeNull()
    await manager.close()
    dropSnapshots()
    rmSync(join(dataDir, '.kafka_cleanshutdown'))
    manager = await open(dataDir, backend)
    expect(manager.getLog('t', 0)!.firstUnstableOffset()).toBe(0n)
    await manager.close()
  })

  it('keeps open transactions unstable: the LSO follows the oldest open one and the high watermark', async () => {
    const manager = await open(tempDir(), backend, { highWatermark: 'managed' })
    const log = await manager.getOrCreateLog('t', 0)
    const coordinator = { origin: 'COORDINATOR' } as const
    log.append(txnBatch(7n, 0, 0, 3)) // 0..2
    log.append(txnBatch(8n, 0, 0, 2)) // 3..4
    log.updateHighWatermark(5n)
    expect(log.firstUnstableOffset()).toBe(0n)
    expect(log.lastStableOffset()).toBe(0n)
    log.append(marker('COMMIT', 7n, 0), coordinator) // 5
    // Completed, but the marker is not below the high watermark yet (Kafka's unreplicatedTxns).
    expect(log.lastStableOffset()).toBe(0n)
    log.updateHighWatermark(6n)
    expect(log.lastStableOffset()).toBe(3n)
    log.append(marker('ABORT', 8n, 0), coordinator) // 6
    log.updateHighWatermark(7n)
    expect(log.firstUnstableOffset()).toBeNull()
    expect(log.lastStableOffset()).toBe(7n)
    expect(log.collectAbortedTransactions(0n, 7n)).toEqual([{ producerId: 8n, firstOffset: 3n }])
    // A read up to the LSO answers the aborted transaction with the records.
    const info = log.read(0n, { isolation: 'TXN_COMMITTED' })
    expect(info.abortedTransactions).toEqual([{ producerId: 8n, firstOffset: 3n }])
    await manager.close()
  })

  it('keeps index entries and snapshots through roll, retention and truncation', async () => {
    const manager = await open(tempDir(), backend, { defaultConfig: { retentionMs: -1 } })
    const log = await manager.getOrCreateLog('t', 0)
    const dir = log.dir
    scenario(log) // 0..11
    log.roll() // 12.snapshot
    log.append(txnBatch(10n, 0, 0, 2)) // 12..13, open
    log.roll() // 14.snapshot
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 12n, 14n])
    expect(
      readdirSync(dir)
        .filter((n) => /\.(snapshot|txnindex)$/.test(n))
        .sort(),
    ).toEqual(['00000000000000000000.txnindex', '00000000000000000012.snapshot', '00000000000000000014.snapshot'])
    expect(log.lastStableOffset()).toBe(12n)
    // DeleteRecords past the first segment: it goes with its .txnindex; the open transaction stays.
    log.deleteRecordsBefore(13n)
    await log.deleteOldSegments()
    expect(log.segments().map((s) => s.baseOffset)).toEqual([12n, 14n])
    expect(existsSync(join(dir, '00000000000000000000.txnindex'))).toBe(false)
    expect(log.lastStableOffset()).toBe(13n)
    // Truncation below the open transaction: the snapshot above goes, the state is reloaded.
    await log.truncateTo(12n)
    expect(log.firstUnstableOffset()).toBeNull()
    expect(existsSync(join(dir, '00000000000000000014.snapshot'))).toBe(false)
    await manager.close()
  })
})

describe('both engines write the same transaction files', () => {
  it('byte for byte, for the same appends', async () => {
    const dirs: string[] = []
    for (const backend of BACKEND_NAMES) {
      const manager = await open(tempDir(), backend, { defaultConfig: { segmentBytes: 400 } })
      const log = await manager.getOrCreateLog('t', 0)
      scenario(log)
      log.append(txnBatch(10n, 1, 0, 2)) // open at close
      dirs.push(log.dir)
      await manager.close()
    }
    const [native, js] = dirs.map(dataFiles)
    expect([...js.keys()]).toEqual([...native.keys()])
    expect([...js.keys()].some((n) => n.endsWith('.txnindex'))).toBe(true)
    expect([...js.keys()].filter((n) => n.endsWith('.snapshot')).length).toBeGreaterThan(1)
    for (const [name, bytes] of native) expect(js.get(name), name).toEqual(bytes)
  })
})
