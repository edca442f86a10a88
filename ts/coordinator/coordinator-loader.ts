/**
 * Kafka's `CoordinatorLoaderImpl`: a coordinator (the group, transaction and share coordinators)
 * elected for a partition of its internal topic replays that partition's log from its start to
 * its end before it serves: the batches are read 1 MiB at a time, each record at or past the
 * read's offset is handed to the coordinator (a batch read for an offset inside it starts
 * earlier), and the event loop gets a turn between reads. The coordinator stops the load by
 * answering false from `stillLoading` (it resigned, or was elected again meanwhile).
 */
import type { Log } from '../storage/log.js'
import type { LogRecord, RecordBatch } from '../protocol/record-types.js'

/** How much of the log one read takes. */
const LOAD_READ_BYTES = 1024 * 1024

/**
 * Hands every record of `log` (with its batch) to `replay`, in order; resolves true once the log
 * end was reached, false when `stillLoading` turned false between reads. Read errors reject.
 */
export async function loadCoordinatorLog(log: Log, replay: (batch: RecordBatch, record: LogRecord) => void, stillLoading: () => boolean): Promise<boolean> {
  let offset = log.logStartOffset()
  while (offset < log.logEndOffset()) {
    const batches = log.readBatches(offset, { maxBytes: LOAD_READ_BYTES, isolation: 'LOG_END' })
    if (batches.length === 0) break
    for (const batch of batches) {
      for (const record of batch.records) if (record.offset >= offset) replay(batch, record)
      offset = batch.lastOffset + 1n
    }
    await new Promise((resolve) => setImmediate(resolve))
    if (!stillLoading()) return false
  }
  return true
}
