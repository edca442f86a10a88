/**
 * Kafka's own `kafka-features.sh` (FeatureCommand: describe over ApiVersions, upgrade, downgrade
 * and disable over UpdateFeatures) against ferrolog and against Apache Kafka 4.4, the same
 * commands in the same order on both: the outputs (stdout, stderr) and exit codes must be the
 * same, the epoch aside (Kafka's is a metadata offset). Both brokers have node id 1, which the
 * error messages name ("Local controller 1"). Then ferrolog restarted on its data dir keeps the
 * level last set (the features file).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, kafkaBrokerPort, runKafkaBroker, runKafkaClass, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

let kafkaDir: string | undefined
beforeAll(() => fetchKafkaJars(), 300_000)
afterAll(() => {
  if (kafkaDir) {
    stopKafkaBroker(kafkaDir)
    rmSync(kafkaDir, { recursive: true, force: true })
  }
}, 120_000)

interface FeatureRun {
  status: number | null
  stdout: string
  stderr: string
}

/** FeatureCommand with --bootstrap-server before its subcommand, as it takes it. */
async function features(port: number, ...args: string[]): Promise<FeatureRun> {
  const r = await runKafkaClass('org.apache.kafka.tools.FeatureCommand', ['--bootstrap-server', `127.0.0.1:${port}`, ...args])
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** describe's transaction.version line without its epoch. */
function transactionVersionLine(run: FeatureRun): string {
  const line = run.stdout.split('\n').find((l) => /^Feature: transaction\.version\s/.test(l))
  if (!line) throw new Error(`no transaction.version in:\n${run.stdout}\n${run.stderr}`)
  return line.replace(/\s+Epoch: \d+\s*$/, '').replace(/\s+/g, ' ')
}

/** The commands, in order; each one's outcome. */
const STEPS: string[][] = [
  ['upgrade', '--feature', 'transaction.version=2'],
  ['downgrade', '--feature', 'transaction.version=1'],
  ['describe'],
  ['upgrade', '--feature', 'transaction.version=3'],
  ['upgrade', '--feature', 'foo.version=1'],
  ['upgrade', '--feature', 'transaction.version=2', '--feature', 'foo.version=1'],
  ['downgrade', '--feature', 'transaction.version=2'],
  ['disable', '--feature', 'foo.version'],
  ['downgrade', '--feature', 'transaction.version=0', '--dry-run'],
  ['describe'],
  ['disable', '--feature', 'transaction.version'],
  ['describe'],
  ['upgrade', '--feature', 'transaction.version=2', '--dry-run'],
  ['describe'],
  ['upgrade', '--feature', 'transaction.version=2'],
  ['upgrade', '--feature', 'transaction.version=1'],
  ['downgrade', '--feature', 'transaction.version=1'],
]

async function runSteps(port: number): Promise<Array<{ args: string; status: number | null; out: string; err: string }>> {
  const outcomes = []
  for (const step of STEPS) {
    const r = await features(port, ...step)
    const out = step[0] === 'describe' ? transactionVersionLine(r) : r.stdout.trim()
    outcomes.push({ args: step.join(' '), status: r.status, out, err: r.stderr.trim() })
  }
  return outcomes
}

it('kafka-features.sh upgrade, downgrade, disable and describe answer on ferrolog as on Kafka 4.4; the level survives a restart', { timeout: 600_000 }, async () => {
  // Kafka starts (seconds) while ferrolog answers.
  kafkaDir = mkdtempSync(join(tmpdir(), 'ferrolog-features-kafka-'))
  const kafkaStarted = runKafkaBroker(kafkaDir)
  kafkaStarted.catch(() => undefined)
  const dataDir = tempDir('ferrolog-features-')
  let broker = await startBroker({ dataDir, props: { 'node.id': '1' } })
  let ferrolog: Awaited<ReturnType<typeof runSteps>>
  try {
    ferrolog = await runSteps(broker.port)
    // The last step left transaction.version at 1; a restart keeps it (ferrolog-features.json).
    await broker.stop()
    broker = await startBroker({ dataDir, props: { 'node.id': '1' } })
    expect(transactionVersionLine(await features(broker.port, 'describe'))).toBe('Feature: transaction.version SupportedMinVersion: 0 SupportedMaxVersion: 2 FinalizedVersionLevel: 1')
  } finally {
    await broker.stop()
  }
  const kafka = await runSteps(kafkaBrokerPort(await kafkaStarted))

  // What Kafka 4.4 answers (so that the comparison below cannot pass on two wrong answers alike).
  const invalid = (level: number, feature: string, reason: string) =>
    `The update failed for all features since the following feature had an error: Invalid update version ${level} for feature ${feature}. ${reason}`
  expect(kafka.map((o) => [o.status, o.out])).toEqual([
    [0, 'transaction.version was upgraded to 2.'],
    [0, 'transaction.version was downgraded to 1.'],
    [0, 'Feature: transaction.version SupportedMinVersion: 0 SupportedMaxVersion: 2 FinalizedVersionLevel: 1'],
    [1, `Could not upgrade transaction.version to 3. ${invalid(3, 'transaction.version', 'Local controller 1 only supports versions 0-2')}`],
    [1, `Could not upgrade foo.version to 1. ${invalid(1, 'foo.version', 'Local controller 1 does not support this feature.')}`],
    [
      1,
      [
        `Could not upgrade foo.version to 1. ${invalid(1, 'foo.version', 'Local controller 1 does not support this feature.')}`,
        `Could not upgrade transaction.version to 2. ${invalid(1, 'foo.version', 'Local controller 1 does not support this feature.')}`,
      ].join('\n'),
    ],
    [1, `Could not downgrade transaction.version to 2. ${invalid(2, 'transaction.version', "Can't downgrade to a newer version.")}`],
    [1, `Could not disable foo.version. ${invalid(0, 'foo.version', 'Feature foo.version not found.')}`],
    [0, 'transaction.version can be downgraded to 0.'],
    [0, 'Feature: transaction.version SupportedMinVersion: 0 SupportedMaxVersion: 2 FinalizedVersionLevel: 1'],
    [0, 'transaction.version was disabled.'],
    [0, 'Feature: transaction.version SupportedMinVersion: 0 SupportedMaxVersion: 2 FinalizedVersionLevel: 0'],
    [0, 'transaction.version can be upgraded to 2.'],
    [0, 'Feature: transaction.version SupportedMinVersion: 0 SupportedMaxVersion: 2 FinalizedVersionLevel: 0'],
    [0, 'transaction.version was upgraded to 2.'],
    [
      1,
      `Could not upgrade transaction.version to 1. ${invalid(1, 'transaction.version', "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")}`,
    ],
    [0, 'transaction.version was downgraded to 1.'],
  ])
  expect(ferrolog).toEqual(kafka)
})
