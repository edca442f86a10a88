/**
 * One cleaning round of the twin, with the same request and result as the binding's
 * `cleanLog` (crates/binding/src/cleaner.rs): map [firstDirtyOffset, firstUncleanableOffset)
 * of `segments`, then clean them as one group up to what the map covers.
 */
import type { CleanLogRequest, CleanLogResult } from '../../../native/index.js'
import { buildOffsetMap, cleanSegments, type LastRecord } from './cleaner.js'
import { SkimpyOffsetMap } from './offset-map.js'

export { buildOffsetMap, cleanSegments, cleanedPaths, CLEANED_FILE_SUFFIX } from './cleaner.js'
export { SkimpyOffsetMap } from './offset-map.js'
export { CleanedTransactionMetadata, type AbortedTxn } from './transaction-metadata.js'

export function cleanLog(request: CleanLogRequest): CleanLogResult {
  const segments = request.segments.map((s) => ({ baseOffset: s.baseOffset, logPath: s.logPath }))
  const map = new SkimpyOffsetMap(request.dedupeBufferSize)
  const full = buildOffsetMap(segments, request.firstDirtyOffset, request.firstUncleanableOffset, map, request.aborted, request.maxDecompressedBytes)
  const active = new Map<bigint, LastRecord>()
  for (const p of request.activeProducers) active.set(p.producerId, { lastDataOffset: p.lastDataOffset ?? null, producerEpoch: p.producerEpoch })
  const { paths, stats, retainedAborted } = cleanSegments(request.dir, segments, map, {
    currentTimeMs: request.currentTimeMs,
    deleteRetentionMs: request.deleteRetentionMs,
    firstUncleanableOffset: request.firstUncleanableOffset,
    upperBoundOffset: map.latestOffset + 1n,
    aborted: request.aborted,
    lastRecordsOfActiveProducers: active,
    maxDecompressedBytes: request.maxDecompressedBytes,
    indexIntervalBytes: request.indexIntervalBytes,
    segmentIndexBytes: request.segmentIndexBytes,
  })
  return {
    paths,
    mapFull: full,
    mapSize: map.size,
    mapMemory: map.memory,
    latestOffset: map.latestOffset,
    bytesRead: stats.bytesRead,
    bytesWritten: stats.bytesWritten,
    recordsRead: stats.recordsRead,
    recordsRetained: stats.recordsRetained,
    retainedAborted,
  }
}
