/**
 * ferrolog's range and roundrobin assignors hand out exactly what Kafka's own (RangeAssignor,
 * RoundRobinAssignor from kafka-clients, run by java/AssignorCheck.java) hand out, over 300
 * generated groups: 1-7 members, static (group.instance.id) and dynamic, 1-5 topics of 1-13
 * partitions, subscriptions overlapping, topics unknown to the metadata; and over 600 groups with
 * racks (KIP-881): brokers on 1-4 racks (some with none), replicas spread over them, members with
 * a client.rack of a broker, of no broker, or none, topics often co-partitioned. Plus Kafka's
 * documented examples, worked by hand.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { rangeAssignor, roundRobinAssignor, type GroupAssignment, type MemberSubscription, type PartitionAssignor } from '../../ts/client/assignors.js'
import { partitionsFromMetadata } from '../../ts/client/partition-assignor.js'
import { Metadata } from '../../ts/client/metadata.js'
import { ZERO_UUID } from '../../ts/protocol/apis/common.js'
import { runJava } from '../helpers/java.js'

interface Case {
  assignor: PartitionAssignor
  partitionsPerTopic: Map<string, number>
  members: MemberSubscription[]
  /** Broker id -> its rack; none given: one broker 0 without a rack holding every replica. */
  nodes?: Map<number, string | null>
  /** topic -> each partition's replicas (broker ids). */
  replicas?: Map<string, number[][]>
}

/** mulberry32: the same cases every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = seed
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function generate(n: number): Case[] {
  const rnd = random(16)
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1))
  const cases: Case[] = []
  for (let i = 0; i < n; i++) {
    const topics = Array.from({ length: int(1, 5) }, (_, t) => `topic-${String.fromCharCode(97 + int(0, 25))}${t}`)
    const partitionsPerTopic = new Map<string, number>()
    // Most topics exist; some members subscribe to one that does not (yet).
    for (const t of topics) if (rnd() < 0.9) partitionsPerTopic.set(t, int(1, 13))
    const members: MemberSubscription[] = []
    for (let m = int(1, 7); m > 0; m--) {
      const memberId = `consumer-${int(0, 99)}-${m}-${int(1000, 9999)}`
      const groupInstanceId = rnd() < 0.3 ? `instance-${int(0, 50)}-${m}` : null
      const subscribed = topics.filter(() => rnd() < 0.7)
      members.push({ memberId, groupInstanceId, topics: subscribed.length > 0 ? subscribed : [topics[0]] })
    }
    cases.push({ assignor: rnd() < 0.5 ? rangeAssignor : roundRobinAssignor, partitionsPerTopic, members })
  }
  return cases
}

/** Racked groups: brokers on racks, replicas spread over them, members with and without racks. */
function generateRacked(n: number): Case[] {
  const rnd = random(881)
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1))
  const cases: Case[] = []
  for (let i = 0; i < n; i++) {
    const racks = ['a', 'b', 'c', 'd'].slice(0, int(1, 4))
    const nodes = new Map<number, string | null>()
    const brokers = int(1, 6)
    for (let b = 0; b < brokers; b++) nodes.set(b, rnd() < 0.1 ? null : racks[b % racks.length])
    const topics = Array.from({ length: int(1, 4) }, (_, t) => `t${String.fromCharCode(97 + int(0, 25))}${t}`)
    // Often the same partition count for all topics: co-partitioned when the members match too.
    const sameCount = rnd() < 0.4 ? int(1, 12) : 0
    const partitionsPerTopic = new Map<string, number>()
    const replicas = new Map<string, number[][]>()
    for (const t of topics) {
      const count = sameCount || int(1, 12)
      partitionsPerTopic.set(t, count)
      const everywhere = rnd() < 0.15
      const rf = int(1, Math.min(3, brokers))
      replicas.set(
        t,
        Array.from({ length: count }, () => {
          if (everywhere) return [...nodes.keys()]
          const ids = [...nodes.keys()].sort(() => rnd() - 0.5)
          const first = int(0, brokers - 1)
          return Array.from({ length: rf }, (_, k) => ids[(first + k) % brokers])
        }),
      )
    }
    const all = rnd() < 0.5
    const members: MemberSubscription[] = []
    for (let m = int(1, 6); m > 0; m--) {
      const memberId = `consumer-${int(0, 99)}-${m}-${int(1000, 9999)}`
      const groupInstanceId = rnd() < 0.2 ? `instance-${int(0, 50)}-${m}` : null
      const r = rnd()
      const rackId = r < 0.6 ? racks[int(0, racks.length - 1)] : r < 0.7 ? 'z' : null
      const subscribed = all ? topics : topics.filter(() => rnd() < 0.7)
      members.push({ memberId, groupInstanceId, rackId, topics: subscribed.length > 0 ? subscribed : [topics[0]] })
    }
    cases.push({ assignor: rnd() < 0.75 ? rangeAssignor : roundRobinAssignor, partitionsPerTopic, members, nodes, replicas })
  }
  return cases
}

