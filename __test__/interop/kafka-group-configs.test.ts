/**
 * Issue 24 item 5: group configs (ConfigResource type GROUP, 32) with Kafka's kafka-configs
 * --entity-type groups, against ferrolog and against Apache Kafka 4.4, same scenario, same
 * output: every config with Kafka 4.4's defaults and DEFAULT_CONFIG synonyms (group.consumer.*,
 * group.share.*, group.streams.*), overrides shown as DYNAMIC_GROUP_CONFIG, values refused with
 * Kafka's messages (INVALID_CONFIG), a deleted override back to its default, and the overrides
 * still there after the broker restarts. The restart changes the broker's group.consumer.*
 * settings (Kafka's GroupCoordinatorConfig): the consumer configs' defaults and ranges follow
 * them. A broker whose group.consumer.* settings contradict each other does not start, with
 * Kafka's message.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, runKafkaTool, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
let kafkaDir: string | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

/** What Apache Kafka 4.4 answers `--describe --all` for a group without overrides. */
const DEFAULTS = [
  'consumer.assignment.interval.ms=1000 sensitive=false synonyms={DEFAULT_CONFIG:group.consumer.assignment.interval.ms=1000}',
  'consumer.heartbeat.interval.ms=5000 sensitive=false synonyms={DEFAULT_CONFIG:group.consumer.heartbeat.interval.ms=5000}',
  'consumer.session.timeout.ms=45000 sensitive=false synonyms={DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}',
  'errors.deadletterqueue.copy.record.enable=false sensitive=false synonyms={DEFAULT_CONFIG:errors.deadletterqueue.copy.record.enable=false}',
  'errors.deadletterqueue.topic.name= sensitive=false synonyms={DEFAULT_CONFIG:errors.deadletterqueue.topic.name=}',
  'share.assignment.interval.ms=1000 sensitive=false synonyms={DEFAULT_CONFIG:group.share.assignment.interval.ms=1000}',
  'share.auto.offset.reset=latest sensitive=false synonyms={DEFAULT_CONFIG:share.auto.offset.reset=latest}',
  'share.delivery.count.limit=5 sensitive=false synonyms={DEFAULT_CONFIG:group.share.delivery.count.limit=5}',
  'share.heartbeat.interval.ms=5000 sensitive=false synonyms={DEFAULT_CONFIG:group.share.heartbeat.interval.ms=5000}',
  'share.isolation.level=read_uncommitted sensitive=false synonyms={DEFAULT_CONFIG:share.isolation.level=read_uncommitted}',
  'share.partition.max.record.locks=2000 sensitive=false synonyms={DEFAULT_CONFIG:group.share.partition.max.record.locks=2000}',
  'share.record.lock.duration.ms=30000 sensitive=false synonyms={DEFAULT_CONFIG:group.share.record.lock.duration.ms=30000}',
  'share.renew.acknowledge.enable=true sensitive=false synonyms={DEFAULT_CONFIG:share.renew.acknowledge.enable=true}',
  'share.session.timeout.ms=45000 sensitive=false synonyms={DEFAULT_CONFIG:group.share.session.timeout.ms=45000}',
  'streams.assignment.interval.ms=1000 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.assignment.interval.ms=1000}',
  'streams.assignor.name=sticky sensitive=false synonyms={DEFAULT_CONFIG:group.streams.assignors=sticky}',
  'streams.heartbeat.interval.ms=5000 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.heartbeat.interval.ms=5000}',
  'streams.initial.rebalance.delay.ms=3000 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.initial.rebalance.delay.ms=3000}',
  'streams.num.standby.replicas=0 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.num.standby.replicas=0}',
  'streams.rack.aware.assignment.tags= sensitive=false synonyms={DEFAULT_CONFIG:group.streams.rack.aware.assignment.tags=}',
  'streams.session.timeout.ms=45000 sensitive=false synonyms={DEFAULT_CONFIG:group.streams.session.timeout.ms=45000}',
]

