/**
 * `<dataDir>/.lock` is an OS file lock held for the broker's life: whatever pid a lock file left
 * behind names (pid 1 after a crash as a container's init, a live unrelated process), a new
 * broker takes the directory; a live broker, in another process or this one, keeps it; and the
 * directory of a SIGKILLed broker is free at once. Both storage backends lock the same way.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { startBroker } from '../helpers/broker.js'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const CLI = join(__dirname, '../../dist/ts/cli/main.js')

const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** `ferrolog broker` on `dataDir`, resolved once it listens. */
function spawnBroker(dataDir: string, backend: BackendName): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, 'broker', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--backend', backend], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let out = ''
  let err = ''
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start in 20 s: ${err}`)), 20_000)
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      if (out.includes('listening on')) {
        clearTimeout(timer)
        resolve(child)
      }
    })
    child.on('exit', (code) => reject(new Error(`broker exited with ${code}: ${err}`)))
  })
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.on('exit', () => resolve())))
}

describe.each(['native', 'js'] as const)('the data dir lock (%s backend)', (backend) => {
  async function startsAndStops(dataDir: string): Promise<void> {
    const broker: Broker = await startBroker({ dataDir, backend })
    expect(readFileSync(join(dataDir, '.lock'), 'utf8')).toBe(`${process.pid}\n`)
    await broker.stop()
  }

  it('takes over a lock file naming pid 1 (a crash as a container init)', async () => {
    const dataDir = tempDir()
    writeFileSync(join(dataDir, '.lock'), '1\n')
    await startsAndStops(dataDir)
  })

  it('takes over a lock file naming a live unrelated process', async () => {
    const dataDir = tempDir()
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' })
    children.push(sleeper)
    writeFileSync(join(dataDir, '.lock'), `${sleeper.pid}\n`)
    await startsAndStops(dataDir)
  })

  it('refuses a second live broker, in another process or this one, and frees the dir of a SIGKILLed one at once', async () => {
    const dataDir = tempDir()
    const first = await spawnBroker(dataDir, backend)
    await expect(startBroker({ dataDir, backend })).rejects.toMatchObject({
      code: 'DATA_DIR_LOCKED',
      message: expect.stringContaining(`in use by another ferrolog process (pid ${first.pid})`),
    })
    const second = await runProcess(process.execPath, [CLI, 'broker', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--backend', backend], '', 20_000)
    expect(second.status).toBe(1)
    expect(second.stderr).toContain(`in use by another ferrolog process (pid ${first.pid})`)

    first.kill('SIGKILL')
    await exited(first)
    const broker = await startBroker({ dataDir, backend })
    try {
      await expect(startBroker({ dataDir, backend })).rejects.toMatchObject({ code: 'DATA_DIR_LOCKED', message: expect.stringContaining(`(pid ${process.pid})`) })
    } finally {
      await broker.stop()
    }
  })
})
