/**
 * Classic groups across a SIGKILL of the broker (their GroupMetadata records in
 * `__consumer_offsets`, ts/group/group-metadata-records.ts): two Stable groups of two members,
 * one of ferrolog's Consumer and one of kafkajs, keep consuming after the broker process is
 * killed and started again on its data dir. ferrolog's members keep their member ids and
 * generation (their heartbeats are answered, no rebalance); both groups miss no record and
 * their offsets are intact. Kafka's own DumpLogSegments --offsets-decoder reads the records; a
 * group deleted leaves a tombstone and does not come back.
 */
import { join } from 'node:path'
import { Kafka, logLevel, type Consumer as KafkaJsConsumer } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Consumer } from '../../ts/client/consumer.js'
import { partitionFor } from '../../ts/coordinator/partition-for.js'
import { endOffsets, FAST_GROUP } from '../client/consumer-scenarios.js'
import { until } from '../client/group-protocol-scenarios.js'
import { createTopicOn, spawnBroker, type BrokerProcess } from '../helpers/broker-process.js'
import { fetchKafkaJars, runKafkaClass } from '../helpers/kafka-tools.js'

const TOPIC = 'restarted-groups'
const PARTITIONS = 4
const PER_ROUND = 20
const FERRO_GROUP = 'ferrolog-classic'
const KAFKAJS_GROUP = 'kafkajs-classic'
const PROPS = { 'group.initial.rebalance.delay.ms': '0' }

let broker: BrokerProcess | undefined
const consumers: Consumer[] = []
const kafkajsConsumers: KafkaJsConsumer[] = []
beforeAll(() => fetchKafkaJars(), 300_000)
afterAll(async () => {
  await Promise.all(consumers.map((c) => c.close().catch(() => undefined)))
  await Promise.all(kafkajsConsumers.map((c) => c.disconnect().catch(() => undefined)))
  await broker?.stop()
})

async function sigkill(b: BrokerProcess): Promise<void> {
  const exited = new Promise((resolve) => b.child.once('close', resolve))
  b.child.kill('SIGKILL')
  await exited
}

/** The committed offset of every partition of TOPIC for a group (OffsetFetch, no membership). */
async function committed(bootstrap: string, groupId: string): Promise<Array<bigint | undefined>> {
  const checker = new Consumer({ bootstrapServers: bootstrap, groupId })
  try {
    const c = await checker.committed(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition })))
    return Array.from({ length: PARTITIONS }, (_, p) => c.get(`${TOPIC}\u0000${p}`))
  } finally {
    await checker.close()
  }
}

