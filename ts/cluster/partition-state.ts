/**
 * Reading and compare-and-swapping one partition's registration (`partitions/<topicId>/<p>`,
 * ts/cluster/keys.ts). Every change of a registration, by the controller or by a leader's
 * AlterPartition, is a transaction comparing the key's mod revision with the one the change was
 * computed from (plus the writer's own fencing key: the controller key for the controller, the
 * broker's registration for a leader), so two writers never lose each other's change: the loser
 * reads again and recomputes (or is refused, for AlterPartition).
 */
import type { PartitionRegistration } from '../replica/partition-registration.js'
import { decodePartition, encode, partitionKey } from './keys.js'
import { MAX_TXN_OPS, compare, op, type Compare, type MetadataStore } from './metadata-store.js'

export interface StoredPartition {
  registration: PartitionRegistration
  modRevision: bigint
}

/** The registration as etcd has it now, or null when the partition does not exist. */
export async function readPartition(store: MetadataStore, topicId: Buffer, partition: number): Promise<StoredPartition | null> {
  const kv = await store.get(partitionKey(topicId, partition))
  return kv ? { registration: decodePartition(kv.value), modRevision: kv.modRevision } : null
}

/** A guard of the write beyond the partition's own revision: key `key`'s `target` must equal `value`. */
export interface Guard {
  key: string
  target: 'Mod' | 'Create'
  value: bigint
}

/**
 * Writes `next` if the partition key is still at `expected` and every guard holds. Resolves to
 * the write's revision, or null when a comparison failed (someone else wrote first).
 */
export async function casPartition(store: MetadataStore, topicId: Buffer, partition: number, expected: bigint, next: PartitionRegistration, guards: readonly Guard[] = []): Promise<bigint | null> {
  const key = partitionKey(topicId, partition)
  const compares: Compare[] = [compare.modRevision(key, '==', expected)]
  for (const g of guards) compares.push(g.target === 'Mod' ? compare.modRevision(g.key, '==', g.value) : compare.createRevision(g.key, '==', g.value))
  const value: PartitionRegistration = {
    replicas: [...next.replicas],
    isr: [...next.isr],
    leader: next.leader,
    leaderEpoch: next.leaderEpoch,
    partitionEpoch: next.partitionEpoch,
  }
  const res = await store.txn({ compare: compares, success: [op.put(key, encode(value))] })
  return res.succeeded ? res.revision : null
}

/** One partition's change for `casPartitions`. */
export interface PartitionWrite {
  topicId: Buffer
  partition: number
  /** The mod revision the change was computed from. */
  expected: bigint
  next: PartitionRegistration
}

/** How many partitions `casPartitions` may write in one transaction with `guards`: etcd counts comparisons and puts apart, each up to MAX_TXN_OPS. */
export const casBatchSize = (guards: readonly Guard[]): number => MAX_TXN_OPS - guards.length

/**
 * `casPartition` for several partitions in one transaction (one revision, one watch batch for
 * every broker): all written if every partition key is still at its `expected` revision and every
 * guard holds, else none (null). At most `casBatchSize(guards)` writes.
 */
export async function casPartitions(store: MetadataStore, writes: readonly PartitionWrite[], guards: readonly Guard[] = []): Promise<bigint | null> {
  if (writes.length > casBatchSize(guards)) throw new Error(`${writes.length} partition writes exceed a transaction's ${casBatchSize(guards)}`)
  const compares: Compare[] = writes.map((w) => compare.modRevision(partitionKey(w.topicId, w.partition), '==', w.expected))
  for (const g of guards) compares.push(g.target === 'Mod' ? compare.modRevision(g.key, '==', g.value) : compare.createRevision(g.key, '==', g.value))
  const res = await store.txn({ compare: compares, success: writes.map((w) => op.put(partitionKey(w.topicId, w.partition), encode(stored(w.next)))) })
  return res.succeeded ? res.revision : null
}

function stored(next: PartitionRegistration): PartitionRegistration {
  return { replicas: [...next.replicas], isr: [...next.isr], leader: next.leader, leaderEpoch: next.leaderEpoch, partitionEpoch: next.partitionEpoch }
}

export function sameRegistration(a: PartitionRegistration, b: PartitionRegistration): boolean {
  return a.leader === b.leader && a.leaderEpoch === b.leaderEpoch && a.partitionEpoch === b.partitionEpoch && sameList(a.isr, b.isr) && sameList(a.replicas, b.replicas)
}

export function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}
