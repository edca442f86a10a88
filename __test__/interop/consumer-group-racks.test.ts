/**
 * Issue 27 item 1: racks in KIP-848 consumer groups, the same scenario on ferrolog and on Apache
 * Kafka 4.4 (one broker each, broker.rack=r1), with raw ConsumerGroupHeartbeat requests (v1, the
 * members name themselves) carrying RackId: three members on racks r1, r2 and none share a
 * 6-partition topic, with the uniform assignor and with the range assignor.
 *
 * Kafka 4.4's server-side assignors are not rack-aware (KAFKA-16694): both brokers give every
 * member the same partitions, those a group without any rack gets. A member changing its rack is
 * written but bumps no epoch. A partition's racks are part of the group's metadata hash (KIP-1101):
 * the broker restarted with broker.rack=r2 moves every partition to rack r2, and the first
 * heartbeat after the restart bumps the group epoch (the partitions stay where they are).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { consumerGroupDescribeCodec, type ConsumerGroupDescribedGroup } from '../../ts/protocol/apis/consumer-group-describe.js'
import { consumerGroupHeartbeatCodec, type ConsumerGroupHeartbeatRequest, type ConsumerGroupHeartbeatResponse } from '../../ts/protocol/apis/consumer-group-heartbeat.js'
import { findCoordinatorCodec } from '../../ts/protocol/apis/find-coordinator.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { Broker } from '../../ts/server/broker.js'
import { startBroker } from '../helpers/broker.js'
import { connectTo, KafkaWire } from '../helpers/kafka-socket.js'
import { fetchKafkaJars, KafkaTool, kafkaBrokerPort, kafkaToolOk, runKafkaBroker, stopKafkaBroker } from '../helpers/kafka-tools.js'
import { tempDir } from '../helpers/tmp.js'

const TOPIC = 'racked'
const MEMBERS: ReadonlyArray<{ id: string; rack: string | null }> = [
  { id: 'member-a', rack: 'r2' },
  { id: 'member-b', rack: 'r1' },
  { id: 'member-c', rack: null },
]

let broker: Broker | undefined
let kafkaDir: string | undefined
const wires: KafkaWire[] = []
afterEach(async () => {
  for (const w of wires.splice(0)) w.close()
  await broker?.stop()
  broker = undefined
  if (kafkaDir) stopKafkaBroker(kafkaDir)
  kafkaDir = undefined
})

beforeAll(() => fetchKafkaJars(), 300_000)

const RETRIABLE: ReadonlySet<number> = new Set([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR])

async function connect(port: number): Promise<KafkaWire> {
  const wire = new KafkaWire(await connectTo(port), 'rack-interop')
  wires.push(wire)
  return wire
}

/** A member as its consumer keeps it: its epoch and the partitions it owns. */
interface Member {
  id: string
  epoch: number
  owned: number[]
}

