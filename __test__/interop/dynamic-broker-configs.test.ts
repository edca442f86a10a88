/**
 * Dynamic broker configs (KIP-226) with Apache Kafka's kafka-configs tool, against ferrolog and
 * against a real Apache Kafka 4.4 broker with the same outcome: a per-broker log.retention.ms and
 * a cluster-wide log.cleaner.threads are accepted and described with their dynamic sources; a
 * read-only key and a bad value are refused with INVALID_REQUEST. On ferrolog they apply at once
 * (a topic without an override takes the new retention, the cleaner runs two threads,
 * message.max.bytes bounds the next append, max.connections the next connections) and are kept
 * over a restart.
 */
import { connect, type Socket } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { ConfigSource } from '../../ts/server/handlers/describe-configs.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, runKafkaBroker, runKafkaTool, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
const kafkaDir = tempDir('kafka-dynamic-configs-')
let kafkaPort = 0

beforeAll(async () => {
  fetchKafkaJars()
  kafkaPort = kafkaBrokerPort(await runKafkaBroker(kafkaDir))
}, 300_000)
afterAll(() => stopKafkaBroker(kafkaDir))
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

/** The kafka-configs scenario on one broker (node `id`); each step's output. */
async function scenario(port: number, id: string) {
  const configs = async (...args: string[]) => {
    const r = await runKafkaTool(port, KafkaTool.CONFIGS, ['--entity-type', 'brokers', ...args])
    return r.stdout + r.stderr
  }
  return {
    perBroker: await configs('--entity-name', id, '--alter', '--add-config', 'log.retention.ms=1000'),
    clusterWide: await configs('--entity-default', '--alter', '--add-config', 'log.cleaner.threads=2'),
    readOnly: await configs('--entity-name', id, '--alter', '--add-config', 'num.partitions=3'),
    badValue: await configs('--entity-name', id, '--alter', '--add-config', 'log.retention.ms=abc'),
    describeBroker: await configs('--entity-name', id, '--describe'),
    describeDefault: await configs('--entity-default', '--describe'),
  }
}

function expectKafkasOutcome(out: Awaited<ReturnType<typeof scenario>>, id: string) {
  expect(out.perBroker).toContain(`Completed updating config for broker ${id}.`)
  expect(out.clusterWide).toContain('Completed updating default config for brokers in the cluster.')
  expect(out.readOnly).toContain('InvalidRequestException: Cannot update these configs dynamically: [num.partitions]')
  expect(out.badValue).toMatch(/InvalidRequestException: Invalid value abc for configuration log.retention.ms/)
  expect(out.describeBroker).toContain('log.retention.ms=1000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=1000, DEFAULT_CONFIG:')
  expect(out.describeDefault).toContain('log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=2}')
}

describe('dynamic broker configs (KIP-226) with kafka-configs', () => {
  it('are accepted, refused and described as Apache Kafka 4.4 does them', async () => {
    expectKafkasOutcome(await scenario(kafkaPort, '1'), '1')
    broker = await startBroker({ props: { 'log.cleaner.enable': 'true' } })
    expectKafkasOutcome(await scenario(broker.port, '0'), '0')
  }, 300_000)

  it('apply at once on ferrolog and are kept over a restart', async () => {
    const dataDir = tempDir('ferrolog-broker-')
    broker = await startBroker({ dataDir })
    await broker.createTopic('plain', 1, {})
    await broker.createTopic('own', 1, { 'retention.ms': '86400000' })
    expect(broker.logManager.cleaner!.threads).toBe(1)
    const configs = (...args: string[]) => runKafkaTool(broker!.port, KafkaTool.CONFIGS, ['--entity-type', 'brokers', ...args])
    await configs('--entity-name', '0', '--alter', '--add-config', 'log.retention.ms=1000,message.max.bytes=200')
    await configs('--entity-default', '--alter', '--add-config', 'log.cleaner.threads=2')

    // The new default reaches the topic without an override, not the one with its own.
    expect(broker.logManager.getLog('plain', 0)!.config).toMatchObject({ retentionMs: 1000, maxMessageBytes: 200 })
    expect(broker.logManager.getLog('own', 0)!.config.retentionMs).toBe(86_400_000)
    expect(broker.logManager.cleaner!.threads).toBe(2)
    // message.max.bytes bounds the next append.
    expect(() => broker!.logManager.getLog('plain', 0)!.append([{ value: 'x'.repeat(300) }])).toThrow(expect.objectContaining({ code: 'RECORD_TOO_LARGE' }))

    const retention = () => broker!.dynamicConfig!.synonyms('log.retention.ms')
    expect(retention()[0]).toEqual({ name: 'log.retention.ms', value: '1000', source: ConfigSource.DYNAMIC_BROKER_CONFIG })

    await broker.stop()
    broker = await startBroker({ dataDir })
    expect(broker.config.logDefaults).toMatchObject({ retentionMs: 1000, maxMessageBytes: 200 })
    expect(broker.logManager.getLog('plain', 0)!.config.retentionMs).toBe(1000)
    expect(broker.logManager.cleaner!.threads).toBe(2)
    expect(retention()[0].source).toBe(ConfigSource.DYNAMIC_BROKER_CONFIG)

    // max.connections bounds the connections accepted from now on.
    await configs('--entity-default', '--alter', '--add-config', 'max.connections=2')
    const open = () =>
      new Promise<{ socket: Socket; closedAtOnce: boolean }>((resolve) => {
        const socket = connect(broker!.port, '127.0.0.1')
        let closed = false
        socket.on('close', () => (closed = true))
        socket.on('error', () => undefined)
        socket.on('connect', () => setTimeout(() => resolve({ socket, closedAtOnce: closed }), 300))
      })
    const first = await open()
    const second = await open()
    const third = await open()
    expect([first.closedAtOnce, second.closedAtOnce, third.closedAtOnce]).toEqual([false, false, true])
    for (const s of [first, second, third]) s.socket.destroy()
    await new Promise((r) => setTimeout(r, 200))

    // Deleting the dynamic values brings the static ones back at once.
    await configs('--entity-name', '0', '--alter', '--delete-config', 'log.retention.ms,message.max.bytes')
    await configs('--entity-default', '--alter', '--delete-config', 'log.cleaner.threads,max.connections')
    expect(broker.logManager.getLog('plain', 0)!.config).toMatchObject({ retentionMs: 604_800_000, maxMessageBytes: 1_048_588 })
    expect(retention()[0].source).toBe(ConfigSource.DEFAULT_CONFIG)
  }, 300_000)
})
