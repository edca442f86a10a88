/**
 * Zero-copy transfer of record bytes from segment files to sockets (docs/fetch.md "Zero-copy from a Node process").
 *
 * The sending is done by crates/transfer: one native thread with its own epoll, which writes a
 * job's parts in order (bytes with send/writev, file ranges with sendfile), waits for
 * writability on EAGAIN, and reports each job's end back here through one threadsafe function.
 * This module is the JavaScript face of it:
 *
 * - `Transfer`: an engine; `send(socket, parts)` resolves with the bytes sent or rejects with a
 *   `TransferError` (PEER_CLOSED, SHORT_FILE, CANCELLED, IO_ERROR, ENGINE_CLOSED);
 * - `socketFd(socket)`: the fd of a plaintext TCP socket, or null where sendfile cannot serve
 *   (TLS, a socket not yet connected, a platform without one);
 * - `transferTo(socket, parts)`: for library users, writes parts to any socket: after what is
 *   already queued on it, with the engine when the socket has an fd, by reading the file ranges
 *   and writing them otherwise.
 *
 * A native transfer is only correct when nothing of ours is queued on the socket before it, so
 * callers start one only once the socket's own writes are flushed (`whenFlushed`), and write
 * nothing more to the socket until it ends.
 */
import type { Socket } from 'node:net'
import { loadNative, requireNative } from '../native/binding.js'
import type { TransferEngine } from '../native/index.js'
import { FileRecords } from '../storage/file-records.js'

export { FileRecords }

/** One piece of a response: bytes, or a range of an open segment file. */
export type SendPart = Buffer | FileRecords

export type TransferErrorCode = 'PEER_CLOSED' | 'SHORT_FILE' | 'CANCELLED' | 'IO_ERROR' | 'ENGINE_CLOSED' | 'INVALID_ARGUMENT'

export class TransferError extends Error {
  constructor(
    readonly code: TransferErrorCode,
    message: string,
    readonly bytesSent = 0,
  ) {
    super(message)
    this.name = 'TransferError'
  }
}

const CODED = /^([A-Z_]+): ([\s\S]*)$/

function transferError(text: string, bytesSent = 0): TransferError {
  const [, code, message] = CODED.exec(text) ?? []
  return code !== undefined && message !== undefined ? new TransferError(code as TransferErrorCode, message, bytesSent) : new TransferError('IO_ERROR', text, bytesSent)
}

interface Waiter {
  resolve: (bytesSent: number) => void
  reject: (err: TransferError) => void
}

/** A started transfer: its job id (for `cancel`; 0 if it was written at once) and its end. */
export interface TransferJob {
  readonly id: number
  readonly done: Promise<number>
}

export class Transfer {
  private readonly engine: TransferEngine
  private readonly waiting = new Map<number, Waiter>()
  private closed = false
  /**
   * Jobs ended, how many of them failed, the bytes they sent, and how many were written at once
   * on this thread (`inline`, counted in `jobs` too) (for metrics and tests).
   */
  readonly stats = { jobs: 0, failed: 0, bytes: 0, inline: 0 }

  /**
   * `chunkBytes`: the most one sendfile call sends before other sockets get a turn (default
   * 1 MiB). `inlineBytes`: a job up to this size whose file ranges are in the page cache, for a
   * socket with no job queued, is written at once on this thread with the same non-blocking
   * calls, and only what the socket does not take goes to the engine's thread (default 64 KiB;
   * 0: never). Small Fetch responses then cost no thread hand-off.
   */
  constructor(options: { chunkBytes?: number; inlineBytes?: number } = {}) {
    const { TransferEngine } = requireNative('zero-copy transfer (transfer.mode=zero-copy)')
    this.engine = new TransferEngine((jobId, bytesSent, error) => this.complete(jobId, bytesSent, error), options.chunkBytes, options.inlineBytes)
  }

  /** Jobs sent and not yet ended. */
  get inFlight(): number {
    return this.waiting.size
  }

