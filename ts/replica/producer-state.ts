/**
 * Producer state of one partition (Kafka's `ProducerStateManager`, `ProducerStateEntry` and
 * `ProducerAppendInfo`): for each producer id, its epoch and the sequence ranges and offsets of
 * its last `NUM_BATCHES_TO_RETAIN` (5) batches, which is what an idempotent producer needs:
 *
 * - a batch equal (epoch, first and last sequence) to one of the last 5 is a retry: it is not
 *   appended, and answered with the offsets of the original (Kafka answers NONE, not
 *   DUPLICATE_SEQUENCE_NUMBER);
 * - an epoch older than the producer's -> INVALID_PRODUCER_EPOCH (since Kafka 2.7, instead of
 *   PRODUCER_FENCED, which only the transaction coordinator returns now);
 * - a new epoch must start at sequence 0 (else OUT_OF_ORDER_SEQUENCE_NUMBER), unless the
 *   producer had no epoch yet;
 * - within an epoch the first sequence must follow the last one (lastSeq + 1, or 0 after
 *   Int32.MAX) -> else OUT_OF_ORDER_SEQUENCE_NUMBER;
 * - a producer of which nothing is known is accepted at any sequence: Kafka stopped returning
 *   UNKNOWN_PRODUCER_ID for this in 2.5 (KIP-360, "if there is no current producer epoch ...
 *   accept writes with any sequence number"), because the state may be gone through retention
 *   or DeleteRecords while the producer is alive;
 * - a batch with a producer id but no sequence (-1) is INVALID_RECORD (Kafka's LogValidator).
 *
 * Transactions (KIP-98; Kafka's `ProducerAppendInfo.appendDataBatch` / `appendEndTxnMarker`):
 * an entry remembers the first offset of its open transaction (`currentTxnFirstOffset`, set by
 * its first transactional batch) and the epoch of the coordinator whose marker it saw last. Who
 * appends matters (`AppendOrigin`, Kafka's):
 *
 * - CLIENT batches have their sequence checked as above; control batches are refused
 *   (INVALID_RECORD: only a coordinator ends transactions);
 * - COORDINATOR batches (a transaction marker, or the group coordinator's transactional offset
 *   commits in `__consumer_offsets`) carry no sequence: only the epoch is checked. A marker from
 *   an epoch older than the producer's is INVALID_PRODUCER_EPOCH, and one from a coordinator
 *   epoch older than the last marker's TRANSACTION_COORDINATOR_FENCED; a marker closes the open
 *   transaction and may raise the producer's epoch (the coordinator aborts a fenced producer's
 *   transaction at the bumped epoch).
 *
 * One producer state per partition, owned by the log (as Kafka's `UnifiedLog` owns its
 * `ProducerStateManager`): the log keeps each producer's epoch, last batch, coordinator epoch
 * and open transaction, writes them to its `.snapshot` files (at each roll and on close, in
 * Kafka's ProducerSnapshot v1 format: ts/storage/js/producer-snapshot.ts) and on open loads the
 * newest snapshot and applies the batches after it. This window joins it (`loadFromLog`): every
 * producer the log knows starts with its last batch (what Kafka's snapshot holds: Kafka keeps
 * no more across a restart), so a retry of the last batch of a producer that wrote long before
 * the restart is still found; the batch headers of the log's newest segments holding at least
 * `PRODUCER_STATE_SCAN_BYTES` then give the producers active there up to 5 batches again (and
 * their offsets and LogAppendTime as answered). The log's entry has the last word on the epoch,
 * the coordinator epoch and the open transaction.
 *
 * Producers whose batches fall below the log start offset (DeleteRecords, retention) stay, as
 * in Kafka since KIP-360 (its `onLogStartOffsetIncremented` deletes snapshots, not producers): a
 * retry of a deleted batch is still a duplicate, answered with its original offsets. Idle
 * producers expire
 * (`removeExpiredProducers`, producer.id.expiration.ms: no open transaction and a last
 * timestamp at least that old), here and in the log, every
 * producer.id.expiration.check.interval.ms (ts/replica/replica-manager.ts); an expired
 * producer is then unknown, hence accepted at any sequence, as in Kafka.
 */
