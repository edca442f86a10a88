/**
 * One client connection: size-prefixed frames in, responses out in request order.
 *
 * Frame: int32 size (big-endian), then `size` bytes of request. A size below the smallest
 * header or above `socket.request.max.bytes` closes the connection (Kafka's
 * InvalidReceiveException), since the stream cannot be resynchronised after it. Requests are
 * handled one at a time, in the order they came, as Kafka's processor mutes a channel until its
 * request is answered: a request's effects (a topic created, a record appended) come after
 * those of the requests before it on the connection, and a parked Fetch holds the requests
 * behind it until it is answered. Requests read meanwhile wait in the queue (bounded, below).
 * Responses go to the connection's `ResponseWriter` in the same order; the next request is
 * handled while the one before it is still being written.
 *
 * Authentication (SASL listeners): a connection may have an `Authenticator` (Kafka's
 * KafkaChannel has one), which sees each frame before the broker does, in the same order, one at
 * a time. While it authenticates, frames are its own (SaslHandshake, SaslAuthenticate, or raw
 * tokens after a SaslHandshake v0) with its size bounds (`sasl.server.max.receive.size`); a
 * frame out of them fails the authentication. An outcome with `close` is written and the
 * connection then closes, reading nothing more (Kafka's failed authentication).
 *
 * Throttling (client quotas, KIP-219): `throttle(ms)` after a response that carries a throttle
 * time mutes the connection for that long, as Kafka's ThrottledChannel does: the response goes out
 * at once, then nothing more is read or handled until the time has passed.
 *
 * Idle (connections.max.idle.ms): no bytes read and no request queued (being handled, parked
 * as a long poll, or its response being written) between two sweeps of the SocketServer's
 * shared timer, for the whole period. Like Kafka's Selector, activity is what the socket does:
 * a partial frame that stops arriving is idle, a parked Fetch or a response going out is not.
 */
import type { Socket } from 'node:net'
import type { Logger } from '../logger.js'
import { ANONYMOUS, type KafkaPrincipal } from '../security/kafka-principal.js'
import type { SecurityProtocol } from '../security/security-protocol.js'
import { ResponseWriter, type Response } from './response-writer.js'
import type { Transfer } from './transfer.js'

/**
 * What the broker returns for one request: the response (header included; bytes, or bytes and
 * file ranges, see response-writer.ts), or none.
 */
export type RequestHandler = (request: Buffer, connection: Connection) => Promise<Response | null>

/** What an authenticator does with one frame: the response to write (or none), then maybe close. */
export interface AuthenticatorOutcome {
  response: Response | null
  /** Close the connection once `response` is written (why, for the log): nothing more is read. */
  close?: string
}

/**
 * Kafka's network Authenticator: the connection's authentication, which sees every frame first.
 * ts/network/sasl-server-authenticator.ts is the SASL one.
 */
export interface Authenticator {
  /** The frames are the authenticator's own: (re-)authentication is in progress. */
  readonly authenticating: boolean
  /** The largest frame accepted while authenticating. */
  readonly maxReceiveBytes: number
  /** Handles one frame; `next` is the broker, for the requests the authenticator lets through. */
  handle(frame: Buffer, connection: Connection, next: RequestHandler): Promise<AuthenticatorOutcome>
  /** A frame out of bounds while authenticating: the authentication failed; resolves when the connection may close (Kafka's failed-authentication delay). */
  invalidReceive(size: number): Promise<void>
}

/** The smallest request: apiKey, apiVersion, correlationId, and a clientId length. */
const MIN_REQUEST_SIZE = 10
/**
 * Requests a connection may have unanswered (being handled, parked, or answered and waiting to
 * be written) before it stops reading; it reads again below half. Kafka's queued.max.requests
 * default, here per connection: a client that pipelines without reading holds bounded memory.
 */
export const MAX_QUEUED_REQUESTS = 500
const SIZE_PREFIX = 4
const EMPTY = Buffer.alloc(0)

