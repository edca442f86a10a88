/**
 * Issue 27 item 1 (KIP-848 in the broker), with Kafka's Java consumer in group.protocol=consumer
 * against ferrolog and against Apache Kafka 4.4, the same scenario and the same outcome
 * (java/ConsumerGroupProtocol.java): two consumers in one group share a 6-partition topic's
 * partitions (3 and 3, by the server-side assignor: the default uniform, or range when the
 * consumers name it), one leaves, the other gets all six; every record is read exactly once
 * (commits after each poll, with the member epoch), and no partition is ever owned by both.
 * kafka-consumer-groups.sh then describes the group (ConsumerGroupDescribe), its offsets and type,
 * and again after the broker restarts on its data dir (the groups' records are replayed).
 *
 * Then a live consumer group (two of ferrolog's Consumers with group.protocol=consumer) next to a
 * live classic group: `--describe --members --verbose`, `--describe --state [--verbose]` and
 * `--list --state/--type` print the same on both brokers (member ids and the coordinator aside);
 * DescribeGroups answers the classic group with its members' ConsumerProtocol subscription and
 * assignment and the consumer group as "not a classic group" (v6) or Dead (v5), as Kafka 4.4; and
 * ListGroups v5 filters both kinds by type and state.
 */
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { NetworkClient } from '../../ts/client/network-client.js'
import { describeGroupsCodec } from '../../ts/protocol/apis/describe-groups.js'
import { listGroupsCodec } from '../../ts/protocol/apis/list-groups.js'
import type { Broker } from '../../ts/server/broker.js'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { describeConsumerGroup, until } from '../client/group-protocol-scenarios.js'
import { startBroker } from '../helpers/broker.js'
import { KafkaTool, fetchKafkaJars, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, runKafkaClass, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'
import { runJava } from '../helpers/java.js'

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
  const r = await runJava(join(__dirname, 'java/ConsumerGroupProtocol.java'), [`127.0.0.1:${port}`, topic, '6', group, assignor, String(RECORDS)], { timeoutMs: 240_000 })
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

/** A tool's output as rows of whitespace-separated cells (its header first). */
const table = (out: string) =>
  out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))

/**
 * The consumer group `dashboard` (members dash-a and dash-b, 3 partitions of `clicks` each, the
 * group Stable) and the classic group `archiver` (member arch, both partitions of `archive`), live
 * while the tools and the group APIs look at them.
 */
