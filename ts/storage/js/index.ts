/**
 * The pure-TypeScript storage backend: the twin of the Rust engine (crates/storage), same
 * behaviour (docs/storage.md), same bytes on disk.
 */
import { compress } from '../../protocol/compression.js'
import type { RawLog, StorageBackend } from '../types.js'
import { JsLog } from './js-log.js'
import { openSealedSegments, setMaxOpenSegments } from './open-segments.js'

export const jsBackend: StorageBackend = {
  name: 'js',
  openLog(options): Promise<RawLog> {
    return JsLog.open(options)
  },
  compress,
  setMaxOpenSegments,
  openSealedSegments,
}

export { JsLog } from './js-log.js'
export { LeaderEpochFileCache } from './leader-epoch-cache.js'
export { LogSegment } from './log-segment.js'
export { OffsetIndex } from './offset-index.js'
export { TimeIndex } from './time-index.js'
