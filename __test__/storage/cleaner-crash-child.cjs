// The process that the cleaner crash test (and scripts/cleaner-crash-soak.mjs) kills. Record at
// offset o has key k<o % KEYS> and value String(o), so what survives is known from the last
// acknowledged offset alone.
//   node cleaner-crash-child.cjs run <dataDir> <backend>
//     appends and acknowledges (prints "<lastOffset>" per append), rolls and runs Log.clean
//     rounds meanwhile (prints "c <endOffset> <aborted>" per round), until killed;
//   node cleaner-crash-child.cjs verify <dataDir> <backend> <lastAcked>
//     reopens (recovery), checks, prints one JSON line {problems, ...}, exits without closing.
const { readdirSync, writeSync } = require('node:fs')
const { reportLine } = require('../helpers/report-line.cjs')
const { join } = require('node:path')
const { LogManager, silentLogger } = require('../../dist/ts/index.js')

const KEYS = 40
const CONFIG = { segmentBytes: 6 * 1024, indexIntervalBytes: 256 }

async function openLog(dataDir, backend) {
  const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
  return { manager, log: await manager.getOrCreateLog('clean', 0, { config: CONFIG }) }
}

async function run(dataDir, backend) {
  const { log } = await openLog(dataDir, backend)
  let firstDirty = log.logStartOffset()
  let cleaning = null
  for (let round = 0; ; round++) {
    for (let burst = 0; burst < 10; burst++) {
      const next = log.logEndOffset()
      const count = 1 + ((round * 3 + burst) % 5)
      const records = []
      for (let i = 0; i < count; i++) {
        const o = next + BigInt(i)
        records.push({ key: `k${o % BigInt(KEYS)}`, value: String(o), timestamp: Date.now() })
      }
      const info = log.append(records, { compression: burst % 4 === 0 ? 'gzip' : 'none' })
      reportLine(`${info.lastOffset}\n`)
    }
    if (cleaning === null && round % 4 === 3) {
      log.roll()
      cleaning = log
        .clean({
          firstDirtyOffset: firstDirty,
          firstUncleanableOffset: log.logEndOffset(),
          currentTimeMs: BigInt(Date.now()),
          deleteRetentionMs: 86_400_000n,
          dedupeBufferSize: 1 << 16,
        })
        .then((r) => {
          if (!r.aborted) firstDirty = r.endOffset
          reportLine(`c ${r.endOffset} ${r.aborted}\n`)
          cleaning = null
        })
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

async function verify(dataDir, backend, lastAcked) {
  const problems = []
  const dir = join(dataDir, 'clean-0')
  const { log } = await openLog(dataDir, backend)
  const left = readdirSync(dir).filter((f) => /\.(cleaned|swap|deleted|cleaning)$/.test(f))
  if (left.length > 0) problems.push(`left behind: ${left.join(' ')}`)
  const segments = log.segments()
  for (let i = 1; i < segments.length; i++) {
    if (segments[i].baseOffset <= segments[i - 1].baseOffset) problems.push(`segments out of order at ${segments[i].baseOffset}`)
  }
  const end = log.logEndOffset()
  if (end <= lastAcked) problems.push(`log end ${end} not past the last acknowledged offset ${lastAcked}`)
  const latest = new Map()
  let next = log.logStartOffset()
  let previous = -1n
  let records = 0
  while (next < end && problems.length < 20) {
    const batches = log.readBatches(next, { maxBytes: 1 << 20, isolation: 'LOG_END' })
    if (batches.length === 0) {
      problems.push(`nothing readable at ${next} below the end ${end}`)
      break
    }
    for (const b of batches) {
      if (b.baseOffset <= previous) problems.push(`batch at ${b.baseOffset} after offset ${previous}`)
      for (const r of b.records) {
        records++
        if (r.offset <= previous) problems.push(`offset ${r.offset} after ${previous}`)
        previous = r.offset
        const key = r.key?.toString()
        if (key !== `k${r.offset % BigInt(KEYS)}` || r.value?.toString() !== String(r.offset)) {
          problems.push(`record at ${r.offset}: ${key}=${r.value?.toString()}`)
        }
        latest.set(key, r.offset)
      }
      next = b.lastOffset + 1n
    }
  }
  // Every key's latest acknowledged record, or a later one, is there.
  for (let k = 0n; k < BigInt(KEYS) && k <= lastAcked; k++) {
    const acked = lastAcked - ((((lastAcked - k) % BigInt(KEYS)) + BigInt(KEYS)) % BigInt(KEYS))
    const got = latest.get(`k${k}`)
    if (got === undefined || got < acked) problems.push(`k${k}: latest acknowledged at ${acked}, found ${got}`)
  }
  reportLine(JSON.stringify({ problems, records, segments: segments.length, end: String(end), recovered: log.recoveryReport().messages.filter((m) => /swap|cleaning/.test(m)).length }) + '\n')
  process.exit(0)
}

const [mode, dataDir, backend, lastAcked] = process.argv.slice(2)
const main = mode === 'verify' ? verify(dataDir, backend, BigInt(lastAcked)) : run(dataDir, backend)
main.catch((err) => {
  writeSync(2, `cleaner-crash-child failed: ${err.stack}\n`)
  process.exit(1)
})
