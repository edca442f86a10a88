import { connect, type Socket } from 'node:net'
import { expect } from 'vitest'
import type { ApiCodec } from '../../ts/protocol/apis/api.js'
import type { FetchRequest } from '../../ts/protocol/apis/fetch.js'
import { readResponseHeader, writeRequestHeader } from '../../ts/protocol/header.js'
import { Reader } from '../../ts/protocol/reader.js'
import { Writer } from '../../ts/protocol/writer.js'

/** One connection that sends requests (header + codec, size-prefixed) and reads size-prefixed responses in order. */
export class KafkaWire {
  private buffered = Buffer.alloc(0)
  private readonly waiting: Array<(frame: Buffer) => void> = []
  private correlationId = 0

  constructor(
    readonly socket: Socket,
    private readonly clientId: string,
  ) {
    socket.on('data', (d) => {
      this.buffered = Buffer.concat([this.buffered, d])
      while (this.buffered.length >= 4 && this.buffered.length >= 4 + this.buffered.readInt32BE(0)) {
        const size = this.buffered.readInt32BE(0)
        const frame = this.buffered.subarray(4, 4 + size)
        this.buffered = this.buffered.subarray(4 + size)
        this.waiting.shift()?.(frame)
      }
    })
  }

  /** Encodes `request` with `codec` at `version`, sends it, and decodes the response (checking its correlation id). */
  async send<Req, Res>(codec: ApiCodec<Req, Res>, version: number, request: Req): Promise<Res> {
    const flexible = version >= codec.flexibleFrom
    const correlationId = ++this.correlationId
    const w = new Writer()
    w.int32(0)
    writeRequestHeader(w, { apiKey: codec.apiKey, apiVersion: version, correlationId, clientId: this.clientId }, flexible)
    codec.encodeRequest(w, version, request)
    const bytes = w.finish()
    bytes.writeInt32BE(bytes.length - 4, 0)
    const frame = await new Promise<Buffer>((resolve) => {
      this.waiting.push(resolve)
      this.socket.write(bytes)
    })
    const r = new Reader(frame)
    expect(readResponseHeader(r, flexible)).toBe(correlationId)
    return codec.decodeResponse(r, version)
  }

  close(): void {
    this.socket.destroy()
  }
}

/** Opens a TCP connection to the broker on 127.0.0.1:`port`. */
export function connectTo(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket))
    socket.once('error', reject)
  })
}

/** A consumer's FetchRequest: no wait, no minimum, 1 MiB, read uncommitted, no session, plus `request`. */
export function fetchRequest(request: Partial<FetchRequest> & Pick<FetchRequest, 'topics'>): FetchRequest {
  return {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1024 * 1024,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    forgottenTopicsData: [],
    rackId: '',
    ...request,
  }
}
