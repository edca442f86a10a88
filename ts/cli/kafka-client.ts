/**
 * A small Kafka client over our own codecs: one connection, requests pipelined with correlation
 * ids, responses matched back. Enough for the `ferrolog topics` command and for tests that talk
 * to a broker the way a real client does (through a socket). No retries, no metadata cache.
 *
 * Frames are `size int32` + header + body; the response header is v1 (tagged fields) for a
 * flexible version, except ApiVersions, whose response header is always v0.
 */
import { connect, type Socket } from 'node:net'
import { ApiKey, type ApiCodec } from '../protocol/apis/api.js'
import { readResponseHeader, writeRequestHeader } from '../protocol/header.js'
import { Reader } from '../protocol/reader.js'
import { Writer } from '../protocol/writer.js'

interface Pending {
  decode: (r: Reader) => unknown
  resolve: (value: unknown) => void
  reject: (err: Error) => void
}

export class KafkaClient {
  private readonly socket: Socket
  private readonly clientId: string
  private readonly pending = new Map<number, Pending>()
  private nextCorrelationId = 1
  private buffered: Buffer = Buffer.alloc(0)
  private failure: Error | null = null

  private constructor(socket: Socket, clientId: string) {
    this.socket = socket
    this.clientId = clientId
    socket.on('data', (chunk: Buffer) => this.onData(chunk))
    socket.on('error', (err) => this.fail(err))
    socket.on('close', () => this.fail(new Error('connection closed by the broker')))
  }

  /** Connects to `host:port` (a bootstrap server). */
  static connect(bootstrap: string, options: { clientId?: string; timeoutMs?: number } = {}): Promise<KafkaClient> {
    const colon = bootstrap.lastIndexOf(':')
    const port = Number(bootstrap.slice(colon + 1))
    if (colon <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) return Promise.reject(new Error(`bootstrap server must be host:port, not "${bootstrap}"`))
    const host = bootstrap.slice(0, colon)
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port, timeout: options.timeoutMs ?? 10_000 })
      const onError = (err: Error) => reject(new Error(`cannot connect to ${bootstrap}: ${err.message}`))
      socket.once('error', onError)
      socket.once('timeout', () => socket.destroy(new Error('timed out')))
      socket.once('connect', () => {
        socket.off('error', onError)
        socket.setTimeout(0)
        resolve(new KafkaClient(socket, options.clientId ?? 'ferrolog-cli'))
      })
    })
  }

  /** Sends one request at `version` and resolves with the decoded response. */
  send<Req, Res>(codec: ApiCodec<Req, Res>, version: number, request: Req): Promise<Res> {
    if (this.failure) return Promise.reject(this.failure)
    const correlationId = this.nextCorrelationId++
    const flexible = version >= codec.flexibleFrom
    const w = new Writer()
    w.int32(0) // size, patched below
    writeRequestHeader(w, { apiKey: codec.apiKey, apiVersion: version, correlationId, clientId: this.clientId }, flexible)
    codec.encodeRequest(w, version, request)
    const frame = w.finish()
    frame.writeInt32BE(frame.length - 4, 0)
    const responseFlexible = flexible && codec.apiKey !== ApiKey.ApiVersions
    return new Promise<Res>((resolve, reject) => {
      this.pending.set(correlationId, {
        decode: (r) => {
          readResponseHeader(r, responseFlexible)
          return codec.decodeResponse(r, version)
        },
        resolve: resolve as (value: unknown) => void,
        reject,
      })
      this.socket.write(frame)
    })
  }

  /** Writes a request and expects no answer (Produce with acks=0). */
  sendOneWay<Req>(codec: ApiCodec<Req, unknown>, version: number, request: Req): void {
    const w = new Writer()
    w.int32(0)
    writeRequestHeader(w, { apiKey: codec.apiKey, apiVersion: version, correlationId: this.nextCorrelationId++, clientId: this.clientId }, version >= codec.flexibleFrom)
    codec.encodeRequest(w, version, request)
    const frame = w.finish()
    frame.writeInt32BE(frame.length - 4, 0)
    this.socket.write(frame)
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve()
      this.socket.once('close', () => resolve())
      this.socket.end()
    })
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
    while (this.buffered.length >= 4) {
      const size = this.buffered.readInt32BE(0)
      if (this.buffered.length < 4 + size) return
      const frame = this.buffered.subarray(4, 4 + size)
      this.buffered = this.buffered.subarray(4 + size)
      const correlationId = frame.readInt32BE(0)
      const pending = this.pending.get(correlationId)
      if (!pending) {
        this.fail(new Error(`response with unknown correlation id ${correlationId}`))
        return
      }
      this.pending.delete(correlationId)
      try {
        pending.resolve(pending.decode(new Reader(frame)))
      } catch (err) {
        pending.reject(err as Error)
      }
    }
  }

  private fail(err: Error): void {
    this.failure ??= err
    for (const p of this.pending.values()) p.reject(err)
    this.pending.clear()
    if (!this.socket.destroyed) this.socket.destroy()
  }
}