const REFUSED: Array<[string, string]> = [
  ['consumer.session.timeout.ms=1000', 'consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.'],
  ['consumer.heartbeat.interval.ms=50000', 'consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.'],
  ['consumer.session.timeout.ms=abc', 'Invalid value abc for configuration consumer.session.timeout.ms: Not a number of type INT'],
  ['no.such=1', 'Unknown group config name: no.such'],
  ['share.delivery.count.limit=1', 'Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2'],
  ['streams.num.standby.replicas=3', 'streams.num.standby.replicas must be less than or equal to 2'],
  ['errors.deadletterqueue.topic.name=__dlq', "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"],
  [
    'share.auto.offset.reset=sometimes',
    "Invalid value sometimes for configuration share.auto.offset.reset: Invalid value `sometimes` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.",
  ],
]

const lines = (out: string) =>
  out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.includes('sensitive='))

/** The broker settings of the restart: wider ranges, another heartbeat interval. */
const RESTART_SETTINGS = {
  'group.consumer.max.session.timeout.ms': '90000',
  'group.consumer.min.heartbeat.interval.ms': '2000',
  'group.consumer.max.heartbeat.interval.ms': '60000',
  'group.consumer.heartbeat.interval.ms': '3000',
}

/** Refused by the restarted broker, its ranges and defaults in the messages. */
const REFUSED_AFTER_RESTART: Array<[string, string]> = [
  ['consumer.session.timeout.ms=1000', 'consumer.session.timeout.ms must be in the range 45000 to 90000 inclusive.'],
  ['consumer.heartbeat.interval.ms=1000', 'consumer.heartbeat.interval.ms must be in the range 2000 to 60000 inclusive.'],
  // The broker's group.consumer.session.timeout.ms (45000) stands in for the group's.
  ['consumer.heartbeat.interval.ms=50000', 'consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms'],
]

/**
 * The scenario on the broker at `port`; `restart` restarts it on the same data with the given
 * broker settings and returns its port.
 */
async function scenario(port: number, restart: (settings: Record<string, string>) => Promise<number>): Promise<void> {
  const configs = (p: number, ...args: string[]) => kafkaToolOk(p, KafkaTool.CONFIGS, ['--entity-type', 'groups', '--entity-name', 'orders', ...args])
  expect(lines(await configs(port, '--describe', '--all'))).toEqual(DEFAULTS)

  const altered = await configs(port, '--alter', '--add-config', 'consumer.session.timeout.ms=50000,share.auto.offset.reset=earliest,streams.rack.aware.assignment.tags=[zone,rack]')
  expect(altered).toContain('Completed updating config for group orders.')
  const dynamic = [
    'consumer.session.timeout.ms=50000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:consumer.session.timeout.ms=50000, DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}',
    'share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest, DEFAULT_CONFIG:share.auto.offset.reset=latest}',
    'streams.rack.aware.assignment.tags=zone,rack sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:streams.rack.aware.assignment.tags=zone,rack, DEFAULT_CONFIG:group.streams.rack.aware.assignment.tags=}',
  ]
  expect(lines(await configs(port, '--describe'))).toEqual(dynamic)

  for (const [config, message] of REFUSED) {
    const r = await runKafkaTool(port, KafkaTool.CONFIGS, ['--entity-type', 'groups', '--entity-name', 'orders', '--alter', '--add-config', config])
    expect(r.stdout + r.stderr).toContain(`Caused by: org.apache.kafka.common.errors.InvalidConfigurationException: ${message}`)
  }
  // Nothing refused was kept.
  expect(lines(await configs(port, '--describe'))).toEqual(dynamic)

  await configs(port, '--alter', '--delete-config', 'consumer.session.timeout.ms')
  const kept = dynamic.slice(1)
  expect(lines(await configs(port, '--describe'))).toEqual(kept)

  const after = await restart(RESTART_SETTINGS)
  expect(lines(await configs(after, '--describe'))).toEqual(kept)
  const all = lines(await configs(after, '--describe', '--all'))
  const heartbeat =
    'consumer.heartbeat.interval.ms=3000 sensitive=false synonyms={STATIC_BROKER_CONFIG:group.consumer.heartbeat.interval.ms=3000, DEFAULT_CONFIG:group.consumer.heartbeat.interval.ms=5000}'
  expect(all).toEqual(DEFAULTS.map((d) => (d.startsWith('consumer.heartbeat.interval.ms=') ? heartbeat : (kept.find((k) => k.split('=')[0] === d.split('=')[0]) ?? d))))

  for (const [config, message] of REFUSED_AFTER_RESTART) {
    const r = await runKafkaTool(after, KafkaTool.CONFIGS, ['--entity-type', 'groups', '--entity-name', 'orders', '--alter', '--add-config', config])
    expect(r.stdout + r.stderr).toContain(`Caused by: org.apache.kafka.common.errors.InvalidConfigurationException: ${message}`)
  }
  // Refused before the restart, within the wider ranges now.
  await configs(after, '--alter', '--add-config', 'consumer.session.timeout.ms=80000,consumer.heartbeat.interval.ms=40000')
  expect(lines(await configs(after, '--describe'))).toEqual([
    'consumer.heartbeat.interval.ms=40000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:consumer.heartbeat.interval.ms=40000, STATIC_BROKER_CONFIG:group.consumer.heartbeat.interval.ms=3000, DEFAULT_CONFIG:group.consumer.heartbeat.interval.ms=5000}',
    'consumer.session.timeout.ms=80000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:consumer.session.timeout.ms=80000, DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}',
    ...kept,
  ])
}

