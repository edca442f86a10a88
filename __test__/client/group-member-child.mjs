// A Consumer group member in its own process, so that a test can SIGKILL it
// (group-protocol-scenarios.ts): it reads from dist/ and prints one line per event, each with the
// time it happened (ms since the epoch, sub-ms precision, as the parent's log takes it):
//   <kind> <comma-separated partitions or record ids> <time>   (assigned, revoked, lost, records)
// Usage: node group-member-child.mjs <topic> <consumer options as JSON>
import { writeSync } from 'node:fs'
import { Consumer } from '../../dist/ts/client/consumer.js'

const [topic, options] = process.argv.slice(2)
const now = () => performance.timeOrigin + performance.now()
// Synchronous writes: a line printed before a SIGKILL reaches the parent.
const print = (kind, items) => writeSync(1, `${kind} ${items.join(',')} ${now()}\n`)
const tps = (list) => list.map((tp) => `${tp.topic}-${tp.partition}`)
const consumer = new Consumer({
  ...JSON.parse(options),
  onPartitionsAssigned: (list) => print('assigned', tps(list)),
  onPartitionsRevoked: (list) => print('revoked', tps(list)),
  onPartitionsLost: (list) => print('lost', tps(list)),
})
consumer.subscribe([topic])
for await (const batch of consumer) {
  print(
    'records',
    batch.records.map((r) => r.value.toString().replace(/\.+$/, '')),
  )
  await new Promise((resolve) => setTimeout(resolve, 20))
}
