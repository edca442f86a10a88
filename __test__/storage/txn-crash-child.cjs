// The process that the transaction crash test kills: three producers write transactions
// (data batches, then a COMMIT or an ABORT marker appended as the transaction coordinator
// does), with plain batches between, over small segments (rolls, so .snapshot files), and
// reports each acknowledged append as "<firstOffset> <lastOffset>". Deterministic: the parent
// rebuilds what the log must say from the batches it reads back.
// Usage: node txn-crash-child.cjs <dataDir> <backend>
const { writeSync } = require('node:fs')
const { reportLine } = require('../helpers/report-line.cjs')
const { LogManager, silentLogger, buildBatch } = require('../../dist/ts/index.js')
const { buildEndTxnMarker } = require('../../dist/ts/protocol/control-record.js')

async function main() {
  const [dataDir, backend] = process.argv.slice(2)
  const manager = await LogManager.open({ dataDir, backend, logger: silentLogger })
  const log = await manager.getOrCreateLog('txn-crash', 0, { config: { segmentBytes: 4096, indexIntervalBytes: 256 } })
  const open = new Map()
  const sequence = new Map()
  let step = Number(log.logEndOffset())
  for (;;) {
    for (let burst = 0; burst < 10; burst++) {
      step++
      const producerId = BigInt(100 + (step % 3))
      const seq = sequence.get(producerId) ?? 0
      let batch
      let origin = 'CLIENT'
      if (step % 7 === 0) {
        batch = buildBatch([{ value: `plain ${step}` }])
      } else if (!open.get(producerId) || step % 5 < 3) {
        const n = 1 + (step % 4)
        batch = buildBatch(
          Array.from({ length: n }, (_, i) => ({ value: `txn ${producerId} ${seq + i}` })),
          { producerId, producerEpoch: 0, baseSequence: seq, isTransactional: true },
        )
        sequence.set(producerId, seq + n)
        open.set(producerId, true)
      } else {
        batch = buildEndTxnMarker({ type: step % 3 === 0 ? 'ABORT' : 'COMMIT', producerId, producerEpoch: 0, coordinatorEpoch: 1 })
        origin = 'COORDINATOR'
        open.set(producerId, false)
      }
      const info = log.append(batch, { origin })
      reportLine(`${info.firstOffset} ${info.lastOffset}\n`)
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

main().catch((err) => {
  writeSync(2, `txn-crash-child failed: ${err.stack}\n`)
  process.exit(1)
})
