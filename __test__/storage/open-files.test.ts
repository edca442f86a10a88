/**
 * ferrolog issue #11: a start must never need one open descriptor per partition file at once.
 * Both engines, through LogManager: 2,000 one-batch segments over 20 partitions (written by
 * many-segments-child.cjs) open with the
 * active segments' files only (three descriptors a partition, counted in /proc/self/fd: each
 * test file runs in a process of its own), every segment reads back under a bound of 50 open
 * sealed segments, and a zero-copy transfer of a segment whose descriptor the bound closed
 * under it sends the right bytes.
 */
import { readdirSync, readlinkSync, rmSync } from 'node:fs'
import { createServer, connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LogManager, silentLogger, transferTo, type BackendName } from '../../ts/index.js'
import { CLEAN_SHUTDOWN_FILE, RECOVERY_POINT_CHECKPOINT_FILE } from '../../ts/storage/log-manager.js'
import { backendNamed } from '../../ts/storage/backends.js'
import { DEFAULT_MAX_OPEN_SEGMENTS } from '../../ts/storage/js/open-segments.js'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

/** Writes the data dir in a process of its own (the file says why). */
const WRITER = join(__dirname, 'many-segments-child.cjs')
const PARTITIONS = 20
const SEGMENTS = 100
const BOUND = 50

const openFds = () => readdirSync('/proc/self/fd').length

/** The files under `dir` this process has descriptors open on, one entry a descriptor. */
function filesOpenUnder(dir: string): string[] {
  const out: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (target.startsWith(dir + '/')) out.push(target.slice(dir.length + 1))
    } catch {
      // closed while listing
    }
  }
  return out.sort()
}

const fdsUnder = (dir: string) => filesOpenUnder(dir).length
const value = (p: number, o: number) => `partition ${p} offset ${o}`

function open(dataDir: string, backend: BackendName, maxOpenSegments?: number) {
  return LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0, checkpointIntervalMs: 1e9, maxOpenSegments })
}

/** A connected pair on 127.0.0.1: what the sender writes, the receiver collects. */
async function socketPair(): Promise<{ sender: Socket; received: () => Promise<Buffer>; close: () => void }> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve))
  const sender = connect(port, '127.0.0.1')
  await new Promise<void>((resolve) => sender.once('connect', resolve))
  const receiver = await accepted
  const chunks: Buffer[] = []
  receiver.on('data', (d: Buffer) => chunks.push(d))
  const ended = new Promise<void>((resolve) => receiver.once('end', resolve))
  return {
    sender,
    received: async () => {
      sender.end()
      await ended
      return Buffer.concat(chunks)
    },
    close: () => {
      sender.destroy()
      receiver.destroy()
      server.close()
    },
  }
}

