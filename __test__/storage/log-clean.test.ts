/**
 * A cleaning round on the live log (`Log.clean`: ts/storage/js/log-clean.ts and
 * crates/storage/src/log/clean.rs) on both backends: the latest value per key at its offset,
 * reads across the cleaned segments, byte-identical directories, a round abandoned by a
 * truncation, and the loaders finishing or undoing a swap a kill interrupted (docs/storage.md).
 */
import { copyFileSync, cpSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, buildBatch, silentLogger, type BackendName, type Log, type LogCleanRequest } from '../../ts/index.js'
import { tempDir } from '../helpers/tmp.js'

const ROOT = join(__dirname, '../..')
const BACKEND_NAMES: BackendName[] = ['native', 'js']
const NOW = 1_700_000_000_000
const KEYS = 12
const CONFIG = { segmentBytes: 1024, indexIntervalBytes: 100 }

function open(dataDir: string, backend: BackendName) {
  return LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
}

/** Key `i % KEYS` gets `v<i>`; keys 3 and 4 end deleted; batches of 1-3 records. */
function fill(log: Log, n: number, from = 0): void {
  for (let i = from; i < from + n;) {
    const count = 1 + (i % 3)
    const records = Array.from({ length: count }, (_, j) => ({ key: `k${(i + j) % KEYS}`, value: `v${i + j}`, timestamp: NOW + i + j }))
    log.append(buildBatch(records, { nowMs: 1 }))
    i += count
  }
  log.append(
    buildBatch(
      [
        { key: 'k3', value: null, timestamp: NOW },
        { key: 'k4', value: null, timestamp: NOW },
      ],
      { nowMs: 1 },
    ),
  )
}

function request(log: Log, extra: Partial<LogCleanRequest> = {}): LogCleanRequest {
  return {
    firstDirtyOffset: 0n,
    firstUncleanableOffset: log.logEndOffset(),
    currentTimeMs: BigInt(NOW),
    deleteRetentionMs: 86_400_000n,
    dedupeBufferSize: 1 << 20,
    ...extra,
  }
}

type Latest = Map<string, { offset: bigint; value: string | null }>

function latestOf(log: Log): { latest: Latest; offsets: bigint[] } {
  const latest: Latest = new Map()
  const offsets: bigint[] = []
  let next = log.logStartOffset()
  while (next < log.logEndOffset()) {
    const batches = log.readBatches(next, { isolation: 'LOG_END' })
    if (batches.length === 0) break
    for (const b of batches) {
      for (const r of b.records) {
        offsets.push(r.offset)
        if (!b.isControl) latest.set(r.key!.toString(), { offset: r.offset, value: r.value === null ? null : r.value.toString() })
      }
      next = b.lastOffset + 1n
    }
  }
  return { latest, offsets }
}

function leftovers(dir: string): string[] {
  return readdirSync(dir).filter((f) => /\.(cleaned|swap|deleted|cleaning)$/.test(f))
}

