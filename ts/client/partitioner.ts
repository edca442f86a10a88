/**
 * Kafka's default partitioning (BuiltInPartitioner): a record with a key goes to
 * `toPositive(murmur2(key)) % numPartitions`, so the same key lands on the same partition as
 * from a Java producer; records without a key stick to one partition for a batch and move on to
 * the next (round robin) for the next batch, as the sticky partitioner of KIP-480 does (without
 * its broker-load weighting).
 */

/** Kafka's Utils.murmur2 (32-bit MurmurHash2, seed 0x9747b28c). */
export function murmur2(data: Uint8Array): number {
  const length = data.length
  const m = 0x5bd1e995
  let h = (0x9747b28c ^ length) | 0
  const length4 = length >>> 2
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24)
    k = Math.imul(k, m)
    k ^= k >>> 24
    k = Math.imul(k, m)
    h = Math.imul(h, m) ^ k
  }
  const tail = length & ~3
  const rest = length & 3
  if (rest === 3) h ^= data[tail + 2]! << 16
  if (rest >= 2) h ^= data[tail + 1]! << 8
  if (rest >= 1) {
    h ^= data[tail]!
    h = Math.imul(h, m)
  }
  h ^= h >>> 13
  h = Math.imul(h, m)
  h ^= h >>> 15
  return h | 0
}

/** Kafka's Utils.toPositive. */
export const toPositive = (n: number): number => n & 0x7fffffff

/** The partition of a keyed record among `numPartitions`. */
export function partitionForKey(key: Uint8Array, numPartitions: number): number {
  return toPositive(murmur2(key)) % numPartitions
}

/** The partition for records without a key: one per batch, round robin from a random start. */
export class StickyPartitioner {
  private current = new Map<string, number>()

  partition(topic: string, numPartitions: number): number {
    let p = this.current.get(topic)
    if (p === undefined || p >= numPartitions) {
      p = Math.floor(Math.random() * numPartitions)
      this.current.set(topic, p)
    }
    return p
  }

  /** The batch for the topic is complete: the next keyless records go to the next partition. */
  onNewBatch(topic: string, numPartitions: number): void {
    const p = this.current.get(topic) ?? -1
    this.current.set(topic, (p + 1) % numPartitions)
  }
}
