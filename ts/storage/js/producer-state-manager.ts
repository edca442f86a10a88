/**
 * The log's producer state (Kafka's `ProducerStateManager`, `ProducerAppendInfo`, `CompletedTxn`,
 * `TxnMetadata`), as far as the log needs it: each producer's last batch, epoch, coordinator
 * epoch and open transaction, which make the last stable offset, the transaction index entries
 * and the `.snapshot` files (producer-snapshot.ts). The Rust twin is
 * crates/storage/src/producer_state/mod.rs. (The broker's idempotence checks are
 * ts/replica/producer-state.ts; they do not live in the log.)
 *
 * Every batch with a producer id (>= 0) is applied in offset order, on every append (leader or
 * follower) and when the state is rebuilt from the log (`LogState.replayProducerState`):
 *
 * - a data batch: a new epoch forgets the producer's last batch; the batch becomes the last one
 *   (lastSequence, lastOffset, offsetDelta = lastOffset - baseOffset, timestamp = maxTimestamp);
 *   a transactional batch of a producer with no open transaction opens one at its base offset;
 * - a COMMIT or ABORT marker (a control batch, control-record.ts): the producer's open
 *   transaction, if any, completes (a `CompletedTxn`: first offset, the marker's offset, aborted
 *   or not); the epoch becomes the marker's (forgetting the last batch if it changed), the
 *   coordinator epoch the marker's, the timestamp the marker's, no transaction is open. A marker
 *   with no open transaction completes nothing (Kafka: no transaction index entry, no effect
 *   on the LSO). Other control batches change nothing.
 *
 * Epochs are not checked here (fencing is the produce path's and the coordinator's business):
 * the log applies what it was given, as Kafka does for a replica's appends.
 *
 * A completed transaction stays unstable until the high watermark passes its marker (Kafka's
 * `unreplicatedTxns`): `firstUnstableOffset` is the smallest first offset of the open
 * transactions and of the completed ones whose marker is at or above the high watermark.
 *
 * Idle producers expire (Kafka's `removeExpiredProducers`, producer.id.expiration.ms): one with
 * no open transaction whose last batch's timestamp is `expirationMs` or more before now is
 * forgotten; the next snapshot no longer holds it.
 */
import { NO_PRODUCER_EPOCH } from '../../protocol/batch-header.js'
import type { EndTxnMarker } from '../../protocol/control-record.js'
import type { ProducerStateEntry } from './producer-snapshot.js'

const INT32_MAX = 0x7fffffff

/** What the state needs of one batch. */
export interface ProducerBatch {
  baseOffset: bigint
  lastOffset: bigint
  producerId: bigint
  producerEpoch: number
  baseSequence: number
  maxTimestamp: bigint
  isTransactional: boolean
  /** The marker of a control batch, null for a data batch (or a control batch that is no marker). */
  marker: EndTxnMarker | null
  isControl: boolean
}

/** Kafka's `CompletedTxn`. */
export interface CompletedTxn {
  producerId: bigint
  firstOffset: bigint
  lastOffset: bigint
  isAborted: boolean
}

/** How to undo the producer state changes of an append (`ProducerStateManager.mark`). */
export interface ProducerStateMark {
  /** Each producer changed since the mark, as it was then (undefined: unknown then). */
  before: Map<bigint, ProducerStateEntry | undefined>
  unreplicated: number
}

export function emptyEntry(producerId: bigint): ProducerStateEntry {
  return {
    producerId,
    producerEpoch: NO_PRODUCER_EPOCH,
    lastSequence: -1,
    lastOffset: -1n,
    offsetDelta: 0,
    timestamp: -1n,
    coordinatorEpoch: -1,
    currentTxnFirstOffset: -1n,
  }
}

/** Kafka's `DefaultRecordBatch.incrementSequence`: sequences wrap at Int32.MAX to 0. */
function lastSequenceOf(baseSequence: number, delta: number): number {
  if (baseSequence < 0) return -1
  return baseSequence > INT32_MAX - delta ? delta - (INT32_MAX - baseSequence) - 1 : baseSequence + delta
}

export class ProducerStateManager {
  private producers = new Map<bigint, ProducerStateEntry>()
  /** Open transactions: producer id -> first offset (Kafka's `ongoingTxns`). */
  private ongoing = new Map<bigint, bigint>()
  /** Completed transactions whose marker the high watermark has not passed yet. */
  private unreplicated: CompletedTxn[] = []
  /** The undo record of the append in progress, or null. */
  private journal: ProducerStateMark | null = null
  /** Offsets below this are applied (Kafka's mapEndOffset). */
  mapEndOffset = 0n

  /** Starts over from `entries` (a snapshot's) at `offset`. */
  reset(entries: readonly ProducerStateEntry[], offset: bigint): void {
    this.producers = new Map(entries.map((e) => [e.producerId, { ...e }]))
    this.ongoing = new Map(entries.filter((e) => e.currentTxnFirstOffset >= 0n).map((e) => [e.producerId, e.currentTxnFirstOffset]))
    this.unreplicated = []
    this.journal = null
    this.mapEndOffset = offset
  }

