/**
 * One TCP connection to one broker: Kafka's KafkaChannel and InFlightRequests for a node.
 *
 * Frames are `size int32` + header + body. Requests carry header v2 for a flexible version (v1
 * before); responses header v1 for a flexible version (v0 before), except ApiVersions, whose
 * response header is always v0 (ts/protocol/header.ts). Each request gets the next correlation
 * id (int32, wrapping to 0 after 2^31-1) and is matched back by it.
 *
 * Requests are pipelined: at most `maxInFlight` (Kafka's max.in.flight.requests.per.connection,
 * default 5) are written and unanswered at once; later ones wait in order and are written as
 * answers come back. A request that waits for an answer longer than its timeout (its wait in the
 * queue included) fails alone with REQUEST_TIMED_OUT: the connection stays up, and the broker's
 * late answer to it is read and dropped by its correlation id. (Kafka's NetworkClient closes the
 * connection instead, failing every request on it; a broker answers a connection's requests in
 * order, so here the later requests simply wait behind the late one, and no other fails.)
 *
 * A socket error, the broker closing, a frame larger than `maxResponseBytes` or a response
 * with an unknown correlation id ends the connection: every pending request fails with
 * NETWORK_EXCEPTION (or INVALID_RESPONSE), and so does any later `send`.
 *
 * Requests without a response (Produce with acks=0) are written in order and resolve once the
 * socket has taken them.
 *
 * The socket reads into the buffers of a FrameReader (network-receive.ts): a big response is read
 * in place into one buffer of its size, which is the frame decoded.
 *
 * TLS (security.protocol SSL or SASL_SSL: `tls` given): node:tls with the given CA (Node's roots
 * when none), the client certificate when given, SNI with the host name, and the broker's
 * certificate checked against the host unless hostname verification is off. A failure of the
 * handshake, or an alert the broker sends after it (a refused client certificate, under TLS 1.3),
 * is an SSL_HANDSHAKE_FAILED error, not retried. The frames read through TLS go to the same
 * FrameReader (its buffers are the socket's `onread` buffers there too).
 *
 * `exclusive(steps)` runs requests with the connection to themselves (a KIP-368
 * re-authentication): requests sent by others meanwhile are queued and written after it; those
 * already written are answered first, since a broker answers a connection's requests in order.
 */
