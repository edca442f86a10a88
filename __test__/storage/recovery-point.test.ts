/**
 * The recovery point and the checkpoints through LogManager, on both backends: rolls flush the
 * rolled segments in the background and move the recovery point (so a crash re-validates only
 * the tail), damaged batches in flushed segments are errors to readers (CORRUPT_MESSAGE) and
 * never a reason to delete data, and a log-start-offset checkpoint beyond the log end deletes
 * nothing.
 */
import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { LogManager, kafkaErrorCodeOf, silentLogger, type BackendName, type Log, type LogManagerOptions, type Logger } from '../../ts/index.js'
import { readOffsetCheckpoint } from '../../ts/storage/checkpoint-file.js'
import { CLEAN_SHUTDOWN_FILE, LOG_START_OFFSET_CHECKPOINT_FILE, RECOVERY_POINT_CHECKPOINT_FILE } from '../../ts/storage/log-manager.js'
import { tempDir } from '../helpers/tmp.js'

const BACKENDS: BackendName[] = ['native', 'js']
const CRASH_CHILD = join(__dirname, 'crash-child.cjs')
const CORRUPT_MESSAGE = 2
const UNSUPPORTED_FOR_MESSAGE_FORMAT = 43

function open(dataDir: string, backend: BackendName, extra: Partial<LogManagerOptions> = {}) {
  return LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0, ...extra })
}

/** Records whose value is their offset. */
function records(n: number, from: bigint) {
  return Array.from({ length: n }, (_, i) => ({ key: `k${from + BigInt(i)}`, value: String(from + BigInt(i)), timestamp: 1_700_000_000_000 }))
}

function fill(log: Log, batches: number, perBatch = 5): void {
  for (let i = 0; i < batches; i++) log.append(records(perBatch, log.logEndOffset()))
}

/** (position, size, baseOffset, lastOffset) of every batch of a `.log` file. */
function batchesOfFile(file: string): Array<{ position: number; size: number; base: bigint; last: bigint }> {
  const bytes = readFileSync(file)
  const out = []
  for (let at = 0; at + 61 <= bytes.length;) {
    const size = 12 + bytes.readInt32BE(at + 8)
    const base = bytes.readBigInt64BE(at)
    out.push({ position: at, size, base, last: base + BigInt(bytes.readInt32BE(at + 23)) })
    at += size
  }
  return out
}

function overwrite(file: string, position: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+')
  writeSync(fd, bytes, 0, bytes.length, position)
  closeSync(fd)
}

async function checkpointed(dataDir: string, file: string, key: string): Promise<bigint | undefined> {
  return (await readOffsetCheckpoint(join(dataDir, file))).get(key)
}

/** Every record from `from` to the log end, checking that each value is its offset. */
function expectRecordsFrom(log: Log, from: bigint): void {
  let expected = from
  while (expected < log.logEndOffset()) {
    const batches = log.readBatches(expected, { maxBytes: 1 << 20, isolation: 'LOG_END' })
    expect(batches.length).toBeGreaterThan(0)
    for (const b of batches) {
      for (const r of b.records) {
        if (r.offset < expected) continue
        expect(r.offset).toBe(expected)
        expect(r.value?.toString()).toBe(String(expected))
        expected++
      }
    }
  }
  expect(expected).toBe(log.logEndOffset())
}

function capturingLogger(lines: Array<{ level: string; msg: string }>): Logger {
  const logger: Logger = {
    error: (msg) => lines.push({ level: 'error', msg }),
    warn: (msg) => lines.push({ level: 'warn', msg }),
    info: (msg) => lines.push({ level: 'info', msg }),
    debug: () => {},
    child: () => logger,
  }
  return logger
}