import { CONTROL_FLAG_MASK, NO_PRODUCER_EPOCH, NO_SEQUENCE, TRANSACTIONAL_FLAG_MASK, type BatchHeader } from '../protocol/batch-header.js'
import { decodeEndTransactionMarker } from '../protocol/control-record.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { batchesOf, decodeBatch } from '../protocol/records.js'
import type { Log } from '../storage/log.js'
import type { AppendOrigin, ProducerStateEntry as LogProducerStateEntry } from '../storage/types.js'

/** Kafka's `ProducerStateEntry.NUM_BATCHES_TO_RETAIN`: a client has at most 5 requests in flight. */
export const NUM_BATCHES_TO_RETAIN = 5
/** How much of the log's tail `loadFromLog` scans for the last 5 batches (whole segments). */
export const PRODUCER_STATE_SCAN_BYTES = 32 * 1024 * 1024
const INT32_MAX = 0x7fffffff
const SCAN_CHUNK_BYTES = 1024 * 1024

/** One retained batch of a producer. */
export interface BatchMetadata {
  firstSeq: number
  lastSeq: number
  firstOffset: bigint
  lastOffset: bigint
  /** The LogAppendTime the batch was answered with, -1 for CreateTime. */
  logAppendTime: bigint
}

export interface ProducerStateEntry {
  producerId: bigint
  producerEpoch: number
  /** Oldest first, at most NUM_BATCHES_TO_RETAIN. */
  batches: BatchMetadata[]
  /** The epoch of the coordinator that wrote this producer's last marker; -1 before any. */
  coordinatorEpoch: number
  /** The first offset of the producer's open transaction; null when none is open. */
  currentTxnFirstOffset: bigint | null
  /** The max timestamp of the producer's last batch (DescribeProducers); -1 unknown. */
  lastTimestamp: bigint
}

/** Kafka's `AppendOrigin`: who appends (see the module comment); a leader append's origins, or a follower's. */
export type ProducerAppendOrigin = AppendOrigin | 'REPLICATION'

/**
 * The producer fields of a batch header, with its attributes; a control batch also carries the
 * coordinator epoch of its end transaction marker (-1 when it holds none).
 */
export type ProducerBatch = Pick<BatchHeader, 'producerId' | 'producerEpoch' | 'baseSequence' | 'lastOffsetDelta'> &
  Partial<Pick<BatchHeader, 'attributes' | 'maxTimestamp'>> & {
    coordinatorEpoch?: number
    /** A marker's transaction version (WriteTxnMarkers v2's, KIP-1228); 0 when not given. */
    transactionVersion?: number
  }

/** Kafka's Short.MAX_VALUE: the last epoch of a producer id. */
const MAX_PRODUCER_EPOCH = 32767

function isControl(batch: ProducerBatch): boolean {
  return ((batch.attributes ?? 0) & CONTROL_FLAG_MASK) !== 0
}

function isTransactional(batch: ProducerBatch): boolean {
  return ((batch.attributes ?? 0) & TRANSACTIONAL_FLAG_MASK) !== 0
}

export type ProducerCheck =
  /** Append; call `update` for each batch once its offsets are known. */
  | { kind: 'append' }
  /** A retry of a batch already in the log: answer with its offsets, do not append. */
  | { kind: 'duplicate'; batch: BatchMetadata }
  | { kind: 'error'; errorCode: number; message: string }

/** The coordinator epoch of the end transaction marker in the control batch at `buf[at]`; -1 if none. */
export function markerEpochAt(buf: Buffer, at: number): number {
  try {
    const record = decodeBatch(buf, at).records[0]
    return record ? (decodeEndTransactionMarker(record.key, record.value)?.coordinatorEpoch ?? -1) : -1
  } catch {
    return -1
  }
}

