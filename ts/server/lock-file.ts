/**
 * `<dataDir>/.lock`: one broker per data directory, as Kafka's FileLock on each log dir. The lock
 * is the operating system's exclusive file lock (flock), taken by the native binding
 * (crates/storage/src/dir_lock.rs, where the file's format is written) and held on the open file
 * for the broker's life. The kernel drops it when the process dies however it dies, so a
 * restart after kill -9 or a crash takes the directory at once, whatever pid the file still
 * names (pid 1 in a container, a pid reused by an unrelated process). A second broker, in
 * another process or in this one, finds the lock held and is refused.
 *
 * Without the binding (native/binding.ts) Node has no flock: the lock is then the pid in the
 * file, taken when the file names no live process and no lock of this process holds the
 * directory. That is weaker (two starts racing may both win; a reused pid blocks until the file
 * is cleared), and only for brokers that run without the binding.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { loadNative } from '../native/binding.js'

interface HeldLock {
  release(): void
}

/** Directories locked by pid in this process (the fallback), by resolved path. */
const heldByPid = new Set<string>()

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The fallback without flock: null when the directory is held. */
function acquireByPid(file: string): HeldLock | null {
  const pid = holderPid(file)
  if (heldByPid.has(file) || (pid !== null && pid !== process.pid && alive(pid))) return null
  writeFileSync(file, `${process.pid}\n`)
  heldByPid.add(file)
  return {
    release() {
      if (!heldByPid.delete(file)) return
      writeFileSync(file, '')
    },
  }
}

export const LOCK_FILE = '.lock'

export class DataDirLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED' as const
  constructor(dataDir: string, pid: number | null) {
    const who = pid === null ? 'another ferrolog process' : `another ferrolog process (pid ${pid})`
    super(`the data directory ${dataDir} is in use by ${who}; stop it or choose another --data-dir`)
    this.name = 'DataDirLockedError'
  }
}

/** The pid the holder wrote, if it has written it yet (it writes right after locking). */
function holderPid(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim())
    return Number.isInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

export class DataDirLock {
  private constructor(private readonly native: HeldLock) {}

  /** Takes the lock or throws DataDirLockedError (code DATA_DIR_LOCKED). */
  static acquire(dataDir: string): DataDirLock {
    const binding = loadNative()
    const file = resolve(dataDir, LOCK_FILE)
    const held = binding ? binding.DataDirLock.tryAcquire(dataDir) : acquireByPid(file)
    if (held === null) throw new DataDirLockedError(dataDir, holderPid(file))
    return new DataDirLock(held)
  }

  /** Unlocks; the file stays (never deleted: see dir_lock.rs), its pid cleared. */
  release(): void {
    this.native.release()
  }
}
