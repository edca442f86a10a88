/**
 * The library side of zero-copy: a `Log` read slice sent to any net.Socket with `transferTo`,
 * after what the socket already has queued, by the engine or (without one) by copying.
 */
import { createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { LogManager } from '../../ts/storage/log-manager.js'
import { Transfer, transferTo } from '../../ts/network/transfer.js'
import { silentLogger } from '../../ts/logger.js'
import { connectTo } from '../helpers/kafka-socket.js'
import { tempDir } from '../helpers/tmp.js'

const cleanup: Array<() => unknown> = []
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f()
})

/**
 * A server that collects everything a connection sends, reading nothing for its first 300 ms
 * (so that what the client writes first waits in the client's own queue).
 */
async function collector(): Promise<{ port: number; received: () => Buffer }> {
  const chunks: Buffer[] = []
  const server: Server = createServer((s) => {
    s.pause()
    setTimeout(() => {
      s.on('data', (d: Buffer) => chunks.push(d))
      s.resume()
    }, 300)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanup.push(() => new Promise((resolve) => server.close(resolve)))
  return { port: (server.address() as { port: number }).port, received: () => Buffer.concat(chunks) }
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe.each(['native', 'js'] as const)('transferTo with the %s backend', (backend) => {
  it.each([
    ['the transfer engine', true],
    ['the copy path', false],
  ] as const)('sends a read slice after the bytes already queued, through %s', async (_, zeroCopy) => {
    const manager = await LogManager.open({ dataDir: tempDir('ferrolog-transfer-to-'), backend, logger: silentLogger })
    cleanup.push(() => manager.close())
    const log = await manager.getOrCreateLog('t', 0)
    for (let i = 0; i < 50; i++) log.append([{ key: `k${i}`, value: Buffer.alloc(10_000, i) }])
    const { records: slice } = log.read(5n, { maxBytes: 200_000 })
    const expected = log.readSlice(slice)
    expect(expected.length).toBeGreaterThan(100_000)

    const engine = zeroCopy ? new Transfer() : null
    if (engine) cleanup.push(() => engine.close())
    const { port, received } = await collector()
    const socket: Socket = await connectTo(port)
    cleanup.push(() => socket.destroy())
    // Queued on the socket first, more than the kernel's buffers take: must still arrive first.
    const before = Buffer.alloc(16 << 20)
    for (let i = 0; i < before.length; i += 4096) before[i] = (i >> 12) & 0xff
    socket.write(before)
    expect(socket.writableLength).toBeGreaterThan(0)
    const sent = await transferTo(socket, [Buffer.from('head'), log.fileRecords(slice), Buffer.from('tail')], engine)
    expect(sent).toBe(4 + expected.length + 4)
    if (engine) expect(engine.stats).toEqual({ jobs: 1, failed: 0, bytes: sent, inline: 0 })
    const total = before.length + sent
    await until(() => received().length >= total)
    expect(received().equals(Buffer.concat([before, Buffer.from('head'), expected, Buffer.from('tail')]))).toBe(true)
  })
})
