/**
 * Kafka's `SimpleAssignor` (KIP-932), the server-side assignor of share groups: several members
 * may share one partition, so every member gets partitions even when there are more members
 * than partitions. Balance first, then stickiness (Kafka's `SimpleHomogeneousAssignmentBuilder`
 * when every member subscribes to the same topics, `SimpleHeterogeneousAssignmentBuilder`, topic
 * by topic among the topic's subscribers, otherwise):
 *
 * - desired sharing of a partition: ceil(members / partitions); each member's desired count:
 *   ceil(p * (i + 1)) - ceil(p * i) with p = sharing * partitions / members, i its index;
 * - the current target assignment is kept, less the topics no longer subscribed;
 * - partitions shared by more members than desired are taken from overfilled members first
 *   (the homogeneous order; the heterogeneous one first trims overfilled members, then sharing);
 * - members still over their desired count give partitions back;
 * - partitions shared by fewer members than desired go to the unfilled members in turn, a member
 *   never twice to one partition (a slight imbalance is accepted when none can take it).
 *
 * Kafka iterates Java hash maps; ferrolog iterates members in the order given (by member id)
 * and partitions by topic id then partition, so which member gets which partition may differ
 * from Kafka's while the counts are the same.
 */
import type { Assignment } from '../consumer/assignment.js'
import { isHomogeneous, type GroupSpec, type SubscribedTopicDescriber } from '../consumer/assignor/partition-assignor.js'
import { PartitionAssignorError } from '../consumer/assignor/partition-assignor.js'

export const SIMPLE_ASSIGNOR_NAME = 'simple'

/** A partition as `topicId:partition`. */
type PartitionKey = string

function key(topicId: string, partition: number): PartitionKey {
  return `${topicId}:${partition}`
}

export class SimpleAssignor {
  readonly name = SIMPLE_ASSIGNOR_NAME

  /** Every member's target assignment; `assignable` leaves out partitions not initialized yet (all when not given). */
  assign(group: GroupSpec, topics: SubscribedTopicDescriber, assignable: (topicId: string, partition: number) => boolean = () => true): Map<string, Assignment> {
    const out = new Map<string, Assignment>()
    if (group.members.length === 0) return out
    const members = group.members.map((m) => m.memberId)
    const targets = (topicId: string): PartitionKey[] => {
      const n = topics.numPartitions(topicId)
      if (n === -1) throw new PartitionAssignorError(`Members are subscribed to topic ${topicId} which doesn't exist in the topic metadata.`)
      const keys: PartitionKey[] = []
      for (let p = 0; p < n; p++) if (assignable(topicId, p)) keys.push(key(topicId, p))
      return keys
    }
    // Each member's current target, as partition keys, less the topics no longer subscribed.
    const subscribed = new Set(group.members.flatMap((m) => [...m.subscribedTopicIds]))
    const current = group.members.map((m) => {
      const kept = new Set<PartitionKey>()
      for (const [topicId, partitions] of m.assignment) if (subscribed.has(topicId)) for (const p of [...partitions].sort((a, b) => a - b)) kept.add(key(topicId, p))
      return kept
    })
    const result = members.map(() => new Set<PartitionKey>())
    if (isHomogeneous(group)) {
      const topicIds = [...(group.members[0]?.subscribedTopicIds ?? [])].sort()
      if (topicIds.length === 0) {
        for (const m of members) out.set(m, new Map())
        return out
      }
      const all = topicIds.flatMap(targets)
      balance(
        all,
        members.map((_, i) => i),
        current,
        result,
        'homogeneous',
      )
    } else {
      for (const topicId of [...subscribed].sort()) {
        const subscribers = group.members.flatMap((m, i) => (m.subscribedTopicIds.has(topicId) ? [i] : []))
        const own = current.map((c) => new Set([...c].filter((k) => k.startsWith(`${topicId}:`))))
        balance(targets(topicId), subscribers, own, result, 'heterogeneous')
      }
    }
    members.forEach((m, i) => {
      const a = new Map<string, Set<number>>()
      for (const k of [...result[i]!].sort(comparePartitionKeys)) {
        const at = k.lastIndexOf(':')
        const topicId = k.slice(0, at)
        let ps = a.get(topicId)
        if (!ps) a.set(topicId, (ps = new Set()))
        ps.add(Number(k.slice(at + 1)))
      }
      out.set(m, a)
    })
    return out
  }
}

