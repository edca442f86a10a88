/**
 * The twin cleaner's worker thread, so that a round's file work (the offset map over up to
 * segment.bytes of dirty log, the `.cleaned` files) does not block the event loop; the native
 * engine does the same on a libuv worker. One thread per process, started at the first round and
 * kept (unreferenced while idle, so it never holds the process open); rounds queue on it.
 *
 * The thread runs the compiled clean-worker.js next to this module (dist/). Run from the
 * TypeScript sources (vitest), there is no compiled module: the thread then starts through
 * scripts/ts-worker.mjs, which loads the .ts sources with esbuild's transform (a dev dependency),
 * as Node 20 cannot load TypeScript itself and a Worker is outside vitest's module graph.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { StorageError, type StorageErrorCode } from '../../errors.js'
import type { CleanJob, CleanJobResult } from './clean-groups.js'

interface Pending {
  resolve: (result: CleanJobResult) => void
  reject: (err: Error) => void
}

type Reply = { id: number; result: CleanJobResult } | { id: number; error: { code?: StorageErrorCode; message: string } }

let worker: Worker | null = null
const pending = new Map<number, Pending>()
let nextId = 0

function startWorker(): Worker {
  const compiled = join(__dirname, 'clean-worker.js')
  const w = existsSync(compiled)
    ? new Worker(compiled)
    : new Worker(join(__dirname, '..', '..', '..', '..', 'scripts', 'ts-worker.mjs'), {
        workerData: { entry: pathToFileURL(join(__dirname, 'clean-worker.ts')).href },
      })
  w.on('message', (reply: Reply) => {
    const p = pending.get(reply.id)
    if (p === undefined) return
    pending.delete(reply.id)
    if (pending.size === 0) w.unref()
    if ('result' in reply) p.resolve(reply.result)
    else p.reject(reply.error.code ? new StorageError(reply.error.code, reply.error.message) : new Error(reply.error.message))
  })
  const fail = (err: Error) => {
    if (worker === w) worker = null
    for (const p of pending.values()) p.reject(err)
    pending.clear()
  }
  w.on('error', fail)
  w.on('exit', (code) => fail(new Error(`the cleaner thread exited (${code})`)))
  return w
}

/** Runs `job` on the cleaner thread. */
export function runOnCleanerThread(job: CleanJob): Promise<CleanJobResult> {
  worker ??= startWorker()
  const w = worker
  const id = nextId++
  return new Promise<CleanJobResult>((resolve, reject) => {
    pending.set(id, { resolve, reject })
    w.ref()
    w.postMessage({ id, job })
  })
}
