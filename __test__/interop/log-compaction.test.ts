/**
 * Log compaction through real clients: a compacted topic created by kafkajs's admin
 * (CreateTopics with cleanup.policy and the cleaner's topic configs) and another switched to
 * compaction by Kafka's kafka-configs tool are accepted, described with their sources and the
 * broker's defaults, and refused with INVALID_CONFIG for bad values.
 */
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, kafkaToolOk, runKafkaTool } from '../helpers/kafka-tools.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

const kafka = (port: number) => new Kafka({ clientId: 'compaction-test', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 500 } })

/** A topic's configs as kafkajs's describeConfigs answers them, by name. */
async function describeTopic(admin: ReturnType<Kafka['admin']>, topic: string) {
  const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }] })
  return new Map(resources[0].configEntries.map((e) => [e.configName, e]))
}

describe('compacted topics through kafkajs and kafka-configs', () => {
  it('CreateTopics accepts cleanup.policy=compact and the cleaner configs; DescribeConfigs shows them and the broker defaults', async () => {
    broker = await startBroker({ props: { 'log.cleaner.delete.retention.ms': '3600000', 'log.cleaner.backoff.ms': '250' } })
    const admin = kafka(broker.port).admin()
    await admin.connect()
    try {
      const created = await admin.createTopics({
        topics: [
          {
            topic: 'changelog',
            numPartitions: 2,
            configEntries: [
              { name: 'cleanup.policy', value: 'compact' },
              { name: 'min.cleanable.dirty.ratio', value: '0.01' },
              { name: 'min.compaction.lag.ms', value: '0' },
              { name: 'max.compaction.lag.ms', value: '60000' },
              { name: 'segment.ms', value: '100000' },
            ],
          },
          { topic: 'both', configEntries: [{ name: 'cleanup.policy', value: 'delete,compact' }] },
        ],
      })
      expect(created).toBe(true)
      const configs = await describeTopic(admin, 'changelog')
      expect(configs.get('cleanup.policy')).toMatchObject({ configValue: 'compact', configSource: 1 })
      expect(configs.get('min.cleanable.dirty.ratio')).toMatchObject({ configValue: '0.01', configSource: 1 })
      expect(configs.get('max.compaction.lag.ms')).toMatchObject({ configValue: '60000', configSource: 1 })
      // The broker's own setting (STATIC_BROKER_CONFIG) and Kafka's default (DEFAULT_CONFIG).
      expect(configs.get('delete.retention.ms')).toMatchObject({ configValue: '3600000', configSource: 4 })
      expect(configs.get('min.compaction.lag.ms')).toMatchObject({ configValue: '0', configSource: 1 })
      expect((await describeTopic(admin, 'both')).get('min.cleanable.dirty.ratio')).toMatchObject({ configValue: '0.5', configSource: 5 })

      const log = broker.logManager.getLog('changelog', 1)!
      expect(log.config).toMatchObject({ cleanupPolicy: ['compact'], minCleanableDirtyRatio: 0.01, maxCompactionLagMs: 60_000, deleteRetentionMs: 3_600_000, segmentMs: 100_000 })
      expect(broker.logManager.getLog('both', 0)!.config.cleanupPolicy).toEqual(['delete', 'compact'])
      const brokerConfigs = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.BROKER, name: String(broker.config.nodeId) }] })
      const byName = new Map(brokerConfigs.resources[0].configEntries.map((e) => [e.configName, e.configValue]))
      expect(byName.get('log.cleaner.enable')).toBe('true')
      expect(byName.get('log.cleaner.backoff.ms')).toBe('250')
      expect(byName.get('log.cleanup.policy')).toBe('delete')
    } finally {
      await admin.disconnect()
    }
  }, 60_000)

  it('bad compaction configs are refused with INVALID_CONFIG and create nothing', async () => {
    broker = await startBroker()
    const admin = kafka(broker.port).admin()
    await admin.connect()
    try {
      const bad: Array<[string, string, RegExp]> = [
        ['cleanup.policy', 'shred', /Invalid value shred for configuration cleanup.policy/],
        ['cleanup.policy', 'compact,forever', /Invalid value forever/],
        ['min.cleanable.dirty.ratio', '1.5', /between 0 and 1/],
        ['min.cleanable.dirty.ratio', 'half', /between 0 and 1/],
        ['delete.retention.ms', '-1', /delete.retention.ms must be an integer >= 0/],
        ['min.compaction.lag.ms', '-5', /min.compaction.lag.ms must be an integer >= 0/],
        ['max.compaction.lag.ms', '0', /max.compaction.lag.ms must be an integer >= 1/],
      ]
      for (const [name, value, message] of bad) {
        const error = await admin.createTopics({ topics: [{ topic: 'bad', configEntries: [{ name, value }] }] }).catch((e) => e)
        expect(error.errors?.[0], `${name}=${value}`).toMatchObject({ code: 40, message: 'Configuration is invalid' })
        // The broker's message, as CreateTopics answers it (kafkajs shows its own).
        await expect(broker.createTopic('bad', 1, { [name]: value })).rejects.toThrow(message)
      }
      const conflict = await admin
        .createTopics({ topics: [{ topic: 'bad', configEntries: [{ name: 'min.compaction.lag.ms', value: '10000' }, { name: 'max.compaction.lag.ms', value: '5000' }] }] })
        .catch((e) => e)
      expect(conflict.errors[0]).toMatchObject({ code: 40 })
      await expect(broker.createTopic('bad', 1, { 'min.compaction.lag.ms': '10000', 'max.compaction.lag.ms': '5000' })).rejects.toThrow(
        'conflict topic config setting min.compaction.lag.ms (10000) > max.compaction.lag.ms (5000)',
      )
      expect(broker.topics.get('bad')).toBeUndefined()
    } finally {
      await admin.disconnect()
    }
  }, 60_000)

  it('kafka-configs --alter switches a topic to compaction, applied to its live logs; bad values are refused', async () => {
    broker = await startBroker()
    await broker.createTopic('table', 1, {})
    const alter = (config: string) => runKafkaTool(broker!.port, KafkaTool.CONFIGS, ['--alter', '--entity-type', 'topics', '--entity-name', 'table', '--add-config', config])
    const altered = await kafkaToolOk(broker.port, KafkaTool.CONFIGS, [
      '--alter', '--entity-type', 'topics', '--entity-name', 'table',
      '--add-config', 'cleanup.policy=[compact,delete],min.cleanable.dirty.ratio=0.2,delete.retention.ms=1000,max.compaction.lag.ms=30000',
    ])
    expect(altered).toContain('Completed updating config for topic table.')
    expect(broker.topics.get('table')!.configs).toEqual({ 'cleanup.policy': 'compact,delete', 'min.cleanable.dirty.ratio': '0.2', 'delete.retention.ms': '1000', 'max.compaction.lag.ms': '30000' })
    expect(broker.logManager.getLog('table', 0)!.config).toMatchObject({ cleanupPolicy: ['compact', 'delete'], minCleanableDirtyRatio: 0.2, deleteRetentionMs: 1000, maxCompactionLagMs: 30_000 })
    const described = await kafkaToolOk(broker.port, KafkaTool.CONFIGS, ['--describe', '--entity-type', 'topics', '--entity-name', 'table'])
    expect(described).toContain('cleanup.policy=compact,delete')
    expect(described).toContain('min.cleanable.dirty.ratio=0.2')

    const bad = await alter('min.cleanable.dirty.ratio=2')
    expect(bad.stdout + bad.stderr).toMatch(/InvalidConfigurationException: Invalid value 2 for configuration min.cleanable.dirty.ratio/)
    const conflict = await alter('min.compaction.lag.ms=60000')
    expect(conflict.stdout + conflict.stderr).toMatch(/InvalidConfigurationException: conflict topic config setting min.compaction.lag.ms \(60000\) > max.compaction.lag.ms \(30000\)/)
    expect(broker.topics.get('table')!.configs['min.cleanable.dirty.ratio']).toBe('0.2')
  }, 180_000)
})
