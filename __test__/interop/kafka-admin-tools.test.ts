/**
 * Apache Kafka's own tools (4.4, from tools/kafka/.jars, see fetch-jars.sh) against a ferrolog
 * broker started by the test: kafka-topics (create, describe, alter partitions, delete),
 * kafka-configs (describe topic and broker), the console producer with idempotence (the Java
 * producer's default: InitProducerId, sequences) and kafka-delete-records.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, kafkaToolOk } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

let broker: Broker | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
})

const ok = (mainClass: string, args: string[], input = '') => kafkaToolOk(broker!.port, mainClass, args, input)
const { TOPICS, CONFIGS } = KafkaTool

beforeAll(() => fetchKafkaJars(), 300_000)

describe("Kafka's admin tools", () => {
  it('kafka-topics creates, describes, alters and deletes topics', async () => {
    broker = await startBroker()
    expect(await ok(TOPICS, ['--create', '--topic', 'jt', '--partitions', '2', '--config', 'segment.bytes=1048576'])).toContain('Created topic jt.')
    const described = await ok(TOPICS, ['--describe', '--topic', 'jt'])
    expect(described).toMatch(/Topic: jt\tTopicId: \S+\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: segment.bytes=1048576/)
    await ok(TOPICS, ['--alter', '--topic', 'jt', '--partitions', '4'])
    expect(broker.topics.get('jt')!.partitions).toBe(4)
    await ok(TOPICS, ['--delete', '--topic', 'jt'])
    expect(broker.topics.get('jt')).toBeUndefined()
  }, 120_000)

  it('kafka-configs describes topic and broker configs with their sources', async () => {
    broker = await startBroker({ props: { 'log.retention.ms': '3600000' } })
    await broker.createTopic('jc', 1, { 'retention.bytes': '1000000' })
    const topic = await ok(CONFIGS, ['--describe', '--entity-type', 'topics', '--entity-name', 'jc', '--all'])
    expect(topic).toContain('retention.bytes=1000000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.bytes=1000000, DEFAULT_CONFIG:log.retention.bytes=-1}')
    expect(topic).toContain('retention.ms=3600000 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.retention.ms=3600000, DEFAULT_CONFIG:log.retention.ms=604800000}')
    const brokerConfigs = await ok(CONFIGS, ['--describe', '--entity-type', 'brokers', '--entity-name', '0', '--all'])
    expect(brokerConfigs).toContain('log.retention.ms=3600000')
  }, 120_000)

  it('the idempotent console producer appends each record once; kafka-delete-records moves the low watermark', async () => {
    broker = await startBroker()
    await broker.createTopic('jp', 1, {})
    const lines = Array.from({ length: 50 }, (_, i) => `line-${i}`)
    await ok('org.apache.kafka.tools.ConsoleProducer', ['--topic', 'jp', '--command-property', 'enable.idempotence=true', '--command-property', 'acks=all'], lines.join('\n') + '\n')
    const log = broker.logManager.getLog('jp', 0)!
    expect(log.readRecords(0n).map((r) => r.value!.toString())).toEqual(lines)
    expect(log.readBatches(0n).every((b) => b.producerId >= 0n && b.baseSequence >= 0)).toBe(true)

    const file = join(tempDir(), 'offsets.json')
    writeFileSync(file, JSON.stringify({ version: 1, partitions: [{ topic: 'jp', partition: 0, offset: 20 }] }))
    expect(await ok('org.apache.kafka.tools.DeleteRecordsCommand', ['--offset-json-file', file])).toContain('low_watermark: 20')
    expect(log.logStartOffset()).toBe(20n)
  }, 120_000)

  it('the Java consumer in a group reads everything once over fetch sessions and resumes from its commit', async () => {
    broker = await startBroker({ props: { 'group.initial.rebalance.delay.ms': '0' } })
    const first = Array.from({ length: 100 }, (_, i) => `first-${i}`)
    const second = Array.from({ length: 50 }, (_, i) => `second-${i}`)
    const produce = (lines: string[]) => ok('org.apache.kafka.tools.ConsoleProducer', ['--topic', 'jc'], lines.join('\n') + '\n')
    const consume = (max: number) =>
      ok('org.apache.kafka.tools.consumer.ConsoleConsumer', ['--topic', 'jc', '--group', 'java-group', '--from-beginning', '--max-messages', String(max), '--timeout-ms', '20000'])
    await produce(first)
    expect((await consume(100)).trim().split('\n')).toEqual(first)
    await produce(second)
    // The same group resumes after what it committed on close: only the new records.
    expect((await consume(50)).trim().split('\n')).toEqual(second)
    // The Java 4.4 consumer fetches with sessions (v17), one per run (closed when it stops).
    expect(broker.fetchManager.cache.metrics.sessionsCreated).toBeGreaterThanOrEqual(2)
  }, 120_000)
})
