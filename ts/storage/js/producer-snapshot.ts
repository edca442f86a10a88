/**
 * Producer state snapshot files `<offset>.snapshot` (Kafka's `ProducerStateManager`
 * writeSnapshot / readSnapshot, ProducerSnapshot version 1), docs/storage.md "Producer state
 * snapshots". The Rust twin is crates/storage/src/producer_state/snapshot.rs.
 *
 * The producer state as it was at `offset` (everything below it applied), big-endian:
 *
 *   version int16 (1) | crc uint32 | count int32 | count x entry
 *   entry (46 bytes) = producerId int64 | producerEpoch int16 | lastSequence int32 |
 *                      lastOffset int64 | offsetDelta int32 | timestamp int64 |
 *                      coordinatorEpoch int32 | currentTxnFirstOffset int64
 *
 * crc is CRC-32C of every byte after it (count and entries). lastSequence / lastOffset /
 * offsetDelta describe the producer's last data batch (-1 / -1 / 0 when the producer's epoch
 * changed after it, e.g. a transaction marker of a later epoch), timestamp is its last batch's
 * max timestamp (a marker's included), currentTxnFirstOffset is -1 when no transaction is open.
 * Entries are written in producer id order.
 */
import { crc32c } from '../../protocol/crc32c.js'
import type { ProducerStateEntry } from '../types.js'

export const PRODUCER_SNAPSHOT_VERSION = 1
const CRC_OFFSET = 2
const ENTRIES_COUNT_OFFSET = 6
const ENTRIES_OFFSET = 10
export const PRODUCER_SNAPSHOT_ENTRY_SIZE = 46

export type { ProducerStateEntry }

export function encodeProducerSnapshot(entries: readonly ProducerStateEntry[]): Buffer {
  const buf = Buffer.alloc(ENTRIES_OFFSET + entries.length * PRODUCER_SNAPSHOT_ENTRY_SIZE)
  buf.writeInt16BE(PRODUCER_SNAPSHOT_VERSION, 0)
  buf.writeInt32BE(entries.length, ENTRIES_COUNT_OFFSET)
  let at = ENTRIES_OFFSET
  for (const e of entries) {
    buf.writeBigInt64BE(e.producerId, at)
    buf.writeInt16BE(e.producerEpoch, at + 8)
    buf.writeInt32BE(e.lastSequence, at + 10)
    buf.writeBigInt64BE(e.lastOffset, at + 14)
    buf.writeInt32BE(e.offsetDelta, at + 22)
    buf.writeBigInt64BE(e.timestamp, at + 26)
    buf.writeInt32BE(e.coordinatorEpoch, at + 34)
    buf.writeBigInt64BE(e.currentTxnFirstOffset, at + 38)
    at += PRODUCER_SNAPSHOT_ENTRY_SIZE
  }
  buf.writeUInt32BE(crc32c(buf, ENTRIES_COUNT_OFFSET, buf.length), CRC_OFFSET)
  return buf
}

/** The entries of a snapshot file's bytes; throws an Error saying what is wrong. */
export function decodeProducerSnapshot(buf: Buffer): ProducerStateEntry[] {
  if (buf.length < ENTRIES_OFFSET) throw new Error(`snapshot of ${buf.length} bytes is too short`)
  const version = buf.readInt16BE(0)
  if (version !== PRODUCER_SNAPSHOT_VERSION) throw new Error(`unknown snapshot version ${version}`)
  const stored = buf.readUInt32BE(CRC_OFFSET)
  const computed = crc32c(buf, ENTRIES_COUNT_OFFSET, buf.length)
  if (stored !== computed) throw new Error(`snapshot CRC mismatch (stored ${stored}, computed ${computed})`)
  const count = buf.readInt32BE(ENTRIES_COUNT_OFFSET)
  if (count < 0 || ENTRIES_OFFSET + count * PRODUCER_SNAPSHOT_ENTRY_SIZE !== buf.length) {
    throw new Error(`snapshot of ${buf.length} bytes does not hold ${count} entries`)
  }
  const out: ProducerStateEntry[] = []
  for (let i = 0, at = ENTRIES_OFFSET; i < count; i++, at += PRODUCER_SNAPSHOT_ENTRY_SIZE) {
    out.push({
      producerId: buf.readBigInt64BE(at),
      producerEpoch: buf.readInt16BE(at + 8),
      lastSequence: buf.readInt32BE(at + 10),
      lastOffset: buf.readBigInt64BE(at + 14),
      offsetDelta: buf.readInt32BE(at + 22),
      timestamp: buf.readBigInt64BE(at + 26),
      coordinatorEpoch: buf.readInt32BE(at + 34),
      currentTxnFirstOffset: buf.readBigInt64BE(at + 38),
    })
  }
  return out
}
