/**
 * `<dataDir>/.lock`: one broker per data directory. The file holds the owner's pid; a second
 * broker finds it, sees the pid alive, and refuses to start. A lock left by a process that died
 * (kill -9) names a dead pid and is taken over. Within one process, the held locks are known.
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'

export const LOCK_FILE = '.lock'

export class DataDirLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED' as const
  constructor(dataDir: string, pid: number) {
    super(`the data directory ${dataDir} is in use by another ferrolog process (pid ${pid}); stop it or choose another --data-dir`)
    this.name = 'DataDirLockedError'
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Lock files held by this process: a second broker in the same process is refused too. */
const held = new Set<string>()

export class DataDirLock {
  private constructor(private readonly file: string) {}

  static acquire(dataDir: string): DataDirLock {
    const file = resolve(dataDir, LOCK_FILE)
    if (held.has(file)) throw new DataDirLockedError(dataDir, process.pid)
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(file, `${process.pid}\n`, { flag: 'wx' })
        held.add(file)
        return new DataDirLock(file)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
        const pid = Number(readFileSync(file, 'utf8').trim())
        if (Number.isInteger(pid) && pid > 0 && alive(pid)) throw new DataDirLockedError(dataDir, pid)
        unlinkSync(file) // stale: its owner is gone
      }
    }
    throw new Error(`could not take ${file}`)
  }

  release(): void {
    held.delete(this.file)
    try {
      unlinkSync(this.file)
    } catch {
      // already gone
    }
  }
}
