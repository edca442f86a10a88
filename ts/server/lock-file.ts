/**
 * `<dataDir>/.lock`: one broker per data directory, as Kafka's FileLock on each log dir. The lock
 * is the operating system's exclusive file lock (flock), taken by the native binding
 * (crates/storage/src/dir_lock.rs, where the file's format is written) and held on the open file
 * for the broker's life. The kernel drops it when the process dies however it dies, so a
 * restart after kill -9 or a crash takes the directory at once, whatever pid the file still
 * names (pid 1 in a container, a pid reused by an unrelated process). A second broker, in
 * another process or in this one, finds the lock held and is refused.
 *
 * Both storage backends lock through the binding: it is loaded whatever the backend (the broker
 * cannot start without it), and Node has no flock of its own.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { DataDirLock as NativeDirLock } from '../native/index.js'

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
  private constructor(private readonly native: NativeDirLock) {}

  /** Takes the lock or throws DataDirLockedError (code DATA_DIR_LOCKED). */
  static acquire(dataDir: string): DataDirLock {
    const native = NativeDirLock.tryAcquire(dataDir)
    if (native === null) throw new DataDirLockedError(dataDir, holderPid(resolve(dataDir, LOCK_FILE)))
    return new DataDirLock(native)
  }

  /** Unlocks; the file stays (never deleted: see dir_lock.rs), its pid cleared. */
  release(): void {
    this.native.release()
  }
}
