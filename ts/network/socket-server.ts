/**
 * The TCP listener (Kafka's SocketServer): accepts connections and gives each a Connection.
 * `stop()` stops accepting, then waits for in-flight requests before closing the sockets.
 *
 * Idle connections (connections.max.idle.ms, as Kafka's Selector expires them) are found by one
 * coarse shared timer, not a timer per connection: every `sweepPeriod(maxIdleMs)` it asks each
 * connection whether it moved since the last sweep (see `Connection.sweepIdle`), so one is closed
 * between maxIdleMs and maxIdleMs plus a period after its last activity.
 */
import { createServer, type Server, type Socket } from 'node:net'
import type { Logger } from '../logger.js'
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
  /** Each connection's authenticator (SASL listeners: ts/network/sasl-server-authenticator.ts); absent: none. */
  authenticator?: (connection: Connection) => Authenticator | null
}

/** How often the idle sweep runs: a quarter of the limit, between 10 ms and 1 s. */
export function sweepPeriod(maxIdleMs: number): number {
  return Math.min(1000, Math.max(10, Math.floor(maxIdleMs / 4)))
}

export class SocketServer {
  private readonly server: Server
  private readonly connections = new Set<Connection>()
  private readonly options: SocketServerOptions
  private nextId = 0
  private idleSweep: NodeJS.Timeout | null = null
  private maxConnections: number

  constructor(handler: RequestHandler, options: SocketServerOptions) {
    this.options = options
    this.maxConnections = options.maxConnections ?? Number.POSITIVE_INFINITY
    this.server = createServer((socket: Socket) => {
      if (this.connections.size >= this.maxConnections) {
        options.logger.warn('connection refused: max.connections reached', { remote: `${socket.remoteAddress}:${socket.remotePort}`, maxConnections: this.maxConnections })
        socket.destroy()
        return
      }
      const id = `${socket.remoteAddress}:${socket.remotePort}-${this.nextId++}`
      const connection = new Connection(id, socket, handler, {
        maxRequestBytes: options.maxRequestBytes,
        logger: options.logger,
        transfer: options.transfer,
        listener: options.listener,
        authenticator: options.authenticator,
      })
      this.connections.add(connection)
      connection.onClosed(() => this.connections.delete(connection))
    })
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
    this.idleSweep = setInterval(() => {
      const now = performance.now()
      for (const connection of this.connections) connection.sweepIdle(now, maxIdleMs)
    }, sweepPeriod(maxIdleMs))
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
}
