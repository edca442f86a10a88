/**
 * Request frames as a Connection reassembles them from the socket's chunks, and responses of
 * bytes as the ResponseWriter sends them, over a TLS and a plaintext listener of a real
 * SocketServer. Over TLS every record the client writes reaches the server as a chunk of its own
 * (node:tls hands over one record at a time), so the client's writes decide where the chunks
 * end: size prefixes split across chunks, frames spanning many chunks, several frames and the
 * start of the next in one chunk. The handler echoes each frame; the client reads every answer
 * back whole, in order, byte for byte.
 */
import { createHash, randomBytes } from 'node:crypto'
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SocketServer } from '../../ts/network/socket-server.js'
import { createCertificateAuthority } from '../../ts/security/certificates.js'
import { sslServerConfig } from '../../ts/security/ssl-engine-factory.js'
import { silentLogger } from '../../ts/logger.js'

const ca = createCertificateAuthority()
const cert = ca.issue({ subject: { CN: 'broker' }, usage: 'server' })

/** A frame: the size prefix, then the body (at least 10 bytes: the smallest request). */
function frame(body: Buffer): Buffer {
  const prefix = Buffer.alloc(4)
  prefix.writeInt32BE(body.length, 0)
  return Buffer.concat([prefix, body])
}

/** The answers' frames as they come, parsed from the client's chunks. */
function frameReader(socket: Socket): { next: () => Promise<Buffer> } {
  let pending = Buffer.alloc(0)
  const frames: Buffer[] = []
  let wake: (() => void) | null = null
  socket.on('data', (d: Buffer) => {
    pending = Buffer.concat([pending, d])
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const size = pending.readInt32BE(0)
      frames.push(pending.subarray(4, 4 + size))
      pending = pending.subarray(4 + size)
    }
    wake?.()
  })
  return {
    async next() {
      const deadline = Date.now() + 20_000
      while (frames.length === 0) {
        if (Date.now() > deadline) throw new Error('no answer in time')
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, 50)
        })
        wake = null
      }
      return frames.shift()!
    },
  }
}

const digest = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

describe.each(['SSL', 'PLAINTEXT'] as const)('Connection frames and answers over %s', (protocol) => {
  let server: SocketServer
  let port: number
  /** Sizes of the frames the handler was given, in order. */
  const seen: number[] = []
  beforeAll(async () => {
    server = new SocketServer(
      (request) => {
        seen.push(request.length)
        // The answer: the request's bytes (large requests give large answers of bytes).
        return Promise.resolve(Buffer.from(request))
      },
      {
        host: '127.0.0.1',
        port: 0,
        maxRequestBytes: 8 << 20,
        logger: silentLogger,
        listener: { listenerName: protocol, securityProtocol: protocol },
        ...(protocol === 'SSL' ? { tls: sslServerConfig({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': cert.keyPem, 'ssl.keystore.certificate.chain': cert.chainPem }) } : {}),
      },
    )
    port = await server.listen()
  })
  afterAll(async () => {
    await server?.stop()
  })

  async function open(): Promise<Socket> {
    const socket: Socket = protocol === 'SSL' ? tlsConnect({ host: '127.0.0.1', port, ca: ca.certificatePem, servername: 'localhost' }) : netConnect(port, '127.0.0.1')
    await new Promise<void>((resolve, reject) => {
      socket.once(protocol === 'SSL' ? 'secureConnect' : 'connect', resolve)
      socket.once('error', reject)
    })
    socket.setNoDelay(true)
    return socket
  }

  /** Writes `pieces` one write each (over TLS one record each, up to 16 KiB), one per turn of the event loop. */
  async function writePieces(socket: Socket, pieces: Buffer[]): Promise<void> {
    for (const piece of pieces) {
      await new Promise<void>((resolve, reject) => socket.write(piece, (err) => (err ? reject(err) : resolve())))
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  it('reassembles frames cut anywhere: in the size prefix, across many chunks, several in one chunk', async () => {
    const socket = await open()
    const reader = frameReader(socket)
    const bodies = [randomBytes(10), randomBytes(1000), randomBytes(16_500), randomBytes(100_000), randomBytes(37), randomBytes(16_500), randomBytes(16_500)]
    const wire = Buffer.concat(bodies.map(frame))
    // Cuts: inside the first prefix (1, 3), between frames, inside the 100 KB frame's prefix,
    // then the rest in pieces of 5000 (several frames and parts of others per piece).
    const cuts = [1, 3, 14]
    const bigStart = 14 + 4 + 1000 + 4 + 16_500
    cuts.push(bigStart + 2, bigStart + 4 + 7)
    for (let at = bigStart + 4 + 7 + 5000; at < wire.length; at += 5000) cuts.push(at)
    const pieces: Buffer[] = []
    let from = 0
    for (const cut of [...cuts, wire.length]) {
      pieces.push(wire.subarray(from, cut))
      from = cut
    }
    seen.length = 0
    await writePieces(socket, pieces)
    for (const body of bodies) {
      const answer = await reader.next()
      expect(answer.length).toBe(body.length)
      expect(digest(answer)).toBe(digest(body))
    }
    expect(seen).toEqual(bodies.map((b) => b.length))
    socket.destroy()
  })

  it('answers frames written back to back in one write (a pipelining producer), large answers of bytes intact', async () => {
    const socket = await open()
    const reader = frameReader(socket)
    // 40 requests of 16.5 KB (a Java producer's 16 KiB batch and its headers), then two of 1 MB.
    const bodies = [...Array.from({ length: 40 }, () => randomBytes(16_500)), randomBytes(1 << 20), randomBytes((1 << 20) + 3)]
    seen.length = 0
    socket.write(Buffer.concat(bodies.map(frame)))
    for (const body of bodies) {
      const answer = await reader.next()
      expect(answer.length).toBe(body.length)
      expect(digest(answer)).toBe(digest(body))
    }
    expect(seen).toEqual(bodies.map((b) => b.length))
    socket.destroy()
  }, 30_000)

  it('keeps answering in order while the client reads nothing for a while (the answers wait in the socket)', async () => {
    const socket = await open()
    socket.pause()
    const bodies = Array.from({ length: 30 }, (_, i) => randomBytes(100_000 + i))
    socket.write(Buffer.concat(bodies.map(frame)))
    // 3 MB of answers cannot all fit in the socket buffers: the server waits on the client.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const reader = frameReader(socket)
    socket.resume()
    for (const body of bodies) expect(digest(await reader.next())).toBe(digest(body))
    socket.destroy()
  }, 30_000)
})
