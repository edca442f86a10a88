/**
 * Kafka's FileRecords (an open `.log` file and a byte range of it) from whichever side serves:
 * the binding's class when it loads (its handles go to the zero-copy engine), else
 * `JsFileRecords`, the same shape over Node's fs, for the twin and copy transfer without the
 * binding (native/binding.ts).
 *
 * A `JsFileRecords` and its slices share one descriptor, counted: it is closed when the last of
 * them is closed or collected (a slice a Fetch response dropped without closing).
 */
import * as fs from 'node:fs'
import { loadNative, requireNative } from '../native/binding.js'
import type { FileRecords as NativeFileRecords } from '../native/index.js'
import { StorageError, call } from './errors.js'

/** A range of a segment's `.log` file: the records of a read, not yet read into memory. */
export interface FileSlice {
  file: string
  position: number
  size: number
}

/** An open file range: the binding's class or `JsFileRecords`, the same methods. */
export type FileRecords = Pick<NativeFileRecords, 'position' | 'sizeInBytes' | 'slice' | 'read' | 'readInto' | 'close'>

/** One descriptor and how many FileRecords still hold it. */
interface SharedFd {
  fd: number
  refs: number
}

function release(shared: SharedFd): void {
  if (--shared.refs === 0) fs.closeSync(shared.fd)
}

const collected = new FinalizationRegistry<SharedFd>(release)

export class JsFileRecords implements FileRecords {
  private closed = false

  private constructor(
    private readonly shared: SharedFd,
    readonly position: number,
    readonly sizeInBytes: number,
  ) {
    shared.refs++
    collected.register(this, shared, this)
  }

  /** Opens `path`; a StorageError (STORAGE_ERROR) when it cannot, e.g. a segment deleted since the read. */
  static open(path: string, position: number, size: number): JsFileRecords {
    let fd: number
    try {
      fd = fs.openSync(path, 'r')
    } catch (err) {
      throw new StorageError('STORAGE_ERROR', `cannot open ${path}: ${(err as Error).message}`, { cause: err })
    }
    return new JsFileRecords({ fd, refs: 0 }, position, size)
  }

  slice(position: number, size: number): JsFileRecords {
    this.checkOpen()
    if (position < 0 || size < 0 || position + size > this.sizeInBytes) {
      throw new StorageError('INVALID_ARGUMENT', `slice [${position}, ${position + size}) is outside a range of ${this.sizeInBytes} bytes`)
    }
    return new JsFileRecords(this.shared, this.position + position, size)
  }

  read(): Buffer {
    const buf = Buffer.allocUnsafe(this.sizeInBytes)
    const n = this.readInto(buf, 0)
    return n === buf.length ? buf : buf.subarray(0, n)
  }

  readInto(target: Buffer, offset: number): number {
    this.checkOpen()
    if (offset < 0 || offset > this.sizeInBytes) throw new StorageError('INVALID_ARGUMENT', `offset ${offset} is past a range of ${this.sizeInBytes} bytes`)
    const want = Math.min(target.length, this.sizeInBytes - offset)
    let done = 0
    while (done < want) {
      const n = fs.readSync(this.shared.fd, target, done, want - done, this.position + offset + done)
      if (n === 0) break
      done += n
    }
    return done
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    collected.unregister(this)
    release(this.shared)
  }

  private checkOpen(): void {
    if (this.closed) throw new StorageError('INVALID_ARGUMENT', 'the FileRecords is closed')
  }
}

/** Opens a file range: the binding's FileRecords when it loads, else a JsFileRecords. */
export function openFileRecords(slice: FileSlice): FileRecords {
  const native = loadNative()
  if (native === null) return JsFileRecords.open(slice.file, slice.position, slice.size)
  return call(() => native.FileRecords.open(slice.file, slice.position, slice.size))
}

/** Whether a response part is a file range (of either kind) rather than bytes. */
export function isFileRecords(part: unknown): part is FileRecords {
  if (part instanceof JsFileRecords) return true
  const native = loadNative()
  return native !== null && part instanceof native.FileRecords
}

/**
 * `FileRecords.open` and `.fromFd` for library users, and `instanceof FileRecords` for either
 * kind: the binding's class when it loads (its errors as it throws them, "NOT_FOUND: ..."),
 * else JsFileRecords (fromFd needs the binding: Node cannot dup a descriptor).
 */
export const FileRecords = {
  open(path: string, position: number, size: number): FileRecords {
    const native = loadNative()
    return native ? native.FileRecords.open(path, position, size) : JsFileRecords.open(path, position, size)
  },
  fromFd(fd: number, position: number, size: number): FileRecords {
    return requireNative('FileRecords.fromFd').FileRecords.fromFd(fd, position, size)
  },
  [Symbol.hasInstance](value: unknown): boolean {
    return isFileRecords(value)
  },
}
