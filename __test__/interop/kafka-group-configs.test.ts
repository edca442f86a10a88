/**
 * Issue 24 item 5: group configs (ConfigResource type GROUP, 32) with Kafka's kafka-configs
 * --entity-type groups, against ferrolog and against Apache Kafka 4.4, same scenario, same
 * output: every config with Kafka 4.4's defaults and DEFAULT_CONFIG synonyms (group.consumer.*,
 * group.share.*, group.streams.*), overrides shown as DYNAMIC_GROUP_CONFIG, values refused with
 * Kafka's messages (INVALID_CONFIG), a deleted override back to its default, and the overrides
 * still there after the broker restarts.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, runKafkaTool, stopKafkaBroker } from '../helpers/kafka-tools.js'
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

/** The scenario on the broker at `port`; `restart` restarts it on the same data and returns its port. */
async function scenario(port: number, restart: () => Promise<number>): Promise<void> {
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

  const after = await restart()
  expect(lines(await configs(after, '--describe'))).toEqual(kept)
  const all = lines(await configs(after, '--describe', '--all'))
  expect(all).toEqual(DEFAULTS.map((d) => kept.find((k) => k.split('=')[0] === d.split('=')[0]) ?? d))
}

describe('kafka-configs --entity-type groups', () => {
  it('ferrolog: defaults, overrides, refusals and a restart as Kafka has them', async () => {
    const dataDir = tempDir('ferrolog-group-configs-')
    broker = await startBroker({ dataDir })
    await scenario(broker.port, async () => {
      await broker!.stop()
      broker = await startBroker({ dataDir })
      return broker.port
    })
  }, 300_000)

  it('Apache Kafka 4.4: the same', async () => {
    const dir = tempDir('kafka-group-configs-')
    kafkaDir = dir
    const first = kafkaBrokerPort(await runKafkaBroker(dir))
    await scenario(first, async () => {
      stopKafkaBroker(dir)
      return kafkaBrokerPort(await runKafkaBroker(dir, ['--port', String(first)]))
    })
  }, 300_000)
})
