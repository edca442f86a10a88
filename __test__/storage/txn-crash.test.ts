/**
 * Real crashes in the middle of transactions: a child process (txn-crash-child.cjs) appends
 * transactional batches, COMMIT / ABORT markers and plain batches over small segments and is
 * SIGKILLed at random moments, mostly with transactions open. After each kill the log is
 * reopened (recovery: no clean-shutdown marker) and must say what its batches say, worked out
 * here independently from the batches read back: the first unstable offset (the oldest open
 * transaction), hence the LSO, and every aborted transaction's `.txnindex` entry, byte for byte,
 * in the segment holding its marker. Every acknowledged append is there.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName, type RecordBatch } from '../../ts/index.js'
import { runUntilKilled } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const CHILD = join(__dirname, 'txn-crash-child.cjs')
const KILLS = 8

function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Expected {
  firstUnstable: bigint | null
  /** Aborted transactions in marker order: producer, first offset, marker offset, LSO then. */
  aborted: Array<{ producerId: bigint; firstOffset: bigint; lastOffset: bigint; lastStableOffset: bigint }>
}

/** Kafka's rules (docs/storage.md "Transactions"), applied to the batches in offset order. */
function expectedFrom(batches: RecordBatch[]): Expected {
  const open = new Map<bigint, bigint>()
  const aborted: Expected['aborted'] = []
  for (const b of batches) {
    if (b.producerId < 0n) continue
    if (b.isControl) {
      const key = b.records[0].key!
      const first = open.get(b.producerId)
      open.delete(b.producerId)
      if (first !== undefined && key.readInt16BE(2) === 0) {
        const others = [...open.values()]
        const lastStableOffset = others.length > 0 ? others.reduce((a, c) => (c < a ? c : a)) : b.baseOffset + 1n
        aborted.push({ producerId: b.producerId, firstOffset: first, lastOffset: b.baseOffset, lastStableOffset })
      }
    } else if (b.isTransactional && !open.has(b.producerId)) {
      open.set(b.producerId, b.baseOffset)
    }
  }
  const firsts = [...open.values()]
  return { firstUnstable: firsts.length > 0 ? firsts.reduce((a, c) => (c < a ? c : a)) : null, aborted }
}

function txnIndexBytes(entries: Expected['aborted']): Buffer {
  const buf = Buffer.alloc(entries.length * 34)
  entries.forEach((e, i) => {
    buf.writeInt16BE(0, i * 34)
    buf.writeBigInt64BE(e.producerId, i * 34 + 2)
    buf.writeBigInt64BE(e.firstOffset, i * 34 + 10)
    buf.writeBigInt64BE(e.lastOffset, i * 34 + 18)
    buf.writeBigInt64BE(e.lastStableOffset, i * 34 + 26)
  })
  return buf
}

describe.each(['native', 'js'] as BackendName[])('transactions through crashes on the %s backend', (backend) => {
  it(`recovers the open transactions and the transaction indexes across ${KILLS} SIGKILLs`, async () => {
    expect(existsSync(join(__dirname, '../../dist/ts/index.js')), 'run the build first (npm test does)').toBe(true)
    const dataDir = tempDir()
    const random = prng(backend === 'native' ? 11 : 12)
    let openAtKill = 0
    let recovered = 0
    let aborted = 0
    for (let kill = 0; kill < KILLS; kill++) {
      const lines = (await runUntilKilled(CHILD, [dataDir, backend], 20 + Math.floor(random() * 300))).filter((l) => /^\d+ \d+$/.test(l))
      const lastAcked = lines.length > 0 ? BigInt(lines.at(-1)!.split(' ')[1]) : -1n
      const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
      expect(manager.hadCleanShutdown).toBe(false)
      const log = manager.getLog('txn-crash', 0)!
      if (log.recoveryReport().segmentsRecovered > 0) recovered++
      const end = log.logEndOffset()
      expect(end).toBeGreaterThan(lastAcked)
      const batches: RecordBatch[] = []
      for (let next = 0n; next < end;) {
        const got = log.readBatches(next, { maxBytes: 1 << 20, isolation: 'LOG_END' })
        expect(got.length).toBeGreaterThan(0)
        batches.push(...got)
        next = got.at(-1)!.lastOffset + 1n
      }
      const want = expectedFrom(batches)
      if (want.firstUnstable !== null) openAtKill++
      aborted = want.aborted.length
      expect(log.firstUnstableOffset()).toBe(want.firstUnstable)
      expect(log.lastStableOffset()).toBe(want.firstUnstable ?? end)
      expect(log.collectAbortedTransactions(0n, end)).toEqual(want.aborted.map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset })))
      const segments = log.segments()
      segments.forEach((s, i) => {
        const next = i + 1 < segments.length ? segments[i + 1].baseOffset : end
        const mine = want.aborted.filter((a) => a.lastOffset >= s.baseOffset && a.lastOffset < next)
        const file = s.file.replace(/\.log$/, '.txnindex')
        if (mine.length === 0) expect(existsSync(file), file).toBe(false)
        else expect(readFileSync(file), file).toEqual(txnIndexBytes(mine))
      })
      await manager.close()
    }
    expect(openAtKill).toBeGreaterThan(0)
    expect(recovered).toBe(KILLS)
    expect(aborted).toBeGreaterThan(0)
  }, 300_000)
})
