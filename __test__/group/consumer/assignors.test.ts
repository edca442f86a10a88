/**
 * The server-side assignors (ts/group/consumer/assignor/): RangeAssignor with cases of Kafka's
 * RangeAssignorTest, UniformAssignor with cases of Kafka's OptimizedUniformAssignmentBuilderTest
 * (members with the same subscription) and, for different subscriptions, the properties Kafka's
 * UniformHeterogeneousAssignmentBuilderTest checks: every partition of a subscribed topic
 * assigned exactly once, to a member subscribed to its topic, balanced where the subscriptions
 * allow, and sticky. With racks (members' and partitions'), both assign as without: Kafka 4.4's
 * server-side assignors are not rack-aware (KAFKA-16694 removed it in 3.8).
 */
import { describe, expect, it } from 'vitest'
import { assignmentSize, type Assignment } from '../../../ts/group/consumer/assignment.js'
import type { GroupSpec, MemberSubscriptionSpec, SubscribedTopicDescriber } from '../../../ts/group/consumer/assignor/partition-assignor.js'
import { RangeAssignor } from '../../../ts/group/consumer/assignor/range-assignor.js'
import { UniformAssignor } from '../../../ts/group/consumer/assignor/uniform-assignor.js'

const T1 = 'aa01'
const T2 = 'aa02'
const T3 = 'aa03'

function mk(...topics: Array<[string, ...number[]]>): Assignment {
  return new Map(topics.map(([t, ...ps]) => [t, new Set(ps)]))
}

function spec(memberId: string, topics: string[], assignment: Assignment = new Map(), instanceId: string | null = null, rackId: string | null = null): MemberSubscriptionSpec {
  return { memberId, instanceId, rackId, subscribedTopicIds: new Set(topics), assignment }
}

/** Partition counts by topic; `racks(topic, partition)`: the racks of the partition's replicas (none by default). */
const describer = (counts: Record<string, number>, racks: (t: string, p: number) => string[] = () => []): SubscribedTopicDescriber => ({
  numPartitions: (t: string) => counts[t] ?? -1,
  racksForPartition: (t: string, p: number) => new Set(p < (counts[t] ?? 0) ? racks(t, p) : []),
})

describe('RangeAssignor (Kafka RangeAssignorTest)', () => {
  const range = new RangeAssignor()

  it('first assignment, three members with different subscriptions', () => {
    const group: GroupSpec = { members: [spec('A', [T1, T2]), spec('B', [T3]), spec('C', [T2, T3])] }
    expect(range.assign(group, describer({ [T1]: 3, [T2]: 3, [T3]: 2 }))).toEqual(
      new Map([
        ['A', mk([T1, 0, 1, 2], [T2, 0, 1])],
        ['B', mk([T3, 0])],
        ['C', mk([T2, 2], [T3, 1])],
      ]),
    )
  })

  it('two members, two topics: co-partitioned ranges', () => {
    const group: GroupSpec = { members: [spec('A', [T1, T3]), spec('B', [T1, T3])] }
    expect(range.assign(group, describer({ [T1]: 3, [T3]: 2 }))).toEqual(
      new Map([
        ['A', mk([T1, 0, 1], [T3, 0])],
        ['B', mk([T1, 2], [T3, 1])],
      ]),
    )
  })

  it('more members than partitions: the last members get nothing', () => {
    const group: GroupSpec = { members: [spec('A', [T1]), spec('B', [T1]), spec('C', [T1])] }
    expect(range.assign(group, describer({ [T1]: 2 }))).toEqual(
      new Map([
        ['A', mk([T1, 0])],
        ['B', mk([T1, 1])],
        ['C', new Map()],
      ]),
    )
  })

  it('subscriptions removed after an initial assignment: ranges over the new subscribers', () => {
    const group: GroupSpec = {
      members: [spec('A', [T1], mk([T1, 0, 1, 2], [T2, 0])), spec('B', [T1, T2, T3], mk([T2, 1])), spec('C', [T2], mk([T2, 2], [T3, 0, 1]))],
    }
    expect(range.assign(group, describer({ [T1]: 3, [T2]: 3, [T3]: 2 }))).toEqual(
      new Map([
        ['A', mk([T1, 0, 1])],
        ['B', mk([T1, 2], [T2, 0, 1], [T3, 0, 1])],
        ['C', mk([T2, 2])],
      ]),
    )
  })

  it('static members first, by instance id, then the others by member id', () => {
    const group: GroupSpec = { members: [spec('A', [T1]), spec('Z', [T1], new Map(), 'instance-1'), spec('B', [T1])] }
    expect(range.assign(group, describer({ [T1]: 3 }))).toEqual(
      new Map([
        ['Z', mk([T1, 0])],
        ['A', mk([T1, 1])],
        ['B', mk([T1, 2])],
      ]),
    )
  })
})

