// The process that the offsets crash test kills: commits offsets in a loop through the store (a
// standalone replica manager's leader appends) while the log cleaner (no backoff) cleans the
// offsets log of small segments, and reports each commit once commit() resolved acknowledged.
// Partition p of group "g" gets offsets rising by one per commit, so the parent can check after
// a reopen that every partition holds at least its last acknowledged offset.
// Usage: node offsets-crash-child.cjs <dataDir> <backend> <firstOffset>
const { writeSync } = require('node:fs')
const { LogManager, silentLogger } = require('../../dist/ts/index.js')
const { OffsetStore } = require('../../dist/ts/group/offset-store.js')
const { ReplicaManager } = require('../../dist/ts/replica/replica-manager.js')
const { reportLine } = require('../helpers/report-line.cjs')
const { CHILD_LOG_MANAGER_OPTIONS, OFFSETS_CONFIG } = require('./offsets-crash-options.cjs')

const PARTITIONS = 5
async function main() {
  const [dataDir, backend, first] = process.argv.slice(2)
  const manager = await LogManager.open({ dataDir, backend, logger: silentLogger, ...CHILD_LOG_MANAGER_OPTIONS })
  const replicaManager = new ReplicaManager(manager, { brokerId: 0, logger: silentLogger })
  const store = await OffsetStore.open(replicaManager, silentLogger, { logConfig: OFFSETS_CONFIG })
  let offset = BigInt(first)
  for (;;) {
    for (let burst = 0; burst < 50; burst++) {
      const partition = Number(offset % BigInt(PARTITIONS))
      const errorCode = await store.commit('g', [{ topic: 't', partition, offset, leaderEpoch: 0, metadata: null, commitTimestamp: BigInt(Date.now()) }])
      if (errorCode !== 0) throw new Error(`commit of ${offset} failed with error ${errorCode}`)
      reportLine(`${partition} ${offset}\n`)
      offset++
    }
    // Let the cleaner's rounds go on between bursts, as the broker's event loop would.
    await new Promise((resolve) => setImmediate(resolve))
  }
}

main().catch((err) => {
  writeSync(2, `offsets-crash-child failed: ${err.stack}\n`)
  process.exit(1)
})
