/**
 * The native zero-copy transfer engine (crates/transfer through the binding) on real sockets:
 * a net.Server on 127.0.0.1 whose accepted socket's fd the engine writes to, and a real client
 * that receives the bytes.
 */
import { spawn } from 'node:child_process'
import { unlinkSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { FileRecords, TransferEngine } from '../../ts/native/index.js'
import { tempDir } from '../helpers/tmp.js'

const MIB = 1 << 20
const CHILD = join(__dirname, 'exit-child.cjs')

interface Done {
  jobId: number
  bytesSent: number
  error: string | null
}

/**
 * An engine whose completions are awaited by job id. It writes nothing inline (inlineBytes 0)
 * unless asked: these tests are about the engine's thread.
 */
function engineWithCompletions(chunkBytes?: number, inlineBytes = 0) {
  const waiting = new Map<number, (done: Done) => void>()
  const early = new Map<number, Done>()
  const engine = new TransferEngine(
    (jobId, bytesSent, error) => {
      const done = { jobId, bytesSent, error }
      const resolve = waiting.get(jobId)
      if (resolve) resolve(done)
      else early.set(jobId, done)
    },
    chunkBytes,
    inlineBytes,
  )
  const completion = (jobId: number) =>
    new Promise<Done>((resolve) => {
      const done = early.get(jobId)
      if (done) resolve(done)
      else waiting.set(jobId, resolve)
    })
  return { engine, completion }
}

interface Pair {
  /** The accepted (broker-side) socket the engine writes to. */
  sender: net.Socket
  client: net.Socket
  /** Everything the client receives until the sender ends. */
  received: Promise<Buffer>
}

const servers: net.Server[] = []
const engines: TransferEngine[] = []

afterEach(() => {
  for (const engine of engines.splice(0)) engine.close()
  for (const server of servers.splice(0)) server.close()
})

/** `paused`: the client does not read; `senderPaused`: the sender never reads (Node then never sees the peer go and keeps its fd open). */
async function connectedPair(options: { paused?: boolean; senderPaused?: boolean } = {}): Promise<Pair> {
  const server = net.createServer({ pauseOnConnect: options.senderPaused === true })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve))
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1')
  client.on('error', () => {})
  if (options.paused) client.pause()
  const chunks: Buffer[] = []
  const received = new Promise<Buffer>((resolve) => {
    client.on('data', (chunk: Buffer) => chunks.push(chunk))
    client.on('close', () => resolve(Buffer.concat(chunks)))
  })
  const sender = await accepted
  sender.on('error', () => {})
  return { sender, client, received }
}

function fdOf(socket: net.Socket): number {
  const fd = (socket as any)._handle.fd as number
  expect(fd).toBeGreaterThanOrEqual(0)
  return fd
}

function pattern(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length)
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) % 251
  return bytes
}

function segmentFile(content: Buffer): string {
  const path = join(tempDir('ferrolog-transfer-'), '00000000000000000000.log')
  writeFileSync(path, content)
  return path
}

function start(chunkBytes?: number, inlineBytes?: number) {
  const made = engineWithCompletions(chunkBytes, inlineBytes)
  engines.push(made.engine)
  return made
}

