/**
 * The `transaction.version` feature as Kafka's own `kafka-features.sh describe` (FeatureCommand,
 * Admin.describeFeatures over ApiVersions) reads it, from ferrolog and from a new Apache Kafka 4.4
 * cluster in the same test: supported 0-2, finalized at 2 on both, which is what makes a Kafka 4
 * producer speak transaction version 2 (KIP-890 part 2).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, runKafkaClass, stopKafkaBroker } from '../helpers/kafka-tools.js'

let kafkaDir: string | undefined
beforeAll(() => fetchKafkaJars(), 300_000)
afterAll(() => {
  if (kafkaDir) {
    stopKafkaBroker(kafkaDir)
    rmSync(kafkaDir, { recursive: true, force: true })
  }
}, 120_000)

/** FeatureCommand's line for transaction.version, its fields (the epoch aside: Kafka's is a metadata offset). */
async function describeTransactionVersion(port: number): Promise<Record<string, string>> {
  // FeatureCommand takes --bootstrap-server before its subcommand.
  const r = await runKafkaClass('org.apache.kafka.tools.FeatureCommand', ['--bootstrap-server', `127.0.0.1:${port}`, 'describe'])
  if (r.status !== 0) throw new Error(`FeatureCommand describe: ${r.status}\n${r.stdout}\n${r.stderr}`)
  const out = r.stdout
  const line = out.split('\n').find((l) => /^Feature: transaction\.version\s/.test(l))
  if (!line) throw new Error(`no transaction.version in:\n${out}`)
  const fields = Object.fromEntries([...line.matchAll(/(\w+): (\S+)/g)].map((m) => [m[1]!, m[2]!]))
  delete fields.Epoch
  return fields
}

it('kafka-features.sh describe: transaction.version supported 0-2 and finalized at 2, on ferrolog as on Kafka 4.4', { timeout: 300_000 }, async () => {
  const broker = await startBroker()
  let ferrolog: Record<string, string>
  try {
    ferrolog = await describeTransactionVersion(broker.port)
  } finally {
    await broker.stop()
  }
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-features-kafka-'))
  const kafka = await describeTransactionVersion(kafkaBrokerPort(await runKafkaBroker(kafkaDir)))
  expect(kafka).toEqual({ Feature: 'transaction.version', SupportedMinVersion: '0', SupportedMaxVersion: '2', FinalizedVersionLevel: '2' })
  expect(ferrolog).toEqual(kafka)
})
