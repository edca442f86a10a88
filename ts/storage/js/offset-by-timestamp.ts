/**
 * ListOffsets by timestamp over a log's segments (Kafka's `UnifiedLog.fetchOffsetByTimestamp`
 * for timestamps >= 0 and for MAX_TIMESTAMP). Headers are scanned; only a batch that can hold
 * the answer is read and decoded.
 */
import { MAX_TIMESTAMP_OFFSET, PARTITION_LEADER_EPOCH_OFFSET } from '../../protocol/batch-header.js'
import { decodeBatch } from '../../protocol/records.js'
import type { TimestampAndOffset } from '../types.js'
import type { LogSegment } from './log-segment.js'

/**
 * The first record with timestamp >= `timestamp` and offset >= `logStartOffset`: in the first
 * segment whose largest timestamp reaches it, from the time index's floor entry (Kafka's
 * `LogSegment.findOffsetByTimestamp`), batches by maxTimestamp, then records. Null if none.
 */
export function findOffsetByTimestamp(segments: readonly LogSegment[], timestamp: bigint, logStartOffset: bigint): TimestampAndOffset | null {
  const seg = segments.find((s) => (s.maxTimestampSoFar >= 0n ? s.maxTimestampSoFar >= timestamp : s.largestTimestamp() >= Number(timestamp)))
  if (seg === undefined) return null
  const slot = seg.timeIndex.slotFor(timestamp)
  const fromRel = Math.max(slot < 0 ? 0 : seg.timeIndex.relativeOffsetAt(slot), seg.relativeOffset(logStartOffset))
  let result: TimestampAndOffset | null = null
  seg.scanHeaders(seg.offsetIndex.lookupPosition(fromRel), (buf, at, position, size) => {
    if (buf.readBigInt64BE(at + MAX_TIMESTAMP_OFFSET) < timestamp) return true
    const epoch = buf.readInt32BE(at + PARTITION_LEADER_EPOCH_OFFSET)
    for (const r of decodeBatch(seg.readBytes(position, size)).records) {
      if (r.timestamp >= timestamp && r.offset >= logStartOffset) {
        result = { timestamp: r.timestamp, offset: r.offset, leaderEpoch: epoch >= 0 ? epoch : -1 }
        return false
      }
    }
    return true
  })
  return result
}

/**
 * MAX_TIMESTAMP: the first record carrying the log's greatest timestamp, found in the batch
 * whose maxTimestamp it is (Kafka 3.x). Null for a log without timestamps.
 */
export function findOffsetOfMaxTimestamp(segments: readonly LogSegment[]): TimestampAndOffset | null {
  let seg: LogSegment | null = null
  for (const s of segments) if (s.maxTimestampSoFar >= 0n && (seg === null || s.maxTimestampSoFar > seg.maxTimestampSoFar)) seg = s
  if (seg === null) return null
  const found = seg
  const target = found.maxTimestampSoFar
  let result: TimestampAndOffset | null = null
  found.scanHeaders(found.offsetIndex.lookupPosition(found.offsetOfMaxTimestampSoFar), (buf, at, position, size) => {
    if (buf.readBigInt64BE(at + MAX_TIMESTAMP_OFFSET) !== target) return true
    const epoch = buf.readInt32BE(at + PARTITION_LEADER_EPOCH_OFFSET)
    const r = decodeBatch(found.readBytes(position, size)).records.find((rec) => rec.timestamp === target)
    if (r === undefined) return true
    result = { timestamp: target, offset: r.offset, leaderEpoch: epoch >= 0 ? epoch : -1 }
    return false
  })
  return result
}
