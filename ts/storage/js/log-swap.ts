/**
 * Swapping cleaned segments into the log, and finishing or undoing a swap a crash interrupted
 * (Kafka's `LocalLog.replaceSegments` and `LogLoader`'s `.cleaned`/`.swap` handling); twin of
 * crates/storage/src/log/swap.rs, which documents the files and the order:
 *
 *   <B>.{log,index,timeindex[,txnindex]}.cleaned  (synced)
 *     -> *.swap, group by group in base order; directory synced
 *     -> old segments' files deleted, *.swap -> live names; directory synced
 *
 * Recovery, before the segments load: `*.cleaned` and `<B>.cleaning/` deleted; `*.swap` at or
 * above the lowest `.cleaned` base deleted (an unfinished rename to `.swap`); the others complete:
 * live segments with a base in [B, next offset of <B>.log.swap) deleted, the `.swap` files renamed
 * to their live names.
 */
import * as fs from 'node:fs'
import { join } from 'node:path'
import { LAST_OFFSET_DELTA_OFFSET } from '../../protocol/batch-header.js'
import { batchesOf } from '../../protocol/records.js'
import type { RecoveryReport } from '../types.js'
import { CLEANED_FILE_SUFFIX } from './cleaner/index.js'
import { fsyncPath, ioAsync, logFile, parseSegmentFileName, removeFiles } from './files.js'

export const SWAP_FILE_SUFFIX = '.swap'
const SCRATCH_DIR = /^\d{20}\.cleaning$/
const SEGMENT_KINDS = ['log', 'index', 'timeindex', 'txnindex'] as const

/** The offset after the last whole batch of a `.log` file (its base when it has none). */
async function nextOffsetOf(file: string, base: bigint): Promise<bigint> {
  const buf = await ioAsync('read', file, () => fs.promises.readFile(file))
  let next = base
  for (const { position } of batchesOf(buf)) {
    next = buf.readBigInt64BE(position) + BigInt(buf.readInt32BE(position + LAST_OFFSET_DELTA_OFFSET)) + 1n
  }
  return next
}

/** The recovery of `.cleaned`, `.swap` and scratch leftovers, before the segments are loaded. */
export async function recoverSwaps(dir: string, report: RecoveryReport): Promise<void> {
  const names = await ioAsync('list log directory', dir, () => fs.promises.readdir(dir))
  const cleanedBases: bigint[] = []
  const swaps = new Map<bigint, Array<{ kind: string; file: string; live: string }>>()
  const liveLogs = new Set<bigint>()
  let changed = false
  for (const name of names) {
    const file = join(dir, name)
    if (SCRATCH_DIR.test(name)) {
      await ioAsync('remove', file, () => fs.promises.rm(file, { recursive: true, force: true }))
      report.messages.push(`${file}: removed an unfinished cleaning`)
      changed = true
      continue
    }
    if (name.endsWith(CLEANED_FILE_SUFFIX)) {
      const parsed = parseSegmentFileName(name.slice(0, -CLEANED_FILE_SUFFIX.length))
      if (parsed !== null) cleanedBases.push(parsed.baseOffset)
      await removeFiles([file])
      report.messages.push(`${file}: removed an unfinished cleaning`)
      changed = true
      continue
    }
    if (name.endsWith(SWAP_FILE_SUFFIX)) {
      const liveName = name.slice(0, -SWAP_FILE_SUFFIX.length)
      const parsed = parseSegmentFileName(liveName)
      if (parsed === null) continue
      const list = swaps.get(parsed.baseOffset) ?? []
      list.push({ kind: parsed.kind, file, live: join(dir, liveName) })
      swaps.set(parsed.baseOffset, list)
      continue
    }
    const parsed = parseSegmentFileName(name)
    if (parsed !== null && parsed.kind === 'log') liveLogs.add(parsed.baseOffset)
  }
  const lowestCleaned = cleanedBases.reduce<bigint | null>((m, b) => (m === null || b < m ? b : m), null)
  const bases = [...swaps.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  for (const base of bases) {
    const files = swaps.get(base) ?? []
    changed = true
    if (lowestCleaned !== null && base >= lowestCleaned) {
      for (const f of files) {
        await removeFiles([f.file])
        report.messages.push(`${f.file}: removed: its swap had not finished (a .cleaned file at or below it)`)
      }
      continue
    }
    const logSwap = files.find((f) => f.kind === 'log')
    if (logSwap !== undefined) {
      let next = await nextOffsetOf(logSwap.file, base)
      if (next <= base) next = base + 1n
      const overlapping = [...liveLogs].filter((b) => b >= base && b < next).sort((a, b) => (a < b ? -1 : 1))
      for (const old of overlapping) {
        const prefix = logFile(dir, old).slice(0, -'.log'.length)
        await removeFiles(SEGMENT_KINDS.map((k) => `${prefix}.${k}`))
        liveLogs.delete(old)
        report.messages.push(`${logFile(dir, old)}: deleted: replaced by the cleaned segment at ${base}`)
      }
      liveLogs.add(base)
    }
    for (const f of files) await ioAsync('rename', f.file, () => fs.promises.rename(f.file, f.live))
    report.messages.push(`${logFile(dir, base)}: swapped in a cleaned segment`)
  }
  if (changed) await ioAsync('fsync', dir, () => fsyncPath(dir))
}