describe.each(BACKENDS)('the recovery point on the %s backend', (backend) => {
  it('follows the rolls of compressed appends checked off the loop (appendAsync) too', async () => {
    const manager = await open(tempDir(), backend)
    try {
      const log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 4096 } })
      for (let i = 0; i < 60; i++) {
        const value = randomBytes(300) // does not compress: the batches fill segments
        const batch = buildBatch([{ value }, { value }, { value: Buffer.from(String(i)) }], { compression: 'zstd', compressor: manager.backend.compress })
        await log.appendAsync(batch)
      }
      const segments = log.segments()
      expect(segments.length).toBeGreaterThan(3)
      await vi.waitFor(() => expect(log.recoveryPoint()).toBe(segments.at(-1)!.baseOffset), { timeout: 10_000, interval: 10 })
    } finally {
      await manager.close()
    }
  })

  it('follows the rolls with flush.messages at its default, into the periodic checkpoint and the one at close', async () => {
    const dataDir = tempDir()
    const manager = await open(dataDir, backend, { checkpointIntervalMs: 50 })
    const log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 4096 } })
    expect(log.config.flushMessages).toBe(Number.MAX_SAFE_INTEGER)
    fill(log, 800)
    const segments = log.segments()
    expect(segments.length).toBeGreaterThan(20)
    const activeBase = segments.at(-1)!.baseOffset
    expect(activeBase).toBeLessThan(log.logEndOffset())
    // Every rolled segment fsynced (in the background): the recovery point is the active
    // segment's base, not 0.
    await vi.waitFor(() => expect(log.recoveryPoint()).toBe(activeBase), { timeout: 10_000, interval: 10 })
    await vi.waitFor(async () => expect(await checkpointed(dataDir, RECOVERY_POINT_CHECKPOINT_FILE, 't-0')).toBe(activeBase), {
      timeout: 10_000,
      interval: 20,
    })
    await manager.close()
    expect(await checkpointed(dataDir, RECOVERY_POINT_CHECKPOINT_FILE, 't-0')).toBe(log.logEndOffset())
  })

  it('after a SIGKILL, recovery walks only the tail: a damaged batch in a flushed segment deletes nothing', async () => {
    expect(existsSync(join(__dirname, '../../dist/ts/index.js')), 'run the build first (npm test does)').toBe(true)
    const dataDir = tempDir()
    const dir = join(dataDir, 'crash-0')
    const lastAcked = await runChildUntil(dataDir, backend, async () => {
      const logs = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.log')).length : 0
      const point = await checkpointed(dataDir, RECOVERY_POINT_CHECKPOINT_FILE, 'crash-0').catch(() => undefined)
      return logs >= 10 && (point ?? 0n) > 0n
    })
    const point = (await checkpointed(dataDir, RECOVERY_POINT_CHECKPOINT_FILE, 'crash-0')) ?? 0n
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .sort()
    const bases = files.map((f) => BigInt(f.slice(0, 20)))
    expect(bases.length).toBeGreaterThanOrEqual(10)
    expect(point, 'the checkpointed recovery point moved past rolled segments').toBeGreaterThan(bases[1])
    // Damage the records of a batch in the middle of the first segment (flushed: below the
    // recovery point), as bit rot would.
    const first = batchesOfFile(join(dir, files[0]))
    const victim = first[Math.floor(first.length / 2)]
    expect(victim.size).toBeGreaterThan(61 + 8)
    overwrite(join(dir, files[0]), victim.position + 61, Buffer.from('garbage!'))

    const manager = await open(dataDir, backend)
    expect(manager.hadCleanShutdown).toBe(false)
    const log = manager.getLog('crash', 0)!
    const report = log.recoveryReport()
    expect(report.segmentsDeleted, report.messages.join('\n')).toBe(0)
    expect(report.bytesTruncated).toBe(0)
    expect(report.segmentsRecovered).toBeLessThan(bases.length)
    expect(log.segments().map((s) => s.baseOffset)).toEqual(bases)
    expect(log.logEndOffset()).toBeGreaterThan(lastAcked)
    // The damaged batch is an error to its readers; everything after it is served.
    let err: unknown
    try {
      log.readBatches(victim.base, { maxBytes: 1 << 20, isolation: 'LOG_END' })
    } catch (e) {
      err = e
    }
    expect((err as { code?: string } | undefined)?.code).toBe('CORRUPT_RECORD')
    expect(kafkaErrorCodeOf(err)).toBe(CORRUPT_MESSAGE)
    expectRecordsFrom(log, victim.last + 1n)
    await manager.close()
  }, 60_000)

  it.each([
    // batchLength 0: too small for a header (Kafka: CorruptRecordException).
    { damage: 'batchLength 0', at: 8, bytes: Buffer.alloc(4), code: 'CORRUPT_RECORD', kafka: CORRUPT_MESSAGE },
    // A magic byte other than 2 (the Rust engine's walk: UNSUPPORTED_MAGIC).
    { damage: 'magic 0', at: 16, bytes: Buffer.alloc(1), code: 'UNSUPPORTED_MAGIC', kafka: UNSUPPORTED_FOR_MESSAGE_FORMAT },
  ])('answers an error for a batch header with $damage in a sealed segment, never skips past it', async ({ at, bytes, code, kafka }) => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 64 * 1024 } })
    fill(log, 1000, 4)
    const sealed = log.segments()[0]
    expect(log.segments().length).toBeGreaterThan(1)
    await manager.close()
    const batches = batchesOfFile(sealed.file)
    const victim = batches[Math.floor(batches.length / 2)]
    overwrite(sealed.file, victim.position + at, bytes)
    manager = await open(dataDir, backend)
    log = manager.getLog('t', 0)!
    for (const offset of [victim.base, victim.last, victim.last + 1n]) {
      let err: unknown
      let served: bigint | undefined
      try {
        served = log.readRecords(offset, { maxBytes: 1 << 20 })[0]?.offset
      } catch (e) {
        err = e
      }
      expect(served, `offset ${offset} served from ${served}`).toBeUndefined()
      expect((err as { code?: string }).code).toBe(code)
      expect(kafkaErrorCodeOf(err)).toBe(kafka)
    }
    // Before the damage, reads go on.
    expect(log.readRecords(0n, { maxBytes: 100 })[0].offset).toBe(0n)
    await manager.close()
  })

  it('keeps every segment when the log-start-offset checkpoint is beyond the log end', async () => {
    const dataDir = tempDir()
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0, { config: { segmentBytes: 4096 } })
    fill(log, 150)
    const end = log.logEndOffset()
    const bases = log.segments().map((s) => s.baseOffset)
    expect(bases.length).toBeGreaterThan(2)
    await manager.close()
    for (const clean of [true, false]) {
      writeFileSync(join(dataDir, LOG_START_OFFSET_CHECKPOINT_FILE), `0\n1\nt 0 ${end + 1000n}\n`)
      if (!clean) rmSync(join(dataDir, CLEAN_SHUTDOWN_FILE))
      manager = await open(dataDir, backend, { topicConfig: () => ({ segmentBytes: 4096 }) })
      log = manager.getLog('t', 0)!
      expect(log.segments().map((s) => s.baseOffset)).toEqual(bases)
      expect(log.logStartOffset()).toBe(0n)
      expect(log.logEndOffset()).toBe(end)
      expect(log.recoveryReport().segmentsDeleted).toBe(0)
      expect(log.recoveryReport().messages.join('\n')).toMatch(/log start offset/)
      expectRecordsFrom(log, 0n)
      await manager.close()
      expect(await checkpointed(dataDir, LOG_START_OFFSET_CHECKPOINT_FILE, 't-0')).toBe(0n)
    }
  })

  it('reopens an empty log after an unclean stop without an index warning', async () => {
    const dataDir = tempDir()
    const first = await open(dataDir, backend)
    await first.getOrCreateLog('empty', 0)
    // No close: no clean-shutdown marker, the indexes as preallocated.
    const lines: Array<{ level: string; msg: string }> = []
    const manager = await open(dataDir, backend, { logger: capturingLogger(lines) })
    expect(manager.hadCleanShutdown).toBe(false)
    const log = manager.getLog('empty', 0)!
    expect(log.recoveryReport().messages).toEqual([])
    expect(log.recoveryReport().indexesRebuilt).toBe(0)
    expect(lines.filter((l) => l.level !== 'info').map((l) => l.msg)).toEqual(['no clean-shutdown marker: recovering logs from their recovery points'])
    expect(log.append(records(3, 0n)).lastOffset).toBe(2n)
    await manager.close()
    await first.close()
  })
})

/**
 * Runs crash-child.cjs (recovery-point checkpoint every 20 ms) until `ready` says so (or 20 s
 * passed), then SIGKILLs it; the last offset it saw acknowledged.
 */
function runChildUntil(dataDir: string, backend: BackendName, ready: () => Promise<boolean>): Promise<bigint> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CRASH_CHILD, dataDir, backend, '20'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    const started = Date.now()
    const poll = setInterval(() => {
      ready()
        .then((yes) => {
          if (yes || Date.now() - started > 20_000) {
            clearInterval(poll)
            child.kill('SIGKILL')
          }
        })
        .catch(() => undefined)
    }, 20)
    child.on('exit', (code, signal) => {
      clearInterval(poll)
      if (signal !== 'SIGKILL') return reject(new Error(`crash-child exited with ${code}: ${err}`))
      const acks = out.split('\n').filter((l) => /^\d+ \d+$/.test(l))
      resolve(acks.length > 0 ? BigInt(acks.at(-1)!.split(' ')[1]) : -1n)
    })
  })
}
