/**
 * Issue 27 item 1: a live classic group upgraded member by member to the consumer protocol
 * (KIP-848) and downgraded back, with Kafka's Java consumers, against ferrolog and against Apache
 * Kafka 4.4, the same scenario with the same outcome (java/GroupProtocolMigration.java): three
 * classic members; each closed in turn and replaced by a group.protocol=consumer member (the first
 * one's ConsumerGroupHeartbeat converts the live classic group, its classic members going on with
 * JoinGroup/SyncGroup/Heartbeat in the consumer group); then two classic members join, and the
 * consumer members leave one by one until the last one's leaving downgrades the group. A producer
 * writes all along: every record is read, and no partition is ever assigned to a member while
 * another still owns it. At each step Admin's describeConsumerGroups (ConsumerGroupDescribe, or
 * DescribeGroups for a classic group) and listGroups report the same type, state and members'
 * protocols on both brokers.
 *
 * On ferrolog, Kafka's DumpLogSegments reads the records the conversions wrote (the consumer
 * group's, its classic members' with their ClassicMemberMetadata, then their tombstones); after a
 * restart of each broker the group, Empty, is a classic group.
 *
 * With group.consumer.migration.policy=disabled, a consumer-protocol member cannot join the live
 * classic group, nor a classic member a live consumer group: both brokers refuse them with the
 * same errors (GROUP_ID_NOT_FOUND with Kafka's message, INCONSISTENT_GROUP_PROTOCOL).
 */
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { startBroker } from '../helpers/broker.js'
import { KafkaTool, fetchKafkaJars, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, runKafkaClass, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'
import { runJava } from '../helpers/java.js'

let broker: Broker | undefined
let kafkaDir: string | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

async function migration(port: number, mode: 'migrate' | 'disabled'): Promise<string[]> {
  await kafkaToolOk(port, KafkaTool.TOPICS, ['--create', '--topic', `events-${mode}`, '--partitions', '6', '--replication-factor', '1'])
  const r = await runJava(join(__dirname, 'java/GroupProtocolMigration.java'), [`127.0.0.1:${port}`, `events-${mode}`, '6', `migrating-${mode}`, mode], { timeoutMs: 540_000 })
  const lines = r.stdout.trim().split('\n')
  const error = lines.find((l) => l.startsWith('error='))
  if (error !== undefined) throw new Error(`${error}\n${r.stdout}\n${r.stderr.slice(-4000)}`)
  return lines
}

/** After a restart the downgraded group, Empty, is a classic group. */
async function typeAfterRestart(port: number): Promise<void> {
  expect(await kafkaToolOk(port, KafkaTool.CONSUMER_GROUPS, ['--list', '--type'])).toMatch(/^migrating-migrate\s+Classic\s*$/m)
}

const MIGRATED = [
  'step=classic type=Classic listed=Classic state=Stable members=3c+0k',
  'step=closed-C1 type=Classic listed=Classic state=Stable members=2c+0k',
  'step=started-K1 type=Consumer listed=Consumer state=Stable members=2c+1k',
  'step=closed-C2 type=Consumer listed=Consumer state=Stable members=1c+1k',
  'step=started-K2 type=Consumer listed=Consumer state=Stable members=1c+2k',
  'step=closed-C3 type=Consumer listed=Consumer state=Stable members=0c+2k',
  'step=started-K3 type=Consumer listed=Consumer state=Stable members=0c+3k',
  'step=started-C4 type=Consumer listed=Consumer state=Stable members=1c+3k',
  'step=started-C5 type=Consumer listed=Consumer state=Stable members=2c+3k',
  'step=closed-K1 type=Consumer listed=Consumer state=Stable members=2c+2k',
  'step=closed-K2 type=Consumer listed=Consumer state=Stable members=2c+1k',
  'step=closed-K3 type=Classic listed=Classic state=Stable members=2c+0k',
  'produced=some',
  'missing=0',
  'overlaps=0',
]

const REFUSED = [
  'step=classic type=Classic listed=Classic state=Stable members=1c+0k',
  'refused=GroupIdNotFoundException: Cannot upgrade classic group migrating-disabled to consumer group because online upgrade is disabled.',
  'step=still-classic type=Classic listed=Classic state=Stable members=1c+0k',
  'step=consumer type=Consumer listed=Consumer state=Stable members=0c+1k',
  "refused-classic=InconsistentGroupProtocolException: The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list.",
  'step=still-consumer type=Consumer listed=Consumer state=Stable members=0c+1k',
  'produced=some',
  'missing=0',
  'overlaps=0',
]

describe('a live classic group upgraded member by member to the consumer protocol, and back', () => {
  it("ferrolog; the conversions' records in __consumer_offsets are read by Kafka's own decoder; after a restart the group is classic", async () => {
    const dataDir = tempDir('ferrolog-migration-')
    broker = await startBroker({ dataDir })
    expect(await migration(broker.port, 'migrate')).toEqual(MIGRATED)
    await broker.stop()
    broker = undefined
    const dump = await runKafkaClass(
      'org.apache.kafka.tools.DumpLogSegments',
      ['--deep-iteration', '--offsets-decoder', '--files', join(dataDir, `__consumer_offsets-${partitionFor('migrating-migrate', 50)}`, '00000000000000000000.log')],
      '',
      120_000,
    )
    expect(dump.status).toBe(0)
    expect(dump.stdout).not.toMatch(/Unknown|Exception|failed/i)
    // The classic group's records (GroupMetadata, type 2: its generations, its tombstone at the
    // upgrade, the group again at the downgrade), the consumer group's (written at the upgrade,
    // tombstoned at the downgrade), its classic members' with their session timeout and JoinGroup protocols.
    const types = new Set([...dump.stdout.matchAll(/key: \{"type":"(\d+)"/g)].map((m) => m[1]))
    expect([...types].sort()).toEqual(['1', '2', '3', '5', '6', '7', '8'])
    expect(dump.stdout).toMatch(/"classicMemberMetadata":\{"sessionTimeoutMs":10000,"supportedProtocols":\[\{"name":"range"/)
    broker = await startBroker({ dataDir })
    await typeAfterRestart(broker.port)
  }, 600_000)

  it('Apache Kafka 4.4: the same', async () => {
    kafkaDir = tempDir('kafka-migration-')
    expect(await migration(kafkaBrokerPort(await runKafkaBroker(kafkaDir)), 'migrate')).toEqual(MIGRATED)
    stopKafkaBroker(kafkaDir)
    await typeAfterRestart(kafkaBrokerPort(await runKafkaBroker(kafkaDir)))
  }, 600_000)

  it('ferrolog with group.consumer.migration.policy=disabled: the consumer-protocol member is refused', async () => {
    broker = await startBroker({ props: { 'group.consumer.migration.policy': 'disabled' } })
    expect(await migration(broker.port, 'disabled')).toEqual(REFUSED)
  }, 600_000)

  it('Apache Kafka 4.4 with group.consumer.migration.policy=disabled: the same', async () => {
    kafkaDir = tempDir('kafka-migration-disabled-')
    expect(await migration(kafkaBrokerPort(await runKafkaBroker(kafkaDir, ['--set', 'group.consumer.migration.policy=disabled'])), 'disabled')).toEqual(REFUSED)
  }, 600_000)
})
