/**
 * What a share fetch makes of the bytes a log read returned (Kafka's `ShareFetchUtils`): the
 * batches they hold, each marked 'data' (records a member may acquire) or 'skip' (a control
 * batch; read_committed, a batch of a transaction that was aborted), and the bytes to send once
 * the share partition acquired some of them: the batches from the first acquired offset's to the
 * last one's (the client keeps only acquired records; others' batches in between go along, as
 * Kafka sends the fetched batches that hold acquired records).
 *
 * Aborted transactions are those the read answered (`FetchDataInfo.abortedTransactions`, given
 * for TXN_COMMITTED reads only): a producer's transactional batches count as aborted from the
 * aborted transaction's first offset until its ABORT marker, as a read_committed consumer reads
 * them.
 */
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  CONTROL_FLAG_MASK,
  LAST_OFFSET_DELTA_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_OVERHEAD,
  TRANSACTIONAL_FLAG_MASK,
  batchSizeAt,
} from '../protocol/batch-header.js'
import { readEndTxnMarker } from '../protocol/control-record.js'
import type { AbortedTransaction } from '../storage/types.js'
import type { AcquiredRecords, ReadBatch } from './share-partition.js'

/** A batch of the read with where its bytes are. */
export interface LocatedBatch extends ReadBatch {
  position: number
  size: number
}

/** The whole batches of `records` (a trailing partial batch is left out), marked data or skip. */
export function readBatches(records: Buffer, abortedTransactions: readonly AbortedTransaction[] | undefined): LocatedBatch[] {
  const aborted = [...(abortedTransactions ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
  const abortedProducers = new Set<bigint>()
  let nextAborted = 0
  const out: LocatedBatch[] = []
  for (let at = 0; at + RECORD_BATCH_OVERHEAD <= records.length;) {
    const size = batchSizeAt(records, at)
    if (at + size > records.length) break
    const baseOffset = records.readBigInt64BE(at + BASE_OFFSET_OFFSET)
    const lastOffset = baseOffset + BigInt(records.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET))
    const attributes = records.readInt16BE(at + ATTRIBUTES_OFFSET)
    const producerId = records.readBigInt64BE(at + PRODUCER_ID_OFFSET)
    while (nextAborted < aborted.length && aborted[nextAborted]!.firstOffset <= lastOffset) abortedProducers.add(aborted[nextAborted++]!.producerId)
    let kind: ReadBatch['kind'] = 'data'
    if ((attributes & CONTROL_FLAG_MASK) !== 0) {
      kind = 'skip'
      if (readEndTxnMarker(records, at)?.type === 'ABORT') abortedProducers.delete(producerId)
    } else if ((attributes & TRANSACTIONAL_FLAG_MASK) !== 0 && abortedProducers.has(producerId)) kind = 'skip'
    out.push({ baseOffset, lastOffset, kind, position: at, size })
    at += size
  }
  return out
}

/** The bytes of the batches from the one holding the first acquired offset to the one holding the last. */
export function acquiredBytes(records: Buffer, batches: readonly LocatedBatch[], acquired: readonly AcquiredRecords[]): Buffer {
  if (acquired.length === 0) return Buffer.alloc(0)
  const first = acquired[0]!.firstOffset
  const last = acquired[acquired.length - 1]!.lastOffset
  const from = batches.find((b) => b.lastOffset >= first)
  let to: LocatedBatch | undefined
  for (const b of batches) if (b.baseOffset <= last) to = b
  if (from === undefined || to === undefined) return Buffer.alloc(0)
  return records.subarray(from.position, to.position + to.size)
}