  /**
   * Starts writing `parts` to the socket's fd. The caller must have flushed the socket's own
   * writes first, and closes the parts' FileRecords when it likes: the job holds its own handle.
   */
  send(fd: number, parts: SendPart[]): TransferJob {
    let id: number
    try {
      id = this.engine.send(fd, parts)
    } catch (err) {
      const e = transferError(err instanceof Error ? err.message : String(err))
      this.stats.jobs++
      this.stats.failed++
      return { id: -1, done: Promise.reject(e) }
    }
    if (id === 0) {
      // Written whole already.
      const size = sizeOfParts(parts)
      this.stats.jobs++
      this.stats.inline++
      this.stats.bytes += size
      return { id: 0, done: Promise.resolve(size) }
    }
    const done = new Promise<number>((resolve, reject) => this.waiting.set(id, { resolve, reject }))
    return { id, done }
  }

  /** Ends a job early (its promise rejects with CANCELLED); false if it had ended. */
  cancel(id: number): boolean {
    if (!this.waiting.has(id)) return false
    return this.engine.cancel(id)
  }

  /** Stops the engine's thread; jobs still running end with ENGINE_CLOSED. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.engine.close()
  }

  private complete(jobId: number, bytesSent: number, error: string | null): void {
    const waiter = this.waiting.get(jobId)
    if (!waiter) return
    this.waiting.delete(jobId)
    this.stats.jobs++
    this.stats.bytes += bytesSent
    if (error !== null) this.stats.failed++
    if (error === null) waiter.resolve(bytesSent)
    else waiter.reject(transferError(error, bytesSent))
  }
}

/**
 * The socket's file descriptor when the engine may write to it: a connected TCP socket of this
 * process on Linux. Null otherwise (TLS sockets wrap another stream; other platforms).
 */
export function socketFd(socket: Socket): number | null {
  if (process.platform !== 'linux') return null
  if ((socket as { encrypted?: boolean }).encrypted) return null
  const handle = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle
  const fd = handle?.fd
  return typeof fd === 'number' && fd >= 0 ? fd : null
}

const EMPTY = Buffer.alloc(0)

/**
 * Calls `then` once every byte written to the socket so far has been handed to the kernel: at
 * once if nothing is queued, else from the callback of an empty write queued behind the rest
 * (a stream completes its writes in order).
 */
export function whenFlushed(socket: Socket, then: (err?: Error | null) => void): void {
  if (socket.writableLength === 0) then()
  else socket.write(EMPTY, then)
}

/** Total bytes of the parts. */
export function sizeOfParts(parts: readonly SendPart[]): number {
  let size = 0
  for (const part of parts) size += Buffer.isBuffer(part) ? part.length : part.sizeInBytes
  return size
}

/** Where a copy is in its parts: the part, and the bytes of it already taken. */
export interface PartsCursor {
  index: number
  offset: number
}

/**
 * Copy mode's gather: fills `target` with the parts from `cursor` on, in order (bytes copied,
 * file ranges read straight into it with pread), until it is full or the parts end, and moves
 * the cursor past what it took (and past empty parts). Returns the bytes filled. A file now
 * shorter than its range throws SHORT_FILE. Gathering every part into the buffer it is written
 * from makes one write of each buffer: over TLS one `SSL_write`, so full 16 KiB records, where
 * a write per part sent the size prefix and each header as a record (and a syscall) of its own.
 */
export function gather(parts: readonly SendPart[], cursor: PartsCursor, target: Buffer): number {
  let at = 0
  while (cursor.index < parts.length) {
    const part = parts[cursor.index]!
    const size = Buffer.isBuffer(part) ? part.length : part.sizeInBytes
    if (cursor.offset === size) {
      cursor.index++
      cursor.offset = 0
      continue
    }
    if (at === target.length) break
    const want = Math.min(target.length - at, size - cursor.offset)
    if (Buffer.isBuffer(part)) part.copy(target, at, cursor.offset, cursor.offset + want)
    else {
      const n = part.readInto(target.subarray(at, at + want), cursor.offset)
      if (n !== want) throw new TransferError('SHORT_FILE', `a file range of ${part.sizeInBytes} bytes has only ${cursor.offset + n} now`)
    }
    at += want
    cursor.offset += want
  }
  return at
}

/** The bytes copy mode reads a file range in, per buffer: small enough to stay in the CPU's caches. */
export const COPY_CHUNK_BYTES = 256 * 1024
/**
 * Copy mode reads records this small whole, at once (fresh buffers this size come from the
 * allocator's free lists, without page faults); larger ones go through `copyTo`.
 */
export const COPY_AT_ONCE_BYTES = 64 * 1024
/** Buffers one copy holds at a time: one being written while the next is read. */
const COPY_IN_FLIGHT = 2
/** At most this many free buffers are kept for reuse in one pool (16 MiB); more are dropped. */
const COPY_POOL_MAX = 64

/**
 * The process's pool of copy buffers, shared by every connection's copies (and `transferTo`):
 * a buffer goes back to it as soon as the socket has taken it, so idle connections hold none.
 */
export const copyPool: Buffer[] = []

/**
 * Copy mode's send of parts (where sendfile cannot serve: TLS, other platforms): the parts are
 * gathered (`gather`: bytes copied, file ranges read with pread) into at most two buffers of
 * `COPY_CHUNK_BYTES` at a time, each written whole with one `socket.write` and given back to
 * `buffers` (a pool: `copyPool`, or the caller's own) once the socket has taken it. A fresh buffer per
 * range would cost its page faults every time (a 1 MiB one four times the CPU of the copy
 * itself), and reading whole ranges up front would hold a whole response in memory however
 * slowly the peer reads. `done` is called once: with null when every byte is handed to the kernel, with the
 * error (SHORT_FILE for a file now shorter than its range, or the socket's) otherwise, or with
 * CANCELLED once `stopped()` says so (the connection was closed) before the rest is read.
 */
export function copyTo(socket: Socket, parts: readonly SendPart[], buffers: Buffer[], done: (err: Error | null) => void, stopped: () => boolean = () => false): void {
  const cursor: PartsCursor = { index: 0, offset: 0 }
  let [inFlight, ended] = [0, false]
  const end = (err: Error | null): void => {
    if (ended) return
    ended = true
    done(err)
  }
  const giveBack = (buf: Buffer): void => {
    if (buffers.length < COPY_POOL_MAX) buffers.push(buf)
  }
  const pump = (): void => {
    if (stopped()) return end(new TransferError('CANCELLED', 'the copy was stopped'))
    while (!ended && inFlight < COPY_IN_FLIGHT && cursor.index < parts.length) {
      const buf = buffers.pop() ?? Buffer.allocUnsafe(COPY_CHUNK_BYTES)
      let n: number
      try {
        n = gather(parts, cursor, buf)
      } catch (e) {
        giveBack(buf)
        return end(e as Error)
      }
      if (n === 0) {
        // Only empty parts were left.
        giveBack(buf)
        continue
      }
      inFlight++
      socket.write(n === buf.length ? buf : buf.subarray(0, n), (err) => {
        inFlight--
        giveBack(buf)
        if (err) return end(err)
        pump()
      })
    }
    if (!ended && inFlight === 0 && cursor.index === parts.length) whenFlushed(socket, (err) => end(err ?? null))
  }
  pump()
}

let shared: Transfer | null = null

/** One engine per process for library users (its thread starts on first use); NATIVE_UNAVAILABLE without the binding. */
export function sharedTransfer(): Transfer {
  shared ??= new Transfer()
  return shared
}

/**
 * Writes `parts` to `socket` after whatever is already queued on it: zero-copy when the socket
 * has an fd (`engine`, default the shared one when the binding loads), else by reading the file
 * ranges and writing the bytes. Resolves with the bytes written. Write nothing else to the
 * socket until it resolves.
 */
export function transferTo(socket: Socket, parts: SendPart[], engine: Transfer | null = loadNative() ? sharedTransfer() : null): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    whenFlushed(socket, (err) => {
      if (err) return reject(err)
      const fd = engine ? socketFd(socket) : null
      if (engine && fd !== null) {
        engine.send(fd, parts).done.then(resolve, reject)
        return
      }
      copyTo(socket, parts, copyPool, (e) => (e ? reject(e) : resolve(sizeOfParts(parts))))
    })
  })
}
