/**
 * Kafka's `CleanedTransactionMetadata`, twin of
 * crates/storage/src/cleaner/transaction_metadata.rs: the aborted transactions of the range
 * (the transaction index's entries, transaction-index.ts), taken by first offset, mark the data
 * batches of their producer aborted once reached; an ABORT marker may go when no batch of its
 * transaction was seen in this pass (else its entry is kept for the cleaned `.txnindex`), a
 * COMMIT marker likewise; an empty control batch may go.
 */
import type { AbortedTxn } from '../transaction-index.js'

export type { AbortedTxn }

export class CleanedTransactionMetadata {
  private readonly pending: AbortedTxn[]
  /** producer id -> its transaction and the last offset of an aborted batch seen in this pass. */
  private readonly ongoingAborted = new Map<bigint, { txn: AbortedTxn; seen: bigint | null }>()
  private readonly ongoingCommitted = new Set<bigint>()
  /** Aborted transactions whose ABORT marker stays: the cleaned segment's transaction index. */
  readonly retainedAborted: AbortedTxn[] = []

  constructor(aborted: readonly AbortedTxn[]) {
    this.pending = [...aborted].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
  }

  private consumeAbortedUpTo(offset: bigint): void {
    while (this.pending.length > 0 && this.pending[0]!.firstOffset <= offset) {
      const txn = this.pending.shift()!
      if (!this.ongoingAborted.has(txn.producerId)) this.ongoingAborted.set(txn.producerId, { txn, seen: null })
    }
  }

  /** A data batch was read; true if it belongs to an aborted transaction. */
  onBatchRead(lastOffset: bigint, isTransactional: boolean, producerId: bigint): boolean {
    this.consumeAbortedUpTo(lastOffset)
    if (!isTransactional) return false
    const ongoing = this.ongoingAborted.get(producerId)
    if (ongoing !== undefined) {
      ongoing.seen = lastOffset
      return true
    }
    this.ongoingCommitted.add(producerId)
    return false
  }

  /** A control batch was read (`firstKey` of its first record, null when empty); true if it may go. */
  onControlBatchRead(lastOffset: bigint, producerId: bigint, firstKey: Buffer | null): boolean {
    this.consumeAbortedUpTo(lastOffset)
    if (firstKey === null) return true
    if (firstKey.length < 4) throw new Error('control record key needs 4 bytes')
    const type = firstKey.readInt16BE(2)
    if (type === 0) {
      const ongoing = this.ongoingAborted.get(producerId)
      this.ongoingAborted.delete(producerId)
      if (ongoing === undefined || ongoing.seen === null) return true
      this.retainedAborted.push(ongoing.txn)
      return false
    }
    if (type === 1) return !this.ongoingCommitted.delete(producerId)
    return false
  }
}
