/**
 * Appends on a real full disk (a small tmpfs), through LogManager, for both backends: an append is
 * all or nothing, so no offset is handed out twice and the files hold only acknowledged records;
 * the log opens and serves every acknowledged record with the disk still full, and goes on after
 * the acknowledged ones once space is back (docs/storage.md, "Appends" and "Recovery").
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, buildBatch, kafkaErrorCodeOf, silentLogger, type BackendName, type Log } from '../../ts/index.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { decodeBatches } from '../../ts/protocol/records.js'
import { Filler, mountTmpfs } from '../helpers/tmpfs.js'

const BACKEND_NAMES: BackendName[] = ['native', 'js']
const CONFIG = { segmentBytes: 24 * 1024, segmentIndexBytes: 4096, indexIntervalBytes: 0 }

function open(dataDir: string, backend: BackendName) {
  return LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0, checkpointIntervalMs: 3_600_000, defaultConfig: CONFIG })
}

/** One batch per id, the value naming the id; sizes vary with the id. */
function batches(ids: number[]): Buffer {
  return Buffer.concat(ids.map((id) => buildBatch([{ value: `id=${id};`.padEnd(8 + ((id * 37) % 400), 'x'), timestamp: 1_000 + id }])))
}

function idOf(value: Buffer | null): number {
  const text = value!.toString()
  return Number(text.slice(3, text.indexOf(';')))
}

type Acked = Map<bigint, number>

/** [offset, id] of every record in the `.log` files of `dir`, in file order. */
function recordsInFiles(dir: string): Array<[bigint, number]> {
  const logs = readdirSync(dir)
    .filter((n) => /^\d{20}\.log$/.test(n))
    .sort()
  const out: Array<[bigint, number]> = []
  for (const name of logs) {
    for (const b of decodeBatches(readFileSync(join(dir, name)))) for (const r of b.records) out.push([r.offset, idOf(r.value)])
  }
  return out
}

/** [offset, id] of every record the log serves from its start to its end. */
function recordsServed(log: Log): Array<[bigint, number]> {
  const out: Array<[bigint, number]> = []
  let next = log.logStartOffset()
  while (next < log.logEndOffset()) {
    const got = log.readBatches(next, { maxBytes: 1 << 20, isolation: 'LOG_END' })
    expect(got.length, `nothing served at ${next}`).toBeGreaterThan(0)
    for (const b of got) {
      for (const r of b.records) out.push([r.offset, idOf(r.value)])
      next = b.lastOffset + 1n
    }
  }
  return out
}

function expectExactly(what: string, found: Array<[bigint, number]>, acked: Acked) {
  const want = [...acked.entries()]
  expect(found.length, `${what}: records found vs acknowledged`).toBe(want.length)
  const first = found.findIndex(([o, id], i) => o !== want[i][0] || id !== want[i][1])
  expect(first, `${what}: first difference at #${first}: ${String(found[first])} vs ${String(want[first])}`).toBe(-1)
}

class Producer {
  nextId = 0
  appends = 0
  failures = 0
  readonly acked: Acked = new Map()
  private last = -1n

  constructor(private readonly epochEvery: number) {}

  /** Appends one to three batches at once; whether acknowledged. A refused append must change nothing. */
  append(log: Log): boolean {
    const n = 1 + (this.appends % 3)
    const ids = Array.from({ length: n }, (_, i) => this.nextId + i)
    this.nextId += n
    this.appends++
    const before = log.logEndOffset()
    try {
      const info = log.append(batches(ids), { leaderEpoch: Math.floor(this.appends / this.epochEvery) })
      expect(info.firstOffset).toBe(this.last + 1n)
      ids.forEach((id, i) => this.acked.set(info.firstOffset + BigInt(i), id))
      this.last = info.lastOffset
      return true
    } catch (err) {
      expect(kafkaErrorCodeOf(err), String(err)).toBe(ErrorCode.KAFKA_STORAGE_ERROR)
      expect((err as { code?: string }).code, String(err)).toBe('STORAGE_ERROR')
      expect(log.logEndOffset(), `a refused append leaves the LEO: ${String(err)}`).toBe(before)
      this.failures++
      return false
    }
  }
}

describe.each(BACKEND_NAMES)('a full disk (%s backend)', (backend) => {
  it.each([
    ['in a new epoch now and then', 150],
    ['in one epoch', Number.MAX_SAFE_INTEGER],
  ])('appends %s are all or nothing, and the log reopens and serves them on the full disk', async (_, epochEvery) => {
    const disk = mountTmpfs(2 * 1024 * 1024)
    const dataDir = join(disk, 'data')
    let manager = await open(dataDir, backend)
    let log = await manager.getOrCreateLog('t', 0)
    const dir = join(dataDir, 't-0')
    const p = new Producer(epochEvery)
    // The first epoch is in the checkpoint before the disk fills.
    expect(p.append(log)).toBe(true)
    const filler = new Filler(join(disk, 'filler'))
    filler.fill()
    // Give the disk back a page at a time: the appends that fill it again fail at every step of an
    // append by turns (the .log, an index entry, a roll's new files, the epoch checkpoint).
    for (let round = 0; round < 150; round++) {
      filler.free(4096)
      while (p.append(log)) {
        // until the disk is full again
      }
      if (round % 25 === 0) {
        expectExactly('files', recordsInFiles(dir), p.acked)
        expectExactly('reads', recordsServed(log), p.acked)
      }
    }
    expect(p.failures).toBeGreaterThanOrEqual(150)
    expect(p.acked.size).toBeGreaterThan(1000)
    expect(log.segments().length).toBeGreaterThan(5)
    expectExactly('files', recordsInFiles(dir), p.acked)
    expectExactly('reads', recordsServed(log), p.acked)

    // A crash (no close) with the disk still full: the log opens, recovers and serves every record.
    filler.fill()
    manager = await open(dataDir, backend)
    log = await manager.getOrCreateLog('t', 0)
    expectExactly('reads after a reopen on a full disk', recordsServed(log), p.acked)
    expectExactly('files after a reopen on a full disk', recordsInFiles(dir), p.acked)
    for (let i = 0; i < 5; i++) p.append(log)
    expectExactly('files', recordsInFiles(dir), p.acked)

    // Space again: appends go on after the acknowledged ones, across a clean and a crash reopen.
    filler.remove()
    for (let i = 0; i < 300; i++) expect(p.append(log)).toBe(true)
    await manager.close()
    manager = await open(dataDir, backend)
    expect(manager.hadCleanShutdown).toBe(true)
    log = await manager.getOrCreateLog('t', 0)
    expectExactly('reads after a clean reopen', recordsServed(log), p.acked)
    for (let i = 0; i < 50; i++) expect(p.append(log)).toBe(true)
    manager = await open(dataDir, backend)
    log = await manager.getOrCreateLog('t', 0)
    expectExactly('reads after a crash', recordsServed(log), p.acked)
    expectExactly('files after a crash', recordsInFiles(dir), p.acked)
    for (const b of log.readBatches(0n, { maxBytes: 1 << 30, isolation: 'LOG_END' })) {
      const entry = log
        .epochEntries()
        .filter((e) => e.startOffset <= b.baseOffset)
        .pop()
      expect(entry?.epoch, `epoch of the batch at ${b.baseOffset}`).toBe(b.partitionLeaderEpoch)
    }
    await manager.close()
  })
})