describe('UniformAssignor, same subscriptions (Kafka OptimizedUniformAssignmentBuilderTest)', () => {
  const uniform = new UniformAssignor()

  it('one member without subscription gets nothing', () => {
    expect(uniform.assign({ members: [spec('A', [])] }, describer({}))).toEqual(new Map([['A', new Map()]]))
  })

  it('first assignment of two members over two topics: balanced', () => {
    const out = uniform.assign({ members: [spec('A', [T1, T3]), spec('B', [T1, T3])] }, describer({ [T1]: 3, [T3]: 2 }))
    expect(assignmentSize(out.get('A')!)).toBe(3)
    expect(assignmentSize(out.get('B')!)).toBe(2)
    expect(validity(out, { [T1]: 3, [T3]: 2 })).toBe(5)
  })

  it('a member added after an initial assignment: the others keep what fits their quota, the new one takes the rest', () => {
    const group: GroupSpec = {
      members: [spec('A', [T1, T2], mk([T1, 0, 2], [T2, 0])), spec('B', [T1, T2], mk([T1, 1], [T2, 1, 2])), spec('C', [T1, T2])],
    }
    expect(uniform.assign(group, describer({ [T1]: 3, [T2]: 3 }))).toEqual(
      new Map([
        ['A', mk([T1, 0, 2])],
        ['B', mk([T1, 1], [T2, 1])],
        ['C', mk([T2, 0, 2])],
      ]),
    )
  })

  it('a member removed: its partitions go to the others, who keep theirs', () => {
    const group: GroupSpec = { members: [spec('A', [T1, T2], mk([T1, 0], [T2, 0])), spec('B', [T1, T2], mk([T1, 1], [T2, 1]))] }
    const out = uniform.assign(group, describer({ [T1]: 3, [T2]: 3 }))
    expect(validity(out, { [T1]: 3, [T2]: 3 })).toBe(6)
    for (const [id, before] of [
      ['A', mk([T1, 0], [T2, 0])],
      ['B', mk([T1, 1], [T2, 1])],
    ] as const) {
      for (const [t, ps] of before) for (const p of ps) expect(out.get(id)!.get(t)?.has(p)).toBe(true)
      expect(assignmentSize(out.get(id)!)).toBe(3)
    }
  })
})

describe('UniformAssignor, different subscriptions', () => {
  const uniform = new UniformAssignor()

  it('every partition once, to a subscriber, balanced where possible, over random groups; a second run moves nothing', () => {
    let seed = 7
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    for (let round = 0; round < 50; round++) {
      const topics: Record<string, number> = {}
      for (let t = 0; t < 1 + rand(6); t++) topics[`bb${t}`] = 1 + rand(12)
      const names = Object.keys(topics)
      const members = Array.from({ length: 1 + rand(8) }, (_, i) =>
        spec(
          `m${i}`,
          names.filter(() => rand(2) === 0),
        ),
      )
      const out = uniform.assign({ members }, describer(topics))
      const subscribed = names.filter((t) => members.some((m) => m.subscribedTopicIds.has(t)))
      expect(validity(out, Object.fromEntries(subscribed.map((t) => [t, topics[t]!])))).toBe(subscribed.reduce((n, t) => n + topics[t]!, 0))
      for (const m of members) for (const t of out.get(m.memberId)!.keys()) expect(m.subscribedTopicIds.has(t)).toBe(true)
      // Balanced: no member has two more than another subscribed to one of its topics.
      for (const a of members) {
        for (const b of members) {
          const movable = [...out.get(a.memberId)!.keys()].some((t) => b.subscribedTopicIds.has(t))
          if (movable) expect(assignmentSize(out.get(a.memberId)!) - assignmentSize(out.get(b.memberId)!)).toBeLessThan(2)
        }
      }
      // Sticky: the same group with its new assignment assigns the same.
      const again = uniform.assign({ members: members.map((m) => ({ ...m, assignment: out.get(m.memberId)! })) }, describer(topics))
      expect(again).toEqual(out)
    }
  })
})

