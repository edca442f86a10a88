/**
 * Kafka's BuiltInPartitioner, the Producer's default: a record with a key goes to
 * `toPositive(murmur2(key)) % numPartitions` (partitioner.ts), the partition a Java producer
 * picks for the same key; a record without a key (or every record with partitioner.ignore.keys)
 * sticks to one partition of its topic until batch.size bytes were produced to it, then moves
 * to another one chosen at random among the partitions that have a leader (all of them when
 * none has), as Kafka does when it has no queue-size statistics (KIP-794 without the adaptive
 * weighting).
 */
import { partitionForKey } from './partitioner.js'

interface StickyPartition {
  partition: number
  producedBytes: number
}

export class BuiltInPartitioner {
  private readonly sticky = new Map<string, StickyPartition>()

  constructor(
    private readonly stickyBatchSize: number,
    private readonly ignoreKeys = false,
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * The partition of a record of `topic` with `key` (bytes, or null); `available` lists the
   * partitions with a leader. Call `onAppend` with the record's size once it is appended.
   */
  partition(topic: string, key: Uint8Array | null, numPartitions: number, available: readonly number[]): number {
    if (key !== null && !this.ignoreKeys) return partitionForKey(key, numPartitions)
    let s = this.sticky.get(topic)
    if (s === undefined || s.partition >= numPartitions) {
      s = { partition: this.next(numPartitions, available, -1), producedBytes: 0 }
      this.sticky.set(topic, s)
    }
    return s.partition
  }

  /** A keyless record of `bytes` was appended to `partition` of `topic`: switch after batch.size. */
  onAppend(topic: string, partition: number, bytes: number, numPartitions: number, available: readonly number[]): void {
    const s = this.sticky.get(topic)
    if (s === undefined || s.partition !== partition) return
    s.producedBytes += bytes
    if (s.producedBytes >= this.stickyBatchSize) {
      s.partition = this.next(numPartitions, available, s.partition)
      s.producedBytes = 0
    }
  }

  private next(numPartitions: number, available: readonly number[], current: number): number {
    const from = available.length > 0 ? available : null
    const count = from ? from.length : numPartitions
    if (count <= 1) return from ? from[0]! : 0
    // another partition than the current one, uniformly among the rest
    let i = Math.floor(this.random() * count)
    const pick = (j: number) => (from ? from[j]! : j)
    if (pick(i) === current) i = (i + 1 + Math.floor(this.random() * (count - 1))) % count
    return pick(i)
  }
}