  /** The entries in producer id order (the snapshot's order). */
  entries(): ProducerStateEntry[] {
    return [...this.producers.values()].sort((a, b) => (a.producerId < b.producerId ? -1 : a.producerId > b.producerId ? 1 : 0))
  }

  entry(producerId: bigint): ProducerStateEntry | undefined {
    return this.producers.get(producerId)
  }

  /** Starts recording changes so that `rollback` can undo them. */
  mark(): void {
    this.journal = { before: new Map(), unreplicated: this.unreplicated.length }
  }

  /** Ends the recording: the changes stay. */
  commit(): void {
    this.journal = null
  }

  /** Undoes every change since `mark`. */
  rollback(): void {
    const j = this.journal
    if (j === null) return
    for (const [id, before] of j.before) {
      if (before === undefined) this.producers.delete(id)
      else this.producers.set(id, before)
      if (before !== undefined && before.currentTxnFirstOffset >= 0n) this.ongoing.set(id, before.currentTxnFirstOffset)
      else this.ongoing.delete(id)
    }
    this.unreplicated.length = j.unreplicated
    this.journal = null
  }

  /**
   * Applies one batch (Kafka's `ProducerAppendInfo.append`); returns the transaction its marker
   * completed, which the caller indexes (if aborted) and then passes to `completeTxn`.
   */
  apply(batch: ProducerBatch): CompletedTxn | null {
    if (batch.lastOffset >= this.mapEndOffset) this.mapEndOffset = batch.lastOffset + 1n
    if (batch.producerId < 0n) return null
    if (batch.isControl && batch.marker === null) return null
    const id = batch.producerId
    const current = this.producers.get(id)
    if (this.journal !== null && !this.journal.before.has(id)) this.journal.before.set(id, current)
    const e = current === undefined ? emptyEntry(id) : { ...current }
    if (e.producerEpoch !== batch.producerEpoch) {
      e.producerEpoch = batch.producerEpoch
      e.lastSequence = -1
      e.lastOffset = -1n
      e.offsetDelta = 0
    }
    e.timestamp = batch.maxTimestamp
    let completed: CompletedTxn | null = null
    if (batch.marker !== null) {
      if (e.currentTxnFirstOffset >= 0n) {
        completed = { producerId: id, firstOffset: e.currentTxnFirstOffset, lastOffset: batch.lastOffset, isAborted: batch.marker.type === 'ABORT' }
      }
      e.currentTxnFirstOffset = -1n
      e.coordinatorEpoch = batch.marker.coordinatorEpoch
    } else {
      const offsetDelta = Number(batch.lastOffset - batch.baseOffset)
      e.lastSequence = lastSequenceOf(batch.baseSequence, offsetDelta)
      e.lastOffset = batch.lastOffset
      e.offsetDelta = offsetDelta
      if (batch.isTransactional && e.currentTxnFirstOffset < 0n) e.currentTxnFirstOffset = batch.baseOffset
    }
    this.producers.set(id, e)
    if (e.currentTxnFirstOffset >= 0n) this.ongoing.set(id, e.currentTxnFirstOffset)
    else this.ongoing.delete(id)
    return completed
  }

  /** Kafka's `removeExpiredProducers`: forgets the idle producers with no open transaction; how many. */
  removeExpiredProducers(nowMs: bigint, expirationMs: bigint): number {
    let removed = 0
    for (const [id, e] of this.producers) {
      if (e.currentTxnFirstOffset < 0n && nowMs - e.timestamp >= expirationMs) {
        this.producers.delete(id)
        removed++
      }
    }
    return removed
  }

  /**
   * Kafka's `lastStableOffset(completedTxn)`: the LSO once `txn` completes, as its transaction
   * index entry records it: the first offset of the oldest transaction of another producer still
   * open, else the marker's offset + 1.
   */
  lastStableOffsetAfter(txn: CompletedTxn): bigint {
    let first = -1n
    for (const [id, offset] of this.ongoing) {
      if (id !== txn.producerId && (first < 0n || offset < first)) first = offset
    }
    return first >= 0n ? first : txn.lastOffset + 1n
  }

  /** Kafka's `completeTxn`: the transaction stays unstable until the high watermark passes its marker. */
  completeTxn(txn: CompletedTxn, highWatermark: bigint): void {
    if (txn.lastOffset >= highWatermark) this.unreplicated.push(txn)
  }

  /** Kafka's `onHighWatermarkUpdated`: completed transactions whose marker is below it are stable. */
  onHighWatermarkUpdated(highWatermark: bigint): void {
    if (this.unreplicated.length > 0) this.unreplicated = this.unreplicated.filter((t) => t.lastOffset >= highWatermark)
  }

  /** The smallest first offset of the open and the not yet replicated transactions, or null. */
  firstUnstableOffset(): bigint | null {
    let first: bigint | null = null
    for (const offset of this.ongoing.values()) if (first === null || offset < first) first = offset
    for (const t of this.unreplicated) if (first === null || t.firstOffset < first) first = t.firstOffset
    return first
  }
}