async function untilCommitted(bootstrap: string, groupId: string, ends: bigint[]): Promise<void> {
  const want = ends.map(String)
  const deadline = Date.now() + 60_000
  while (JSON.stringify((await committed(bootstrap, groupId)).map(String)) !== JSON.stringify(want)) {
    if (Date.now() > deadline) throw new Error(`${groupId} did not commit up to ${want.join(', ')}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** Kafka's DumpLogSegments --offsets-decoder over a group's `__consumer_offsets` partition. */
async function dumpOffsetsLog(dataDir: string, groupId: string): Promise<string> {
  const dump = await runKafkaClass(
    'org.apache.kafka.tools.DumpLogSegments',
    ['--deep-iteration', '--offsets-decoder', '--files', join(dataDir, `__consumer_offsets-${partitionFor(groupId, 50)}`, '00000000000000000000.log')],
    '',
    120_000,
  )
  expect(dump.status).toBe(0)
  expect(dump.stdout).not.toMatch(/Unknown|Exception|failed/i)
  return dump.stdout
}

describe('classic groups across a SIGKILL of the broker', () => {
  it("ferrolog's Consumer keeps its member ids and generation (no rebalance); both groups read every record and keep their offsets; a deleted group leaves a tombstone", async () => {
    broker = await spawnBroker({ props: PROPS })
    const { port, dataDir } = broker
    const bootstrap = `127.0.0.1:${port}`
    await createTopicOn(port, TOPIC, PARTITIONS)
    const kafka = new Kafka({ clientId: 'kafkajs-classic', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } })
    // Uncompressed (kafkajs reads no lz4), keyed over the partitions.
    const produce = async (prefix: string) => {
      const producer = kafka.producer()
      await producer.connect()
      await producer.send({ topic: TOPIC, messages: Array.from({ length: PER_ROUND }, (_, i) => ({ key: String(i), value: `${prefix}-${i}` })) })
      await producer.disconnect()
    }
    await produce('before')

    // ferrolog's Consumer: two members, each committing what it read.
    const ferroSeen = new Set<string>()
    let ferroAssignments = 0
    const loops = [0, 1].map((i) => {
      const c = new Consumer({ bootstrapServers: bootstrap, groupId: FERRO_GROUP, clientId: `ferro-${i}`, ...FAST_GROUP, onPartitionsAssigned: () => void ferroAssignments++ })
      consumers.push(c)
      c.subscribe([TOPIC])
      return (async () => {
        for await (const batch of c) {
          for (const r of batch.records) ferroSeen.add(r.value!.toString())
          await c.commit().catch(() => undefined)
        }
      })()
    })

    // kafkajs: two members; every join counted.
    const kafkajsSeen = new Set<string>()
    let kafkajsHeartbeats = 0
    for (let i = 0; i < 2; i++) {
      const c = kafka.consumer({ groupId: KAFKAJS_GROUP, sessionTimeout: 10_000, heartbeatInterval: 500 })
      kafkajsConsumers.push(c)
      c.on(c.events.HEARTBEAT, () => void kafkajsHeartbeats++)
      await c.connect()
      await c.subscribe({ topic: TOPIC, fromBeginning: true })
      await c.run({ eachMessage: async ({ message }) => void kafkajsSeen.add(message.value!.toString()) })
    }

    const ends = await endOffsets(bootstrap, TOPIC, PARTITIONS)
    await until(() => ferroSeen.size === PER_ROUND && kafkajsSeen.size === PER_ROUND, 'both groups to read the first records')
    // Both Stable with two members in one generation, everything committed.
    await until(() => consumers.every((c) => c.assignment().length > 0) && consumers[0]!.groupMetadata().generationId === consumers[1]!.groupMetadata().generationId, 'the ferrolog group to settle')
    for (const groupId of [FERRO_GROUP, KAFKAJS_GROUP]) await untilCommitted(bootstrap, groupId, ends)
    const ferroBefore = consumers.map((c) => c.groupMetadata())
    const ferroAssignmentsBefore = ferroAssignments
    let admin = kafka.admin()
    await admin.connect()
    const described = await admin.describeGroups([FERRO_GROUP, KAFKAJS_GROUP])
    await admin.disconnect()

    await sigkill(broker)
    broker = await spawnBroker({ props: PROPS, dataDir, port })
    const heartbeatsAtRestart = kafkajsHeartbeats
    await produce('after')
    await until(() => ferroSeen.size === 2 * PER_ROUND && kafkajsSeen.size === 2 * PER_ROUND, 'both groups to read the records produced after the restart', 90_000)
    await until(() => kafkajsHeartbeats > heartbeatsAtRestart + 2, 'kafkajs to heartbeat again')

    // No rebalance: the same members in the same generation.
    expect(consumers.map((c) => c.groupMetadata())).toEqual(ferroBefore)
    expect(ferroAssignments).toBe(ferroAssignmentsBefore)
    // (kafkajs restarts a consumer that lost its connection as a new member, so its group
    // rebalances whatever the broker kept; it is checked for its records and offsets.)
    admin = kafka.admin()
    await admin.connect()
    const after = await admin.describeGroups([FERRO_GROUP, KAFKAJS_GROUP])
    const shape = (d: typeof after) => d.groups.map((g) => ({ groupId: g.groupId, state: g.state, protocol: g.protocol, members: g.members.map((m) => m.memberId).sort() }))
    expect(shape(after)[0]).toEqual(shape(described)[0])
    expect(after.groups.map((g) => [g.state, g.members.length])).toEqual([
      ['Stable', 2],
      ['Stable', 2],
    ])

    // Every record read; the offsets go on from where they were.
    const allEnds = await endOffsets(bootstrap, TOPIC, PARTITIONS)
    for (const groupId of [FERRO_GROUP, KAFKAJS_GROUP]) await untilCommitted(bootstrap, groupId, allEnds)

    // The groups leave (Empty, their records say so); the kafkajs group is deleted.
    await Promise.all(consumers.splice(0).map((c) => c.close()))
    await Promise.all(loops)
    await Promise.all(kafkajsConsumers.splice(0).map((c) => c.disconnect()))
    expect(await admin.deleteGroups([KAFKAJS_GROUP])).toEqual([{ groupId: KAFKAJS_GROUP, errorCode: 0 }])
    await admin.disconnect()

    await sigkill(broker)
    broker = undefined
    const ferroDump = await dumpOffsetsLog(dataDir, FERRO_GROUP)
    expect(ferroDump).toMatch(
      new RegExp(`key: \\{"type":"2","data":\\{"group":"${FERRO_GROUP}"\\}\\} payload: \\{"version":"3","data":\\{"protocolType":"consumer","generation":${ferroBefore[0]!.generationId},`),
    )
    expect(ferroDump).toContain(`"memberId":"${ferroBefore[0]!.memberId}"`)
    const kafkajsDump = await dumpOffsetsLog(dataDir, KAFKAJS_GROUP)
    const kafkajsRecords = kafkajsDump.split('\n').filter((l) => l.includes(`"type":"2","data":{"group":"${KAFKAJS_GROUP}"}`))
    expect(kafkajsRecords.length).toBeGreaterThan(1)
    expect(kafkajsRecords.at(-1)).toMatch(/payload: <DELETE>/)

    broker = await spawnBroker({ props: PROPS, dataDir, port })
    admin = kafka.admin()
    await admin.connect()
    expect((await admin.listGroups()).groups.map((g) => g.groupId)).toEqual([FERRO_GROUP])
    await admin.disconnect()
    expect((await committed(bootstrap, FERRO_GROUP)).map(String)).toEqual(allEnds.map(String))
  }, 300_000)
})
