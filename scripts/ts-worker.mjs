// Starts a worker thread on a TypeScript module when ferrolog runs from its sources (vitest)
// rather than from dist/: registers ts-worker-hooks.mjs, then imports workerData.entry.
// ts/storage/js/cleaner/clean-thread.ts uses it; dist/ never does.
import { register } from 'node:module'
import { workerData } from 'node:worker_threads'

register('./ts-worker-hooks.mjs', import.meta.url)
await import(workerData.entry)
