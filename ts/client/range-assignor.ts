/**
 * Kafka's RangeAssignor (partition.assignment.strategy "range"), rack-aware as since Kafka 3.5
 * (KIP-881), handing out exactly what the Java client's does so that a group mixing ferrolog
 * and Java consumers agrees on who reads what.
 *
 * Per topic, over the members subscribed to it in MemberInfo order (partition-assignor.ts): with
 * n partitions and c members each gets floor(n/c), the first n%c one more, as consecutive
 * partitions.
 *
 * Racks: a topic needs rack-aware assignment when some of its members have a client.rack that
 * some replica is on, and its partitions' replica racks are not all the same set. When any topic
 * of the group needs it, a first pass hands out partitions whose replicas share the member's
 * rack (a member without a rack matches every partition), never more to a member than the range
 * quota would give it:
 *
 *   co-partitioned topics   topics with the same members (same racks) and the same partition
 *                           count keep partition i of all of them on one member: for each i in
 *                           turn, the first member (in order) that still has room in every one
 *                           of these topics and whose rack holds partition i of every one gets
 *                           them all. (Done whether or not these topics need racks themselves.)
 *   other topics            each member in order takes the first unassigned partitions on its
 *                           rack, up to its quota.
 *
 * Then every topic's remaining partitions go out as plain ranges: each member in order takes the
 * first unassigned partitions up to its quota. Without racks this is the plain range result.
 */
import { addPartition, compareMembers, emptyAssignment, memberRack, type GroupAssignment, type MemberSubscription, type PartitionAssignor, type PartitionRacks } from './partition-assignor.js'

/** One topic's assignment in progress (Kafka's TopicAssignmentState). */
class TopicRanges {
  /** Subscribed member ids, in MemberInfo order. */
  readonly members: string[]
  readonly racks: Map<string, string | null>
  /** Unassigned partitions, ascending (a Set keeps insertion order). */
  readonly unassigned: Set<number>
  private readonly counts: Map<string, number>
  private readonly quota: number
  private extraLeft: number
  /** Each partition's replica racks; empty when no member of the topic has a rack. */
  readonly partitionRacks: ReadonlyArray<ReadonlySet<string>>
  readonly needsRackAware: boolean
  /** Topics with equal keys are co-partitioned: same members and racks, same partition count. */
  readonly coPartitionKey: string

  constructor(
    readonly topic: string,
    partitions: number,
    subscribers: MemberSubscription[],
    replicaRacks: ReadonlyArray<ReadonlySet<string>> | undefined,
  ) {
    const sorted = subscribers.slice().sort(compareMembers)
    this.members = []
    this.racks = new Map()
    for (const m of sorted) {
      if (this.racks.has(m.memberId)) continue
      this.members.push(m.memberId)
      this.racks.set(m.memberId, memberRack(m))
    }
    this.unassigned = new Set(Array.from({ length: partitions }, (_, p) => p))
    this.counts = new Map(this.members.map((m) => [m, 0]))
    this.quota = this.members.length === 0 ? 0 : Math.floor(partitions / this.members.length)
    this.extraLeft = this.members.length === 0 ? 0 : partitions % this.members.length
    const consumerRacks = new Set([...this.racks.values()].filter((r) => r !== null))
    this.partitionRacks = consumerRacks.size === 0 ? [] : Array.from({ length: partitions }, (_, p) => replicaRacks?.[p] ?? new Set<string>())
    const allPartitionRacks = new Set(this.partitionRacks.flatMap((s) => [...s]))
    this.needsRackAware =
      [...consumerRacks].some((r) => allPartitionRacks.has(r)) && !this.partitionRacks.every((s) => s.size === allPartitionRacks.size && [...s].every((r) => allPartitionRacks.has(r)))
    this.coPartitionKey = JSON.stringify([this.members.map((m) => [m, this.racks.get(m)]), this.partitionRacks.length])
  }

  racksMatch(member: string, partition: number): boolean {
    const rack = this.racks.get(member)
    return rack === null || rack === undefined || (this.partitionRacks[partition]?.has(rack) ?? false)
  }

  /** How many more partitions `member` may take and stay within its range quota. */
  maxAssignable(member: string): number {
    return Math.max(0, this.quota + (this.extraLeft > 0 ? 1 : 0) - this.counts.get(member)!)
  }

  take(member: string, partitions: number[], assignment: GroupAssignment): void {
    const n = this.counts.get(member)! + partitions.length
    this.counts.set(member, n)
    if (n > this.quota) this.extraLeft--
    for (const p of partitions) {
      this.unassigned.delete(p)
      addPartition(assignment, member, this.topic, p)
    }
  }

  /** Each member in order takes the first unassigned partitions `mayTake` allows, up to its quota. */
  assignRanges(assignment: GroupAssignment, mayTake: (member: string, partition: number) => boolean): void {
    for (const member of this.members) {
      if (this.unassigned.size === 0) break
      const limit = this.maxAssignable(member)
      const picked: number[] = []
      for (const p of this.unassigned) {
        if (picked.length >= limit) break
        if (mayTake(member, p)) picked.push(p)
      }
      if (picked.length > 0) this.take(member, picked, assignment)
    }
  }
}

/** Partition i of every co-partitioned topic to the first member whose rack holds all of them. */
function assignCoPartitionedOnRacks(states: TopicRanges[], assignment: GroupAssignment): void {
  const remaining = new Set(states[0]!.members)
  const partitions = states[0]!.partitionRacks.length
  for (let p = 0; p < partitions && remaining.size > 0; p++) {
    let chosen: string | undefined
    for (const m of remaining) {
      if (states.every((s) => s.racksMatch(m, p) && s.maxAssignable(m) > 0)) {
        chosen = m
        break
      }
    }
    if (chosen === undefined) continue
    for (const s of states) s.take(chosen, [p], assignment)
    if (states.every((s) => s.maxAssignable(chosen) === 0)) remaining.delete(chosen)
  }
}

export const rangeAssignor: PartitionAssignor = {
  name: 'range',
  assign(partitionsPerTopic, members, partitionRacks?: PartitionRacks) {
    const assignment = emptyAssignment(members)
    const byTopic = new Map<string, MemberSubscription[]>()
    for (const m of members) {
      for (const topic of new Set(m.topics)) {
        let list = byTopic.get(topic)
        if (!list) byTopic.set(topic, (list = []))
        list.push(m)
      }
    }
    const states: TopicRanges[] = []
    for (const [topic, subscribers] of byTopic) {
      const n = partitionsPerTopic.get(topic)
      if (n === undefined || n <= 0) continue
      states.push(new TopicRanges(topic, n, subscribers, partitionRacks?.get(topic)))
    }
    if (states.some((s) => s.needsRackAware)) {
      const groups = new Map<string, TopicRanges[]>()
      for (const s of states) {
        let list = groups.get(s.coPartitionKey)
        if (!list) groups.set(s.coPartitionKey, (list = []))
        list.push(s)
      }
      for (const group of groups.values()) {
        if (group.length > 1) assignCoPartitionedOnRacks(group, assignment)
        else if (group[0]!.needsRackAware) group[0]!.assignRanges(assignment, (m, p) => group[0]!.racksMatch(m, p))
      }
    }
    for (const s of states) s.assignRanges(assignment, () => true)
    for (const topics of assignment.values()) for (const list of topics.values()) list.sort((a, b) => a - b)
    return assignment
  },
}
