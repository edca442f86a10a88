// The process that the crash test kills: appends batches in a loop and reports, after each
// append returned, the offsets it got. Every record's value is its own offset, so the parent can
// check after a reopen that the log holds exactly offset -> value for every acknowledged append.
// Usage: node crash-child.cjs <dataDir> <backend> [checkpointIntervalMs] [epochs]
// (log.flush.offset.checkpoint.interval.ms; Kafka's default of 60 s when not given or '-').
// With `epochs`, each burst of appends is in a new leader epoch (from the log's latest + 1), as
// a partition whose leadership keeps moving: the first append of each epoch records it in the
// leader epoch cache, which the log's flush writes to leader-epoch-checkpoint later.
const { writeSync } = require('node:fs')
const { reportLine } = require('../helpers/report-line.cjs')
const { LogManager, silentLogger } = require('../../dist/ts/index.js')

async function main() {
  const [dataDir, backend, checkpointIntervalMs, epochs] = process.argv.slice(2)
  const manager = await LogManager.open({
    dataDir,
    backend,
    logger: silentLogger,
    checkpointIntervalMs: checkpointIntervalMs === undefined || checkpointIntervalMs === '-' ? undefined : Number(checkpointIntervalMs),
  })
  const log = await manager.getOrCreateLog('crash', 0, { config: { segmentBytes: 64 * 1024, indexIntervalBytes: 512 } })
  let round = 0
  let leaderEpoch = (log.latestEpoch() ?? -1) + 1
  for (;;) {
    for (let burst = 0; burst < 20; burst++) {
      const next = log.logEndOffset()
      const count = 1 + ((round++ * 7) % 13)
      const records = []
      for (let i = 0; i < count; i++) {
        const offset = next + BigInt(i)
        records.push({ key: `k${offset}`, value: String(offset), timestamp: Date.now() })
      }
      const info = log.append(records, { compression: round % 3 === 0 ? 'gzip' : 'none', leaderEpoch: epochs === 'epochs' ? leaderEpoch : 0 })
      reportLine(`${info.firstOffset} ${info.lastOffset}\n`)
    }
    if (epochs === 'epochs') leaderEpoch++
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

main().catch((err) => {
  writeSync(2, `crash-child failed: ${err.stack}\n`)
  process.exit(1)
})