describe('TransferEngine', () => {
  it('sends bytes, a FileRecords range and bytes, which arrive exactly', async () => {
    const content = pattern(3 * MIB, 1)
    const records = FileRecords.open(segmentFile(content), 100, 2 * MIB)
    expect([records.position, records.sizeInBytes]).toEqual([100, 2 * MIB])
    const { engine, completion } = start()
    const { sender, received } = await connectedPair()

    const jobId = engine.send(fdOf(sender), [Buffer.from('header:'), records, Buffer.from(':trailer')])
    expect(await completion(jobId)).toEqual({ jobId, bytesSent: 7 + 2 * MIB + 8, error: null })
    sender.end()

    const expected = Buffer.concat([Buffer.from('header:'), content.subarray(100, 100 + 2 * MIB), Buffer.from(':trailer')])
    expect((await received).equals(expected)).toBe(true)
    expect(records.read().equals(content.subarray(100, 100 + 2 * MIB))).toBe(true)
  })

  it('writes a small cached job at once (returns 0, no completion) and queues a large one', async () => {
    const content = pattern(2 * MIB, 7)
    const records = FileRecords.open(segmentFile(content), 0, 2 * MIB)
    records.read() // in the page cache
    const completions: number[] = []
    const { engine, completion } = start(undefined, 64 * 1024)
    const { sender, received } = await connectedPair()

    const small = engine.send(fdOf(sender), [Buffer.from('small:'), records.slice(10, 1000)])
    expect(small).toBe(0)
    const large = engine.send(fdOf(sender), [Buffer.from(':large:'), records.slice(0, MIB)])
    expect(large).toBeGreaterThan(0)
    completions.push((await completion(large)).bytesSent)
    // The socket has no job now: the next small one is written at once again, after the large.
    expect(engine.send(fdOf(sender), [Buffer.from(':end')])).toBe(0)
    sender.end()
    expect(completions).toEqual([7 + MIB])
    const expected = Buffer.concat([Buffer.from('small:'), content.subarray(10, 1010), Buffer.from(':large:'), content.subarray(0, MIB), Buffer.from(':end')])
    expect((await received).equals(expected)).toBe(true)
  })

  it('throws PEER_CLOSED for a job written at once to a closed peer', async () => {
    const { engine } = start(undefined, 64 * 1024)
    const { sender, client } = await connectedPair({ senderPaused: true })
    const fd = fdOf(sender)
    client.destroy()
    await new Promise((resolve) => setTimeout(resolve, 50))
    // The first write may still be accepted (the reset comes back with it); one fails.
    const attempt = () => engine.send(fd, [Buffer.alloc(1000)])
    expect(() => {
      for (let i = 0; i < 10; i++) attempt()
    }).toThrow(/^PEER_CLOSED: /)
    sender.destroy()
  })

  it('ends with PEER_CLOSED when the peer is destroyed mid-transfer, and keeps serving', async () => {
    const records = FileRecords.open(segmentFile(pattern(32 * MIB, 2)), 0, 32 * MIB)
    const { engine, completion } = start()
    const { sender, client } = await connectedPair({ paused: true })

    const jobId = engine.send(fdOf(sender), [records])
    await new Promise((resolve) => setTimeout(resolve, 50))
    client.destroy() // unread data: the kernel resets the connection
    const done = await completion(jobId)
    expect(done.error).toMatch(/^PEER_CLOSED: /)
    expect(done.bytesSent).toBeLessThan(32 * MIB)
    sender.destroy()

    const next = await connectedPair()
    const second = engine.send(fdOf(next.sender), [Buffer.from('still serving')])
    expect((await completion(second)).error).toBeNull()
    next.sender.end()
    expect((await next.received).toString()).toBe('still serving')
  })

  it('sends the bytes of a FileRecords whose file was unlinked after it was opened', async () => {
    const content = pattern(MIB, 3)
    const path = segmentFile(content)
    const records = FileRecords.open(path, 10, MIB - 20)
    unlinkSync(path) // retention deleted the segment
    expect(() => FileRecords.open(path, 0, 1)).toThrow(/^NOT_FOUND: /)
    const { engine, completion } = start()
    const { sender, received } = await connectedPair()

    const jobId = engine.send(fdOf(sender), [records])
    expect((await completion(jobId)).error).toBeNull()
    sender.end()
    expect((await received).equals(content.subarray(10, MIB - 10))).toBe(true)
  })

  it('a FileRecords from a dup of an fd reads the same range', async () => {
    const content = pattern(4096, 4)
    const fs = await import('node:fs')
    const fd = fs.openSync(segmentFile(content), 'r')
    const records = FileRecords.fromFd(fd, 1000, 500)
    fs.closeSync(fd) // the FileRecords holds its own dup
    expect(records.read().equals(content.subarray(1000, 1500))).toBe(true)
  })

  it('slice shares the open file: a range of the range, still there after the parent is closed', async () => {
    const content = pattern(8192, 5)
    const records = FileRecords.open(segmentFile(content), 1000, 4000)
    const slice = records.slice(500, 1000)
    records.close()
    expect(slice.position).toBe(1500)
    expect(slice.sizeInBytes).toBe(1000)
    expect(slice.read().equals(content.subarray(1500, 2500))).toBe(true)
    expect(() => slice.slice(900, 200)).toThrow(/^INVALID_ARGUMENT: /)
    expect(() => records.slice(0, 1)).toThrow(/^INVALID_ARGUMENT: /)
  })

  it('cancel ends the job with CANCELLED, once', async () => {
    const records = FileRecords.open(segmentFile(pattern(32 * MIB, 5)), 0, 32 * MIB)
    const { engine, completion } = start()
    const { sender } = await connectedPair({ paused: true })

    const jobId = engine.send(fdOf(sender), [records])
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(engine.cancel(jobId)).toBe(true)
    expect(engine.cancel(jobId)).toBe(false)
    const done = await completion(jobId)
    expect(done.error).toMatch(/^CANCELLED: /)
    expect(done.bytesSent).toBeLessThan(32 * MIB)
    expect(engine.cancel(jobId)).toBe(false)
    sender.destroy()
  })

  it('jobs on one socket complete in submission order', async () => {
    const content = pattern(4 * MIB, 6)
    const records = FileRecords.open(segmentFile(content), 0, 4 * MIB)
    const { engine, completion } = start(64 * 1024)
    const { sender, received } = await connectedPair()

    const order: number[] = []
    const first = engine.send(fdOf(sender), [records])
    const second = engine.send(fdOf(sender), [Buffer.from('second')])
    await Promise.all([completion(first).then(() => order.push(first)), completion(second).then(() => order.push(second))])
    expect(order).toEqual([first, second])
    sender.end()
    expect((await received).equals(Buffer.concat([content, Buffer.from('second')]))).toBe(true)
  })

  it('refuses bad arguments and sends after close with coded errors', async () => {
    const records = FileRecords.open(segmentFile(pattern(100, 7)), 0, 100)
    const { engine } = start()
    const { sender } = await connectedPair()
    expect(() => engine.send(-1, [])).toThrow(/^INVALID_ARGUMENT: /)
    records.close()
    records.close()
    expect(() => records.read()).toThrow(/^INVALID_ARGUMENT: /)
    expect(() => engine.send(fdOf(sender), [records])).toThrow(/^INVALID_ARGUMENT: /)
    engine.close()
    expect(() => engine.send(fdOf(sender), [Buffer.from('x')])).toThrow(/^ENGINE_CLOSED: /)
    engine.close()
    sender.destroy()
  })
})

describe('process exit with an engine', () => {
  function runChild(mode: string, file: string) {
    return new Promise<{ status: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CHILD, mode, file], { stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
      child.on('close', (status, signal) => {
        clearTimeout(timer)
        resolve({ status, signal, stdout, stderr })
      })
    })
  }

  it.each(['idle', 'pending-natural', 'pending-exit', 'pending-unref', 'worker'])('%s: the process exits normally', async (mode) => {
    const file = segmentFile(pattern(32 * MIB, 8))
    const { status, signal, stderr } = await runChild(mode, file)
    expect({ status, signal, stderr }).toEqual({ status: 0, signal: null, stderr: '' })
  })
})
