import { execFileSync } from 'node:child_process'
import { mkdtempSync, openSync, closeSync, ftruncateSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'

const mounted: string[] = []

/**
 * A tmpfs of `bytes` mounted on a fresh directory (tests run as root, in CI too): a real disk
 * that fills up. Unmounted and removed after the test.
 */
export function mountTmpfs(bytes: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferrolog-tmpfs-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir])
  mounted.push(dir)
  return dir
}

export function unmountTmpfs(dir: string): void {
  const i = mounted.indexOf(dir)
  if (i >= 0) mounted.splice(i, 1)
  execFileSync('umount', ['-l', dir])
  rmSync(dir, { recursive: true, force: true })
}

afterEach(() => {
  for (const dir of mounted.splice(0)) {
    execFileSync('umount', ['-l', dir])
    rmSync(dir, { recursive: true, force: true })
  }
})

/** A file grown until its disk is full (`fill`) and shrunk to give space back (`free`). */
export class Filler {
  private fd: number
  private len = 0

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w')
  }

  /** Writes until ENOSPC: the disk then has no free page. */
  fill(): void {
    const chunk = Buffer.alloc(64 * 1024, 0xff)
    let size = chunk.length
    while (size > 0) {
      try {
        const n = writeSync(this.fd, chunk, 0, size, this.len)
        if (n === 0) size >>= 1
        this.len += n
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
        size >>= 1
      }
    }
  }

  /** Gives `bytes` back to the disk. */
  free(bytes: number): void {
    this.len = Math.max(0, this.len - bytes)
    ftruncateSync(this.fd, this.len)
  }

  /** Gives everything back and removes the file. */
  remove(): void {
    closeSync(this.fd)
    rmSync(this.path, { force: true })
  }
}