/** group.consumer.* settings a broker refuses at start, each with Kafka's message (GroupCoordinatorConfig). */
const REFUSED_AT_START: Array<[Record<string, string>, string]> = [
  [{ 'group.consumer.min.session.timeout.ms': '50000' }, 'group.consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms'],
  [{ 'group.consumer.max.heartbeat.interval.ms': '4000' }, 'group.consumer.max.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms'],
  [{ 'group.consumer.heartbeat.interval.ms': '20000' }, 'group.consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms'],
  [{ 'group.consumer.session.timeout.ms': '70000' }, 'group.consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms'],
  [
    { 'group.consumer.min.session.timeout.ms': '1000', 'group.consumer.session.timeout.ms': '10000', 'group.consumer.heartbeat.interval.ms': '10000' },
    'group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms',
  ],
]

describe('kafka-configs --entity-type groups', () => {
  it('ferrolog: defaults, overrides, refusals and a restart as Kafka has them', async () => {
    const dataDir = tempDir('ferrolog-group-configs-')
    broker = await startBroker({ dataDir })
    await scenario(broker.port, async (props) => {
      await broker!.stop()
      broker = await startBroker({ dataDir, props })
      return broker.port
    })
  }, 300_000)

  it('Apache Kafka 4.4: the same', async () => {
    const dir = tempDir('kafka-group-configs-')
    kafkaDir = dir
    const first = kafkaBrokerPort(await runKafkaBroker(dir))
    await scenario(first, async (settings) => {
      stopKafkaBroker(dir)
      const sets = Object.entries(settings).flatMap(([k, v]) => ['--set', `${k}=${v}`])
      return kafkaBrokerPort(await runKafkaBroker(dir, ['--port', String(first), ...sets]))
    })
  }, 300_000)
})

describe('a broker with contradicting group.consumer.* settings', () => {
  it("ferrolog: `ferrolog broker` does not start, with Kafka's message", async () => {
    const CLI = join(__dirname, '../../dist/ts/cli/main.js')
    for (const [settings, message] of REFUSED_AT_START) {
      const dir = tempDir('ferrolog-group-bounds-')
      const file = join(dir, 'server.properties')
      writeFileSync(
        file,
        Object.entries(settings)
          .map(([k, v]) => `${k}=${v}\n`)
          .join(''),
      )
      const r = await runProcess(process.execPath, [CLI, 'broker', '--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0', '--config', file], '', 20_000)
      expect(r.status, message).toBe(1)
      expect(r.stderr).toContain(message)
    }
  }, 120_000)

  it('Apache Kafka 4.4: does not start either, with the same message', async () => {
    for (const [settings, message] of REFUSED_AT_START) {
      const dir = tempDir('kafka-group-bounds-')
      const sets = Object.entries(settings).flatMap(([k, v]) => ['--set', `${k}=${v}`])
      await expect(runKafkaBroker(dir, sets)).rejects.toThrow(`java.lang.IllegalArgumentException: ${message}`)
    }
  }, 120_000)
})
