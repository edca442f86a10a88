/**
 * Real crashes: a child process appends in a loop and is SIGKILLed at random moments. After each
 * kill the log is reopened (recovery, since there is no clean-shutdown marker): every append the
 * child saw return must be there (a killed process loses nothing that reached the page cache),
 * offsets are contiguous and every batch is readable and valid. With a leader epoch per burst of
 * appends, the epoch cache after each reopen must hold every epoch the batches carry, at its first
 * offset, although the native log writes leader-epoch-checkpoint only when it flushes (a kill
 * between the first append of an epoch and that write leaves the file without it: recovery
 * rebuilds the entry from the batches), and the file must never name an epoch start past the
 * recovered log end.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, silentLogger, type BackendName } from '../../ts/index.js'
import { runUntilKilled } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const CHILD = join(__dirname, 'crash-child.cjs')
const KILLS = 20
const EPOCH_KILLS = 8

/** A deterministic PRNG (mulberry32), so a failing run can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Runs the child until it has acknowledged some appends, waits `delayMs`, kills it. */
async function runAndKill(dataDir: string, backend: BackendName, delayMs: number, epochs = false): Promise<{ lastAcked: bigint; acks: number }> {
  const lines = (await runUntilKilled(CHILD, epochs ? [dataDir, backend, '-', 'epochs'] : [dataDir, backend], delayMs)).filter((l) => /^\d+ \d+$/.test(l))
  const last = lines.at(-1)
  return { lastAcked: last ? BigInt(last.split(' ')[1]) : -1n, acks: lines.length }
}

describe.each(['native', 'js'] as BackendName[])('crash recovery on the %s backend', (backend) => {
  it(`loses no acknowledged append across ${KILLS} SIGKILLs`, async () => {
    expect(existsSync(join(__dirname, '../../dist/ts/index.js')), 'run the build first (npm test does)').toBe(true)
    const dataDir = tempDir()
    const random = prng(backend === 'native' ? 1 : 2)
    let totalAcks = 0
    let recoveries = 0
    for (let kill = 0; kill < KILLS; kill++) {
      const { lastAcked, acks } = await runAndKill(dataDir, backend, 5 + Math.floor(random() * 300))
      totalAcks += acks
      const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
      expect(manager.hadCleanShutdown).toBe(false)
      const log = manager.getLog('crash', 0)!
      if (log.recoveryReport().segmentsRecovered > 0) recoveries++
      const end = log.logEndOffset()
      expect(end).toBeGreaterThan(lastAcked)
      // Every record from 0 to the end, in order, its value its offset; decoding validates CRCs.
      let expected = 0n
      while (expected < end) {
        const batch = log.readBatches(expected, { maxBytes: 1 << 20, isolation: 'LOG_END' })
        expect(batch.length).toBeGreaterThan(0)
        for (const b of batch) {
          for (const r of b.records) {
            if (r.offset < expected) continue
            expect(r.offset).toBe(expected)
            expect(r.value?.toString()).toBe(String(expected))
            expected++
          }
        }
      }
      expect(expected).toBe(end)
      await manager.close() // clean, so the next child starts from a clean shutdown
    }
    expect(totalAcks).toBeGreaterThan(KILLS)
    expect(recoveries).toBe(KILLS)
  }, 300_000)

  it(`keeps every leader epoch's start across ${EPOCH_KILLS} SIGKILLs between appends and checkpoint writes`, async () => {
    const dataDir = tempDir()
    const checkpoint = join(dataDir, 'crash-0', 'leader-epoch-checkpoint')
    const random = prng(backend === 'native' ? 3 : 4)
    let rebuilt = 0
    for (let kill = 0; kill < EPOCH_KILLS; kill++) {
      const { lastAcked } = await runAndKill(dataDir, backend, 5 + Math.floor(random() * 300), true)
      const onDisk = existsSync(checkpoint) ? epochsInCheckpoint(readFileSync(checkpoint, 'utf8')) : []
      const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
      const log = manager.getLog('crash', 0)!
      const end = log.logEndOffset()
      expect(end).toBeGreaterThan(lastAcked)
      // The first offset of each epoch the batches carry, epochs rising.
      const starts: { epoch: number; startOffset: bigint }[] = []
      let offset = 0n
      while (offset < end) {
        const batches = log.readBatches(offset, { maxBytes: 1 << 20, isolation: 'LOG_END' })
        expect(batches.length).toBeGreaterThan(0)
        for (const b of batches) {
          if (b.baseOffset < offset) continue
          const last = starts.at(-1)
          if (last === undefined || b.partitionLeaderEpoch > last.epoch) starts.push({ epoch: b.partitionLeaderEpoch, startOffset: b.baseOffset })
          else expect(b.partitionLeaderEpoch).toBe(last.epoch)
          offset = b.lastOffset + 1n
        }
      }
      expect(log.epochEntries()).toEqual(starts)
      for (const entry of onDisk) expect(entry.startOffset).toBeLessThan(end)
      if (onDisk.length < starts.length) rebuilt++
      await manager.close()
      // The clean close wrote them all.
      expect(epochsInCheckpoint(readFileSync(checkpoint, 'utf8'))).toEqual(starts)
    }
    // The native log defers the checkpoint to its flushes: every kill left epochs for recovery.
    if (backend === 'native') expect(rebuilt).toBe(EPOCH_KILLS)
  }, 300_000)
})

/** The entries of a leader-epoch-checkpoint file (version 0, a count, "<epoch> <startOffset>" lines). */
function epochsInCheckpoint(text: string): { epoch: number; startOffset: bigint }[] {
  const lines = text.split('\n').filter((l) => l !== '')
  if (lines.length === 0) return []
  expect(lines[0]).toBe('0')
  expect(Number(lines[1])).toBe(lines.length - 2)
  return lines.slice(2).map((l) => {
    const [epoch, startOffset] = l.split(' ')
    return { epoch: Number(epoch), startOffset: BigInt(startOffset!) }
  })
}
