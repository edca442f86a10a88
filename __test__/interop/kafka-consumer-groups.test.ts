/**
 * Apache Kafka's own kafka-consumer-groups (ConsumerGroupCommand, kafka-tools 4.4 from
 * tools/kafka/.jars) against a ferrolog broker, with a real consumer group (kafkajs) that
 * commits: --list, --describe (offsets and lag, --members, --state), --reset-offsets --execute
 * (to-earliest, to-offset, shift-by, to-datetime, to-latest; --topic and --all-topics),
 * --delete-offsets and --delete, refused while the group is live, and all of it still true
 * after the broker restarts. The tool's 4.x admin client first asks for ConsumerGroupDescribe,
 * which the broker does not serve: it falls back on DescribeGroups.
 *
 * The tool exits 0 even when it reports an error, so its text is what is checked.
 */
import { Kafka, logLevel, Partitioners, type Admin, type Consumer, type Producer } from 'kafkajs'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { fetchKafkaJars, KafkaTool, runKafkaTool } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'cg-topic'
const GROUP = 'cg-group'
const CLIENT_ID = 'cg-client'
const PROPS = { 'group.initial.rebalance.delay.ms': '0' }

let broker: Broker | undefined
const clients: Array<Producer | Consumer | Admin> = []

afterEach(async () => {
  for (const client of clients.splice(0)) await client.disconnect().catch(() => undefined)
  await broker?.stop()
  broker = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

/** Runs kafka-consumer-groups with these arguments; its stdout and stderr together. */
async function tool(...args: string[]): Promise<string> {
  const r = await runKafkaTool(broker!.port, KafkaTool.CONSUMER_GROUPS, args)
  if (r.status !== 0) throw new Error(`kafka-consumer-groups ${args.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`)
  return r.stdout + r.stderr
}

/** The rows of a table the tool prints, as objects keyed by its header's column names. */
function table(text: string, firstColumn: string): Array<Record<string, string>> {
  const lines = text.split('\n').map((l) => l.trim())
  const at = lines.findIndex((l) => l.startsWith(`${firstColumn} `))
  if (at < 0) throw new Error(`no ${firstColumn} table in:\n${text}`)
  const header = lines[at].split(/\s+/)
  const rows: Array<Record<string, string>> = []
  for (const line of lines.slice(at + 1)) {
    if (line === '') break
    const cells = line.split(/\s+/)
    if (cells.length !== header.length) break
    rows.push(Object.fromEntries(header.map((h, i) => [h, cells[i]])))
  }
  return rows
}

/** --describe's offsets, per partition: current offset, log end offset, lag. */
async function describeOffsets(): Promise<Record<string, [string, string, string]>> {
  const rows = table(await tool('--describe', '--group', GROUP), 'GROUP')
  return Object.fromEntries(rows.map((r) => [r.PARTITION, [r['CURRENT-OFFSET'], r['LOG-END-OFFSET'], r.LAG]]))
}

/** --reset-offsets --execute: the tool's NEW-OFFSET per partition. */
async function reset(...args: string[]): Promise<Record<string, string>> {
  const rows = table(await tool('--reset-offsets', '--group', GROUP, '--execute', ...args), 'GROUP')
  return Object.fromEntries(rows.map((r) => [r.PARTITION, r['NEW-OFFSET']]))
}

function kafka(): Kafka {
  return new Kafka({ clientId: CLIENT_ID, brokers: [`127.0.0.1:${broker!.port}`], logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 1000 } })
}

/** The group's committed offsets as OffsetFetch answers them (kafkajs's admin), per partition. */
async function fetchOffsets(): Promise<Record<number, string>> {
  const admin = kafka().admin()
  clients.push(admin)
  await admin.connect()
  const [topic] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] })
  await admin.disconnect()
  return Object.fromEntries(topic.partitions.map((p) => [p.partition, p.offset]))
}

