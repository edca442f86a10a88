import { expect } from 'vitest'
import type { Log } from '../../ts/storage/log.js'

/**
 * Reads a (compacted) log from its start to its end, checking that offsets only increase (gaps
 * are normal), and returns the last value of each key. `label` names the log in a failure.
 */
export function latestValues(log: Log, label = `${log.topic}-${log.partition}`): Map<string, string> {
  const out = new Map<string, string>()
  let previous = -1n
  for (let offset = log.logStartOffset(); offset < log.logEndOffset();) {
    const records = log.readRecords(offset, { isolation: 'LOG_END', maxBytes: 1 << 20 })
    if (records.length === 0) break
    for (const r of records) {
      expect(r.offset, label).toBeGreaterThan(previous)
      previous = r.offset
      out.set(r.key!.toString(), r.value!.toString())
    }
    offset = previous + 1n
  }
  return out
}