/** Sends a heartbeat, again while the coordinator is loading or not yet there (a bounded number of times). */
async function heartbeat(wire: KafkaWire, request: ConsumerGroupHeartbeatRequest): Promise<ConsumerGroupHeartbeatResponse> {
  for (let attempt = 0; ; attempt++) {
    const r = await wire.send(consumerGroupHeartbeatCodec, 1, request)
    if (!RETRIABLE.has(r.errorCode) || attempt === 200) return r
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function describeGroup(wire: KafkaWire, groupId: string): Promise<ConsumerGroupDescribedGroup> {
  const r = await wire.send(consumerGroupDescribeCodec, 1, { groupIds: [groupId], includeAuthorizedOperations: false })
  return r.groups[0]!
}

/** What each run records: the partitions of each member, and the epochs around the rack changes. */
interface Outcome {
  assignments: Record<string, Record<string, number[]>>
  memberRackChange: { groupEpoch: [number, number]; memberEpoch: [number, number]; rackId: string | null }
  brokerRackChange: { groupEpoch: [number, number]; sameAssignment: boolean }
}

/** The scenario on a broker; `restart` brings it back with broker.rack=r2 and returns its port. */
async function scenario(port: number, restart: () => Promise<number>): Promise<Outcome> {
  await kafkaToolOk(port, KafkaTool.TOPICS, ['--create', '--topic', TOPIC, '--partitions', '6', '--replication-factor', '1'])
  let wire = await connect(port)
  // A single broker: it is every group's coordinator (Kafka creates __consumer_offsets on the first FindCoordinator).
  for (let attempt = 0; attempt < 200; attempt++) {
    const r = await wire.send(findCoordinatorCodec, 4, { key: '', keyType: 0, coordinatorKeys: ['g-uniform-racks'] })
    if (r.coordinators[0]?.errorCode === ErrorCode.NONE) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  let topicId: Buffer | undefined
  const groups: Record<string, Member[]> = {}

  const beat = async (groupId: string, m: Member, rackId: string | null = null) => {
    const r = await heartbeat(wire, {
      groupId,
      memberId: m.id,
      memberEpoch: m.epoch,
      instanceId: null,
      rackId,
      rebalanceTimeoutMs: -1,
      subscribedTopicNames: null,
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: topicId ? [{ topicId, partitions: m.owned }] : [],
    })
    expect(r.errorCode, `${groupId} ${m.id}: ${r.errorMessage}`).toBe(ErrorCode.NONE)
    m.epoch = r.memberEpoch
    if (r.assignment) {
      topicId ??= r.assignment.topicPartitions[0]?.topicId
      m.owned = r.assignment.topicPartitions.flatMap((t) => t.partitions).sort((x, y) => x - y)
    }
    return r
  }
  /**
   * Heartbeats (each member reporting what it owns) until the group is Stable with every member on
   * its target; Kafka 4.4 computes a group's target at most every group.consumer.assignment.interval.ms
   * (1 s), so the rounds are 100 ms apart (for a minute at most).
   */
  const settle = async (groupId: string): Promise<ConsumerGroupDescribedGroup> => {
    const partitionsOf = (a: { topicPartitions: Array<{ partitions: number[] }> }) => JSON.stringify(a.topicPartitions.flatMap((t) => t.partitions).sort((x, y) => x - y))
    let d: ConsumerGroupDescribedGroup | undefined
    for (let round = 0; round < 600; round++) {
      for (const m of groups[groupId]!) await beat(groupId, m)
      d = await describeGroup(wire, groupId)
      const onTarget = d.members.every((m) => m.memberEpoch === d!.assignmentEpoch && partitionsOf(m.assignment) === partitionsOf(m.targetAssignment))
      if (d.groupState === 'Stable' && onTarget) return d
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`${groupId} never settled: ${JSON.stringify(d, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : v))}`)
  }

  const assignments: Record<string, Record<string, number[]>> = {}
  for (const assignor of ['uniform', 'range']) {
    for (const racks of [true, false]) {
      const groupId = `g-${assignor}-${racks ? 'racks' : 'none'}`
      groups[groupId] = []
      // One by one: each joins, then the group settles (the first member holds everything until the next joins).
      for (const { id, rack } of MEMBERS) {
        const m: Member = { id, epoch: 0, owned: [] }
        groups[groupId].push(m)
        const r = await heartbeat(wire, {
          groupId,
          memberId: id,
          memberEpoch: 0,
          instanceId: null,
          rackId: racks ? rack : null,
          rebalanceTimeoutMs: 60_000,
          subscribedTopicNames: [TOPIC],
          subscribedTopicRegex: null,
          serverAssignor: assignor,
          topicPartitions: [],
        })
        expect(r.errorCode, `${groupId} ${id} joins: ${r.errorMessage}`).toBe(ErrorCode.NONE)
        m.epoch = r.memberEpoch
        topicId ??= r.assignment?.topicPartitions[0]?.topicId
        m.owned = (r.assignment?.topicPartitions ?? []).flatMap((t) => t.partitions).sort((x, y) => x - y)
        await settle(groupId)
      }
      assignments[groupId] = Object.fromEntries(groups[groupId].map((m) => [m.id, m.owned]))
    }
  }

  // member-a moves from rack r2 to r3: its record is rewritten, no epoch changes.
  const group = 'g-uniform-racks'
  const a = groups[group]!.find((m) => m.id === 'member-a')!
  const before = await describeGroup(wire, group)
  const epochBefore = a.epoch
  await beat(group, a, 'r3')
  const after = await describeGroup(wire, group)
  const memberRackChange = {
    groupEpoch: [before.groupEpoch, after.groupEpoch] as [number, number],
    memberEpoch: [epochBefore, a.epoch] as [number, number],
    rackId: after.members.find((m) => m.memberId === 'member-a')!.rackId,
  }

  // The broker comes back on rack r2: every partition's rack changed.
  const owned = Object.fromEntries(groups[group]!.map((m) => [m.id, m.owned]))
  wire.close()
  wire = await connect(await restart())
  for (const m of groups[group]!) await beat(group, m)
  const settled = await settle(group)
  return {
    assignments,
    memberRackChange,
    brokerRackChange: {
      groupEpoch: [after.groupEpoch, settled.groupEpoch],
      sameAssignment: groups[group]!.every((m) => JSON.stringify(m.owned) === JSON.stringify(owned[m.id])),
    },
  }
}

describe('racks in KIP-848 consumer groups, ferrolog and Kafka 4.4', () => {
  it('the same partitions as without racks on both; a member rack change bumps nothing, a broker rack change bumps the group epoch', async () => {
    const dataDir = tempDir('ferrolog-racks-')
    broker = await startBroker({ dataDir, props: { 'broker.rack': 'r1' } })
    const ours = await scenario(broker.port, async () => {
      await broker!.stop()
      broker = await startBroker({ dataDir, props: { 'broker.rack': 'r2' } })
      return broker.port
    })

    kafkaDir = tempDir('kafka-racks-')
    const theirs = await scenario(kafkaBrokerPort(await runKafkaBroker(kafkaDir, ['--set', 'broker.rack=r1'])), async () => {
      stopKafkaBroker(kafkaDir!)
      return kafkaBrokerPort(await runKafkaBroker(kafkaDir!, ['--set', 'broker.rack=r2']))
    })

    for (const outcome of [ours, theirs]) {
      // Racks or none, the same partitions for each member.
      expect(outcome.assignments['g-uniform-racks']).toEqual(outcome.assignments['g-uniform-none'])
      expect(outcome.assignments['g-range-racks']).toEqual(outcome.assignments['g-range-none'])
      for (const a of Object.values(outcome.assignments)) expect(Object.values(a).map((ps) => ps.length)).toEqual([2, 2, 2])
      expect(outcome.memberRackChange.groupEpoch[1]).toBe(outcome.memberRackChange.groupEpoch[0])
      expect(outcome.memberRackChange.memberEpoch[1]).toBe(outcome.memberRackChange.memberEpoch[0])
      expect(outcome.memberRackChange.rackId).toBe('r3')
      expect(outcome.brokerRackChange.groupEpoch[1]).toBe(outcome.brokerRackChange.groupEpoch[0] + 1)
      expect(outcome.brokerRackChange.sameAssignment).toBe(true)
    }
    expect(ours).toEqual(theirs)
  }, 600_000)
})