function comparePartitionKeys(a: PartitionKey, b: PartitionKey): number {
  const [ta, pa] = [a.slice(0, a.lastIndexOf(':')), Number(a.slice(a.lastIndexOf(':') + 1))]
  const [tb, pb] = [b.slice(0, b.lastIndexOf(':')), Number(b.slice(b.lastIndexOf(':') + 1))]
  return ta < tb ? -1 : ta > tb ? 1 : pa - pb
}

/**
 * One balancing pass over `targets` among the members `subscribers` (indices): starts from
 * `current` (each member's kept partitions among `targets`), adds the outcome to `result`.
 */
function balance(
  targets: readonly PartitionKey[],
  subscribers: readonly number[],
  current: ReadonlyArray<ReadonlySet<PartitionKey>>,
  result: Array<Set<PartitionKey>>,
  order: 'homogeneous' | 'heterogeneous',
): void {
  const targetSet = new Set(targets)
  const numMembers = subscribers.length
  const numTargets = targets.length
  const sharing = numTargets === 0 ? 0 : Math.floor((numMembers + numTargets - 1) / numTargets)
  const desired = new Map<number, number>()
  const precise = numMembers === 0 ? 0 : (sharing * numTargets) / numMembers
  subscribers.forEach((m, i) => desired.set(m, Math.ceil(precise * (i + 1)) - Math.ceil(precise * i)))
  // partition → members holding it; member → partitions it holds (both in insertion order).
  const byPartition = new Map<PartitionKey, Set<number>>()
  const byMember = new Map<number, Set<PartitionKey>>()
  for (const m of subscribers) {
    const held = new Set([...current[m]!].filter((k) => targetSet.has(k)))
    byMember.set(m, held)
    for (const k of held) {
      let s = byPartition.get(k)
      if (!s) byPartition.set(k, (s = new Set()))
      s.add(m)
    }
  }
  const overfilled = () => new Set(subscribers.filter((m) => byMember.get(m)!.size > desired.get(m)!))
  const take = (k: PartitionKey, m: number) => {
    byPartition.get(k)!.delete(m)
    byMember.get(m)!.delete(k)
  }
  const revokeOverfilled = () => {
    for (const m of overfilled()) {
      const held = byMember.get(m)!
      for (const k of [...held]) {
        if (held.size <= desired.get(m)!) break
        take(k, m)
      }
    }
  }
  const revokeOvershared = (preferOverfilled: boolean) => {
    const over = preferOverfilled ? overfilled() : new Set<number>()
    for (const [k, holders] of byPartition) {
      if (holders.size <= sharing) continue
      if (preferOverfilled) for (const m of [...holders]) if (holders.size > sharing && over.has(m)) take(k, m)
      for (const m of [...holders]) if (holders.size > sharing && !over.has(m)) take(k, m)
    }
  }
  if (order === 'homogeneous') {
    revokeOvershared(true)
    revokeOverfilled()
  } else {
    revokeOverfilled()
    revokeOvershared(false)
  }
  // Kafka's `assignRemainingPartitions`.
  for (const k of targets) if (!byPartition.has(k)) byPartition.set(k, new Set())
  const unfilled = subscribers.filter((m) => byMember.get(m)!.size < desired.get(m)!)
  let next = 0
  let assignedThisRound = false
  for (const k of [...byPartition.keys()].sort(comparePartitionKeys)) {
    const holders = byPartition.get(k)!
    let toMake = sharing - holders.size
    while (toMake > 0 && unfilled.length > 0) {
      if (next >= unfilled.length) {
        if (!assignedThisRound) break
        next = 0
        assignedThisRound = false
      }
      const m = unfilled[next]!
      if (holders.has(m)) {
        next++
        continue
      }
      holders.add(m)
      byMember.get(m)!.add(k)
      toMake--
      assignedThisRound = true
      if (byMember.get(m)!.size >= desired.get(m)!) unfilled.splice(next, 1)
      else next++
    }
    if (unfilled.length === 0) break
  }
  for (const m of subscribers) for (const k of byMember.get(m)!) result[m]!.add(k)
}
