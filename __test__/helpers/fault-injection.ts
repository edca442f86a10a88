import type { Broker } from '../../ts/server/broker.js'

/** The values of a partition's records, in offset order, as strings. */
export function partitionValues(broker: Broker, topic: string, partition = 0): string[] {
  const log = broker.logManager.getLog(topic, partition)
  if (!log) return []
  return log.readRecords(0n).map((r) => r.value?.toString() ?? '')
}

/** The producer ids and base sequences of a partition's batches (one producer: one id, sequences rising). */
export function partitionBatches(broker: Broker, topic: string, partition = 0): Array<{ producerId: bigint; baseSequence: number; count: number }> {
  const log = broker.logManager.getLog(topic, partition)
  if (!log) return []
  return log.readBatches(0n).map((b) => ({ producerId: b.producerId, baseSequence: b.baseSequence, count: Number(b.lastOffset - b.baseOffset) + 1 }))
}

/** A logger in pino's shape that keeps every line (level, message, fields). */
export function capturingLogger(): {
  lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }>
  logger: Record<'error' | 'warn' | 'info' | 'debug', (fields: Record<string, unknown>, msg: string) => void>
} {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = []
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => void lines.push({ level, msg, fields })
  return { lines, logger: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') } }
}

export function values(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}`)
}

/** Whether a promise has settled by the next macrotask. */
export async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  await new Promise((resolve) => setImmediate(resolve))
  return done
}
