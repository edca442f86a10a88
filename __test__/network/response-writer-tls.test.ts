/**
 * The response writer over TLS (copy mode: sendfile cannot serve a TLSSocket): what leaves on
 * the wire, seen by a TCP relay between a real node:tls client and server that parses the TLS
 * records the server sends. A response goes out as whole 16 KiB records, with no record of its
 * own for the size prefix or for each header between file ranges; the bytes are the response's.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { connect as netConnect, createServer as createNetServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { connect as tlsConnect, createServer as createTlsServer, type TLSSocket } from 'node:tls'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ResponseWriter, type ResponseSend } from '../../ts/network/response-writer.js'
import { COPY_CHUNK_BYTES, FileRecords } from '../../ts/network/transfer.js'
import { createCertificateAuthority } from '../../ts/security/certificates.js'

/** TLS 1.3 record overhead of AES-GCM and ChaCha20-Poly1305: the inner content type and the 16-byte tag. */
const TLS13_OVERHEAD = 17
const MAX_RECORD = 16_384

interface Link {
  /** The server's end: what the ResponseWriter writes to. */
  server: TLSSocket
  /** Plaintext the client received. */
  received: () => Buffer
  /** Plaintext sizes of the application-data records the server sent so far. */
  records: () => number[]
  close: () => Promise<void>
}

const ca = createCertificateAuthority()
const cert = ca.issue({ subject: { CN: 'broker' }, usage: 'server' })

async function link(): Promise<Link> {
  let serverSocket!: TLSSocket
  const tlsServer = createTlsServer({ key: cert.keyPem, cert: cert.chainPem, minVersion: 'TLSv1.3' })
  const accepted = new Promise<void>((resolve) => {
    tlsServer.once('secureConnection', (s: TLSSocket) => {
      serverSocket = s
      resolve()
    })
  })
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve))
  // The relay: client <-> relay <-> TLS server; the server-to-client bytes are parsed as records.
  const records: number[] = []
  let pending = Buffer.alloc(0)
  const sockets: Socket[] = []
  const relay: Server = createNetServer((fromClient) => {
    const toServer = netConnect((tlsServer.address() as { port: number }).port, '127.0.0.1')
    sockets.push(fromClient, toServer)
    fromClient.pipe(toServer)
    toServer.on('data', (d: Buffer) => {
      pending = Buffer.concat([pending, d])
      while (pending.length >= 5 && pending.length >= 5 + pending.readUInt16BE(3)) {
        const length = pending.readUInt16BE(3)
        if (pending[0] === 23) records.push(length - TLS13_OVERHEAD)
        pending = pending.subarray(5 + length)
      }
      fromClient.write(d)
    })
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  const chunks: Buffer[] = []
  const client = tlsConnect({ host: '127.0.0.1', port: (relay.address() as { port: number }).port, ca: ca.certificatePem, servername: 'localhost' })
  client.on('data', (d: Buffer) => chunks.push(d))
  let tickets = 0
  client.on('session', () => tickets++)
  await new Promise<void>((resolve, reject) => (client.once('secureConnect', resolve), client.once('error', reject)))
  await accepted
  // TLS 1.3 session tickets are application-data records too, and OpenSSL's server sends its two
  // with its first write: one byte written and the tickets received before any response.
  serverSocket.write(Buffer.from([0]))
  await until(() => chunks.length > 0 && tickets >= 2)
  return {
    server: serverSocket,
    received: () => Buffer.concat(chunks),
    records: () => [...records],
    close: async () => {
      client.destroy()
      serverSocket.destroy()
      for (const s of sockets) s.destroy()
      await Promise.all([new Promise((r) => relay.close(r)), new Promise((r) => tlsServer.close(r))])
    },
  }
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const prefixed = (bytes: Buffer): Buffer => {
  const prefix = Buffer.alloc(4)
  prefix.writeInt32BE(bytes.length, 0)
  return Buffer.concat([prefix, bytes])
}

describe('ResponseWriter over TLS', () => {
  let segment: Buffer
  let segmentPath: string
  let dir: string
  let l: Link
  beforeAll(async () => {
    segment = randomBytes(4 * COPY_CHUNK_BYTES)
    dir = mkdtempSync(join(tmpdir(), 'ferrolog-response-writer-tls-'))
    segmentPath = join(dir, '00000000000000000000.log')
    writeFileSync(segmentPath, segment)
    l = await link()
  })
  afterAll(async () => {
    await l?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  /** Writes one response and waits until the client has it all; returns the new records' plaintext sizes. */
  async function send(writer: ResponseWriter, response: Buffer | ResponseSend, expected: Buffer): Promise<number[]> {
    // Session tickets (TLS 1.3 sends them as application-data records) come right after the
    // handshake: start from what the client has by now, and wait for the response's bytes.
    const [bytesBefore, recordsBefore] = [l.received().length, l.records().length]
    writer.write(response)
    await until(() => l.received().length >= bytesBefore + expected.length)
    expect(l.received().subarray(bytesBefore).equals(expected)).toBe(true)
    return l.records().slice(recordsBefore)
  }

  it('writes a response of bytes, size prefix included, as one record', async () => {
    const writer = new ResponseWriter(l.server, null, (reason) => expect.fail(reason))
    const body = randomBytes(1000)
    expect(await send(writer, body, prefixed(body))).toEqual([4 + 1000])
  })

  it('gathers a small response of headers and a file range into one record', async () => {
    const writer = new ResponseWriter(l.server, null, (reason) => expect.fail(reason))
    const [head, tail] = [randomBytes(60), randomBytes(20)]
    const range = FileRecords.open(segmentPath, 100, 5000)
    const response: ResponseSend = { parts: [head, range, tail], size: 60 + 5000 + 20 }
    expect(await send(writer, response, prefixed(Buffer.concat([head, segment.subarray(100, 5100), tail])))).toEqual([4 + 60 + 5000 + 20])
  })

  it('sends a large response as full 16 KiB records, the last one shorter, not a record per part', async () => {
    const writer = new ResponseWriter(l.server, null, (reason) => expect.fail(reason))
    const [head, middle, tail] = [randomBytes(100), randomBytes(30), randomBytes(50)]
    // Two ranges and headers between them; 4 + 100 + 30 + 50 + ranges = 3 pieces and 1000 bytes.
    const first = 2 * COPY_CHUNK_BYTES
    const second = COPY_CHUNK_BYTES + 1000 - (4 + 100 + 30 + 50)
    const response: ResponseSend = {
      parts: [head, FileRecords.open(segmentPath, 0, first), middle, FileRecords.open(segmentPath, first, second), tail],
      size: 100 + first + 30 + second + 50,
    }
    const expected = prefixed(Buffer.concat([head, segment.subarray(0, first), middle, segment.subarray(first, first + second), tail]))
    expect(expected.length).toBe(3 * COPY_CHUNK_BYTES + 1000)
    const records = await send(writer, response, expected)
    expect(records).toEqual([...Array<number>((3 * COPY_CHUNK_BYTES) / MAX_RECORD).fill(MAX_RECORD), 1000])
    expect(writer.idle).toBe(true)
  })
})