import { connect, isIP, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'
import { ApiKey, type ApiCodec } from '../protocol/apis/api.js'
import { readResponseHeader, writeRequestHeader } from '../protocol/header.js'
import { Reader } from '../protocol/reader.js'
import { Writer } from '../protocol/writer.js'
import type { ClientTlsOptions } from './client-security.js'
import { KafkaClientError } from './errors.js'
import { FrameReader } from './network-receive.js'

export const DEFAULT_MAX_IN_FLIGHT = 5
/** Kafka's request.timeout.ms default. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
/** Kafka's socket.connection.setup.timeout.ms default. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000
/** The largest response frame read (Kafka's consumers allow fetch.max.bytes plus overhead). */
export const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024

export interface ConnectionOptions {
  clientId?: string
  maxInFlight?: number
  connectTimeoutMs?: number
  maxResponseBytes?: number
  /** Wrap the connection in TLS (security.protocol SSL, SASL_SSL). */
  tls?: ClientTlsOptions
}

export interface SendOptions {
  timeoutMs?: number
  /** Sets how many bytes the request frame had (for measuring); called once it is encoded. */
  onEncoded?: (bytes: number) => void
  /** Part of an `exclusive` exchange: written while other requests wait. */
  exclusive?: boolean
}

interface Pending {
  correlationId: number
  /** The request's bytes, in the pieces written together. */
  frame: Buffer[]
  /** Whether a response is expected. */
  expectResponse: boolean
  decode: (r: Reader) => unknown
  resolve: (value: unknown) => void
  reject: (err: Error) => void
  timer: NodeJS.Timeout | undefined
  /** Written to the socket. */
  written: boolean
  exclusive: boolean
}

/** Whether a socket error is TLS refusing (a certificate, an alert), not the network. */
function isTlsError(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code ?? ''
  return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|DEPTH_ZERO/.test(code)
}

export class KafkaConnection {
  readonly host: string
  readonly port: number
  private readonly socket: Socket
  private readonly clientId: string
  private readonly maxInFlight: number
  private readonly maxResponseBytes: number
  /** Written, answer awaited, in order. */
  private readonly inFlight = new Map<number, Pending>()
  /** Correlation ids of requests that timed out while written: their answers are dropped. */
  private readonly abandoned = new Set<number>()
  private readonly queue: Pending[] = []
  private nextCorrelationId = 0
  private failure: KafkaClientError | null = null
  private readonly closeListeners: Array<(err: KafkaClientError) => void> = []
  private readonly closed: Promise<void>
  /** An `exclusive` exchange runs: only its requests are written. */
  private exclusiveRunning = false

  private constructor(socket: Socket, host: string, port: number, options: ConnectionOptions) {
    this.socket = socket
    this.host = host
    this.port = port
    this.clientId = options.clientId ?? 'ferrolog'
    this.maxInFlight = Math.max(1, options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT)
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
    socket.setNoDelay(true)
    socket.on('error', (err) =>
      this.fail(
        isTlsError(err)
          ? new KafkaClientError('SSL_HANDSHAKE_FAILED', `TLS with ${this.address} failed: ${err.message}`, { cause: err })
          : new KafkaClientError('NETWORK_EXCEPTION', `connection to ${this.address} failed: ${err.message}`, { cause: err }),
      ),
    )
    this.closed = new Promise((resolve) =>
      socket.on('close', () => {
        this.fail(new KafkaClientError('NETWORK_EXCEPTION', `connection to ${this.address} closed by the broker`))
        resolve()
      }),
    )
  }

  /** Opens a connection to `host:port`; rejects with CONNECTION_REFUSED when it cannot. */
  static open(host: string, port: number, options: ConnectionOptions = {}): Promise<KafkaConnection> {
    return new Promise((resolve, reject) => {
      // The reader exists before the connection does: the socket reads into its buffers from the start.
      const reader = new FrameReader(options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES)
      const onread = { buffer: () => reader.nextBuffer(), callback: (n: number, buf: Uint8Array) => (reader.onRead(n, buf as Buffer), true) }
      const tls = options.tls
      let socket: Socket
      try {
        socket = tls
          ? tlsConnect({
              host,
              port,
              // node:tls takes net's onread (documented for tls.connect; missing from its typings)
              ...({ onread } as object),
              servername: isIP(host) === 0 ? host : undefined,
              ca: tls.ca,
              cert: tls.cert,
              key: tls.key,
              passphrase: tls.passphrase,
              rejectUnauthorized: true,
              ...(tls.verifyHostname ? {} : { checkServerIdentity: () => undefined }),
            })
          : connect({ host, port, onread })
      } catch (err) {
        // node:tls refusing the client's own key or certificate (a wrong ssl.key.password)
        reject(new KafkaClientError('SSL_HANDSHAKE_FAILED', `TLS with ${host}:${port}: the client certificate or key is unusable: ${(err as Error).message}`, { cause: err }))
        return
      }
      let tcpConnected = false
      socket.once('connect', () => (tcpConnected = true))
      const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
      const timer = setTimeout(() => socket.destroy(new Error(`no connection in ${timeoutMs} ms`)), timeoutMs)
      const onError = (err: Error) => {
        clearTimeout(timer)
        if (tls && (tcpConnected || isTlsError(err))) reject(new KafkaClientError('SSL_HANDSHAKE_FAILED', `TLS handshake with ${host}:${port} failed: ${err.message}`, { cause: err }))
        else reject(new KafkaClientError('CONNECTION_REFUSED', `cannot connect to ${host}:${port}: ${err.message}`, { cause: err }))
      }
      socket.once('error', onError)
      socket.once(tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer)
        socket.off('error', onError)
        const connection = new KafkaConnection(socket, host, port, options)
        reader.onFrame = (frame) => connection.onFrame(frame)
        reader.onInvalid = (size) => connection.fail(new KafkaClientError('INVALID_RESPONSE', `response frame of ${size} bytes from ${connection.address} (at most ${connection.maxResponseBytes})`))
        resolve(connection)
      })
    })
  }

  get address(): string {
    return `${this.host}:${this.port}`
  }

  /** False once the connection failed or was closed. */
  get isOpen(): boolean {
    return this.failure === null
  }

  /** Requests written and not yet answered, plus those waiting for a slot. */
  get pendingCount(): number {
    return this.inFlight.size + this.queue.length
  }

  /** Requests written and not yet answered (at most maxInFlight). */
  get inFlightCount(): number {
    return this.inFlight.size
  }

  /** Called once, when the connection ends (after its pending requests failed). */
  onClose(listener: (err: KafkaClientError) => void): void {
    if (this.failure) listener(this.failure)
    else this.closeListeners.push(listener)
  }

  /** Sends one request at `version` and resolves with its decoded response. */
  send<Req, Res>(codec: ApiCodec<Req, Res>, version: number, request: Req, options: SendOptions = {}): Promise<Res> {
    return this.enqueue(codec, version, request, true, options) as Promise<Res>
  }

  /** Sends a request the broker does not answer (Produce acks=0); resolves once it is written. */
  sendOneWay<Req>(codec: ApiCodec<Req, unknown>, version: number, request: Req, options: SendOptions = {}): Promise<void> {
    return this.enqueue(codec, version, request, false, options) as Promise<void>
  }

  /**
   * Runs `steps`, whose requests are sent with `exclusive: true`, with the connection to itself:
   * other requests are queued meanwhile and written once it ends.
   */
  async exclusive<T>(steps: () => Promise<T>): Promise<T> {
    if (this.exclusiveRunning) throw new Error('an exclusive exchange already runs')
    this.exclusiveRunning = true
    try {
      return await steps()
    } finally {
      this.exclusiveRunning = false
      this.pump()
    }
  }

  /** Ends the connection with `err`: pending and later requests fail with it. */
  abort(err: KafkaClientError): void {
    this.fail(err)
  }

  /** Closes the socket once written requests went out; pending requests fail with CLIENT_CLOSED. */
  close(): Promise<void> {
    this.fail(new KafkaClientError('CLIENT_CLOSED', `connection to ${this.address} closed`), true)
    return this.closed
  }

  private enqueue<Req, Res>(codec: ApiCodec<Req, Res>, version: number, request: Req, expectResponse: boolean, options: SendOptions): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure)
    const correlationId = this.nextCorrelationId
    this.nextCorrelationId = this.nextCorrelationId === 0x7fffffff ? 0 : this.nextCorrelationId + 1
    const flexible = version >= codec.flexibleFrom
    let frame: Buffer[]
    let frameBytes: number
    try {
      // Record batches are not copied into the request: its pieces go out in one gathered write.
      const w = new Writer(undefined, { gather: true })
      w.int32(0) // size, patched below
      writeRequestHeader(w, { apiKey: codec.apiKey, apiVersion: version, correlationId, clientId: this.clientId }, flexible)
      codec.encodeRequest(w, version, request)
      frameBytes = w.length
      w.patchInt32(0, frameBytes - 4)
      frame = w.finishChunks()
    } catch (err) {
      return Promise.reject(err)
    }
    options.onEncoded?.(frameBytes)
    const responseFlexible = flexible && codec.apiKey !== ApiKey.ApiVersions
    return new Promise((resolve, reject) => {
      const p: Pending = {
        correlationId,
        frame,
        expectResponse,
        decode: (r) => {
          readResponseHeader(r, responseFlexible)
          const res = codec.decodeResponse(r, version)
          if (r.remaining !== 0) throw new Error(`${r.remaining} bytes left after the ${codec.name} v${version} response`)
          return res
        },
        resolve,
        reject,
        timer: undefined,
        written: false,
        exclusive: options.exclusive === true,
      }
      const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
      if (expectResponse && Number.isFinite(timeoutMs)) {
        p.timer = setTimeout(() => this.timeOut(p, codec.name, timeoutMs), timeoutMs)
        p.timer.unref?.()
      }
      this.queue.push(p)
      this.pump()
    })
  }

  private timeOut(p: Pending, name: string, timeoutMs: number): void {
    const err = new KafkaClientError('REQUEST_TIMED_OUT', `${name} request ${p.correlationId} to ${this.address} got no response in ${timeoutMs} ms`)
    if (p.written) {
      this.inFlight.delete(p.correlationId)
      this.abandoned.add(p.correlationId)
    } else {
      const i = this.queue.indexOf(p)
      if (i >= 0) this.queue.splice(i, 1)
    }
    p.reject(err)
    this.pump()
  }

  /** Writes queued requests while in-flight slots are free. */
  private pump(): void {
    // A timed-out request still holds its slot until the broker's answer to it comes back.
    while (this.queue.length > 0 && !this.failure) {
      // An exclusive exchange's requests go first and past the in-flight bound; the others wait for it.
      const i = this.exclusiveRunning ? this.queue.findIndex((q) => q.exclusive) : 0
      if (i < 0 || (!this.queue[i]!.exclusive && this.inFlight.size + this.abandoned.size >= this.maxInFlight)) break
      const p = this.queue.splice(i, 1)[0]!
      p.written = true
      if (p.expectResponse) this.inFlight.set(p.correlationId, p)
      this.writeFrame(p.frame, p.expectResponse ? undefined : () => p.resolve(undefined))
    }
  }

  /** Writes a request's pieces; several go out together (corked: one writev). */
  private writeFrame(pieces: Buffer[], written?: () => void): void {
    if (pieces.length === 1) {
      this.socket.write(pieces[0]!, written)
      return
    }
    this.socket.cork()
    for (let i = 0; i < pieces.length; i++) this.socket.write(pieces[i]!, i === pieces.length - 1 ? written : undefined)
    this.socket.uncork()
  }

  private onFrame(frame: Buffer): void {
    if (this.failure) return
    const correlationId = frame.readInt32BE(0)
    if (this.abandoned.delete(correlationId)) {
      this.pump()
      return
    }
    const p = this.inFlight.get(correlationId)
    if (!p) {
      this.fail(new KafkaClientError('INVALID_RESPONSE', `response with unknown correlation id ${correlationId} from ${this.address}`))
      return
    }
    this.inFlight.delete(correlationId)
    clearTimeout(p.timer)
    try {
      p.resolve(p.decode(new Reader(frame)))
    } catch (err) {
      p.reject(new KafkaClientError('INVALID_RESPONSE', `response ${correlationId} from ${this.address} does not decode: ${(err as Error).message}`, { cause: err }))
    }
    this.pump()
  }

  private fail(err: KafkaClientError, graceful = false): void {
    if (this.failure) return
    this.failure = err
    for (const p of [...this.inFlight.values(), ...this.queue]) {
      clearTimeout(p.timer)
      p.reject(err)
    }
    this.inFlight.clear()
    this.queue.length = 0
    this.abandoned.clear()
    if (graceful) {
      this.socket.end()
      setTimeout(() => this.socket.destroy(), 1000).unref()
    } else {
      this.socket.destroy()
    }
    for (const l of this.closeListeners.splice(0)) l(err)
  }
}
