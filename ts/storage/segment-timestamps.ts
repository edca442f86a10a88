/**
 * The timestamps the log cleaner asks of a sealed segment (Kafka's `LogSegment.largestTimestamp`
 * and `getFirstBatchTimestamp`), read from its `.log` file's batch headers: each batch's
 * maxTimestamp sits at a fixed place in its 61-byte header (docs/storage.md), so a walk reads
 * one small header per batch and never the records. The engines' files are not touched.
 */
import { open } from 'node:fs/promises'
import { LENGTH_OFFSET, LOG_OVERHEAD, MAX_TIMESTAMP_OFFSET, RECORD_BATCH_OVERHEAD } from '../protocol/batch-header.js'

export interface SegmentTimestamps {
  /** The first batch's maxTimestamp; -1 for an empty segment. */
  firstBatchTimestamp: bigint
  /** The largest maxTimestamp of its batches; -1 for an empty segment. */
  largestTimestamp: bigint
}

/**
 * The timestamps of the segment file `file` (a sealed segment: it does not change while read).
 * A file gone meanwhile (retention, a cleaning swap) reads as empty.
 */
export async function readSegmentTimestamps(file: string): Promise<SegmentTimestamps> {
  const out: SegmentTimestamps = { firstBatchTimestamp: -1n, largestTimestamp: -1n }
  let handle
  try {
    handle = await open(file, 'r')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out
    throw err
  }
  try {
    const size = (await handle.stat()).size
    const header = Buffer.alloc(RECORD_BATCH_OVERHEAD)
    for (let position = 0; position + RECORD_BATCH_OVERHEAD <= size;) {
      const { bytesRead } = await handle.read(header, 0, RECORD_BATCH_OVERHEAD, position)
      if (bytesRead < RECORD_BATCH_OVERHEAD) break
      const maxTimestamp = header.readBigInt64BE(MAX_TIMESTAMP_OFFSET)
      if (out.firstBatchTimestamp === -1n) out.firstBatchTimestamp = maxTimestamp
      if (maxTimestamp > out.largestTimestamp) out.largestTimestamp = maxTimestamp
      const batchSize = LOG_OVERHEAD + header.readInt32BE(LENGTH_OFFSET)
      if (batchSize < RECORD_BATCH_OVERHEAD) break
      position += batchSize
    }
  } finally {
    await handle.close()
  }
  return out
}