function line(c: Case): string {
  const nodes = c.nodes ? [...c.nodes].map(([id, rack]) => `${id}:${rack ?? ''}`).join(',') : '0:'
  const topics = [...c.partitionsPerTopic].map(([t, n]) => `${t}=${(c.replicas?.get(t) ?? Array.from({ length: n }, () => [0])).map((ids) => ids.join('.')).join('|')}`).join(',')
  const members = c.members.map((m) => `${m.memberId}/${m.groupInstanceId ?? ''}/${m.rackId ?? ''}/${m.topics.join('+')}`).join(',')
  return `${c.assignor.name};${nodes};${topics};${members}`
}

/** The partition counts and replica racks as the group leader reads them from a Metadata response. */
function metadataOf(c: Case): Metadata {
  const md = new Metadata()
  const nodes = c.nodes ?? new Map([[0, null]])
  md.update(
    {
      throttleTimeMs: 0,
      brokers: [...nodes].map(([nodeId, rack]) => ({ nodeId, host: 'localhost', port: 9092 + nodeId, rack })),
      clusterId: 'c',
      controllerId: 0,
      topics: [...c.partitionsPerTopic].map(([name, n]) => ({
        errorCode: 0,
        name,
        topicId: ZERO_UUID,
        isInternal: false,
        partitions: (c.replicas?.get(name) ?? Array.from({ length: n }, () => [0])).map((ids, p) => ({
          errorCode: 0,
          partitionIndex: p,
          leaderId: ids[0],
          leaderEpoch: 0,
          replicaNodes: ids,
          isrNodes: ids,
          offlineReplicas: [],
        })),
        topicAuthorizedOperations: -2147483648,
      })),
      clusterAuthorizedOperations: -2147483648,
    },
    false,
  )
  return md
}

function assignLikeLeader(c: Case): GroupAssignment {
  const { partitionsPerTopic, partitionRacks } = partitionsFromMetadata(metadataOf(c), new Set(c.members.flatMap((m) => m.topics)))
  return c.assignor.assign(partitionsPerTopic, c.members, partitionRacks)
}

async function javaAssignments(cases: Case[]): Promise<string[]> {
  const out = await runJava(join(__dirname, 'java/AssignorCheck.java'), [], { input: cases.map(line).join('\n') + '\n' })
  expect(out.status, out.stderr).toBe(0)
  const java = out.stdout.trim().split('\n')
  expect(java.length).toBe(cases.length)
  return java
}

function render(members: MemberSubscription[], a: GroupAssignment): string {
  return members
    .map((m) => {
      const tps = [...(a.get(m.memberId) ?? [])].flatMap(([t, ps]) => ps.map((p) => `${t}-${p}`))
      return `${m.memberId}=${tps.sort().join('+')}`
    })
    .join(',')
}

const sortJava = (out: string) =>
  out
    .split(',')
    .map((m) => {
      const [id, tps] = m.split('=')
      return `${id}=${tps === '' ? '' : tps.split('+').sort().join('+')}`
    })
    .join(',')

