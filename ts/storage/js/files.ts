/**
 * File names, file modes and I/O helpers shared by the pure-TypeScript storage engine.
 *
 * A segment with base offset B is stored as `<B as 20 digits>.log`, `.index` and `.timeindex`
 * in the partition directory. I/O errors become `StorageError('STORAGE_ERROR')` that keep the
 * cause; callers never see a bare `ErrnoException`.
 */
import * as fs from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { RecordError } from '../../protocol/record-error.js'
import { StorageError, asStorageError } from '../errors.js'

export const LOG_FILE_SUFFIX = '.log'
export const INDEX_FILE_SUFFIX = '.index'
export const TIME_INDEX_FILE_SUFFIX = '.timeindex'
export const TXN_INDEX_FILE_SUFFIX = '.txnindex'
export const PRODUCER_SNAPSHOT_FILE_SUFFIX = '.snapshot'
export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint'
/** Files are created rw-r--r--. */
export const FILE_MODE = 0o644
/** Width of the zero-padded base offset in segment file names. */
export const FILENAME_DIGITS = 20

const SEGMENT_FILE = /^(\d{20})\.(log|index|timeindex|txnindex)$/
const SNAPSHOT_FILE = /^(\d{20})\.snapshot$/

export function filenamePrefixFromOffset(offset: bigint): string {
  return offset.toString().padStart(FILENAME_DIGITS, '0')
}

export function logFile(dir: string, baseOffset: bigint): string {
  return join(dir, filenamePrefixFromOffset(baseOffset) + LOG_FILE_SUFFIX)
}

export function offsetIndexFile(dir: string, baseOffset: bigint): string {
  return join(dir, filenamePrefixFromOffset(baseOffset) + INDEX_FILE_SUFFIX)
}

export function timeIndexFile(dir: string, baseOffset: bigint): string {
  return join(dir, filenamePrefixFromOffset(baseOffset) + TIME_INDEX_FILE_SUFFIX)
}

/** `{ baseOffset, kind }` for a segment file's name, else null. */
export function parseSegmentFileName(name: string): { baseOffset: bigint; kind: 'log' | 'index' | 'timeindex' | 'txnindex' } | null {
  const [, baseOffset, kind] = SEGMENT_FILE.exec(name) ?? []
  if (baseOffset === undefined || kind === undefined) return null
  return { baseOffset: BigInt(baseOffset), kind: kind as 'log' | 'index' | 'timeindex' | 'txnindex' }
}

export function txnIndexFile(dir: string, baseOffset: bigint): string {
  return join(dir, filenamePrefixFromOffset(baseOffset) + TXN_INDEX_FILE_SUFFIX)
}

/** A producer state snapshot `<offset>.snapshot` (producer-snapshot.ts). */
export function producerSnapshotFile(dir: string, offset: bigint): string {
  return join(dir, filenamePrefixFromOffset(offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX)
}

/** The offset of a producer snapshot file's name, else null. */
export function parseSnapshotFileName(name: string): bigint | null {
  const offset = SNAPSHOT_FILE.exec(name)?.[1]
  return offset === undefined ? null : BigInt(offset)
}

export function ioError(what: string, path: string, cause: unknown): StorageError {
  const detail = (cause as { message?: string } | null)?.message ?? String(cause)
  return new StorageError('STORAGE_ERROR', `${what} ${path}: ${detail}`, { cause })
}

/**
 * Runs `fn`, turning any error other than a StorageError or RecordError (which keeps its code)
 * into a STORAGE_ERROR naming `what` and `path`.
 */
export function io<T>(what: string, path: string, fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    if (err instanceof StorageError) throw err
    if (err instanceof RecordError) throw asStorageError(err)
    throw ioError(what, path, err)
  }
}

export async function ioAsync<T>(what: string, path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    if (err instanceof StorageError) throw err
    if (err instanceof RecordError) throw asStorageError(err)
    throw ioError(what, path, err)
  }
}

/** Positional write of all of `buf[start, end)` at `position`. */
export function writeFully(fd: number, buf: Uint8Array, start: number, end: number, position: number): void {
  while (start < end) {
    const n = fs.writeSync(fd, buf, start, end - start, position)
    start += n
    position += n
  }
}

/** Positional read of up to `length` bytes into `buf[at..]`; fewer only at the end of the file. */
export function readFully(fd: number, buf: Uint8Array, at: number, length: number, position: number): number {
  let done = 0
  while (done < length) {
    const n = fs.readSync(fd, buf, at + done, length - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}

// Callback fs calls on numeric fds, run on libuv's pool (fs.promises only hands out FileHandles).
export const fsyncAsync = promisify(fs.fsync)
export const ftruncateAsync = promisify(fs.ftruncate)
const readCb = promisify(fs.read)

export async function readFullyAsync(fd: number, buf: Uint8Array, at: number, length: number, position: number): Promise<number> {
  let done = 0
  while (done < length) {
    const { bytesRead } = await readCb(fd, buf, at + done, length - done, position + done)
    if (bytesRead === 0) break
    done += bytesRead
  }
  return done
}

/** fsync a file by path (a separate descriptor: fsync applies to the file, not to the fd). */
export async function fsyncPath(path: string): Promise<void> {
  const fh = await fs.promises.open(path, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/** Removes files off the JS thread; one already gone is fine. */
export async function removeFiles(paths: string[]): Promise<void> {
  for (const p of paths) await ioAsync('delete', p, () => fs.promises.rm(p, { force: true }))
}

/** Closes a descriptor, ignoring errors (used on paths that already failed or are being torn down). */
export function closeQuietly(fd: number | null): void {
  if (fd === null) return
  try {
    fs.closeSync(fd)
  } catch {
    // already closed or never valid: nothing to release
  }
}