/** The last sequence of a batch, wrapping after Int32.MAX as Kafka's `incrementSequence`. */
export function lastSequenceOf(baseSequence: number, lastOffsetDelta: number): number {
  if (baseSequence > INT32_MAX - lastOffsetDelta) return lastOffsetDelta - (INT32_MAX - baseSequence) - 1
  return baseSequence + lastOffsetDelta
}

/** The first sequence of a batch from its last one, wrapping as Kafka's `decrementSequence`. */
function firstSequenceOf(lastSeq: number, offsetDelta: number): number {
  return lastSeq < offsetDelta ? INT32_MAX - (offsetDelta - lastSeq) + 1 : lastSeq - offsetDelta
}

function inSequence(lastSeq: number, nextSeq: number): boolean {
  return nextSeq === lastSeq + 1 || (nextSeq === 0 && lastSeq === INT32_MAX)
}

/** The retained batch with these sequences (a retry of it), if any. */
function findBatch(batches: readonly BatchMetadata[], firstSeq: number, lastSeq: number): BatchMetadata | undefined {
  for (let i = 0; i < batches.length; i++) {
    const b = batches[i]!
    if (b.firstSeq === firstSeq && b.lastSeq === lastSeq) return b
  }
  return undefined
}

function lastSeqOf(entry: ProducerStateEntry): number {
  return entry.batches.length === 0 ? NO_SEQUENCE : entry.batches[entry.batches.length - 1]!.lastSeq
}

export class ProducerStateManager {
  private readonly producers = new Map<bigint, ProducerStateEntry>()

  /** Every producer's state (DescribeProducers). */
  entries(): IterableIterator<ProducerStateEntry> {
    return this.producers.values()
  }

  /** The producer's state, if any. */
  lastEntry(producerId: bigint): ProducerStateEntry | undefined {
    return this.producers.get(producerId)
  }

  get size(): number {
    return this.producers.size
  }

  /**
   * Checks the batches of one produce request, in order, against the state and against each
   * other (a second batch of the same producer follows the first). Changes nothing.
   */
  check(batches: readonly ProducerBatch[], origin: ProducerAppendOrigin = 'CLIENT'): ProducerCheck {
    // The state as the request's earlier batches leave it (Kafka's `updatedEntry`); a request
    // of one batch (every Produce from v3 on) has no earlier batches to remember.
    const updated = batches.length > 1 ? new Map<bigint, { epoch: number; lastSeq: number }>() : null
    for (const batch of batches) {
      const { producerId, producerEpoch, baseSequence } = batch
      if (producerId < 0n) continue
      if (isControl(batch) && origin === 'CLIENT') {
        return { kind: 'error', errorCode: ErrorCode.INVALID_RECORD, message: 'clients may not append control batches' }
      }
      if (origin === 'COORDINATOR') {
        const error = this.checkCoordinatorBatch(batch, updated?.get(producerId)?.epoch)
        if (error !== null) return error
        const current = this.producers.get(producerId)
        updated?.set(producerId, { epoch: producerEpoch, lastSeq: current && current.producerEpoch === producerEpoch ? lastSeqOf(current) : NO_SEQUENCE })
        continue
      }
      if (baseSequence < 0) {
        return { kind: 'error', errorCode: ErrorCode.INVALID_RECORD, message: `invalid sequence number ${baseSequence} in a record batch of producer ${producerId}` }
      }
      const lastSeq = lastSequenceOf(baseSequence, batch.lastOffsetDelta)
      const current = this.producers.get(producerId)
      const duplicate = current?.producerEpoch === producerEpoch ? findBatch(current.batches, baseSequence, lastSeq) : undefined
      if (duplicate !== undefined) return { kind: 'duplicate', batch: duplicate }

      const currentEpoch = current?.producerEpoch ?? NO_PRODUCER_EPOCH
      let view = updated?.get(producerId)
      if (!view) {
        view = { epoch: currentEpoch, lastSeq: current ? lastSeqOf(current) : NO_SEQUENCE }
        updated?.set(producerId, view)
      }
      if (producerEpoch < view.epoch) {
        return {
          kind: 'error',
          errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
          message: `epoch ${producerEpoch} of producer ${producerId} is smaller than the last seen epoch ${view.epoch}`,
        }
      }
      if (producerEpoch !== view.epoch) {
        if (baseSequence !== 0 && view.epoch !== NO_PRODUCER_EPOCH) {
          return {
            kind: 'error',
            errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            message: `invalid sequence number ${baseSequence} for the new epoch ${producerEpoch} of producer ${producerId} (current epoch ${view.epoch})`,
          }
        }
      } else if (currentEpoch !== NO_PRODUCER_EPOCH && !inSequence(view.lastSeq, baseSequence)) {
        return {
          kind: 'error',
          errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
          message: `out of order sequence number for producer ${producerId}: ${baseSequence} (incoming), ${view.lastSeq} (current end sequence number)`,
        }
      }
      view.epoch = producerEpoch
      view.lastSeq = lastSeq
    }
    return { kind: 'append' }
  }

