/**
 * Issue 27 item 1 (KIP-848 in the broker), with Kafka's Java consumer in group.protocol=consumer
 * against ferrolog and against Apache Kafka 4.4, the same scenario and the same outcome
 * (java/ConsumerGroupProtocol.java): two consumers in one group share a 6-partition topic's
 * partitions (3 and 3, by the server-side assignor: the default uniform, or range when the
 * consumers name it), one leaves, the other gets all six; every record is read exactly once
 * (commits after each poll, with the member epoch), and no partition is ever owned by both.
 * kafka-consumer-groups.sh then describes the group (ConsumerGroupDescribe), its offsets and type,
 * and again after the broker restarts on its data dir (the groups' records are replayed).
 */
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { runProcess } from '../helpers/process.js'
import { tempDir } from '../helpers/tmp.js'

const KAFKA = join(__dirname, '../../tools/kafka')
const RECORDS = 600

let broker: Broker | undefined
let kafkaDir: string | undefined
afterEach(async () => {
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

async function twoMembers(port: number, topic: string, group: string, assignor: string): Promise<Record<string, string>> {
  const args = [`-Dlog4j2.configurationFile=${join(KAFKA, 'log4j2-tools.properties')}`, '-cp', `${join(KAFKA, '.jars')}/*`, join(__dirname, 'java/ConsumerGroupProtocol.java')]
  const r = await runProcess('java', [...args, `127.0.0.1:${port}`, topic, '6', group, assignor, String(RECORDS)], '', 240_000)
  const out = Object.fromEntries(
    r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  )
  if (out.error !== undefined) throw new Error(`${out.error}\n${r.stdout}\n${r.stderr.slice(-4000)}`)
  return out
}

/** After a restart of the broker on its data dir, both groups are still consumer groups (KIP-848 records replayed). */
async function groupsAfterRestart(port: number): Promise<void> {
  const list = await kafkaToolOk(port, KafkaTool.CONSUMER_GROUPS, ['--list', '--type'])
  for (const group of ['billing', 'ledger']) expect(list).toMatch(new RegExp(`^${group}\\s+Consumer\\s*$`, 'm'))
  const state = await kafkaToolOk(port, KafkaTool.CONSUMER_GROUPS, ['--describe', '--group', 'billing', '--state'])
  expect(state.trim().split('\n')[1]!.split(/\s+/).slice(3)).toEqual(['uniform', 'Empty', '0'])
}

async function scenario(port: number): Promise<void> {
  for (const [topic, group, assignor] of [
    ['orders', 'billing', '-'],
    ['payments', 'ledger', 'range'],
  ] as const) {
    await kafkaToolOk(port, KafkaTool.TOPICS, ['--create', '--topic', topic, '--partitions', '6', '--replication-factor', '1'])
    const out = await twoMembers(port, topic, group, assignor)
    expect(out).toEqual({
      sharedA: '3',
      sharedB: '3',
      afterLeaveA: '6',
      consumed: String(2 * RECORDS),
      unique: String(2 * RECORDS),
      duplicates: '0',
      overlaps: '0',
    })
    // kafka-consumer-groups.sh reads the Empty group with ConsumerGroupDescribe (the assignor a
    // member would get now: the default, uniform), its committed offsets (no lag) and its type.
    const state = await kafkaToolOk(port, KafkaTool.CONSUMER_GROUPS, ['--describe', '--group', group, '--state'])
    expect(state.trim().split('\n')[1]!.split(/\s+/)).toEqual([group, '127.0.0.1:' + String(port), expect.stringMatching(/^\(\d+\)$/), 'uniform', 'Empty', '0'])
    const offsets = await kafkaToolOk(port, KafkaTool.CONSUMER_GROUPS, ['--describe', '--group', group, '--offsets'])
    const rows = offsets
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/))
    expect(rows.map((r) => [r[0], r[1], r[2], r[5]])).toEqual([0, 1, 2, 3, 4, 5].map((p) => [group, topic, String(p), '0']))
    expect(rows.reduce((n, r) => n + Number(r[3]), 0)).toBe(2 * RECORDS)
    const list = await kafkaToolOk(port, KafkaTool.CONSUMER_GROUPS, ['--list', '--type'])
    expect(list).toMatch(new RegExp(`^${group}\\s+Consumer\\s*$`, 'm'))
  }
}

describe('KIP-848: two Java consumers (group.protocol=consumer) share a topic, one leaves', () => {
  it("ferrolog; its records in __consumer_offsets are read by Kafka's own decoder, and a restart keeps the groups", async () => {
    const dataDir = tempDir('ferrolog-kip848-')
    broker = await startBroker({ dataDir })
    await scenario(broker.port)
    await broker.stop()
    broker = undefined
    // Kafka's DumpLogSegments with its group coordinator's record decoder.
    const dump = await runProcess(
      'java',
      [
        `-Dlog4j2.configurationFile=${join(KAFKA, 'log4j2-tools.properties')}`,
        '-cp',
        `${join(KAFKA, '.jars')}/*`,
        'org.apache.kafka.tools.DumpLogSegments',
        '--deep-iteration',
        '--offsets-decoder',
        '--files',
        // The partitions of both groups (Kafka's Utils.abs(groupId.hashCode()) % 50).
        [...new Set(['billing', 'ledger'].map((g) => partitionFor(g, 50)))].map((p) => join(dataDir, `__consumer_offsets-${p}`, '00000000000000000000.log')).join(','),
      ],
      '',
      120_000,
    )
    expect(dump.status).toBe(0)
    const types = new Set([...dump.stdout.matchAll(/key: \{"type":"(\d+)"/g)].map((m) => m[1]))
    expect([...types].sort()).toEqual(['1', '3', '5', '6', '7', '8'])
    expect(dump.stdout).not.toMatch(/Unknown|Exception|failed/i)
    broker = await startBroker({ dataDir })
    await groupsAfterRestart(broker.port)
  }, 600_000)

  it('Apache Kafka 4.4: the same', async () => {
    kafkaDir = tempDir('kafka-kip848-')
    await scenario(kafkaBrokerPort(await runKafkaBroker(kafkaDir)))
    stopKafkaBroker(kafkaDir)
    await groupsAfterRestart(kafkaBrokerPort(await runKafkaBroker(kafkaDir)))
  }, 600_000)
})
