/**
 * The TCP listener (Kafka's SocketServer): accepts connections and gives each a Connection.
 * `stop()` stops accepting, then waits for in-flight requests before closing the sockets.
 *
 * Idle connections (connections.max.idle.ms, as Kafka's Selector expires them) are found by one
 * coarse shared timer, not a timer per connection: every `sweepPeriod(maxIdleMs)` it asks each
 * connection whether it moved since the last sweep (see `Connection.sweepIdle`), so one is closed
 * between maxIdleMs and maxIdleMs plus a period after its last activity. A sweep that runs late
 * (the broker's event loop stalled) closes nothing: what the clients sent during the stall is not
 * read yet, and a stalled broker is no evidence of an idle client.
 */
import { createServer, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls'
import type { Logger } from '../logger.js'
import type { SslServerConfig } from '../security/ssl-engine-factory.js'
import { Connection, type Authenticator, type ListenerInfo, type RequestHandler } from './connection.js'
import type { Transfer } from './transfer.js'

export interface SocketServerOptions {
  host: string
  port: number
  /** socket.request.max.bytes: larger frames close the connection. Kafka's default 100 MiB. */
  maxRequestBytes: number
  /** connections.max.idle.ms: idle connections are closed after this long; negative or absent: never. */
  connectionsMaxIdleMs?: number
  /**
   * max.connections: connections open at once; one accepted past it is closed at once (Kafka
   * leaves it in the listen backlog until a slot frees). Absent: no bound. Changed live by
   * `setMaxConnections`.
   */
  maxConnections?: number
  logger: Logger
  /** The engine that sends Fetch responses' file ranges (zero-copy), or null to copy them. */
  transfer?: Transfer | null
  /** The listener's name and security protocol; default PLAINTEXT. */
  listener?: ListenerInfo
  /**
   * An SSL or SASL_SSL listener's TLS server (ssl-engine-factory.ts): connections are TLS, each
   * Connection made once its handshake finished, with the client certificate's principal. A
   * handshake not finished within connections.max.idle.ms (10 s when idle connections are never
   * closed) closes the connection.
   */
  tls?: SslServerConfig
  /** Each connection's authenticator (SASL listeners: ts/network/sasl-server-authenticator.ts); absent: none. */
  authenticator?: (connection: Connection) => Authenticator | null
}

/** How long a TLS handshake may take when connections.max.idle.ms is negative (never idle). */
const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000

/** How often the idle sweep runs: a quarter of the limit, between 10 ms and 1 s. */
export function sweepPeriod(maxIdleMs: number): number {
  return Math.min(1000, Math.max(10, Math.floor(maxIdleMs / 4)))
}

export class SocketServer {
  private readonly server: Server | TlsServer
  private tls: SslServerConfig | null
  private readonly connections = new Set<Connection>()
  private readonly options: SocketServerOptions
  private nextId = 0
  private idleSweep: NodeJS.Timeout | null = null
  private maxConnections: number

  constructor(handler: RequestHandler, options: SocketServerOptions) {
    this.options = options
    this.maxConnections = options.maxConnections ?? Number.POSITIVE_INFINITY
    this.tls = options.tls ?? null
    const accept = (socket: Socket, principal?: Connection['principal']) => {
      const id = `${socket.remoteAddress}:${socket.remotePort}-${this.nextId++}`
      const connection = new Connection(id, socket, handler, {
        maxRequestBytes: options.maxRequestBytes,
        logger: options.logger,
        transfer: options.transfer,
        listener: options.listener,
        authenticator: options.authenticator,
      })
      if (principal) connection.principal = principal
      this.connections.add(connection)
      connection.onClosed(() => this.connections.delete(connection))
    }
    if (!this.tls) {
      this.server = createServer((socket: Socket) => {
        if (this.refused(socket)) return
        accept(socket)
      })
      return
    }
    const maxIdleMs = options.connectionsMaxIdleMs ?? -1
    const server = createTlsServer({ ...this.tls.options, handshakeTimeout: maxIdleMs >= 0 ? Math.max(1, maxIdleMs) : DEFAULT_HANDSHAKE_TIMEOUT_MS })
    server.on('connection', (socket: Socket) => void this.refused(socket))
    server.on('secureConnection', (socket: TLSSocket) => {
      const tls = this.tls!
      const peer = socket.getPeerCertificate()
      const presented = peer !== null && Object.keys(peer).length > 0
      // ssl.client.auth=requested: no certificate is fine, an untrusted one is refused (as Java's wantClientAuth).
      if (presented && !socket.authorized) {
        options.logger.warn('TLS connection refused: untrusted client certificate', { remote: `${socket.remoteAddress}:${socket.remotePort}`, error: String(socket.authorizationError) })
        socket.destroy()
        return
      }
      let principal: Connection['principal']
      try {
        principal = tls.principalOf(presented ? peer : null)
      } catch (err) {
        options.logger.warn('TLS connection refused: no principal for the client certificate', { remote: `${socket.remoteAddress}:${socket.remotePort}`, error: (err as Error).message })
        socket.destroy()
        return
      }
      options.logger.debug('TLS connection', {
        remote: `${socket.remoteAddress}:${socket.remotePort}`,
        protocol: socket.getProtocol(),
        cipher: socket.getCipher().standardName,
        principal: `${principal.principalType}:${principal.name}`,
      })
      accept(socket, principal)
    })
    server.on('tlsClientError', (err: Error, socket: TLSSocket) => {
      options.logger.debug('TLS handshake failed', { remote: `${socket.remoteAddress}:${socket.remotePort}`, error: err.message })
      // With a listener here node:tls leaves the socket open (a handshake timeout included).
      socket.destroy()
    })
    this.server = server
  }

  /** max.connections reached: the socket is closed at once. */
  private refused(socket: Socket): boolean {
    if (this.connections.size < this.maxConnections) return false
    this.options.logger.warn('connection refused: max.connections reached', { remote: `${socket.remoteAddress}:${socket.remotePort}`, maxConnections: this.maxConnections })
    socket.destroy()
    return true
  }

  /**
   * A TLS listener's certificates (or other SSL settings) reloaded (KIP-226's keystore update):
   * connections from now on handshake with the new ones; open connections keep theirs.
   */
  setTls(tls: SslServerConfig): void {
    if (!this.tls) throw new Error('not a TLS listener')
    ;(this.server as TlsServer).setSecureContext(tls.options)
    this.tls = tls
  }

  /** max.connections changed while running (KIP-226): applies to connections accepted from now on. */
  setMaxConnections(maxConnections: number): void {
    this.maxConnections = maxConnections
  }

  /** Listens; resolves to the bound port (useful with port 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject)
        this.startIdleSweep()
        const address = this.server.address()
        resolve(typeof address === 'object' && address ? address.port : this.options.port)
      })
    })
  }

  private startIdleSweep(): void {
    const maxIdleMs = this.options.connectionsMaxIdleMs ?? -1
    if (maxIdleMs < 0 || this.idleSweep) return
    const period = sweepPeriod(maxIdleMs)
    let lastSweep = performance.now()
    this.idleSweep = setInterval(() => {
      const now = performance.now()
      // A sweep running late means the broker's own event loop stalled (GC, a busy machine):
      // bytes that arrived meanwhile are not read yet (timers run before I/O), so this sweep
      // only records activity and closes nothing; the next one judges.
      const late = now - lastSweep > 2 * period
      lastSweep = now
      for (const connection of this.connections) connection.sweepIdle(now, maxIdleMs, !late)
    }, period)
    this.idleSweep.unref()
  }

  /** Requests received and not yet fully answered on the wire, over all connections. */
  get queuedRequests(): number {
    let n = 0
    for (const connection of this.connections) n += connection.queuedRequests
    return n
  }

  get connectionCount(): number {
    return this.connections.size
  }

  /** Stops accepting and closes every connection. */
  async stop(): Promise<void> {
    if (this.idleSweep) clearInterval(this.idleSweep)
    this.idleSweep = null
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    for (const connection of this.connections) connection.end()
    // Connections that do not close by themselves within a second are cut.
    const timer = setTimeout(() => {
      for (const connection of this.connections) connection.socket.destroy()
    }, 1000)
    await closed
    clearTimeout(timer)
  }

  /**
   * Stops accepting and cuts every connection at once: nothing in flight is answered (a crashed
   * broker, for the in-process cluster's `killBroker`).
   */
  async abort(): Promise<void> {
    if (this.idleSweep) clearInterval(this.idleSweep)
    this.idleSweep = null
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    for (const connection of this.connections) connection.socket.destroy()
    await closed
  }
}