  /**
   * Kafka's `checkProducerEpoch` and, for markers, `checkCoordinatorEpoch`. A marker of a
   * transaction version 2 transaction (KIP-1228) carries the epoch its coordinator bumped at the
   * transaction's end, so it must be strictly above the epoch of the transaction's batches; one
   * at the producer's epoch is a retry of a marker already written (no transaction open, or the
   * epoch exhausted at Short.MAX_VALUE) and is written again, as Kafka does.
   */
  private checkCoordinatorBatch(batch: ProducerBatch, earlierEpoch: number | undefined): ProducerCheck | null {
    const current = this.producers.get(batch.producerId)
    const epoch = earlierEpoch ?? current?.producerEpoch ?? NO_PRODUCER_EPOCH
    const tv2Marker = isControl(batch) && (batch.transactionVersion ?? 0) >= 2
    const fenced = tv2Marker ? batch.producerEpoch <= epoch : batch.producerEpoch < epoch
    const markerRetry = tv2Marker && batch.producerEpoch === epoch && (current?.currentTxnFirstOffset == null || batch.producerEpoch === MAX_PRODUCER_EPOCH)
    if (fenced && !markerRetry) {
      return {
        kind: 'error',
        errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
        message: `epoch ${batch.producerEpoch} of producer ${batch.producerId} is ${tv2Marker ? 'not above' : 'smaller than'} the last seen epoch ${epoch} (TV${tv2Marker ? batch.transactionVersion : 0})`,
      }
    }
    const coordinatorEpoch = batch.coordinatorEpoch ?? -1
    if (isControl(batch) && current && coordinatorEpoch < current.coordinatorEpoch) {
      return {
        kind: 'error',
        errorCode: ErrorCode.TRANSACTION_COORDINATOR_FENCED,
        message: `marker of producer ${batch.producerId} from coordinator epoch ${coordinatorEpoch}, older than the last one's ${current.coordinatorEpoch}`,
      }
    }
    return null
  }

  /**
   * Records an appended batch (or one found in the log on load): a new epoch clears the retained
   * batches; the oldest of more than 5 is dropped.
   */
  update(batch: ProducerBatch, firstOffset: bigint, logAppendTime = -1n): void {
    if (batch.producerId < 0n) return
    let entry = this.producers.get(batch.producerId)
    if (!entry) {
      entry = { producerId: batch.producerId, producerEpoch: batch.producerEpoch, batches: [], coordinatorEpoch: -1, currentTxnFirstOffset: null, lastTimestamp: -1n }
      this.producers.set(batch.producerId, entry)
    }
    if (entry.producerEpoch !== batch.producerEpoch) {
      entry.producerEpoch = batch.producerEpoch
      entry.batches = []
    }
    if (batch.maxTimestamp !== undefined) entry.lastTimestamp = batch.maxTimestamp
    if (isControl(batch)) {
      // Kafka's appendEndTxnMarker: the transaction is over.
      if (batch.coordinatorEpoch !== undefined && batch.coordinatorEpoch >= 0) entry.coordinatorEpoch = batch.coordinatorEpoch
      entry.currentTxnFirstOffset = null
      return
    }
    if (isTransactional(batch) && entry.currentTxnFirstOffset === null) entry.currentTxnFirstOffset = firstOffset
    if (batch.baseSequence < 0) return
    entry.batches.push({
      firstSeq: batch.baseSequence,
      lastSeq: lastSequenceOf(batch.baseSequence, batch.lastOffsetDelta),
      firstOffset,
      lastOffset: firstOffset + BigInt(batch.lastOffsetDelta),
      logAppendTime,
    })
    if (entry.batches.length > NUM_BATCHES_TO_RETAIN) entry.batches.shift()
  }

