/**
 * What Kafka's partition assignors for the classic consumer protocol share (Kafka's
 * ConsumerPartitionAssignor and AbstractPartitionAssignor): the group leader runs one over every
 * member's subscription (JoinGroup's member metadata, consumer-protocol.ts) and what Metadata
 * says of the subscribed topics, and sends each member its part in SyncGroup.
 *
 *   members       ordered as Java's MemberInfo orders them: those with a group.instance.id first,
 *                 by it, then the others by member id (UTF-16 code unit order, as String.compareTo).
 *   partitions    per topic, the partition count; topics the metadata does not know are left out.
 *   racks         per topic and partition, the racks of its replicas (every replica, in the ISR or
 *                 not, as Kafka's assignors take them): the brokers' broker.rack from Metadata.
 *                 A member's rack is its client.rack (subscription v3's rackId); "" is none.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import type { Metadata } from './metadata.js'

export interface MemberSubscription {
  memberId: string
  groupInstanceId: string | null
  topics: string[]
  /** client.rack (null or "" when not set). */
  rackId?: string | null
}

/** memberId -> topic -> partitions, partitions in ascending order. */
export type GroupAssignment = Map<string, Map<string, number[]>>

/** topic -> the racks of each partition's replicas, indexed by partition. */
export type PartitionRacks = ReadonlyMap<string, ReadonlyArray<ReadonlySet<string>>>

export interface PartitionAssignor {
  /** The protocol name in JoinGroup (Kafka's `partition.assignment.strategy` short names). */
  readonly name: string
  assign(partitionsPerTopic: ReadonlyMap<string, number>, members: MemberSubscription[], partitionRacks?: PartitionRacks): GroupAssignment
}

/** Java's MemberInfo.compareTo. */
export function compareMembers(a: MemberSubscription, b: MemberSubscription): number {
  const cmp = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0)
  if (a.groupInstanceId !== null && b.groupInstanceId !== null) return cmp(a.groupInstanceId, b.groupInstanceId)
  if (a.groupInstanceId !== null) return -1
  if (b.groupInstanceId !== null) return 1
  return cmp(a.memberId, b.memberId)
}

/** A member's rack, none for null or "" (as Kafka's assignors read rackId). */
export function memberRack(m: MemberSubscription): string | null {
  return m.rackId ? m.rackId : null
}

export function emptyAssignment(members: MemberSubscription[]): GroupAssignment {
  return new Map(members.map((m) => [m.memberId, new Map<string, number[]>()]))
}

export function addPartition(assignment: GroupAssignment, memberId: string, topic: string, partition: number): void {
  const topics = assignment.get(memberId)!
  let list = topics.get(topic)
  if (!list) topics.set(topic, (list = []))
  list.push(partition)
}

/**
 * The partition counts and replica racks of `topics` as `metadata` has them (Kafka's leader
 * builds its Cluster the same way): replicas on brokers that Metadata does not list, or that have
 * no rack, add none. Topics with an error, or no partitions, are left out.
 */
export function partitionsFromMetadata(metadata: Metadata, topics: Iterable<string>): { partitionsPerTopic: Map<string, number>; partitionRacks: Map<string, Array<Set<string>>> } {
  const partitionsPerTopic = new Map<string, number>()
  const partitionRacks = new Map<string, Array<Set<string>>>()
  for (const t of topics) {
    const info = metadata.topic(t)
    if (!info || info.errorCode !== ErrorCode.NONE || info.partitions.length === 0) continue
    partitionsPerTopic.set(t, info.partitions.length)
    partitionRacks.set(
      t,
      info.partitions.map((p) => {
        const racks = new Set<string>()
        for (const id of p.replicas) {
          const rack = metadata.node(id)?.rack
          if (rack !== null && rack !== undefined) racks.add(rack)
        }
        return racks
      }),
    )
  }
  return { partitionsPerTopic, partitionRacks }
}