interface Pending {
  /** The request, until its handling starts. */
  frame: Buffer | null
  response: Response | null
  done: boolean
}

/** Where a connection came in: its listener's name and security protocol. */
export interface ListenerInfo {
  listenerName: string
  securityProtocol: SecurityProtocol
}

export const PLAINTEXT_LISTENER: ListenerInfo = Object.freeze({ listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT' })

export class Connection {
  readonly id: string
  readonly socket: Socket
  /** The listener the client connected to (Metadata answers with that listener's endpoints). */
  readonly listenerName: string
  readonly securityProtocol: SecurityProtocol
  /** The client's IP address, as ACLs' host. */
  readonly clientAddress: string
  /**
   * Who the client is: User:ANONYMOUS until TLS (client certificate) or SASL authenticates it.
   * Set by the authenticators only.
   */
  principal: KafkaPrincipal = ANONYMOUS
  private readonly handler: RequestHandler
  private readonly authenticator: Authenticator | null
  private readonly logger: Logger
  private readonly maxRequestBytes: number
  private chunks: Buffer[] = []
  private buffered = 0
  private readonly queue: Pending[] = []
  /** A request is being handled (the queue's first not done). */
  private handling = false
  private closed = false
  /** Reading stopped: MAX_QUEUED_REQUESTS are queued. */
  private paused = false
  /** `end` was called: the socket ends once the writer is idle. */
  private ending = false
  /** Nothing more is read or handled: the connection closes once what is queued is written (a failed authentication). */
  private finishing = false
  private readonly closeListeners = new Set<() => void>()
  private readonly writer: ResponseWriter
  /** Muted until then (performance.now()), by a quota's throttle. */
  private throttledUntil = 0
  private throttleTimer: NodeJS.Timeout | null = null
  /** Bytes arrived since the last idle sweep. */
  private readSinceSweep = true
  /** When a sweep last found the connection active (performance.now()). */
  private activeAt = performance.now()

  /** `transfer`: the engine that sends file ranges (zero-copy), or null to copy them. */
  constructor(
    id: string,
    socket: Socket,
    handler: RequestHandler,
    options: { maxRequestBytes: number; logger: Logger; transfer?: Transfer | null; listener?: ListenerInfo; authenticator?: (connection: Connection) => Authenticator | null },
  ) {
    this.id = id
    this.socket = socket
    const listener = options.listener ?? PLAINTEXT_LISTENER
    this.listenerName = listener.listenerName
    this.securityProtocol = listener.securityProtocol
    this.clientAddress = socket.remoteAddress ?? ''
    this.handler = handler
    this.authenticator = options.authenticator?.(this) ?? null
    this.maxRequestBytes = options.maxRequestBytes
    this.logger = options.logger
    this.writer = new ResponseWriter(
      socket,
      options.transfer ?? null,
      (reason) => this.close(reason),
      () => {
        this.endWhenWritten()
        this.maybeResume()
      },
    )
    socket.setNoDelay(true)
    socket.on('data', (chunk: Buffer) => this.onData(chunk))
    socket.on('error', (err) => this.logger.debug('connection error', { connection: id, error: err.message }))
    socket.on('close', () => this.onClose())
  }

  get isClosed(): boolean {
    return this.closed
  }

  /**
   * Calls `listener` once when the connection closes (at once if it is closed); parked requests
   * use it to drop themselves. Returns a function that unregisters it (a parked request that was
   * answered), so a long-lived connection does not collect one listener per request.
   */
  onClosed(listener: () => void): () => void {
    if (this.closed) {
      listener()
      return () => {}
    }
    this.closeListeners.add(listener)
    return () => {
      this.closeListeners.delete(listener)
    }
  }

  /**
   * Mutes the connection for `ms` (a client over its quota): the responses already handled go
   * out, then nothing more is read or handled until the time has passed. A longer throttle
   * already running is kept.
   */
  throttle(ms: number): void {
    if (ms <= 0 || this.closed) return
    const until = performance.now() + ms
    if (until <= this.throttledUntil) return
    this.throttledUntil = until
    this.socket.pause()
    if (this.throttleTimer) clearTimeout(this.throttleTimer)
    this.throttleTimer = setTimeout(() => {
      this.throttleTimer = null
      this.throttledUntil = 0
      if (this.closed) return
      if (!this.paused && !this.finishing) this.socket.resume()
      this.process()
      this.handleNext()
    }, ms)
  }

  private get throttled(): boolean {
    return this.throttledUntil > 0
  }

  /** Ends the connection once the responses being written are out (a broker stopping). */
  end(): void {
    this.ending = true
    this.endWhenWritten()
  }

  private endWhenWritten(): void {
    if (!this.ending || !this.writer.idle) return
    this.socket.end()
    if (this.finishing) this.socket.destroySoon()
  }

  /**
   * Reads and handles nothing more; closes once the responses already queued are written (an
   * authentication failure's answer goes out, then the connection closes, as Kafka's does).
   */
  private finish(reason: string): void {
    if (this.finishing || this.closed) return
    this.finishing = true
    this.logger.info('closing connection', { connection: this.id, reason })
    this.socket.pause()
    this.chunks = []
    this.buffered = 0
    for (const slot of this.queue) {
      if (slot.frame === null) continue
      slot.frame = null
      slot.done = true
    }
    this.ending = true
    this.flush()
    this.endWhenWritten()
  }

  /** Closes the connection at once, logging why. */
  close(reason: string): void {
    if (this.closed) return
    this.logger.warn('closing connection', { connection: this.id, reason })
    this.socket.destroy()
  }

  /** Requests not yet fully answered on the wire. */
  get queuedRequests(): number {
    return this.queue.length + this.writer.queued
  }

  /**
   * The SocketServer's idle sweep (one shared timer): closes the connection if nothing moved
   * since the sweep that last found it active, `maxIdleMs` or more ago. `mayClose` false (a late
   * sweep) only records activity.
   */
  sweepIdle(now: number, maxIdleMs: number, mayClose = true): void {
    if (this.closed) return
    if (this.readSinceSweep || this.queuedRequests > 0) {
      this.readSinceSweep = false
      this.activeAt = now
      return
    }
    if (!mayClose || now - this.activeAt < maxIdleMs) return
    this.logger.debug('closing idle connection', { connection: this.id, idleMs: Math.round(now - this.activeAt), partialFrameBytes: this.buffered })
    this.socket.destroy()
  }

  private onData(chunk: Buffer): void {
    this.readSinceSweep = true
    this.chunks.push(chunk)
    this.buffered += chunk.length
    this.process()
  }

  /** Dispatches the whole frames buffered, unless too many requests are queued. */
  private process(): void {
    while (!this.closed && !this.finishing && !this.throttled && this.buffered >= SIZE_PREFIX) {
      if (this.queuedRequests >= MAX_QUEUED_REQUESTS) {
        this.paused = true
        this.socket.pause()
        return
      }
      const size = this.peekSize()
      if (this.authenticator?.authenticating) {
        // Kafka's authenticator reads with sasl.server.max.receive.size; raw SASL tokens may be short.
        if (size < 0 || size > this.authenticator.maxReceiveBytes) return this.invalidAuthenticationReceive(size)
      } else if (size < MIN_REQUEST_SIZE || size > this.maxRequestBytes) {
        this.close(`invalid request size ${size} (socket.request.max.bytes is ${this.maxRequestBytes})`)
        return
      }
      if (this.buffered < SIZE_PREFIX + size) return
      this.take(SIZE_PREFIX)
      this.dispatch(this.take(size))
    }
  }

  /** A frame out of bounds during authentication: the authentication failed; close after the delay. */
  private invalidAuthenticationReceive(size: number): void {
    this.finishing = true
    this.socket.pause()
    this.chunks = []
    this.buffered = 0
    void this.authenticator!.invalidReceive(size).then(() =>
      this.close(`SASL authentication failed: invalid receive size ${size} (sasl.server.max.receive.size is ${this.authenticator!.maxReceiveBytes})`),
    )
  }

  private dispatch(frame: Buffer): void {
    this.queue.push({ frame, response: null, done: false })
    this.handleNext()
  }

  /** Starts the first request not yet handled, unless one is being handled. */
  private handleNext(): void {
    if (this.handling || this.closed || this.finishing || this.throttled) return
    const slot = this.queue.find((p) => p.frame !== null)
    if (!slot) return
    const frame = slot.frame!
    slot.frame = null
    this.handling = true
    const handled: Promise<AuthenticatorOutcome> = this.authenticator ? this.authenticator.handle(frame, this, this.handler) : this.handler(frame, this).then((response) => ({ response }))
    handled.then(
      ({ response, close }) => {
        this.handling = false
        // After a close the writer only releases what the response holds.
        if (this.closed) return void (response !== null && this.writer.write(response))
        slot.response = response
        slot.done = true
        if (close !== undefined) return this.finish(close)
        this.flush()
        this.handleNext()
      },
      (err: unknown) => {
        this.handling = false
        // The handler answers every fault it can; what reaches here is a bug or a request too
        // broken to answer: drop this connection, keep the broker.
        this.logger.error('request failed', { connection: this.id, error: err instanceof Error ? err.stack : String(err) })
        this.close('request could not be answered')
      },
    )
  }

  private flush(): void {
    while (this.queue.length > 0 && this.queue[0]!.done) {
      const { response } = this.queue.shift()!
      if (response !== null) this.writer.write(response)
    }
    this.maybeResume()
  }

  private maybeResume(): void {
    if (!this.paused || this.closed || this.queuedRequests > MAX_QUEUED_REQUESTS / 2) return
    this.paused = false
    if (this.throttled) return // the throttle's end resumes
    this.socket.resume()
    this.process()
  }

  /** The size prefix of the next frame (buffered: at least SIZE_PREFIX bytes), without consuming it. */
  private peekSize(): number {
    const first = this.chunks[0]!
    if (first.length >= SIZE_PREFIX) return first.readInt32BE(0)
    const head = Buffer.allocUnsafe(SIZE_PREFIX)
    let at = 0
    for (const chunk of this.chunks) {
      at += chunk.copy(head, at, 0, Math.min(chunk.length, SIZE_PREFIX - at))
      if (at === SIZE_PREFIX) break
    }
    return head.readInt32BE(0)
  }

  /**
   * Consumes the first `n` buffered bytes: a view of the first chunk when it holds them all,
   * else a copy of exactly those bytes (the chunks' bytes after them stay where they are: over
   * TLS, where node:tls hands over one 16 KiB record a chunk and most requests span two, joining
   * whole chunks copied about twice the bytes of every request).
   */
  private take(n: number): Buffer {
    if (n === 0) return EMPTY
    this.buffered -= n
    const first = this.chunks[0]!
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift()
      else this.chunks[0] = first.subarray(n)
      return first.subarray(0, n)
    }
    const out = Buffer.allocUnsafe(n)
    let at = 0
    while (at < n) {
      const chunk = this.chunks[0]!
      const want = Math.min(chunk.length, n - at)
      chunk.copy(out, at, 0, want)
      at += want
      if (want === chunk.length) this.chunks.shift()
      else this.chunks[0] = chunk.subarray(want)
    }
    return out
  }

  private onClose(): void {
    if (this.closed) return
    this.closed = true
    this.chunks = []
    if (this.throttleTimer) clearTimeout(this.throttleTimer)
    this.writer.close()
    for (const { response } of this.queue.splice(0)) if (response !== null) this.writer.write(response)
    const listeners = [...this.closeListeners]
    this.closeListeners.clear()
    for (const listener of listeners) listener()
  }
}
