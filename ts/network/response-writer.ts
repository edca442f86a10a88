/**
 * The ordered response writer of one connection (Kafka's `Send`s going out in request order).
 *
 * A response is either bytes, or a `ResponseSend`: bytes with record ranges of segment files
 * between them (a Fetch response; the ranges are `FileRecords`, open files). Each goes out as
 * one size-prefixed frame, strictly in the order `write` was called.
 *
 * - Bytes are written with one `socket.write` of the size prefix and the bytes copied behind it
 *   (a large response over plaintext: a writev of the two, not copied).
 * - A `ResponseSend` in zero-copy mode (a `Transfer` engine and a socket with an fd): once the
 *   socket's own queued writes are flushed, the whole frame (prefix and bytes copied, file
 *   ranges by reference) becomes one job of the native engine, which writes it with
 *   send/sendfile from its own thread (a small response whose pages are cached is written at
 *   once by the same native code on this thread, see `Transfer`). Until the job ends nothing else is written to the socket;
 *   later responses wait in the queue. One job per connection at a time bounds what a
 *   connection holds in flight.
 * - A `ResponseSend` in copy mode (no engine, or no fd: TLS, another platform) is read into
 *   buffers and written with `socket.write` (`copyTo`: two 256 KiB buffers at a time, taken
 *   from the process's `copyPool` and given back once written; a response of at most 64 KiB is
 *   read whole at once): the same bytes on the wire. Like a transfer, a large copy holds the
 *   queue until the socket has taken it all.
 *
 * A failed transfer (the peer went away, a file shorter than its range) breaks the frame, so the
 * connection is closed through `onFailure`. `close` cancels the running job and drops the queue.
 */
import type { Socket } from 'node:net'
import { COPY_AT_ONCE_BYTES, copyPool, copyTo, gather, socketFd, TransferError, whenFlushed, type SendPart, type Transfer } from './transfer.js'

/** Bytes with file ranges between them; `size` is the total, without the frame's size prefix. */
export interface ResponseSend {
  readonly parts: SendPart[]
  readonly size: number
}

export type Response = Buffer | ResponseSend

const SIZE_PREFIX = 4
/**
 * A response of bytes up to this size is copied behind its size prefix and written as one
 * buffer; a larger one over plaintext goes out as a writev of the prefix and the response.
 */
const JOIN_AT_MOST_BYTES = 16 * 1024

function sizePrefix(size: number): Buffer {
  const prefix = Buffer.allocUnsafe(SIZE_PREFIX)
  prefix.writeInt32BE(size, 0)
  return prefix
}

/** Closes the response's file handles (a transfer holds its own). */
function release(response: Response): void {
  if (Buffer.isBuffer(response)) return
  for (const part of response.parts) if (!Buffer.isBuffer(part)) part.close()
}

export class ResponseWriter {
  private readonly socket: Socket
  private readonly engine: Transfer | null
  private readonly onFailure: (reason: string) => void
  private readonly onWritten: () => void
  private readonly queue: Response[] = []
  /** A native job or a large copy is running, or waiting for the socket's writes to flush. */
  private busy = false
  private job = -1
  private closed = false
  /** A TLS socket: every byte is encrypted in user space, so copies of small buffers cost little next to it. */
  private readonly encrypted: boolean

  /** `onWritten` is called when a transfer ends and the queue moved on (the connection may read again, or end). */
  constructor(socket: Socket, engine: Transfer | null, onFailure: (reason: string) => void, onWritten: () => void = () => {}) {
    this.socket = socket
    this.engine = engine
    this.onFailure = onFailure
    this.onWritten = onWritten
    this.encrypted = (socket as { encrypted?: boolean }).encrypted === true
  }

  /** Responses not yet handed to the socket or the engine, the running transfer's included. */
  get queued(): number {
    return this.queue.length + (this.busy ? 1 : 0)
  }

  /** Nothing queued and no transfer running. */
  get idle(): boolean {
    return !this.busy && this.queue.length === 0
  }

  /** Queues one response frame behind the ones before it. */
  write(response: Response): void {
    if (this.closed) return release(response)
    if (this.busy) {
      this.queue.push(response)
      return
    }
    this.writeNow(response)
  }

  /** Cancels the running transfer and drops what is queued. */
  close(): void {
    if (this.closed) return
    this.closed = true
    if (this.job >= 0) this.engine?.cancel(this.job)
    for (const response of this.queue.splice(0)) release(response)
  }

  private writeNow(response: Response): void {
    if (Buffer.isBuffer(response)) {
      if (response.length <= JOIN_AT_MOST_BYTES || this.encrypted) {
        // One buffer, one plain write: node:tls joins a writev's buffers into one anyway (a
        // copy), and a write of one small buffer skips the stream's cork and writev
        // bookkeeping, which is most of what a small response (Produce's) costs to send.
        const frame = Buffer.allocUnsafe(SIZE_PREFIX + response.length)
        frame.writeInt32BE(response.length, 0)
        response.copy(frame, SIZE_PREFIX)
        this.socket.write(frame)
        return
      }
      // A large response over plaintext: one writev of both, without copying the response.
      this.socket.cork()
      this.socket.write(sizePrefix(response.length))
      this.socket.write(response)
      this.socket.uncork()
      return
    }
    if (this.engine === null || socketFd(this.socket) === null) {
      this.copy(response)
      return
    }
    this.busy = true
    whenFlushed(this.socket, (err) => {
      const fd = socketFd(this.socket)
      if (this.closed || err || fd === null) {
        release(response)
        this.busy = false
        if (!this.closed) this.fail(err ? err.message : 'socket closed before a transfer')
        return
      }
      const job = this.engine!.send(fd, [sizePrefix(response.size), ...response.parts])
      this.job = job.id
      release(response)
      job.done.then(
        () => this.ended(),
        (e: Error) => {
          this.busy = false
          this.job = -1
          if (!this.closed) this.fail(`transfer failed: ${e.message}`)
        },
      )
    })
  }

  private ended(): void {
    this.busy = false
    this.job = -1
    while (!this.busy && !this.closed && this.queue.length > 0) this.writeNow(this.queue.shift()!)
    this.onWritten()
  }

  /**
   * Copy mode: the size prefix, the bytes and the file ranges are gathered into buffers and
   * each buffer is written whole (`gather`): a response of at most COPY_AT_ONCE_BYTES into one
   * buffer of its size, written at once; a larger one by `copyTo`, through the pool's buffers.
   */
  private copy(response: ResponseSend): void {
    const parts = [sizePrefix(response.size), ...response.parts]
    if (response.size > COPY_AT_ONCE_BYTES) {
      this.busy = true
      copyTo(
        this.socket,
        parts,
        copyPool,
        (err) => {
          release(response)
          this.busy = false
          if (this.closed) return
          if (err) return this.fail(`records could not be sent: ${err.message}`)
          this.ended()
        },
        () => this.closed,
      )
      return
    }
    const frame = Buffer.allocUnsafe(SIZE_PREFIX + response.size)
    try {
      const n = gather(parts, { index: 0, offset: 0 }, frame)
      if (n !== frame.length) throw new TransferError('SHORT_FILE', `a response of ${response.size} bytes has only ${n - SIZE_PREFIX}`)
    } catch (err) {
      return this.fail(`records could not be read: ${(err as Error).message}`)
    } finally {
      release(response)
    }
    this.socket.write(frame)
  }

  private fail(reason: string): void {
    for (const response of this.queue.splice(0)) release(response)
    this.onFailure(reason)
  }
}
