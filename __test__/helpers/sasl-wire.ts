/**
 * A raw client connection for SASL tests: size-prefixed frames out (Kafka requests, or raw SASL
 * tokens after SaslHandshake v0), frames in, and whether and when the broker closed it.
 */
import { connect, type Socket } from 'node:net'
import type { ApiCodec } from '../../ts/protocol/apis/api.js'
import { apiVersionsCodec } from '../../ts/protocol/apis/api-versions.js'
import { saslAuthenticateCodec, type SaslAuthenticateResponse } from '../../ts/protocol/apis/sasl-authenticate.js'
import { saslHandshakeCodec, type SaslHandshakeResponse } from '../../ts/protocol/apis/sasl-handshake.js'
import { readResponseHeader, writeRequestHeader } from '../../ts/protocol/header.js'
import { Reader } from '../../ts/protocol/reader.js'
import { Writer } from '../../ts/protocol/writer.js'

/** The RFC 4616 message `authzid NUL user NUL password`. */
export function plainToken(username: string, password: string, authzid = ''): Buffer {
  return Buffer.from(`${authzid}\0${username}\0${password}`, 'utf8')
}

export class SaslWire {
  private buffered = Buffer.alloc(0)
  private readonly frames: Buffer[] = []
  private waiter: (() => void) | null = null
  private correlationId = 0
  /** When the broker closed the connection (performance.now()), or null while open. */
  closedAt: number | null = null
  readonly closed: Promise<void>

  private constructor(readonly socket: Socket) {
    socket.on('data', (d) => {
      this.buffered = Buffer.concat([this.buffered, d])
      while (this.buffered.length >= 4 && this.buffered.length >= 4 + this.buffered.readInt32BE(0)) {
        const size = this.buffered.readInt32BE(0)
        this.frames.push(this.buffered.subarray(4, 4 + size))
        this.buffered = this.buffered.subarray(4 + size)
      }
      this.wake()
    })
    socket.on('error', () => undefined)
    this.closed = new Promise((resolve) =>
      socket.on('close', () => {
        this.closedAt = performance.now()
        this.wake()
        resolve()
      }),
    )
  }

  static open(port: number): Promise<SaslWire> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new SaslWire(socket)))
      socket.once('error', reject)
    })
  }

  private wake(): void {
    const w = this.waiter
    this.waiter = null
    w?.()
  }

  /** The next frame, or null when the connection closed first (or nothing came within `timeoutMs`: throws). */
  async nextFrame(timeoutMs = 10_000): Promise<Buffer | null> {
    const deadline = performance.now() + timeoutMs
    while (this.frames.length === 0) {
      if (this.closedAt !== null) return null
      const left = deadline - performance.now()
      if (left <= 0) throw new Error(`no frame and no close within ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiter = () => (clearTimeout(timer), resolve())
      })
    }
    return this.frames.shift()!
  }

  /** Writes one frame: `body` with its size prefix (or `size` instead of its length). */
  writeFrame(body: Buffer, size = body.length): void {
    const prefix = Buffer.alloc(4)
    prefix.writeInt32BE(size)
    this.socket.write(Buffer.concat([prefix, body]))
  }

  /** A request frame: header then the codec's body. */
  requestFrame<Req>(codec: ApiCodec<Req, unknown>, version: number, request: Req, correlationId = ++this.correlationId): Buffer {
    const w = new Writer()
    writeRequestHeader(w, { apiKey: codec.apiKey, apiVersion: version, correlationId, clientId: 'sasl-wire' }, version >= codec.flexibleFrom)
    codec.encodeRequest(w, version, request)
    return Buffer.from(w.finish())
  }

  /** Sends a request; its decoded response, or null when the broker closed the connection instead. */
  async request<Req, Res>(codec: ApiCodec<Req, Res>, version: number, request: Req): Promise<Res | null> {
    const correlationId = ++this.correlationId
    this.writeFrame(this.requestFrame(codec, version, request, correlationId))
    const frame = await this.nextFrame()
    if (frame === null) return null
    const r = new Reader(frame)
    const got = readResponseHeader(r, version >= codec.flexibleFrom && codec.apiKey !== apiVersionsCodec.apiKey)
    if (got !== correlationId) throw new Error(`correlation id ${got}, expected ${correlationId}`)
    return codec.decodeResponse(r, version)
  }

  handshake(mechanism: string, version = 1): Promise<SaslHandshakeResponse | null> {
    return this.request(saslHandshakeCodec, version, { mechanism })
  }

  authenticate(authBytes: Buffer, version = 2): Promise<SaslAuthenticateResponse | null> {
    return this.request(saslAuthenticateCodec, version, { authBytes })
  }

  close(): void {
    this.socket.destroy()
  }
}
