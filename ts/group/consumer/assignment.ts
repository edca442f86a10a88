/**
 * A KIP-848 assignment: partitions by topic id (the topic id's hex, as Kafka keys them by Uuid),
 * each topic with at least one partition. Used for a member's current assignment, its partitions
 * pending revocation, and the target assignment; treated as immutable once built.
 */
export type Assignment = ReadonlyMap<string, ReadonlySet<number>>

export const EMPTY_ASSIGNMENT: Assignment = new Map()

/** A mutable deep copy. */
export function copyAssignment(a: Assignment): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>()
  for (const [topicId, partitions] of a) out.set(topicId, new Set(partitions))
  return out
}

/** The same topics and partitions. */
export function assignmentEquals(a: Assignment, b: Assignment): boolean {
  if (a.size !== b.size) return false
  for (const [topicId, partitions] of a) {
    const other = b.get(topicId)
    if (!other || other.size !== partitions.size) return false
    for (const p of partitions) if (!other.has(p)) return false
  }
  return true
}

/** How many partitions. */
export function assignmentSize(a: Assignment): number {
  let n = 0
  for (const partitions of a.values()) n += partitions.size
  return n
}

/** Adds `partition` of `topicId` to a mutable assignment. */
export function addPartition(a: Map<string, Set<number>>, topicId: string, partition: number): void {
  let partitions = a.get(topicId)
  if (!partitions) a.set(topicId, (partitions = new Set()))
  partitions.add(partition)
}

/** Drops the topics left without partitions. */
export function withoutEmptyTopics(a: Map<string, Set<number>>): Map<string, Set<number>> {
  for (const [topicId, partitions] of a) if (partitions.size === 0) a.delete(topicId)
  return a
}

/** An assignment from the wire's list of topic ids and partitions. */
export function assignmentOf(topics: ReadonlyArray<{ topicId: Buffer | string; partitions: readonly number[] }>): Assignment {
  const out = new Map<string, Set<number>>()
  for (const t of topics) for (const p of t.partitions) addPartition(out, typeof t.topicId === 'string' ? t.topicId : t.topicId.toString('hex'), p)
  return out
}

/** The wire's list of topic ids and partitions (partitions sorted): what `assignmentOf` reads back. */
export function topicPartitionsOf(a: Assignment): Array<{ topicId: Buffer; partitions: number[] }> {
  return [...a].map(([topicId, partitions]) => ({ topicId: Buffer.from(topicId, 'hex'), partitions: [...partitions].sort((x, y) => x - y) }))
}

/** `topic-id-hex-0, 1; ...` for logs. */
export function assignmentToString(a: Assignment): string {
  return [...a]
    .map(([topicId, partitions]) => `${topicId}-${[...partitions].sort((x, y) => x - y).join(',')}`)
    .sort()
    .join('; ')
}
