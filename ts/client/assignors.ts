/**
 * Kafka's eager partition assignors for the classic consumer protocol: the group leader runs
 * one over every member's subscription (JoinGroup's member metadata, consumer-protocol.ts) and
 * the partition counts of the subscribed topics, and sends each member its part in SyncGroup.
 * The algorithms are those of the Java client (AbstractPartitionAssignor, RangeAssignor,
 * RoundRobinAssignor), so a group mixing ferrolog and Java consumers agrees on who reads what:
 *
 *   members are ordered as MemberInfo orders them: those with a group.instance.id first, by it,
 *   then the others by member id (UTF-16 code unit order, as Java's String.compareTo).
 *
 *   range        per topic, over the members subscribed to it in that order: each gets
 *                floor(n/c) consecutive partitions, the first n%c one more.
 *   roundrobin   every partition of every subscribed topic, topics by name and partitions by
 *                number, dealt in turn to the members, skipping members not subscribed to the
 *                partition's topic.
 *
 * Topics that the metadata does not know (no partition count) are left out, as in Java. Rack-aware
 * range assignment (KIP-881) is not done: members' racks are ignored.
 */
export interface MemberSubscription {
  memberId: string
  groupInstanceId: string | null
  topics: string[]
}

/** memberId -> topic -> partitions, partitions in ascending order. */
export type GroupAssignment = Map<string, Map<string, number[]>>

export interface PartitionAssignor {
  /** The protocol name in JoinGroup (Kafka's `partition.assignment.strategy` short names). */
  readonly name: string
  assign(partitionsPerTopic: ReadonlyMap<string, number>, members: MemberSubscription[]): GroupAssignment
}

/** Java's MemberInfo.compareTo. */
export function compareMembers(a: MemberSubscription, b: MemberSubscription): number {
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0)
  if (a.groupInstanceId !== null && b.groupInstanceId !== null) return cmp(a.groupInstanceId, b.groupInstanceId)
  if (a.groupInstanceId !== null) return -1
  if (b.groupInstanceId !== null) return 1
  return cmp(a.memberId, b.memberId)
}

function emptyAssignment(members: MemberSubscription[]): GroupAssignment {
  return new Map(members.map((m) => [m.memberId, new Map<string, number[]>()]))
}

function add(assignment: GroupAssignment, memberId: string, topic: string, partition: number): void {
  const topics = assignment.get(memberId)!
  let list = topics.get(topic)
  if (!list) topics.set(topic, (list = []))
  list.push(partition)
}

export const rangeAssignor: PartitionAssignor = {
  name: 'range',
  assign(partitionsPerTopic, members) {
    const assignment = emptyAssignment(members)
    const byTopic = new Map<string, MemberSubscription[]>()
    for (const m of members) {
      for (const topic of new Set(m.topics)) {
        let list = byTopic.get(topic)
        if (!list) byTopic.set(topic, (list = []))
        list.push(m)
      }
    }
    for (const [topic, subscribers] of byTopic) {
      const n = partitionsPerTopic.get(topic)
      if (n === undefined) continue
      subscribers.sort(compareMembers)
      const per = Math.floor(n / subscribers.length)
      const extra = n % subscribers.length
      subscribers.forEach((m, i) => {
        const start = per * i + Math.min(i, extra)
        const length = per + (i + 1 > extra ? 0 : 1)
        for (let p = start; p < start + length; p++) add(assignment, m.memberId, topic, p)
      })
    }
    return assignment
  },
}

export const roundRobinAssignor: PartitionAssignor = {
  name: 'roundrobin',
  assign(partitionsPerTopic, members) {
    const assignment = emptyAssignment(members)
    const sorted = members.slice().sort(compareMembers)
    if (sorted.length === 0) return assignment
    const subscribed = sorted.map((m) => new Set(m.topics))
    const topics = [...new Set(members.flatMap((m) => m.topics))].filter((t) => partitionsPerTopic.has(t)).sort()
    let next = 0
    for (const topic of topics) {
      for (let p = 0; p < partitionsPerTopic.get(topic)!; p++) {
        // Some member subscribes to this topic, so the turn ends within one round.
        while (!subscribed[next].has(topic)) next = (next + 1) % sorted.length
        add(assignment, sorted[next].memberId, topic, p)
        next = (next + 1) % sorted.length
      }
    }
    return assignment
  },
}

export const ASSIGNORS: Readonly<Record<string, PartitionAssignor>> = { range: rangeAssignor, roundrobin: roundRobinAssignor }

/** An assignor by Kafka's short name or Java class name (`org.apache.kafka.clients.consumer.RangeAssignor`). */
export function assignorNamed(name: string): PartitionAssignor | undefined {
  const short = name.trim().replace(/^org\.apache\.kafka\.clients\.consumer\./, '').replace(/Assignor$/, '').toLowerCase()
  return ASSIGNORS[short === 'roundrobin' ? 'roundrobin' : short]
}
