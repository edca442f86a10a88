/**
 * Offsets committed inside transactions (TxnOffsetCommit) and not yet decided (Kafka's
 * `pendingTransactionalOffsetCommits` of `GroupMetadata`): per producer id, the commits it wrote
 * to `__consumer_offsets` in a transactional batch, with their log offsets. They are not visible
 * to OffsetFetch until the transaction's COMMIT marker reaches the offsets partition; then they
 * are applied (a later record of the same key still wins), and an ABORT marker drops them.
 * OffsetFetch with requireStable answers UNSTABLE_OFFSET_COMMIT for a partition that has one.
 */
import type { OffsetCommitEntry } from './offsets-topic.js'

export interface PendingTxnOffset {
  group: string
  entry: OffsetCommitEntry
  /** The log offset of its record. */
  at: bigint
}

export class PendingTransactionalOffsets {
  private readonly byProducer = new Map<bigint, PendingTxnOffset[]>()

  get size(): number {
    return this.byProducer.size
  }

  add(producerId: bigint, offset: PendingTxnOffset): void {
    let list = this.byProducer.get(producerId)
    if (!list) this.byProducer.set(producerId, (list = []))
    list.push(offset)
  }

  /** The transaction of `producerId` ended: its commits, to apply (COMMIT) or forget (ABORT). */
  complete(producerId: bigint): PendingTxnOffset[] {
    const list = this.byProducer.get(producerId) ?? []
    this.byProducer.delete(producerId)
    return list
  }

  /** Whether a transaction not yet decided holds a commit for this group and partition. */
  has(group: string, topic: string, partition: number): boolean {
    for (const list of this.byProducer.values()) {
      if (list.some((p) => p.group === group && p.entry.topic === topic && p.entry.partition === partition)) return true
    }
    return false
  }

  /** Whether the group has undecided transactional commits. */
  hasGroup(group: string): boolean {
    for (const list of this.byProducer.values()) if (list.some((p) => p.group === group)) return true
    return false
  }

  clear(): void {
    this.byProducer.clear()
  }
}
