/**
 * A segment's `<base>.txnindex`: Kafka's `TransactionIndex`, the aborted transactions whose ABORT
 * marker was appended to the segment, in append order (docs/storage.md "Transaction index").
 * The Rust twin is crates/storage/src/index/txn_index.rs.
 *
 * Entries of 34 bytes (Kafka's `AbortedTxn`), big-endian, nothing else in the file:
 *
 *   version int16 (0) | producerId int64 | firstOffset int64 | lastOffset int64 | lastStableOffset int64
 *
 * firstOffset is the transaction's first offset, lastOffset the ABORT marker's offset, and
 * lastStableOffset the LSO right after the marker (the first offset of the oldest transaction
 * of another producer still open, else lastOffset + 1): a search for aborted transactions below
 * an upper bound can stop at the first entry whose lastStableOffset reaches it.
 *
 * The file exists only once an entry is appended (as in Kafka). Entries live in memory (few:
 * one per aborted transaction); an append writes its 34 bytes at the end of the file (no fsync:
 * the segment's flush syncs it), truncation cuts the file. A file whose size is not a multiple
 * of 34 has a torn last entry (a crash while appending): the loader recovers that segment.
 */
import * as fs from 'node:fs'
import { FILE_MODE, io } from './files.js'

export const ABORTED_TXN_SIZE = 34
export const ABORTED_TXN_VERSION = 0

/** Kafka's `AbortedTxn`. */
export interface AbortedTxn {
  producerId: bigint
  firstOffset: bigint
  lastOffset: bigint
  lastStableOffset: bigint
}

export type { AbortedTransaction } from '../types.js'

/** Kafka's `TxnIndexSearchResult`: complete when an entry's LSO reached the upper bound. */
export interface TxnIndexSearchResult {
  abortedTransactions: AbortedTxn[]
  isComplete: boolean
}

export class TransactionIndex {
  readonly file: string
  private entries: AbortedTxn[]

  constructor(file: string, entries: AbortedTxn[] = []) {
    this.file = file
    this.entries = entries
  }

  /** Parses a file's bytes; null if its size is not a whole number of entries or a version is unknown. */
  static parse(bytes: Buffer): AbortedTxn[] | null {
    if (bytes.length % ABORTED_TXN_SIZE !== 0) return null
    const out: AbortedTxn[] = []
    for (let at = 0; at < bytes.length; at += ABORTED_TXN_SIZE) {
      if (bytes.readInt16BE(at) !== ABORTED_TXN_VERSION) return null
      out.push({
        producerId: bytes.readBigInt64BE(at + 2),
        firstOffset: bytes.readBigInt64BE(at + 10),
        lastOffset: bytes.readBigInt64BE(at + 18),
        lastStableOffset: bytes.readBigInt64BE(at + 26),
      })
    }
    return out
  }

  static encode(entries: readonly AbortedTxn[]): Buffer {
    const buf = Buffer.alloc(entries.length * ABORTED_TXN_SIZE)
    entries.forEach((e, i) => {
      const at = i * ABORTED_TXN_SIZE
      buf.writeInt16BE(ABORTED_TXN_VERSION, at)
      buf.writeBigInt64BE(e.producerId, at + 2)
      buf.writeBigInt64BE(e.firstOffset, at + 10)
      buf.writeBigInt64BE(e.lastOffset, at + 18)
      buf.writeBigInt64BE(e.lastStableOffset, at + 26)
    })
    return buf
  }

  get count(): number {
    return this.entries.length
  }

  all(): readonly AbortedTxn[] {
    return this.entries
  }

  /** Appends an entry to the file (creating it); Kafka requires lastOffsets to grow. */
  append(txn: AbortedTxn): void {
    const bytes = TransactionIndex.encode([txn])
    io('append to transaction index', this.file, () => fs.appendFileSync(this.file, bytes, { mode: FILE_MODE }))
    this.entries.push(txn)
  }

  /** Keeps the first `keep` entries (undoing a failed append); the file follows. */
  truncateToEntries(keep: number): void {
    if (keep >= this.entries.length) return
    this.entries.length = keep
    this.rewrite()
  }

  /** Kafka's `truncateTo`: drops the entries whose lastOffset >= offset. */
  truncateTo(offset: bigint): void {
    const keep = this.entries.findIndex((e) => e.lastOffset >= offset)
    if (keep >= 0) this.truncateToEntries(keep)
  }

  /** Replaces every entry (recovery's rebuild); an empty index has no file. */
  reset(entries: AbortedTxn[]): void {
    this.entries = entries
    this.rewrite()
  }

  /**
   * Kafka's `collectAbortedTxns`: the entries overlapping [fetchOffset, upperBoundOffset), stopping
   * after the first whose lastStableOffset reaches the upper bound (complete).
   */
  collectAbortedTxns(fetchOffset: bigint, upperBoundOffset: bigint): TxnIndexSearchResult {
    const abortedTransactions: AbortedTxn[] = []
    for (const e of this.entries) {
      if (e.lastOffset >= fetchOffset && e.firstOffset < upperBoundOffset) abortedTransactions.push(e)
      if (e.lastStableOffset >= upperBoundOffset) return { abortedTransactions, isComplete: true }
    }
    return { abortedTransactions, isComplete: false }
  }

  private rewrite(): void {
    if (this.entries.length === 0) io('delete transaction index', this.file, () => fs.rmSync(this.file, { force: true }))
    else io('write transaction index', this.file, () => fs.writeFileSync(this.file, TransactionIndex.encode(this.entries), { mode: FILE_MODE }))
  }
}