describe('assignors', () => {
  it("match Kafka's RangeAssignor and RoundRobinAssignor over 300 generated groups", async () => {
    const cases = generate(300)
    const java = await javaAssignments(cases)
    let differing = 0
    cases.forEach((c, i) => {
      const ours = render(c.members, c.assignor.assign(c.partitionsPerTopic, c.members))
      if (ours !== sortJava(java[i])) differing++
      expect(ours, line(c)).toBe(sortJava(java[i]))
    })
    expect(differing).toBe(0)
  }, 150_000)

  it("with racks (KIP-881): range matches Kafka's rack-aware RangeAssignor, roundrobin ignores racks as Kafka's does, over 600 groups", async () => {
    const cases = generateRacked(600)
    const java = await javaAssignments(cases)
    let differing = 0
    let rackAligned = 0
    cases.forEach((c, i) => {
      const ours = render(c.members, assignLikeLeader(c))
      if (ours !== sortJava(java[i])) differing++
      expect(ours, line(c)).toBe(sortJava(java[i]))
      // The generated groups do exercise racks: range results that differ from the plain range.
      if (c.assignor === rangeAssignor && ours !== render(c.members, rangeAssignor.assign(c.partitionsPerTopic, c.members))) rackAligned++
    })
    expect(differing).toBe(0)
    expect(rackAligned).toBeGreaterThan(100)
  }, 150_000)

  it("range: Kafka's documented example (two consumers, two topics of three partitions)", () => {
    const members = [
      { memberId: 'C1', groupInstanceId: null, topics: ['t0', 't1'] },
      { memberId: 'C0', groupInstanceId: null, topics: ['t0', 't1'] },
    ]
    const a = rangeAssignor.assign(
      new Map([
        ['t0', 3],
        ['t1', 3],
      ]),
      members,
    )
    expect(a.get('C0')).toEqual(
      new Map([
        ['t0', [0, 1]],
        ['t1', [0, 1]],
      ]),
    )
    expect(a.get('C1')).toEqual(
      new Map([
        ['t0', [2]],
        ['t1', [2]],
      ]),
    )
  })

  it('range with racks: co-partitioned topics keep partition i together, on a member of its rack, within the range quota', () => {
    const members = [
      { memberId: 'C0', groupInstanceId: null, rackId: 'b', topics: ['t0', 't1'] },
      { memberId: 'C1', groupInstanceId: null, rackId: 'a', topics: ['t0', 't1'] },
    ]
    // Partitions 0 and 2 have their replica in rack a, partition 1 in rack b (both topics).
    const racks = [new Set(['a']), new Set(['b']), new Set(['a'])]
    const a = rangeAssignor.assign(
      new Map([
        ['t0', 3],
        ['t1', 3],
      ]),
      members,
      new Map([
        ['t0', racks],
        ['t1', racks],
      ]),
    )
    expect(a.get('C0')).toEqual(
      new Map([
        ['t0', [1]],
        ['t1', [1]],
      ]),
    )
    expect(a.get('C1')).toEqual(
      new Map([
        ['t0', [0, 2]],
        ['t1', [0, 2]],
      ]),
    )
    // Without racks: the plain ranges.
    const plain = rangeAssignor.assign(
      new Map([
        ['t0', 3],
        ['t1', 3],
      ]),
      members,
    )
    expect(plain.get('C0')).toEqual(
      new Map([
        ['t0', [0, 1]],
        ['t1', [0, 1]],
      ]),
    )
  })

  it('roundrobin: static members come first, by group.instance.id', () => {
    const members = [
      { memberId: 'a', groupInstanceId: null, topics: ['t'] },
      { memberId: 'z', groupInstanceId: 'i1', topics: ['t'] },
    ]
    const a = roundRobinAssignor.assign(new Map([['t', 3]]), members)
    expect(a.get('z')).toEqual(new Map([['t', [0, 2]]]))
    expect(a.get('a')).toEqual(new Map([['t', [1]]]))
  })
})
