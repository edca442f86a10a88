/**
 * Kafka's RoundRobinAssignor (partition.assignment.strategy "roundrobin"): every partition of
 * every subscribed topic, topics by name and partitions by number, dealt in turn to the members
 * in MemberInfo order (partition-assignor.ts), skipping members not subscribed to the
 * partition's topic. Not rack-aware, as in Kafka: members' and replicas' racks are ignored.
 */
import { addPartition, compareMembers, emptyAssignment, type PartitionAssignor } from './partition-assignor.js'

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
        while (!subscribed[next]!.has(topic)) next = (next + 1) % sorted.length
        addPartition(assignment, sorted[next]!.memberId, topic, p)
        next = (next + 1) % sorted.length
      }
    }
    return assignment
  },
}
