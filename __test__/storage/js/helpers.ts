/** Shared helpers of the pure-TypeScript engine's unit tests. */
import { buildBatch, type BuildBatchOptions } from '../../../ts/protocol/batch-builder.js'
import { JsLog } from '../../../ts/storage/js/js-log.js'
import { DEFAULT_LOG_CONFIG, type LogConfig, type ProducerRecord } from '../../../ts/storage/types.js'

export const T0 = 1_700_000_000_000

/** Opens a JsLog in `dir` (a fresh log: recovery point 0, clean). */
export function openLog(dir: string, config: Partial<LogConfig> = {}, opts: { hadCleanShutdown?: boolean; recoveryPoint?: bigint; logStartOffset?: bigint } = {}): Promise<JsLog> {
  return JsLog.open({
    dir,
    config: { ...DEFAULT_LOG_CONFIG, ...config },
    recoveryPoint: opts.recoveryPoint ?? 0n,
    logStartOffset: opts.logStartOffset ?? 0n,
    hadCleanShutdown: opts.hadCleanShutdown ?? true,
  })
}

/** `n` records with values of `valueBytes` bytes, timestamps T0 + from + i. */
export function recs(n: number, from = 0, valueBytes = 20): ProducerRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    key: `k${String(from + i).padStart(6, '0')}`,
    value: Buffer.alloc(valueBytes, 97 + ((from + i) % 26)),
    timestamp: T0 + from + i,
  }))
}

/** One batch as a producer sends it (baseOffset 0, no epoch). */
export function batch(n = 1, from = 0, options: BuildBatchOptions & { valueBytes?: number } = {}): Buffer {
  const { valueBytes, ...rest } = options
  return buildBatch(recs(n, from, valueBytes), rest)
}

/** A batch as a leader wrote it: for follower appends. */
export function replicaBatch(baseOffset: bigint, n: number, epoch = 0, valueBytes = 20): Buffer {
  return buildBatch(recs(n, Number(baseOffset), valueBytes), { baseOffset, partitionLeaderEpoch: epoch })
}

export async function expectCode(p: Promise<unknown> | (() => unknown), code: string): Promise<void> {
  let err: unknown = null
  try {
    if (typeof p === 'function') p()
    else await p
  } catch (e) {
    err = e
  }
  if (err === null) throw new Error(`expected an error with code ${code}, got none`)
  if ((err as { code?: string }).code !== code) throw err
}
