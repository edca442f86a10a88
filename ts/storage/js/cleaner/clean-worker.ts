/**
 * The twin cleaner's worker thread (clean-thread.ts starts it): runs each `CleanJob` it is sent
 * (clean-groups.ts) and answers `{ id, result }` or `{ id, error: { code, message } }`.
 */
import { parentPort } from 'node:worker_threads'
import { StorageError, asStorageError } from '../../errors.js'
import { runCleanJob, type CleanJob } from './clean-groups.js'

export interface CleanRequestMessage {
  id: number
  job: CleanJob
}

parentPort?.on('message', ({ id, job }: CleanRequestMessage) => {
  try {
    parentPort!.postMessage({ id, result: runCleanJob(job) })
  } catch (thrown) {
    const err = asStorageError(thrown)
    const code = err instanceof StorageError ? err.code : undefined
    parentPort!.postMessage({ id, error: { code, message: err instanceof Error ? err.message : String(err) } })
  }
})
