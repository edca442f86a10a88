// Writes the data dir the open-files tests open: `partitions` logs of topic `many`, each of
// `segments` one-batch segments (segment.bytes 100; the record at offset o of partition p has
// the value "partition p offset o"), then closes cleanly and exits. In a process of its own, so
// that the background flushes of its thousands of rolls touch no descriptor of the test's.
// Usage: node many-segments-child.cjs <dataDir> <backend> <partitions> <segments>
const { LogManager, silentLogger } = require('../../dist/ts/index.js')

async function main() {
  const [dataDir, backend, partitions, segments] = process.argv.slice(2)
  const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, retentionCheckIntervalMs: 0 })
  for (let p = 0; p < Number(partitions); p++) {
    const log = await manager.getOrCreateLog('many', p, { config: { segmentBytes: 100 } })
    for (let o = 0; o < Number(segments); o++) log.append([{ key: 'k', value: `partition ${p} offset ${o}` }])
    if (log.segments().length !== Number(segments)) throw new Error(`many-${p}: ${log.segments().length} segments`)
  }
  await manager.close()
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
