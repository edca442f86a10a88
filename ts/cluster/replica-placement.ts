/**
 * Kafka's replica placement for new topics and partitions (`AdminUtils.assignReplicasToBrokers`),
 * written from its documented rules:
 *
 * - without racks: the first replica of partition p is broker `(p + startIndex) % n` of the broker
 *   list (by id); the followers follow it at a shift that grows by one every n partitions, so
 *   partitions do not all repeat the same sequences;
 * - with racks (every broker has one): the same over the rack-alternated broker list (racks sorted,
 *   one broker of each rack in turn, brokers of a rack by id), and a follower is skipped while its
 *   rack already holds a replica and some rack holds none, or while the broker already holds one
 *   and some broker holds none. So a partition's replicas are on distinct racks whenever there are
 *   at least as many racks as replicas, and every rack gets one when there are fewer.
 *
 * `startIndex` and the initial shift are random unless `fixedStartIndex` is given (Kafka's
 * `fixedStartIndex`, used for new partitions of an existing topic and in tests).
 */
import { ErrorCode } from '../protocol/error-codes.js'
import { ClusterMetadataError } from './errors.js'

export interface BrokerPlacement {
  readonly id: number
  readonly rack: string | null
}

/** assignment[i]: the replicas of partition `startPartitionId + i`. */
export function assignReplicasToBrokers(
  brokers: readonly BrokerPlacement[],
  nPartitions: number,
  replicationFactor: number,
  fixedStartIndex = -1,
  startPartitionId = -1,
  random: (n: number) => number = (n) => Math.floor(Math.random() * n),
): number[][] {
  if (!Number.isInteger(nPartitions) || nPartitions <= 0) {
    throw new ClusterMetadataError(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.')
  }
  if (!Number.isInteger(replicationFactor) || replicationFactor <= 0) {
    throw new ClusterMetadataError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.')
  }
  if (replicationFactor > brokers.length) {
    throw new ClusterMetadataError(ErrorCode.INVALID_REPLICATION_FACTOR, `Replication factor: ${replicationFactor} larger than available brokers: ${brokers.length}.`)
  }
  const sorted = [...brokers].sort((a, b) => a.id - b.id)
  if (sorted.every((b) => b.rack === null)) {
    return rackUnaware(
      nPartitions,
      replicationFactor,
      sorted.map((b) => b.id),
      fixedStartIndex,
      startPartitionId,
      random,
    )
  }
  if (sorted.some((b) => b.rack === null)) {
    throw new ClusterMetadataError(
      ErrorCode.INVALID_REPLICA_ASSIGNMENT,
      `Not all brokers have rack information for replica rack aware assignment (without broker.rack: ${sorted
        .filter((b) => b.rack === null)
        .map((b) => b.id)
        .join(', ')}).`,
    )
  }
  return rackAware(nPartitions, replicationFactor, sorted, fixedStartIndex, startPartitionId, random)
}

function rackUnaware(nPartitions: number, rf: number, brokers: number[], fixedStartIndex: number, startPartitionId: number, random: (n: number) => number): number[][] {
  const n = brokers.length
  const startIndex = fixedStartIndex >= 0 ? fixedStartIndex : random(n)
  let shift = fixedStartIndex >= 0 ? fixedStartIndex : random(n)
  let partition = Math.max(0, startPartitionId)
  const out: number[][] = []
  for (let i = 0; i < nPartitions; i++, partition++) {
    if (partition > 0 && partition % n === 0) shift += 1
    const first = (partition + startIndex) % n
    const replicas = [brokers[first]!]
    for (let j = 0; j < rf - 1; j++) replicas.push(brokers[replicaIndex(first, shift, j, n)]!)
    out.push(replicas)
  }
  return out
}

function rackAware(nPartitions: number, rf: number, brokers: BrokerPlacement[], fixedStartIndex: number, startPartitionId: number, random: (n: number) => number): number[][] {
  const rackOf = new Map(brokers.map((b) => [b.id, b.rack!]))
  const numRacks = new Set(rackOf.values()).size
  const arranged = rackAlternatedBrokerList(rackOf)
  const n = arranged.length
  const startIndex = fixedStartIndex >= 0 ? fixedStartIndex : random(n)
  let shift = fixedStartIndex >= 0 ? fixedStartIndex : random(n)
  let partition = Math.max(0, startPartitionId)
  const out: number[][] = []
  for (let i = 0; i < nPartitions; i++, partition++) {
    if (partition > 0 && partition % n === 0) shift += 1
    const first = (partition + startIndex) % n
    const leader = arranged[first]!
    const replicas = [leader]
    const racks = new Set([rackOf.get(leader)!])
    const used = new Set([leader])
    let k = 0
    for (let j = 0; j < rf - 1; j++) {
      for (;;) {
        const broker = arranged[replicaIndex(first, shift * numRacks, k, n)]!
        const rack = rackOf.get(broker)!
        k += 1
        if ((!racks.has(rack) || racks.size === numRacks) && (!used.has(broker) || used.size === n)) {
          replicas.push(broker)
          racks.add(rack)
          used.add(broker)
          break
        }
      }
    }
    out.push(replicas)
  }
  return out
}

/** Racks sorted; one broker of each rack in turn (a rack's brokers by id) until all are listed. */
export function rackAlternatedBrokerList(rackOf: ReadonlyMap<number, string>): number[] {
  const byRack = new Map<string, number[]>()
  for (const [id, rack] of rackOf) byRack.set(rack, [...(byRack.get(rack) ?? []), id])
  const racks = [...byRack.keys()].sort()
  const iters = new Map(
    racks.map((r) => [
      r,
      byRack
        .get(r)!
        .sort((a, b) => a - b)
        [Symbol.iterator](),
    ]),
  )
  const out: number[] = []
  for (let i = 0; out.length < rackOf.size; i = (i + 1) % racks.length) {
    const next = iters.get(racks[i]!)!.next()
    if (!next.done) out.push(next.value)
  }
  return out
}

function replicaIndex(firstReplicaIndex: number, secondReplicaShift: number, replicaIndex: number, nBrokers: number): number {
  const shift = 1 + ((secondReplicaShift + replicaIndex) % (nBrokers - 1))
  return (firstReplicaIndex + shift) % nBrokers
}
