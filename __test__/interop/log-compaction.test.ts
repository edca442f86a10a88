/**
 * Log compaction through real clients: a compacted topic created by kafkajs's admin
 * (CreateTopics with cleanup.policy and the cleaner's topic configs) and another switched to
 * compaction by Kafka's kafka-configs tool are accepted, described with their sources and the
 * broker's defaults, and refused with INVALID_CONFIG for bad values. Then the cleaner at work on
 * both engines: kafkajs produces many values per key into small segments, a consumer reading from
 * the beginning during and after compaction sees every key's latest value, tombstones are served
 * for delete.retention.ms and then gone, and the metrics count the rounds.
 */
import { request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { ConfigResourceTypes, Kafka, logLevel, Partitioners } from 'kafkajs'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import type { BackendName } from '../../ts/storage/backends.js'
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
        .createTopics({
          topics: [
            {
              topic: 'bad',
              configEntries: [
                { name: 'min.compaction.lag.ms', value: '10000' },
                { name: 'max.compaction.lag.ms', value: '5000' },
              ],
            },
          ],
        })
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
      '--alter',
      '--entity-type',
      'topics',
      '--entity-name',
      'table',
      '--add-config',
      'cleanup.policy=[compact,delete],min.cleanable.dirty.ratio=0.2,delete.retention.ms=1000,max.compaction.lag.ms=30000',
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

/** Polls `done` every 50 ms for at most `ms` (a bound, not a timing assertion). */
async function waitFor(done: () => boolean, what: string, ms = 60_000): Promise<void> {
  for (let waited = 0; !done(); waited += 50) {
    if (waited >= ms) throw new Error(`gave up waiting for ${what}`)
    await sleep(50)
  }
}

function getMetrics(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
      let body = ''
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve(body))
    })
      .on('error', reject)
      .end()
  })
}

interface Seen {
  offset: bigint
  key: string
  value: string | null
}

/** Reads partition 0 of `topic` from the beginning with a kafkajs consumer up to `upTo()` - 1 (null: not known yet). */
async function consumeAll(client: Kafka, topic: string, upTo: () => bigint | null, group: string): Promise<Seen[]> {
  const consumer = client.consumer({ groupId: group, maxWaitTimeInMs: 100 })
  const seen: Seen[] = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push({ offset: BigInt(message.offset), key: message.key!.toString(), value: message.value === null ? null : message.value.toString() })
      },
    })
    await waitFor(() => {
      const end = upTo()
      return end !== null && seen.length > 0 && seen[seen.length - 1].offset >= end - 1n
    }, `${group} to read ${topic}`)
  } finally {
    await consumer.disconnect()
  }
  return seen
}

/** The last value of each key in what was read, in offset order (null: a tombstone). */
function latest(seen: Seen[]): Map<string, string | null> {
  const out = new Map<string, string | null>()
  for (const s of seen) out.set(s.key, s.value)
  return out
}

describe.each(['native', 'js'] as BackendName[])('the log cleaner at work, %s engine', (backend) => {
  it('a consumer from the beginning sees each key’s latest value during and after compaction; tombstones stay for delete.retention.ms, then go', async () => {
    broker = await startBroker({
      backend,
      props: { 'log.cleaner.backoff.ms': '50', 'log.cleaner.dedupe.buffer.size': '1048576', 'group.initial.rebalance.delay.ms': '0', 'metrics.listen': '127.0.0.1:0' },
    })
    const topic = 'kv'
    await broker.createTopic(topic, 1, { 'cleanup.policy': 'compact', 'segment.bytes': '2048', 'min.cleanable.dirty.ratio': '0.01', 'delete.retention.ms': '1500' })
    const log = broker.logManager.getLog(topic, 0)!
    const client = kafka(broker.port)
    const producer = client.producer({ createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    const expected = new Map<string, string | null>()
    const send = async (messages: Array<{ key: string; value: string | null }>) => {
      await producer.send({ topic, acks: -1, messages })
      for (const m of messages) expected.set(m.key, m.value)
    }
    try {
      const KEYS = 30
      // A consumer reading from the beginning while the records come and the cleaner runs.
      let producedAll: bigint | null = null
      const during = consumeAll(client, topic, () => producedAll, 'during')
      for (let round = 0; round < 40; round++) {
        await send(Array.from({ length: KEYS }, (_, k) => ({ key: `key-${k}`, value: `value-${k}-${round}` })))
      }
      // Tombstones for five keys, then more records so that they leave the active segment.
      await send(Array.from({ length: 5 }, (_, k) => ({ key: `key-${k}`, value: null })))
      for (let round = 40; round < 45; round++) await send(Array.from({ length: KEYS - 5 }, (_, k) => ({ key: `key-${k + 5}`, value: `value-${k + 5}-${round}` })))
      const produced = log.logEndOffset()
      producedAll = produced
      const cleaner = broker.logManager.cleaner!
      await waitFor(() => cleaner.stats.runs - cleaner.stats.failures > 0 && (cleaner.manager.allCleanerCheckpoints().get(`${topic}-0`) ?? 0n) > 1205n, 'a cleaning round past the tombstones')
      expect(cleaner.stats.failures).toBe(0)
      expect(cleaner.manager.uncleanablePartitionsCount).toBe(0)

      const duringSeen = await during
      expect(latest(duringSeen)).toEqual(expected)

      const after = await consumeAll(client, topic, () => log.logEndOffset(), 'after')
      // Offsets kept, fewer records: the latest per key (the tombstones too, for now).
      expect(after.length).toBeLessThan(Number(produced) / 2)
      expect(after.every((s, i) => i === 0 || s.offset > after[i - 1].offset)).toBe(true)
      expect(latest(after)).toEqual(expected)
      for (let k = 0; k < 5; k++) expect(after.filter((s) => s.key === `key-${k}`)).toEqual([expect.objectContaining({ value: null })])

      // Past delete.retention.ms, a later round (new dirty records) drops the tombstones.
      await sleep(1600)
      const runs = cleaner.stats.runs
      for (let round = 45; round < 60; round++) await send(Array.from({ length: KEYS - 5 }, (_, k) => ({ key: `key-${k + 5}`, value: `value-${k + 5}-${round}` })))
      await waitFor(() => cleaner.stats.runs > runs, 'another cleaning round')
      await waitFor(() => (cleaner.manager.allCleanerCheckpoints().get(`${topic}-0`) ?? 0n) > produced, 'a round past the first ones')
      const final = await consumeAll(client, topic, () => log.logEndOffset(), 'final')
      for (let k = 0; k < 5; k++) expected.delete(`key-${k}`)
      expect(latest(final)).toEqual(expected)
      expect(final.some((s) => s.value === null)).toBe(false)

      const metrics = await getMetrics(broker.metricsPort)
      const runsMetric = Number(/^ferrolog_log_cleaner_runs_total (\d+)$/m.exec(metrics)?.[1])
      expect(runsMetric).toBeGreaterThanOrEqual(2)
      expect(Number(/^ferrolog_log_cleaner_read_bytes_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0)
      expect(metrics).toMatch(/^ferrolog_log_cleaner_uncleanable_partitions 0$/m)
      expect(metrics).toMatch(/^ferrolog_log_cleaner_max_dirty_percent \d+$/m)
      // The internal topics stay with their owners' rewrite: the cleaner never took them.
      expect([...cleaner.manager.allCleanerCheckpoints().keys()].every((k) => !k.startsWith('__'))).toBe(true)
    } finally {
      await producer.disconnect()
    }
  }, 180_000)
})
