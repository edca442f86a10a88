/**
 * Kafka's server-side `RangeAssignor` ("range"): per topic, the members subscribed to it, in
 * Kafka's order (static members by instance id, then the others by member id), take consecutive
 * ranges of its partitions: each ⌊partitions / members⌋, the first (partitions mod members) one
 * more. With every member subscribed to the same topics of equal partition counts, a member gets
 * the same partition numbers of each topic (co-partitioning, as joins need). Racks play no
 * part, as in Kafka 4.4 (KAFKA-16694; unlike the client-side RangeAssignor's KIP-881 racks).
 */
import { addPartition, type Assignment } from '../assignment.js'
import { PartitionAssignorError, sortedMembers, type ConsumerGroupPartitionAssignor, type GroupSpec, type SubscribedTopicDescriber } from './partition-assignor.js'

export const RANGE_ASSIGNOR_NAME = 'range'

export class RangeAssignor implements ConsumerGroupPartitionAssignor {
  readonly name = RANGE_ASSIGNOR_NAME

  assign(group: GroupSpec, topics: SubscribedTopicDescriber): Map<string, Assignment> {
    const members = sortedMembers(group)
    const ranges = new Map<string, { numPartitions: number; numMembers: number; next: number; extra: number }>()
    for (const m of members) {
      for (const topicId of m.subscribedTopicIds) {
        let range = ranges.get(topicId)
        if (!range) {
          const numPartitions = topics.numPartitions(topicId)
          if (numPartitions < 0) throw new PartitionAssignorError(`Member ${m.memberId} is subscribed to a non-existent topic ${topicId}`)
          ranges.set(topicId, (range = { numPartitions, numMembers: 0, next: 0, extra: -1 }))
        }
        range.numMembers++
      }
    }
    const out = new Map<string, Assignment>()
    for (const m of members) {
      const assignment = new Map<string, Set<number>>()
      for (const topicId of [...m.subscribedTopicIds].sort()) {
        const range = ranges.get(topicId)!
        if (range.extra < 0) range.extra = range.numPartitions % range.numMembers
        let count = Math.floor(range.numPartitions / range.numMembers)
        if (range.extra > 0) {
          count++
          range.extra--
        }
        for (let p = range.next; p < range.next + count; p++) addPartition(assignment, topicId, p)
        range.next += count
      }
      out.set(m.memberId, assignment)
    }
    return out
  }
}