  /**
   * Kafka's `removeExpiredProducers`: forgets the producers with no open transaction whose last
   * timestamp is `expirationMs` or more before `nowMs`; how many.
   */
  removeExpiredProducers(nowMs: bigint, expirationMs: bigint): number {
    let removed = 0
    for (const [id, entry] of this.producers) {
      if (entry.currentTxnFirstOffset === null && nowMs - entry.lastTimestamp >= expirationMs) {
        this.producers.delete(id)
        removed++
      }
    }
    return removed
  }

  /**
   * Joins the log's entry of a producer (see the module comment): a producer the scan did not
   * see starts with its last batch; the log's epoch, coordinator epoch, open transaction and
   * last timestamp win.
   */
  private join(e: LogProducerStateEntry, logAppendTime: boolean): void {
    let entry = this.producers.get(e.producerId)
    if (entry === undefined || entry.producerEpoch !== e.producerEpoch) {
      entry = { producerId: e.producerId, producerEpoch: e.producerEpoch, batches: [], coordinatorEpoch: -1, currentTxnFirstOffset: null, lastTimestamp: -1n }
      if (e.lastOffset >= 0n && e.lastSequence >= 0) {
        entry.batches.push({
          firstSeq: firstSequenceOf(e.lastSequence, e.offsetDelta),
          lastSeq: e.lastSequence,
          firstOffset: e.lastOffset - BigInt(e.offsetDelta),
          lastOffset: e.lastOffset,
          logAppendTime: logAppendTime ? e.timestamp : -1n,
        })
      }
      this.producers.set(e.producerId, entry)
    }
    entry.coordinatorEpoch = e.coordinatorEpoch
    entry.currentTxnFirstOffset = e.currentTxnFirstOffset >= 0n ? e.currentTxnFirstOffset : null
    entry.lastTimestamp = e.timestamp
  }

  /** Forgets everything (the log was truncated or replaced). */
  clear(): void {
    this.producers.clear()
  }

  /** The log's producer state joined by the batch headers of its tail (see the module comment). */
  static loadFromLog(log: Log, scanBytes = PRODUCER_STATE_SCAN_BYTES): ProducerStateManager {
    const state = new ProducerStateManager()
    const segments = log.segments()
    let from = log.logStartOffset()
    let bytes = 0
    for (let i = segments.length - 1; i >= 0; i--) {
      bytes += segments[i]!.size
      if (bytes >= scanBytes || i === 0) {
        if (segments[i]!.baseOffset > from) from = segments[i]!.baseOffset
        break
      }
    }
    const end = log.logEndOffset()
    let offset = from
    while (offset < end) {
      const info = log.read(offset, { maxBytes: SCAN_CHUNK_BYTES, isolation: 'LOG_END', minOneMessage: true })
      if (info.records.size === 0) break
      const buf = log.readSlice(info.records)
      let progressed = false
      for (const { header: h, position } of batchesOf(buf)) {
        const next = h.baseOffset + BigInt(h.lastOffsetDelta) + 1n
        if (next > offset) {
          if ((h.attributes & CONTROL_FLAG_MASK) === 0) state.update(h, h.baseOffset)
          else if (h.producerId >= 0n) state.update({ ...h, coordinatorEpoch: markerEpochAt(buf, position) }, h.baseOffset)
          offset = next
          progressed = true
        }
      }
      if (!progressed) break
    }
    const logAppendTime = log.config.messageTimestampType === 'LogAppendTime'
    for (const e of log.producerStateEntries()) state.join(e, logAppendTime)
    return state
  }
}