describe('racks: Kafka 4.4 assigns as without them', () => {
  // Partition p of every topic on rack r(p % 3): a rack-aware assignor would give each member the partitions of its rack.
  const onRacks = describer({ [T1]: 6, [T2]: 3 }, (_t, p) => [`r${p % 3}`])
  const racked = (id: string, topics: string[], rack: string | null, assignment: Assignment = new Map()) => spec(id, topics, assignment, null, rack)

  it('range: consecutive ranges in member order, whatever the racks', () => {
    const group: GroupSpec = { members: [racked('A', [T1, T2], 'r2'), racked('B', [T1, T2], 'r0'), racked('C', [T1], 'r1')] }
    expect(new RangeAssignor().assign(group, onRacks)).toEqual(
      new Map([
        ['A', mk([T1, 0, 1], [T2, 0, 1])],
        ['B', mk([T1, 2, 3], [T2, 2])],
        ['C', mk([T1, 4, 5])],
      ]),
    )
  })

  it('uniform, same subscriptions: the quotas filled in member order, whatever the racks', () => {
    const group: GroupSpec = { members: [racked('A', [T1], 'r2'), racked('B', [T1], 'r0'), racked('C', [T1], 'r1')] }
    expect(new UniformAssignor().assign(group, onRacks)).toEqual(
      new Map([
        ['A', mk([T1, 0, 1])],
        ['B', mk([T1, 2, 3])],
        ['C', mk([T1, 4, 5])],
      ]),
    )
    // Sticky across racks: a member keeps partitions of other racks rather than trading them for its own.
    const sticky: GroupSpec = { members: [racked('A', [T1], 'r0', mk([T1, 1, 2])), racked('B', [T1], 'r1', mk([T1, 0, 3])), racked('C', [T1], 'r2')] }
    expect(new UniformAssignor().assign(sticky, onRacks)).toEqual(
      new Map([
        ['A', mk([T1, 1, 2])],
        ['B', mk([T1, 0, 3])],
        ['C', mk([T1, 4, 5])],
      ]),
    )
  })

  it('uniform, different subscriptions; members without a rack, or on a rack no partition is on', () => {
    const group: GroupSpec = { members: [racked('A', [T1, T2], null), racked('B', [T1], 'r9'), racked('C', [T2], 'r1')] }
    const plain: GroupSpec = { members: group.members.map((m) => ({ ...m, rackId: null })) }
    expect(new UniformAssignor().assign(group, onRacks)).toEqual(new UniformAssignor().assign(plain, describer({ [T1]: 6, [T2]: 3 })))
  })

  it('random groups with random racks: the same assignment as without racks, both assignors', () => {
    let seed = 11
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n)
    for (let round = 0; round < 40; round++) {
      const topics: Record<string, number> = {}
      for (let t = 0; t < 1 + rand(4); t++) topics[`cc${t}`] = 1 + rand(10)
      const names = Object.keys(topics)
      const racks = new Map(names.flatMap((t) => Array.from({ length: topics[t]! }, (_, p) => [`${t}:${p}`, Array.from({ length: rand(3) }, () => `r${rand(3)}`)] as const)))
      const withRacks = describer(topics, (t, p) => racks.get(`${t}:${p}`) ?? [])
      const same = rand(2) === 0
      const members = Array.from({ length: 1 + rand(6) }, (_, i) => racked(`m${i}`, same ? names : names.filter(() => rand(2) === 0), rand(4) === 0 ? null : `r${rand(4)}`))
      const plain = members.map((m) => ({ ...m, rackId: null }))
      for (const assignor of [new UniformAssignor(), new RangeAssignor()]) {
        const first = assignor.assign({ members }, withRacks)
        expect(first).toEqual(assignor.assign({ members: plain }, describer(topics)))
        // And from that assignment on (sticky), still the same.
        const again = (ms: MemberSubscriptionSpec[]) => ms.map((m) => ({ ...m, assignment: first.get(m.memberId)! }))
        expect(assignor.assign({ members: again(members) }, withRacks)).toEqual(assignor.assign({ members: again(plain) }, describer(topics)))
      }
    }
  })
})

/** Checks each partition of `topics` is assigned exactly once; how many there are. */
function validity(out: Map<string, Assignment>, topics: Record<string, number>): number {
  const seen = new Set<string>()
  for (const a of out.values()) {
    for (const [t, ps] of a) {
      for (const p of ps) {
        expect(p).toBeLessThan(topics[t]!)
        expect(seen.has(`${t}:${p}`)).toBe(false)
        seen.add(`${t}:${p}`)
      }
    }
  }
  expect(seen.size).toBe(Object.values(topics).reduce((n, c) => n + c, 0))
  return seen.size
}