async function waitFor(what: string, condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function produce(producer: Producer, counts: number[]): Promise<void> {
  for (const [partition, n] of counts.entries()) {
    await producer.send({ topic: TOPIC, messages: Array.from({ length: n }, (_, i) => ({ partition, value: `p${partition}-${i}` })) })
  }
}

describe('kafka-consumer-groups', () => {
  it('lists, describes with lag, resets, deletes offsets and deletes a kafkajs group; what it did holds after a restart', async () => {
    const dataDir = tempDir('ferrolog-consumer-groups-')
    broker = await startBroker({ dataDir, props: PROPS })
    await broker.createTopic(TOPIC, 3, {})
    const producer = kafka().producer({ createPartitioner: Partitioners.DefaultPartitioner })
    clients.push(producer)
    await producer.connect()
    // Before `middle` 4/6/8 records, after it 6/4/2 more: 10 in each partition.
    await produce(producer, [4, 6, 8])
    await sleep(50)
    const middle = new Date()
    await sleep(50)
    await produce(producer, [6, 4, 2])

    // A live member that consumed and committed everything, then stopped fetching while 5 more
    // records per partition came: a lag of 5.
    const consumer = kafka().consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 300, maxWaitTimeInMs: 100 })
    clients.push(consumer)
    await consumer.connect()
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
    await consumer.run({ eachMessage: async () => undefined })
    const committed = (p: number) => broker!.groupCoordinator.offsets.get(GROUP, TOPIC, p)?.offset
    await waitFor('the group to commit 10 per partition', () => [0, 1, 2].every((p) => committed(p) === 10n))
    consumer.pause([{ topic: TOPIC }])
    await sleep(500)
    await produce(producer, [5, 5, 5])

    expect((await tool('--list')).split('\n')).toContain(GROUP)
    const live = table(await tool('--describe', '--group', GROUP), 'GROUP')
    expect(live.map((r) => [r.TOPIC, r.PARTITION, r['CURRENT-OFFSET'], r['LOG-END-OFFSET'], r.LAG])).toEqual([
      [TOPIC, '0', '10', '15', '5'],
      [TOPIC, '1', '10', '15', '5'],
      [TOPIC, '2', '10', '15', '5'],
    ])
    for (const row of live) {
      expect(row['CONSUMER-ID']).toMatch(new RegExp(`^${CLIENT_ID}-`))
      expect(row).toMatchObject({ HOST: '/127.0.0.1', 'CLIENT-ID': CLIENT_ID })
    }
    const [member] = table(await tool('--describe', '--group', GROUP, '--members'), 'GROUP')
    expect(member).toMatchObject({ 'CONSUMER-ID': live[0]['CONSUMER-ID'], HOST: '/127.0.0.1', 'CLIENT-ID': CLIENT_ID, '#PARTITIONS': '3' })
    // COORDINATOR (ID) is three cells: host:port, (id).
    const state = (await tool('--describe', '--group', GROUP, '--state'))
      .split('\n')
      .find((l) => l.startsWith(`${GROUP} `))!
      .trim()
      .split(/\s+/)
    expect(state).toEqual([GROUP, `127.0.0.1:${broker.port}`, `(${broker.config.nodeId})`, 'RoundRobinAssigner', 'Stable', '1'])
    expect(await tool('--list', '--state', 'Stable')).toMatch(new RegExp(`^${GROUP}\\s+Stable\\s*$`, 'm'))

    // Refused while the group is live: deleting it, its offsets, resetting them.
    expect(await tool('--delete', '--group', GROUP)).toContain(`Group '${GROUP}' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException`)
    const refusal = await tool('--delete-offsets', '--group', GROUP, '--topic', TOPIC)
    for (const p of [0, 1, 2]) expect(refusal).toMatch(new RegExp(`^${TOPIC}\\s+${p}\\s+Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException`, 'm'))
    expect(await tool('--reset-offsets', '--group', GROUP, '--topic', TOPIC, '--to-earliest', '--execute')).toContain('can only be reset if the group')
    expect([0, 1, 2].map(committed)).toEqual([10n, 10n, 10n])

    // The member leaves: the group is Empty, its offsets can be reset.
    await consumer.disconnect()
    expect(await tool('--describe', '--group', GROUP, '--state')).toMatch(/\sEmpty\s+0\s*$/m)
    expect(await reset('--topic', TOPIC, '--to-earliest')).toEqual({ 0: '0', 1: '0', 2: '0' })
    expect(await fetchOffsets()).toEqual({ 0: '0', 1: '0', 2: '0' })
    expect(await describeOffsets()).toEqual({ 0: ['0', '15', '15'], 1: ['0', '15', '15'], 2: ['0', '15', '15'] })
    expect(await reset('--topic', `${TOPIC}:1`, '--to-offset', '3')).toEqual({ 1: '3' })
    expect(await reset('--all-topics', '--shift-by', '2')).toEqual({ 0: '2', 1: '5', 2: '2' })
    expect(await reset('--topic', TOPIC, '--to-datetime', middle.toISOString())).toEqual({ 0: '4', 1: '6', 2: '8' })
    expect(await reset('--topic', `${TOPIC}:2`, '--to-latest')).toEqual({ 2: '15' })
    expect(await fetchOffsets()).toEqual({ 0: '4', 1: '6', 2: '15' })
    expect(await describeOffsets()).toEqual({ 0: ['4', '15', '11'], 1: ['6', '15', '9'], 2: ['15', '15', '0'] })

    // Partition 1's offset deleted: the tool says so, OffsetFetch has none, describe skips it.
    const deleted = table(await tool('--delete-offsets', '--group', GROUP, '--topic', `${TOPIC}:1`), 'TOPIC')
    expect(deleted).toEqual([{ TOPIC, PARTITION: '1', STATUS: 'Successful' }])
    expect(await fetchOffsets()).toEqual({ 0: '4', 1: '-1', 2: '15' })
    expect(await describeOffsets()).toEqual({ 0: ['4', '15', '11'], 2: ['15', '15', '0'] })

    // After a restart: the resets and the deleted offset are as they were.
    await broker.stop()
    broker = await startBroker({ dataDir, props: PROPS })
    expect((await tool('--list')).split('\n')).toContain(GROUP)
    expect(await describeOffsets()).toEqual({ 0: ['4', '15', '11'], 2: ['15', '15', '0'] })
    expect(await fetchOffsets()).toEqual({ 0: '4', 1: '-1', 2: '15' })

    // The group deleted, and still gone after another restart.
    expect(await tool('--delete', '--group', GROUP)).toContain(`Deletion of requested consumer groups ('${GROUP}') was successful.`)
    expect((await tool('--list')).split('\n')).not.toContain(GROUP)
    await broker.stop()
    broker = await startBroker({ dataDir, props: PROPS })
    expect((await tool('--list')).split('\n')).not.toContain(GROUP)
    expect(await tool('--describe', '--group', GROUP)).toContain(`GroupIdNotFoundException: Group ${GROUP} not found.`)
    expect(await fetchOffsets()).toEqual({ 0: '-1', 1: '-1', 2: '-1' })
    expect(await tool('--delete', '--group', GROUP)).toContain(`Group '${GROUP}' could not be deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException`)
  }, 300_000)
})
