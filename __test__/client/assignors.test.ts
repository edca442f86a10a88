/**
 * ferrolog's range and roundrobin assignors hand out exactly what Kafka's own (RangeAssignor,
 * RoundRobinAssignor from kafka-clients, run by java/AssignorCheck.java) hand out, over 300
 * generated groups: 1-7 members, static (group.instance.id) and dynamic, 1-5 topics of 1-13
 * partitions, subscriptions overlapping, topics unknown to the metadata. Plus Kafka's documented
 * examples, worked by hand.
 */
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { rangeAssignor, roundRobinAssignor, type GroupAssignment, type MemberSubscription, type PartitionAssignor } from '../../ts/client/assignors.js'
import { runProcess } from '../helpers/process.js'

const ROOT = join(__dirname, '../..')

interface Case {
  assignor: PartitionAssignor
  partitionsPerTopic: Map<string, number>
  members: MemberSubscription[]
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

function line(c: Case): string {
  const topics = [...c.partitionsPerTopic].map(([t, n]) => `${t}=${n}`).join(',')
  const members = c.members.map((m) => `${m.memberId}/${m.groupInstanceId ?? ''}/${m.topics.join('+')}`).join(',')
  return `${c.assignor.name};${topics};${members}`
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
    const out = await runProcess(
      'java',
      ['-Dlog4j2.configurationFile=' + join(ROOT, 'tools/kafka/log4j2-tools.properties'), '-cp', `${join(ROOT, 'tools/kafka/.jars')}/*`, join(__dirname, 'java/AssignorCheck.java')],
      cases.map(line).join('\n') + '\n',
      120_000,
    )
    expect(out.status, out.stderr).toBe(0)
    const java = out.stdout.trim().split('\n')
    expect(java.length).toBe(cases.length)
    let differing = 0
    cases.forEach((c, i) => {
      const ours = render(c.members, c.assignor.assign(c.partitionsPerTopic, c.members))
      if (ours !== sortJava(java[i])) differing++
      expect(ours, line(c)).toBe(sortJava(java[i]))
    })
    expect(differing).toBe(0)
  }, 150_000)

  it("range: Kafka's documented example (two consumers, two topics of three partitions)", () => {
    const members = [
      { memberId: 'C1', groupInstanceId: null, topics: ['t0', 't1'] },
      { memberId: 'C0', groupInstanceId: null, topics: ['t0', 't1'] },
    ]
    const a = rangeAssignor.assign(new Map([['t0', 3], ['t1', 3]]), members)
    expect(a.get('C0')).toEqual(new Map([['t0', [0, 1]], ['t1', [0, 1]]]))
    expect(a.get('C1')).toEqual(new Map([['t0', [2]], ['t1', [2]]]))
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
