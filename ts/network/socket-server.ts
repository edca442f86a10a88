/**
 * The TCP listener (Kafka's SocketServer): accepts connections and gives each a Connection.
 * `stop()` stops accepting, then waits for in-flight requests before closing the sockets.
 */
import { createServer, type Server, type Socket } from 'node:net'
import type { Logger } from '../logger.js'
import { Connection, type RequestHandler } from './connection.js'
import type { Transfer } from './transfer.js'

export interface SocketServerOptions {
  host: string
  port: number
  /** socket.request.max.bytes: larger frames close the connection. Kafka's default 100 MiB. */
  maxRequestBytes: number
  logger: Logger
  /** The engine that sends Fetch responses' file ranges (zero-copy), or null to copy them. */
  transfer?: Transfer | null
}

export class SocketServer {
  private readonly server: Server
  private readonly connections = new Set<Connection>()
  private readonly options: SocketServerOptions
  private nextId = 0

  constructor(handler: RequestHandler, options: SocketServerOptions) {
    this.options = options
    this.server = createServer((socket: Socket) => {
      const id = `${socket.remoteAddress}:${socket.remotePort}-${this.nextId++}`
      const connection = new Connection(id, socket, handler, { maxRequestBytes: options.maxRequestBytes, logger: options.logger, transfer: options.transfer })
      this.connections.add(connection)
      connection.onClosed(() => this.connections.delete(connection))
    })
  }

  /** Listens; resolves to the bound port (useful with port 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject)
        const address = this.server.address()
        resolve(typeof address === 'object' && address ? address.port : this.options.port)
      })
    })
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