describe.each(BACKEND_NAMES)('Log.clean on the %s backend', (backend) => {
  it('keeps the latest value per key at its offset, readable across the cleaned segments', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('c', 0, { config: CONFIG })
    fill(log, 200)
    log.roll()
    const before = latestOf(log)
    const segmentsBefore = log.segments().length
    const result = await log.clean(request(log))
    expect(result.aborted).toBe(false)
    expect(result.endOffset).toBe(log.logEndOffset())
    expect(result.recordsRetained).toBe(KEYS)
    expect(result.mapSize).toBe(KEYS)
    expect(result.segmentsBefore).toBe(segmentsBefore - 1)
    expect(log.segments().length).toBe(result.segmentsAfter + 1)
    const after = latestOf(log)
    expect(after.latest).toEqual(before.latest)
    expect(after.offsets).toHaveLength(KEYS)
    // Each survivor read at its own offset, through the file slice.
    for (const { offset } of after.latest.values()) {
      const data = log.read(offset, { isolation: 'LOG_END' })
      expect(data.records.size).toBeGreaterThan(0)
      expect(log.readBatches(offset, { isolation: 'LOG_END' })[0].records.some((r) => r.offset === offset)).toBe(true)
    }
    // A later round past the delete horizon drops the tombstones.
    const second = await log.clean(request(log, { currentTimeMs: BigInt(NOW) + 2n * 86_400_000n }))
    expect(second.aborted).toBe(false)
    expect([...latestOf(log).latest.keys()].sort()).toEqual([...before.latest.keys()].filter((k) => k !== 'k3' && k !== 'k4').sort())
    const dir = log.dir
    await manager.close()
    expect(leftovers(dir)).toEqual([])
    const again = await open(join(dir, '..'), backend)
    const reopened = await again.getOrCreateLog('c', 0, { config: CONFIG })
    expect(latestOf(reopened).latest.size).toBe(KEYS - 2)
    await again.close()
  })

  it('abandons the swap when a truncation ran during the round, and goes on with appends', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('t', 0, { config: CONFIG })
    fill(log, 200)
    log.roll()
    const round = log.clean(request(log))
    await log.truncateTo(100n)
    const result = await round
    expect(result.aborted).toBe(true)
    expect(leftovers(log.dir)).toEqual([])
    expect(log.logEndOffset()).toBeLessThanOrEqual(100n)
    // Appends during a round do not stop it.
    fill(log, 100, 300)
    log.roll()
    const next = log.clean(request(log))
    fill(log, 10, 1000)
    const done = await next
    expect(done.aborted).toBe(false)
    expect(latestOf(log).latest.get('k0')?.value).not.toBeUndefined()
    await manager.close()
  })

  it('abandons the round when retention deletes a segment meanwhile, and close waits for a round', async () => {
    const manager = await open(tempDir(), backend)
    const log = await manager.getOrCreateLog('r', 0, { config: CONFIG })
    fill(log, 200)
    log.roll()
    const round = log.clean(request(log))
    log.deleteRecordsBefore(log.segments()[1].baseOffset)
    expect(await log.deleteOldSegments()).toBeGreaterThan(0)
    expect((await round).aborted).toBe(true)
    expect(leftovers(log.dir)).toEqual([])
    const closing = log.clean(request(log))
    await manager.close()
    const last = await closing.catch((err: { code?: string }) => err)
    expect(leftovers(log.dir)).toEqual([])
    expect(last).toBeDefined()
  })
})

