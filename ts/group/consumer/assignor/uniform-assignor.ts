/**
 * Kafka's server-side `UniformAssignor` ("uniform", the default): every partition of the
 * subscribed topics goes to a member subscribed to its topic, the members' counts differ by at
 * most one where the subscriptions allow it, and as few partitions as possible move (sticky).
 *
 * Members with the same subscription (Kafka's `UniformHomogeneousAssignmentBuilder`): the quota
 * is ⌊partitions / members⌋, one more for the first (partitions mod members) members in the
 * group's order; each member keeps its partitions of subscribed topics up to its quota, the
 * rest and the unowned partitions fill the members below their quota in that order.
 *
 * Different subscriptions (ferrolog's builder with Kafka's goals): each member keeps its
 * partitions of topics it still subscribes to; each unowned partition, those of the topics with
 * the fewest subscribers first, goes to the least loaded member subscribed to its topic; then,
 * while a member has at least two partitions more than another subscribed to one of its topics,
 * one such partition moves.
 *
 * Racks play no part, as in Kafka 4.4 (Kafka removed the server-side assignors' rack awareness
 * in 3.8, KAFKA-16694): a member's rack and its partitions' racks leave the assignment unchanged.
 */
import { addPartition, assignmentSize, copyAssignment, type Assignment } from '../assignment.js'
import { PartitionAssignorError, isHomogeneous, type ConsumerGroupPartitionAssignor, type GroupSpec, type MemberSubscriptionSpec, type SubscribedTopicDescriber } from './partition-assignor.js'

export const UNIFORM_ASSIGNOR_NAME = 'uniform'

export class UniformAssignor implements ConsumerGroupPartitionAssignor {
  readonly name = UNIFORM_ASSIGNOR_NAME

  assign(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, Assignment> {
    if (group.members.length === 0) return new Map()
    return isHomogeneous(group) ? assignHomogeneous(group, topics) : assignHeterogeneous(group, topics)
  }
}

function numPartitions(topics: SubscribedTopicDescriber, topicId: string): number {
  const n = topics.numPartitions(topicId)
  if (n < 0) throw new PartitionAssignorError(`Members are subscribed to topic ${topicId} which doesn't exist in the topic metadata.`)
  return n
}

/** Which member's target holds each partition (`topicId:partition`). */
function owners(group: GroupSpec): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of group.members) for (const [topicId, partitions] of m.assignment) for (const p of partitions) if (!out.has(`${topicId}:${p}`)) out.set(`${topicId}:${p}`, m.memberId)
  return out
}

function assignHomogeneous(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, Assignment> {
  const first = group.members[0]
  if (!first) return new Map()
  const subscribed = [...first.subscribedTopicIds].sort()
  const owned = owners(group)
  const unassigned: Array<[string, number]> = []
  let total = 0
  for (const topicId of subscribed) {
    const n = numPartitions(topics, topicId)
    for (let p = 0; p < n; p++) if (!owned.has(`${topicId}:${p}`)) unassigned.push([topicId, p])
    total += n
  }
  const out = new Map<string, Map<string, Set<number>>>()
  if (subscribed.length === 0) {
    for (const m of group.members) out.set(m.memberId, new Map())
    return out
  }
  const minQuota = Math.floor(total / group.members.length)
  let extra = total % group.members.length
  const unfilled: Array<{ memberId: string; remaining: number }> = []
  for (const m of group.members) {
    let quota = minQuota
    if (extra > 0) {
      quota++
      extra--
    }
    const kept = new Map<string, Set<number>>()
    for (const topicId of [...m.assignment.keys()].sort()) {
      if (!m.subscribedTopicIds.has(topicId)) continue
      const n = numPartitions(topics, topicId)
      for (const p of [...m.assignment.get(topicId)!].sort((a, b) => a - b)) {
        if (p >= n || owned.get(`${topicId}:${p}`) !== m.memberId) continue
        if (quota > 0) {
          quota--
          addPartition(kept, topicId, p)
        } else unassigned.push([topicId, p])
      }
    }
    if (quota > 0) unfilled.push({ memberId: m.memberId, remaining: quota })
    out.set(m.memberId, kept)
  }
  let next = 0
  for (const u of unfilled) {
    const assignment = out.get(u.memberId)!
    for (let i = 0; i < u.remaining && next < unassigned.length; i++, next++) {
      const [topicId, partition] = unassigned[next]!
      addPartition(assignment, topicId, partition)
    }
  }
  if (next < unassigned.length) throw new PartitionAssignorError('Partitions were left unassigned')
  return out
}

function assignHeterogeneous(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, Assignment> {
  const byId = new Map<string, MemberSubscriptionSpec>(group.members.map((m) => [m.memberId, m]))
  const subscribers = new Map<string, string[]>()
  for (const m of group.members) for (const topicId of m.subscribedTopicIds) subscribers.set(topicId, [...(subscribers.get(topicId) ?? []), m.memberId])
  const out = new Map<string, Map<string, Set<number>>>()
  const taken = new Set<string>()
  // Sticky: every member keeps the partitions of topics it still subscribes to.
  for (const m of group.members) {
    const kept = new Map<string, Set<number>>()
    for (const [topicId, partitions] of m.assignment) {
      if (!m.subscribedTopicIds.has(topicId)) continue
      const n = numPartitions(topics, topicId)
      for (const p of partitions) {
        if (p >= n || taken.has(`${topicId}:${p}`)) continue
        taken.add(`${topicId}:${p}`)
        addPartition(kept, topicId, p)
      }
    }
    out.set(m.memberId, kept)
  }
  const load = (memberId: string) => assignmentSize(out.get(memberId)!)
  const leastLoaded = (candidates: readonly string[]) => candidates.reduce((best, id) => (load(id) < load(best) || (load(id) === load(best) && id < best) ? id : best))
  const topicOrder = [...subscribers.keys()].sort((a, b) => subscribers.get(a)!.length - subscribers.get(b)!.length || (a < b ? -1 : a > b ? 1 : 0))
  for (const topicId of topicOrder) {
    const n = numPartitions(topics, topicId)
    for (let p = 0; p < n; p++) if (!taken.has(`${topicId}:${p}`)) addPartition(out.get(leastLoaded(subscribers.get(topicId)!))!, topicId, p)
  }
  // Balance: move one partition at a time from a member to one with at least two fewer that subscribes to its topic.
  const maxMoves = [...out.values()].reduce((n, a) => n + assignmentSize(a), 0) * group.members.length
  for (let moves = 0; moves < maxMoves; moves++) {
    const ordered = [...byId.keys()].sort((a, b) => load(b) - load(a) || (a < b ? -1 : 1))
    let moved = false
    for (let i = 0; i < ordered.length && !moved; i++) {
      const from = ordered[i]!
      for (let j = ordered.length - 1; j > i && !moved; j--) {
        const to = ordered[j]!
        if (load(from) - load(to) < 2) continue
        for (const [topicId, partitions] of out.get(from)!) {
          if (!byId.get(to)!.subscribedTopicIds.has(topicId)) continue
          const p = Math.max(...partitions)
          partitions.delete(p)
          if (partitions.size === 0) out.get(from)!.delete(topicId)
          addPartition(out.get(to)!, topicId, p)
          moved = true
          break
        }
      }
    }
    if (!moved) break
  }
  return new Map([...out].map(([id, a]) => [id, copyAssignment(a)]))
}
