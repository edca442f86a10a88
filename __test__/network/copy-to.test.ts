/**
 * Copy mode's send (`copyTo`, where sendfile cannot serve): bytes and file ranges in order over
 * a real socket, the ranges read into two reused buffers a piece at a time, never more than two
 * pieces held however slowly the peer reads; a file shorter than its range and a stopped copy
 * end it with a coded error.
 */
import { randomBytes } from 'node:crypto'
import { truncateSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { COPY_CHUNK_BYTES, copyTo, FileRecords, TransferError, type SendPart } from '../../ts/network/transfer.js'
import { connectTo } from '../helpers/kafka-socket.js'
import { tempDir } from '../helpers/tmp.js'

const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

/** A server collecting what one connection sends; it reads only once `resume` is called. */
async function peer(): Promise<{ port: number; received: () => Buffer; resume: () => void }> {
  const chunks: Buffer[] = []
  let accepted: Socket | undefined
  let resumed = false
  const server: Server = createServer((s) => {
    accepted = s
    s.on('data', (d: Buffer) => chunks.push(d))
    if (!resumed) s.pause()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanup.push(() => new Promise((resolve) => server.close(resolve)))
  cleanup.push(() => accepted?.destroy())
  return {
    port: (server.address() as { port: number }).port,
    received: () => Buffer.concat(chunks),
    resume: () => {
      resumed = true
      accepted?.resume()
    },
  }
}

async function client(port: number): Promise<Socket> {
  const socket = await connectTo(port)
  cleanup.push(() => socket.destroy())
  return socket
}

/** A file of `size` random bytes, opened as one FileRecords range. */
function segment(size: number): { path: string; bytes: Buffer; records: FileRecords } {
  const path = join(tempDir('ferrolog-copy-to-'), '00000000000000000000.log')
  const bytes = randomBytes(size)
  writeFileSync(path, bytes)
  const records = FileRecords.open(path, 0, size)
  cleanup.push(() => records.close())
  return { path, bytes, records }
}

function copy(socket: Socket, parts: SendPart[], buffers: Buffer[], stopped?: () => boolean): Promise<Error | null> {
  return new Promise((resolve) => {
    let calls = 0
    copyTo(
      socket,
      parts,
      buffers,
      (err) => {
        calls++
        expect(calls, 'done is called once').toBe(1)
        resolve(err)
      },
      stopped,
    )
  })
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe('FileRecords.readInto', () => {
  it('reads what fits from an offset of the range, the rest of it at most, and refuses an offset past it', () => {
    const { bytes, records } = segment(10_000)
    const range = records.slice(1000, 4000) // bytes [1000, 5000) of the file
    const target = Buffer.alloc(3000, 0xee)
    expect(range.readInto(target, 0)).toBe(3000)
    expect(target.equals(bytes.subarray(1000, 4000))).toBe(true)
    target.fill(0xee)
    expect(range.readInto(target, 4000 - 1200)).toBe(1200)
    expect(target.subarray(0, 1200).equals(bytes.subarray(3800, 5000))).toBe(true)
    expect(target[1200]).toBe(0xee)
    expect(range.readInto(target, 4000)).toBe(0)
    expect(() => range.readInto(target, 4001)).toThrow(/^INVALID_ARGUMENT: /)
    range.close()
    expect(() => range.readInto(target, 0)).toThrow(/^INVALID_ARGUMENT: /)
  })
})

describe('copyTo', () => {
  it('sends bytes and file ranges in order, byte for byte, through two buffers it reuses from one send to the next', async () => {
    const { bytes, records } = segment(1_500_000)
    const { port, received, resume } = await peer()
    resume()
    const socket = await client(port)
    // A range of several pieces that ends mid-piece, an empty one, a small one, bytes between.
    const big = records.slice(100, 3 * COPY_CHUNK_BYTES + 17)
    const parts: SendPart[] = [Buffer.from('head'), big, records.slice(5, 0), Buffer.alloc(0), records.slice(1_499_000, 1000), Buffer.from('tail')]
    const expected = Buffer.concat([Buffer.from('head'), bytes.subarray(100, 100 + 3 * COPY_CHUNK_BYTES + 17), bytes.subarray(1_499_000), Buffer.from('tail')])
    const buffers: Buffer[] = []
    expect(await copy(socket, parts, buffers)).toBeNull()
    expect(buffers.length).toBe(2)
    const reused = new Set(buffers)

    // The second send takes the same two buffers again: no new one.
    expect(await copy(socket, [records.slice(0, 1_500_000)], buffers)).toBeNull()
    expect(new Set(buffers)).toEqual(reused)
    await until(() => received().length >= expected.length + 1_500_000)
    expect(received().equals(Buffer.concat([expected, bytes]))).toBe(true)
  })

  it('gathers the parts into whole buffers: one write per COPY_CHUNK_BYTES, the last one shorter', async () => {
    const { bytes, records } = segment(1_500_000)
    const { port, received, resume } = await peer()
    resume()
    const socket = await client(port)
    const writes: number[] = []
    const write = socket.write.bind(socket) as (chunk: Buffer, cb?: (err?: Error | null) => void) => boolean
    socket.write = ((chunk: Buffer, cb?: (err?: Error | null) => void) => (writes.push(chunk.length), write(chunk, cb))) as typeof socket.write
    const big = records.slice(100, 3 * COPY_CHUNK_BYTES + 17)
    const parts: SendPart[] = [Buffer.from('head'), big, records.slice(5, 0), Buffer.alloc(0), records.slice(1_499_000, 1000), Buffer.from('tail')]
    const expected = Buffer.concat([Buffer.from('head'), bytes.subarray(100, 100 + 3 * COPY_CHUNK_BYTES + 17), bytes.subarray(1_499_000), Buffer.from('tail')])
    expect(await copy(socket, parts, [])).toBeNull()
    // The empty write is whenFlushed's.
    expect(writes.filter((n) => n > 0)).toEqual([COPY_CHUNK_BYTES, COPY_CHUNK_BYTES, COPY_CHUNK_BYTES, 4 + 17 + 1000 + 4])
    await until(() => received().length >= expected.length)
    expect(received().equals(expected)).toBe(true)
  })

  it('holds at most two pieces while the peer reads nothing, and sends the rest once it reads', async () => {
    const { bytes, records } = segment(16 << 20)
    const { port, received, resume } = await peer()
    const socket = await client(port)
    const buffers: Buffer[] = []
    const sent = copy(socket, [records], buffers)
    // The kernel's buffers fill, then the socket queues what it cannot hand over: two pieces at
    // most, not the 16 MiB read up front.
    await until(() => socket.writableLength > 0)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(socket.writableLength).toBeGreaterThan(0)
    expect(socket.writableLength).toBeLessThanOrEqual(2 * COPY_CHUNK_BYTES)
    resume()
    expect(await sent).toBeNull()
    await until(() => received().length >= bytes.length)
    expect(received().equals(bytes)).toBe(true)
  })

  it('ends with SHORT_FILE when the file is shorter than its range now', async () => {
    const { path, bytes, records } = segment(2 << 20)
    const { port, received, resume } = await peer()
    resume()
    const socket = await client(port)
    truncateSync(path, 1 << 20)
    const err = await copy(socket, [records], [])
    expect(err).toBeInstanceOf(TransferError)
    expect((err as TransferError).code).toBe('SHORT_FILE')
    // What was there went out; nothing after it.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(received().equals(bytes.subarray(0, 1 << 20))).toBe(true)
  })

  it('ends with CANCELLED once stopped, and gives its buffers back', async () => {
    const { records } = segment(16 << 20)
    const { port, resume } = await peer()
    const socket = await client(port)
    let stopped = false
    const buffers: Buffer[] = []
    const sent = copy(socket, [records], buffers, () => stopped)
    await until(() => socket.writableLength > 0)
    stopped = true
    resume()
    const err = await sent
    expect((err as TransferError).code).toBe('CANCELLED')
    await until(() => buffers.length === 2)
  })
})