describe.each(['native', 'js'] as BackendName[])('open files on the %s backend', (backend) => {
  it('opens 2,000 segments with descriptors per partition, reads every one under the bound, and transfers one the bound closed', async () => {
    const dataDir = tempDir('ferrolog-open-files-')
    const wrote = await runProcess(process.execPath, [WRITER, dataDir, backend, String(PARTITIONS), String(SEGMENTS)], '', 120_000)
    expect(wrote).toMatchObject({ status: 0, stderr: '' })

    const before = openFds()
    const startedAt = performance.now()
    const manager = await open(dataDir, backend, BOUND)
    const openMs = performance.now() - startedAt
    const afterOpen = openFds()
    const engine = backendNamed(backend)
    try {
      console.log(`${backend}: ${PARTITIONS * SEGMENTS} segments: ${before} descriptors before open, ${afterOpen} after, open ${openMs.toFixed(0)} ms`)
      // The active segment's .log, .index and .timeindex a partition; none for the 1,980 sealed ones.
      const open = filesOpenUnder(dataDir)
      expect(open.filter((f) => !/^many-\d+\/00000000000000000099\.(log|index|timeindex)$/.test(f))).toEqual([])
      expect(open).toHaveLength(3 * PARTITIONS)
      expect(afterOpen - before).toBeLessThanOrEqual(3 * PARTITIONS)
      expect(engine.openSealedSegments()).toBe(0)

      let most = afterOpen
      let mostUnder = 0
      for (let p = 0; p < PARTITIONS; p++) {
        const log = manager.getLog('many', p)!
        for (let o = 0; o < SEGMENTS; o++) {
          const [record] = log.readRecords(BigInt(o), { maxBytes: 1 })
          expect(record.offset).toBe(BigInt(o))
          expect(record.value?.toString()).toBe(value(p, o))
          // The FileRecords path (what a Fetch sends) too, released as a response would be.
          const info = log.read(BigInt(o), { maxBytes: 1 << 20 })
          const records = log.fileRecords(info.records)
          expect(records.read().equals(log.readSlice(info.records))).toBe(true)
          records.close()
          most = Math.max(most, openFds())
          mostUnder = Math.max(mostUnder, fdsUnder(dataDir))
        }
      }
      console.log(`${backend}: every segment read under a bound of ${BOUND}: at most ${most} descriptors`)
      expect(engine.openSealedSegments()).toBeLessThanOrEqual(BOUND)
      // A segment read through FileRecords holds its descriptor and, in the twin, the shared
      // handle's dup: the active segments' too.
      expect(mostUnder).toBeLessThanOrEqual(4 * PARTITIONS + 2 * BOUND)
      expect(most - before).toBeLessThanOrEqual(4 * PARTITIONS + 2 * BOUND + 4)

      // A transfer in flight: the first segment's records held while reading every other
      // segment closes that segment's descriptor, then sent with sendfile.
      const first = manager.getLog('many', 0)!
      const info = first.read(0n, { maxBytes: 1 << 20 })
      const held = first.fileRecords(info.records)
      const expected = first.readSlice(info.records)
      for (let p = 1; p < PARTITIONS; p++) {
        const log = manager.getLog('many', p)!
        for (let o = 0; o < SEGMENTS; o++) log.readRecords(BigInt(o), { maxBytes: 1 })
      }
      const pair = await socketPair()
      try {
        await transferTo(pair.sender, [held])
        expect((await pair.received()).equals(expected)).toBe(true)
      } finally {
        held.close()
        pair.close()
      }
      expect(first.readRecords(0n, { maxBytes: 1 })[0].value?.toString()).toBe(value(0, 0))

      // Appends and rolls go on over sealed segments closed by the bound.
      for (let p = 0; p < PARTITIONS; p++) {
        const log = manager.getLog('many', p)!
        const next = log.append([{ key: 'k', value: value(p, SEGMENTS) }]).firstOffset
        expect(log.readRecords(next)[0].value?.toString()).toBe(value(p, SEGMENTS))
      }
    } finally {
      await manager.close()
      engine.setMaxOpenSegments(DEFAULT_MAX_OPEN_SEGMENTS)
    }
    expect(engine.openSealedSegments()).toBe(0)
    expect(fdsUnder(dataDir)).toBe(0)
  })

  it('recovers every segment of 20 logs at once under a bound of 1 open segment, losing nothing', async () => {
    const dataDir = tempDir('ferrolog-open-files-recovery-')
    const wrote = await runProcess(process.execPath, [WRITER, dataDir, backend, String(PARTITIONS), String(SEGMENTS)], '', 120_000)
    expect(wrote).toMatchObject({ status: 0, stderr: '' })
    // An unclean stop with no recovery points: every segment of every log is walked, the 20
    // logs concurrently, while the bound closes all but one sealed segment's descriptor. A walk
    // whose descriptor were closed under its reads would read another file (or none) and cut
    // the log there.
    rmSync(join(dataDir, CLEAN_SHUTDOWN_FILE))
    rmSync(join(dataDir, RECOVERY_POINT_CHECKPOINT_FILE))
    const manager = await open(dataDir, backend, 1)
    const engine = backendNamed(backend)
    try {
      for (let p = 0; p < PARTITIONS; p++) {
        const log = manager.getLog('many', p)!
        expect(log.recoveryReport()).toMatchObject({ segmentsRecovered: SEGMENTS, bytesTruncated: 0 })
        expect(log.logEndOffset()).toBe(BigInt(SEGMENTS))
        for (let o = 0; o < SEGMENTS; o++) expect(log.readRecords(BigInt(o), { maxBytes: 1 })[0].value?.toString()).toBe(value(p, o))
      }
      expect(engine.openSealedSegments()).toBeLessThanOrEqual(1)
      expect(fdsUnder(dataDir)).toBeLessThanOrEqual(3 * PARTITIONS + 1)
    } finally {
      await manager.close()
      engine.setMaxOpenSegments(DEFAULT_MAX_OPEN_SEGMENTS)
    }
  })
})