describe('Log.clean on the two backends', () => {
  it('leaves byte-identical directories after the same rounds, the last one with nothing dirty', async () => {
    const dirs: Record<BackendName, string> = { native: tempDir(), js: tempDir() }
    const DAY = 86_400_000n
    for (const backend of BACKEND_NAMES) {
      const manager = await open(dirs[backend], backend)
      const log = await manager.getOrCreateLog('same', 0, { config: CONFIG, topicId: Buffer.alloc(16, 3) })
      fill(log, 150)
      log.roll()
      expect((await log.clean(request(log))).latestDeleteHorizonMs).toBe(BigInt(NOW) + DAY)
      fill(log, 90, 150)
      log.roll()
      const second = await log.clean(request(log, { firstDirtyOffset: 150n, currentTimeMs: BigInt(NOW) + 2n * DAY }))
      // The first tombstones went; the new ones got their horizon.
      expect(second.latestDeleteHorizonMs).toBe(BigInt(NOW) + 3n * DAY)
      expect(latestOf(log).latest.get('k3')!.value).toBeNull()
      // Nothing dirty, the horizon passed: a round removes them and reports none left.
      const third = await log.clean(request(log, { firstDirtyOffset: second.endOffset, currentTimeMs: BigInt(NOW) + 3n * DAY }))
      expect(third.endOffset).toBe(second.endOffset)
      expect(third.latestDeleteHorizonMs).toBeNull()
      expect(latestOf(log).latest.has('k3')).toBe(false)
      await manager.close()
    }
    const list = (dir: string) => readdirSync(join(dir, 'same-0')).sort()
    expect(list(dirs.js)).toEqual(list(dirs.native))
    for (const file of list(dirs.native)) {
      expect(readFileSync(join(dirs.js, 'same-0', file)), file).toEqual(readFileSync(join(dirs.native, 'same-0', file)))
    }
  })

  it('drop aborted records, keep the ABORT marker with its .txnindex entry, byte-identical, and DumpLogSegments accepts the swapped-in segment', async () => {
    const dirs: Record<BackendName, string> = { native: tempDir(), js: tempDir() }
    const marker = (commit: boolean) => {
      const key = Buffer.alloc(4)
      key.writeInt16BE(commit ? 1 : 0, 2)
      const value = Buffer.alloc(6)
      value.writeInt32BE(3, 2)
      return [{ key, value, timestamp: NOW }]
    }
    for (const backend of BACKEND_NAMES) {
      const manager = await open(dirs[backend], backend)
      const log = await manager.getOrCreateLog('txn', 0, { config: CONFIG, topicId: Buffer.alloc(16, 4) })
      fill(log, 30)
      const txn = (id: bigint, seq: number, keys: string[]) =>
        log.append(
          buildBatch(
            keys.map((k, i) => ({ key: k, value: `t${id}-${i}`, timestamp: NOW })),
            { producerId: id, producerEpoch: 0, baseSequence: seq, isTransactional: true, nowMs: 1 },
          ),
        )
      const end = (id: bigint, commit: boolean) =>
        log.append(buildBatch(marker(commit), { producerId: id, producerEpoch: 0, isTransactional: true, isControl: true, nowMs: 1 }), { origin: 'COORDINATOR' })
      txn(9n, 0, ['k1', 'k2'])
      txn(10n, 0, ['k5', 'k6'])
      end(9n, false)
      end(10n, true)
      fill(log, 30, 30)
      log.roll()
      const before = latestOf(log).latest
      const result = await log.clean(request(log))
      expect(result.aborted).toBe(false)
      const after = latestOf(log).latest
      // Producer 9's aborted k1/k2 are gone; producer 10's committed values survive unless overwritten later.
      for (const v of after.values()) expect(v.value?.startsWith('t9-') ?? false).toBe(false)
      expect(after.size).toBe(before.size)
      const txnIndexes = readdirSync(log.dir).filter((f) => f.endsWith('.txnindex'))
      expect(txnIndexes).toHaveLength(1)
      expect(readFileSync(join(log.dir, txnIndexes[0])).length).toBe(34)
      await manager.close()
    }
    const list = (dir: string) => readdirSync(join(dir, 'txn-0')).sort()
    expect(list(dirs.js)).toEqual(list(dirs.native))
    for (const file of list(dirs.native)) {
      expect(readFileSync(join(dirs.js, 'txn-0', file)), file).toEqual(readFileSync(join(dirs.native, 'txn-0', file)))
    }
    // Kafka's DumpLogSegments on the segment holding the transaction, with its .txnindex.
    execFileSync('bash', [join(ROOT, 'tools/kafka/fetch-jars.sh')], { stdio: 'ignore' })
    const live = tempDir()
    const base = list(dirs.native)
      .find((f) => f.endsWith('.txnindex'))!
      .replace('.txnindex', '')
    for (const s of ['.log', '.index', '.timeindex', '.txnindex']) copyFileSync(join(dirs.native, 'txn-0', base + s), join(live, base + s))
    const run = spawnSync('bash', [join(ROOT, 'tools/kafka/dump-log.sh'), live], { encoding: 'utf8', maxBuffer: 16 << 20 })
    const problems = run.stderr.split('\n').filter((l) => l.startsWith('dump-log.sh: PROBLEM: '))
    // Offset gaps are what compaction leaves. So is a time index entry on a batch the cleaner
    // kept empty (an active producer's last batch, Kafka's writeEmptyHeader with the batch's
    // maxTimestamp): DumpLogSegments takes the max of its records' timestamps, -1 for none, and
    // reports a mismatch; Kafka's own cleaner indexes such a batch the same way
    // (updateRetainedBatchMetadata). Nothing else may be wrong.
    const emptyBatchEntry = (l: string, i: number, all: string[]) =>
      (/Found timestamp mismatch in/.test(l) && /log timestamp: -1$/.test(all[i + 1] ?? '')) ||
      (/Index timestamp: \d+, log timestamp: -1$/.test(l) && /Found timestamp mismatch in/.test(all[i - 1] ?? ''))
    expect(problems.filter((l, i, all) => !/non-consecutive offsets in .*: \d+ is followed by \d+$/.test(l) && !emptyBatchEntry(l, i, all))).toEqual([])
    expect(run.stdout).not.toMatch(/isvalid: false/)
    expect(run.stdout).toMatch(/producerId: 9 firstOffset: \d+ lastOffset: \d+ lastStableOffset: \d+/)
    expect(run.stdout).toContain('endTxnMarker: ABORT')
  }, 300_000)

  /**
   * The files a kill leaves at each step, arranged from a log and its cleaned copy: `.cleaned`
   * (or `.swap`) files beside the old segments, or the old segments gone.
   */
  describe.each(BACKEND_NAMES)('reopening on the %s backend after a kill', (backend) => {
    async function arrange(step: 'cleaned' | 'some-swap' | 'swap-old-present' | 'swap-old-gone'): Promise<void> {
      const original = tempDir()
      let manager = await open(original, backend)
      let log = await manager.getOrCreateLog('k', 0, { config: CONFIG })
      fill(log, 200)
      log.roll()
      const expected = latestOf(log)
      const oldLogs = log
        .segments()
        .slice(0, -1)
        .map((s) => s.baseOffset)
      await manager.close()
      const copy = tempDir()
      cpSync(original, copy, { recursive: true })
      manager = await open(copy, backend)
      log = await manager.getOrCreateLog('k', 0, { config: CONFIG })
      await log.clean(request(log))
      const cleanedBases = log
        .segments()
        .slice(0, -1)
        .map((s) => s.baseOffset)
      await manager.close()
      const dir = join(original, 'k-0')
      const name = (base: bigint, suffix: string) => `${base.toString().padStart(20, '0')}${suffix}`
      const suffixes = ['.log', '.index', '.timeindex']
      let first = true
      for (const base of cleanedBases) {
        for (const s of suffixes) {
          let tail = step === 'cleaned' ? '.cleaned' : '.swap'
          if (step === 'some-swap') tail = first && s === '.log' ? '.swap' : '.cleaned'
          copyFileSync(join(copy, 'k-0', name(base, s)), join(dir, name(base, s) + tail))
        }
        first = false
      }
      if (step === 'swap-old-gone') {
        for (const base of oldLogs) for (const s of [...suffixes, '.txnindex']) rmSync(join(dir, name(base, s)), { force: true })
      }
      // An unclean stop: no shutdown marker.
      rmSync(join(original, '.kafka_cleanshutdown'), { force: true })
      manager = await open(original, backend)
      log = await manager.getOrCreateLog('k', 0, { config: CONFIG })
      expect(leftovers(dir)).toEqual([])
      const got = latestOf(log)
      expect(got.latest).toEqual(expected.latest)
      expect(got.offsets).toEqual([...got.offsets].sort((a, b) => (a < b ? -1 : 1)))
      expect(new Set(got.offsets).size).toBe(got.offsets.length)
      if (step === 'cleaned' || step === 'some-swap') expect(got.offsets).toEqual(expected.offsets)
      else expect(got.offsets).toHaveLength(KEYS)
      await manager.close()
    }

    it('with only .cleaned files: the old segments', () => arrange('cleaned'))
    it('with some .swap and some .cleaned files: the old segments', () => arrange('some-swap'))
    it('with every .swap file and the old segments: the cleaned ones', () => arrange('swap-old-present'))
    it('with every .swap file and no old segment: the cleaned ones', () => arrange('swap-old-gone'))
  })
})

