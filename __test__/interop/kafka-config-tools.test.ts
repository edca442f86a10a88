/**
 * Apache Kafka's tools for configs and log directories against ferrolog: kafka-configs --alter
 * (IncrementalAlterConfigs: add, delete, refused values; applied to the live logs and kept over a
 * restart), kafka-log-dirs --describe (DescribeCluster for the broker list, then DescribeLogDirs)
 * and kafka-cluster cluster-id (DescribeCluster).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, kafkaToolOk, runKafkaTool } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

const ok = (tool: string, args: string[]) => kafkaToolOk(broker!.port, tool, args)
const topicConfigs = (name: string) => ok(KafkaTool.CONFIGS, ['--describe', '--entity-type', 'topics', '--entity-name', name])
const value = (i: number) => ({ value: `record-${String(i).padStart(8, '0')}`, timestamp: 1_600_000_000_000 + i })

describe("Kafka's config and log-dir tools", () => {
  it('kafka-configs --alter adds and deletes topic configs, applied to the live logs and kept over a restart', async () => {
    const dataDir = tempDir('ferrolog-broker-')
    broker = await startBroker({ dataDir })
    await broker.createTopic('cfg', 2, { 'retention.bytes': '1000000' })
    const log = broker.logManager.getLog('cfg', 0)!
    for (let i = 0; i < 30; i++) log.append([value(i)])
    expect(log.segments()).toHaveLength(1)

    const altered = await ok(KafkaTool.CONFIGS, ['--alter', '--entity-type', 'topics', '--entity-name', 'cfg', '--add-config', 'segment.bytes=300,retention.ms=86400000'])
    expect(altered).toContain('Completed updating config for topic cfg.')
    expect(broker.topics.get('cfg')!.configs).toEqual({ 'retention.bytes': '1000000', 'segment.bytes': '300', 'retention.ms': '86400000' })
    // Live: the next appends roll at the new segment.bytes, on every partition of the topic.
    for (let i = 30; i < 60; i++) log.append([value(i)])
    expect(log.segments().length).toBeGreaterThan(5)
    expect(broker.logManager.getLog('cfg', 1)!.config.segmentBytes).toBe(300)
    const described = await topicConfigs('cfg')
    expect(described).toContain('segment.bytes=300 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:segment.bytes=300')
    expect(described).toContain('retention.ms=86400000')

    await ok(KafkaTool.CONFIGS, ['--alter', '--entity-type', 'topics', '--entity-name', 'cfg', '--delete-config', 'retention.bytes'])
    expect(await topicConfigs('cfg')).not.toContain('retention.bytes=')
    // Timestamps from 2020: a one-second retention deletes every segment at the next check.
    await ok(KafkaTool.CONFIGS, ['--alter', '--entity-type', 'topics', '--entity-name', 'cfg', '--add-config', 'retention.ms=1000'])
    expect(await log.deleteOldSegments(Date.now())).toBeGreaterThan(5)
    expect(log.logStartOffset()).toBe(60n)

    await broker.stop()
    broker = await startBroker({ dataDir })
    expect(broker.topics.get('cfg')!.configs).toEqual({ 'segment.bytes': '300', 'retention.ms': '1000' })
    expect(broker.logManager.getLog('cfg', 0)!.config).toMatchObject({ segmentBytes: 300, retentionMs: 1000 })
    expect(await topicConfigs('cfg')).toContain('segment.bytes=300')
  }, 180_000)

  it('kafka-configs --alter refuses unknown configs, bad values and read-only broker configs with a clear error, changing nothing', async () => {
    broker = await startBroker()
    await broker.createTopic('strict', 1, { 'retention.ms': '5000' })
    const alter = (...args: string[]) => runKafkaTool(broker!.port, KafkaTool.CONFIGS, ['--alter', ...args])
    const unknown = await alter('--entity-type', 'topics', '--entity-name', 'strict', '--add-config', 'no.such.config=1')
    expect(unknown.stdout + unknown.stderr).toMatch(/InvalidConfigurationException: unknown topic config no.such.config/)
    const bad = await alter('--entity-type', 'topics', '--entity-name', 'strict', '--add-config', 'segment.bytes=-5')
    expect(bad.stdout + bad.stderr).toMatch(/InvalidConfigurationException: segment.bytes must be an integer >= 14/)
    const ghost = await alter('--entity-type', 'topics', '--entity-name', 'ghost', '--add-config', 'retention.ms=1')
    expect(ghost.status).not.toBe(0)
    const brokerConfig = await alter('--entity-type', 'brokers', '--entity-name', '0', '--add-config', 'num.partitions=3')
    expect(brokerConfig.stdout + brokerConfig.stderr).toMatch(/InvalidRequestException: Cannot update these configs dynamically: \[num.partitions\]/)
    expect(broker.topics.get('strict')!.configs).toEqual({ 'retention.ms': '5000' })
    expect(broker.logManager.getLog('strict', 0)!.config.retentionMs).toBe(5000)
  }, 180_000)

  it('kafka-log-dirs --describe lists the data dir with each partition and its size', async () => {
    broker = await startBroker()
    await broker.createTopic('dirs', 2, {})
    const log = broker.logManager.getLog('dirs', 1)!
    for (let i = 0; i < 10; i++) log.append([value(i)])
    const out = await ok(KafkaTool.LOG_DIRS, ['--describe', '--topic-list', 'dirs'])
    expect(out).toContain('Received log directory information from brokers 0')
    const json = JSON.parse(out.split('\n').find((line) => line.startsWith('{'))!)
    const [dir] = json.brokers[0].logDirs
    expect(dir.logDir).toBe(broker.logManager.dataDir)
    expect(dir.error).toBeNull()
    const sizes = Object.fromEntries(dir.partitions.map((p: { partition: string; size: number }) => [p.partition, p.size]))
    expect(sizes).toEqual({ 'dirs-0': 0, 'dirs-1': log.segments()[0].size })
    expect(log.segments()[0].size).toBeGreaterThan(0)
  }, 120_000)

  it('kafka-cluster reads the cluster id and the broker endpoints through DescribeCluster', async () => {
    broker = await startBroker({ props: { 'cluster.id': 'test-cluster-42' } })
    expect(await ok(KafkaTool.CLUSTER, ['cluster-id'])).toContain('Cluster ID: test-cluster-42')
    const endpoints = await ok(KafkaTool.CLUSTER, ['list-endpoints'])
    expect(endpoints).toMatch(new RegExp(`^0\\s+127\\.0\\.0\\.1\\s+${broker.port}\\s`, 'm'))
  }, 120_000)
})