async function liveGroups(port: number): Promise<void> {
  const bootstrap = `127.0.0.1:${port}`
  await kafkaToolOk(port, KafkaTool.TOPICS, ['--create', '--topic', 'clicks', '--partitions', '6', '--replication-factor', '1'])
  await kafkaToolOk(port, KafkaTool.TOPICS, ['--create', '--topic', 'archive', '--partitions', '2', '--replication-factor', '1'])
  const stops: Array<() => Promise<void>> = []
  const member = (clientId: string, groupId: string, topic: string, protocol: 'consumer' | 'classic') => {
    const c = new Consumer({ bootstrapServers: bootstrap, groupId, 'client.id': clientId, 'auto.offset.reset': 'earliest', 'group.protocol': protocol })
    c.subscribe([topic])
    let stopped = false
    const polling = (async () => {
      while (!stopped) await c.poll(100)
    })()
    stops.push(async () => {
      stopped = true
      await polling
      await c.close()
    })
    return c
  }
  const client = new NetworkClient({ bootstrapServers: bootstrap })
  try {
    const a = member('dash-a', 'dashboard', 'clicks', 'consumer')
    await until(() => a.assignment().length === 6, 'dash-a to hold all of clicks')
    const b = member('dash-b', 'dashboard', 'clicks', 'consumer')
    const arch = member('arch', 'archiver', 'archive', 'classic')
    await until(() => a.assignment().length === 3 && b.assignment().length === 3 && arch.assignment().length === 2, 'the partitions shared', 90_000)
    for (let stable = false; !stable;) {
      const d = await describeConsumerGroup(bootstrap, 'dashboard')
      stable = d.groupState === 'Stable' && d.members.every((m) => JSON.stringify(m.assignment) === JSON.stringify(m.targetAssignment))
      if (!stable) await new Promise((resolve) => setTimeout(resolve, 200))
    }

    const groups = (...args: string[]) => kafkaToolOk(port, KafkaTool.CONSUMER_GROUPS, args)
    const coordinator = (row: string[]) => [row[0], row[1]!.replace(/:\d+$/, ':PORT'), row[2]!.replace(/\d+/, 'ID'), ...row.slice(3)]
    // A new group is at epoch 1; dash-a joined at 2, dash-b at 3 (Kafka 4.4's ModernGroup).
    const epoch = '3'
    const state = table(await groups('--describe', '--group', 'dashboard', '--state', '--verbose'))
    expect(state[0]).toEqual(['GROUP', 'COORDINATOR', '(ID)', 'ASSIGNMENT-STRATEGY', 'STATE', 'GROUP-EPOCH', 'TARGET-ASSIGNMENT-EPOCH', '#MEMBERS'])
    expect(coordinator(state[1]!)).toEqual(['dashboard', '127.0.0.1:PORT', '(ID)', 'uniform', 'Stable', epoch, epoch, '2'])
    const brief = table(await groups('--describe', '--group', 'dashboard', '--state'))
    expect(brief[0]).toEqual(['GROUP', 'COORDINATOR', '(ID)', 'ASSIGNMENT-STRATEGY', 'STATE', '#MEMBERS'])
    expect(coordinator(brief[1]!)).toEqual(['dashboard', '127.0.0.1:PORT', '(ID)', 'uniform', 'Stable', '2'])

    const members = table(await groups('--describe', '--group', 'dashboard', '--members', '--verbose'))
    expect(members[0]).toEqual(['GROUP', 'CONSUMER-ID', 'HOST', 'CLIENT-ID', '#PARTITIONS', 'CURRENT-EPOCH', 'CURRENT-ASSIGNMENT', 'TARGET-EPOCH', 'TARGET-ASSIGNMENT'])
    const rows = members.slice(1).sort((x, y) => x[3]!.localeCompare(y[3]!))
    expect(rows.map((r) => r[1]!)).toEqual([a, b].map((c) => (c as unknown as { coordinator: { membershipManager: { memberId: string } } }).coordinator.membershipManager.memberId))
    expect(rows.map((r) => [r[0], r[2], ...r.slice(3)])).toEqual([
      ['dashboard', '/127.0.0.1', 'dash-a', '3', epoch, 'clicks:0,1,2', epoch, 'clicks:0,1,2'],
      ['dashboard', '/127.0.0.1', 'dash-b', '3', epoch, 'clicks:3,4,5', epoch, 'clicks:3,4,5'],
    ])
    const classic = table(await groups('--describe', '--group', 'archiver', '--members', '--verbose'))
    expect(classic.slice(1).map((r) => [r[0], r[2], ...r.slice(3)])).toEqual([['archiver', '/127.0.0.1', 'arch', '2', '-', 'archive:0,1', '-', '-']])

    // --list filters with ListGroups v5 (the groups of the earlier scenario are Empty consumer
    // groups); the tool prints them in the brokers' order, sorted here.
    const list = async (...args: string[]) => {
      const [header, ...rest] = table(await groups('--list', ...args))
      return [header, ...rest.sort((x, y) => x[0]!.localeCompare(y[0]!))]
    }
    expect(await list('--state', 'Stable')).toEqual([
      ['GROUP', 'STATE'],
      ['archiver', 'Stable'],
      ['dashboard', 'Stable'],
    ])
    expect(await list('--type', 'consumer', '--state', 'Empty')).toEqual([
      ['GROUP', 'TYPE', 'STATE'],
      ['billing', 'Consumer', 'Empty'],
      ['ledger', 'Consumer', 'Empty'],
    ])
    expect(await list('--type', 'classic')).toEqual([
      ['GROUP', 'TYPE'],
      ['archiver', 'Classic'],
    ])

    const listed = async (statesFilter: string[], typesFilter: string[]) =>
      (await client.send(listGroupsCodec, 5, { statesFilter, typesFilter })).groups.map((g) => [g.groupId, g.protocolType, g.groupState, g.groupType]).sort()
    expect(await listed(['stable'], [])).toEqual([
      ['archiver', 'consumer', 'Stable', 'classic'],
      ['dashboard', 'consumer', 'Stable', 'consumer'],
    ])
    expect(await listed([], ['Consumer'])).toEqual([
      ['billing', 'consumer', 'Empty', 'consumer'],
      ['dashboard', 'consumer', 'Stable', 'consumer'],
      ['ledger', 'consumer', 'Empty', 'consumer'],
    ])
    expect(await listed(['Stable'], ['classic'])).toEqual([['archiver', 'consumer', 'Stable', 'classic']])
    expect(await listed(['Empty'], ['classic'])).toEqual([])
    expect(await listed([], ['share'])).toEqual([])

    // DescribeGroups: the classic group with its members' ConsumerProtocol subscription and
    // assignment; the consumer group only through ConsumerGroupDescribe, as Kafka 4.4.
    for (const version of [5, 6]) {
      const described = await client.send(describeGroupsCodec, version, { groups: ['dashboard', 'archiver'], includeAuthorizedOperations: false })
      const [dashboard, archiver] = described.groups
      expect(dashboard).toMatchObject({
        errorCode: version >= 6 ? 69 : 0,
        errorMessage: version >= 6 ? 'Group dashboard is not a classic group.' : null,
        groupState: 'Dead',
        protocolType: '',
        protocolData: '',
        members: [],
      })
      expect(archiver).toMatchObject({ errorCode: 0, groupState: 'Stable', protocolType: 'consumer', protocolData: 'range' })
      expect(archiver!.members.map((m) => [m.clientId, m.clientHost, m.groupInstanceId, m.memberMetadata.toString('hex'), m.memberAssignment.toString('hex')])).toEqual([
        // Subscription v3 [archive], no user data, no owned partitions, generation -1, no rack;
        // Assignment v3 archive [0, 1], no user data.
        ['arch', '/127.0.0.1', null, '000300000001000761726368697665ffffffff00000000ffffffffffff', '000300000001000761726368697665000000020000000000000001ffffffff'],
      ])
      expect(archiver!.members[0]!.memberId).toMatch(/^arch-/)
    }
  } finally {
    await client.close()
    for (const stop of stops) await stop()
  }
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
  await liveGroups(port)
}

describe('KIP-848: two Java consumers (group.protocol=consumer) share a topic, one leaves', () => {
  it("ferrolog; its records in __consumer_offsets are read by Kafka's own decoder, and a restart keeps the groups", async () => {
    const dataDir = tempDir('ferrolog-kip848-')
    broker = await startBroker({ dataDir })
    await scenario(broker.port)
    await broker.stop()
    broker = undefined
    // Kafka's DumpLogSegments with its group coordinator's record decoder.
    const dump = await runKafkaClass(
      'org.apache.kafka.tools.DumpLogSegments',
      [
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