describe('Log.clean on the js backend, off the event loop', () => {
  it('keeps the event loop turning while a round cleans one large group', async () => {
    const manager = await open(tempDir(), 'js')
    try {
      const log = await manager.getOrCreateLog('big', 0, { config: { segmentBytes: 256 * 1024 * 1024 }, topicId: Buffer.alloc(16, 5) })
      // About 48 MiB of 1 KiB values over 1000 keys in one segment: one group for the round.
      const value = Buffer.alloc(1024, 7)
      for (let b = 0; b < 480; b++) {
        log.append(
          buildBatch(
            Array.from({ length: 100 }, (_, j) => ({ key: `k${(b * 100 + j) % 1000}`, value, timestamp: NOW })),
            { nowMs: 1 },
          ),
        )
      }
      log.roll()
      expect(log.segments()).toHaveLength(2)
      // A 1 ms interval timer notes the longest gap between its ticks while the round runs.
      let last = performance.now()
      let longestStall = 0
      let ticks = 0
      const timer = setInterval(() => {
        const now = performance.now()
        longestStall = Math.max(longestStall, now - last)
        last = now
        ticks++
      }, 1)
      const started = performance.now()
      let result
      try {
        result = await log.clean(request(log, { dedupeBufferSize: 1 << 20 }))
      } finally {
        clearInterval(timer)
      }
      const duration = performance.now() - started
      expect(result.aborted).toBe(false)
      expect(result.bytesRead).toBeGreaterThan(47 * 1024 * 1024)
      expect(result.recordsRetained).toBe(1000)
      // Cleaning on the JS thread would stall it for the whole group; on the worker the timer
      // keeps firing and no gap comes near the round's length.
      expect(ticks).toBeGreaterThan(20)
      expect(longestStall).toBeLessThan(duration / 4)
      expect(log.readRecords(0n, { maxBytes: 4 << 20 })).toHaveLength(1000)
    } finally {
      await manager.close()
    }
  })
})
