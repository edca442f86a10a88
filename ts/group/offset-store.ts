/**
 * Committed offsets (Kafka's `GroupMetadataManager` offset half): an in-memory map, written
 * through to an internal log of our own engine, `__consumer_offsets-0`, and replayed from it
 * when the broker starts, so commits survive a restart.
 *
 * Each commit is one record; one OffsetCommit request is one batch (all or nothing). The layout
 * follows Kafka's OffsetCommitKey v1 and OffsetCommitValue v3, big-endian, strings as int16
 * length + UTF-8 (length -1 = null):
 *
 *   key    version int16 = 1 | group string | topic string | partition int32
 *   value  version int16 = 3 | offset int64 | leaderEpoch int32 (-1 none) |
 *          metadata string (nullable) | commitTimestamp int64 (ms)
 *
 * A record with a null value (tombstone) deletes the key: OffsetDelete and DeleteGroups append
 * one per deleted offset, as one batch, as Kafka writes them to __consumer_offsets, so that what
 * was deleted stays deleted after a restart. Later records win on replay. Time and
 * size retention never apply to this log (OFFSETS_LOG_CONFIG); instead it is compacted here,
 * to what Kafka's log cleaner would leave of it, the latest record of each key: once it holds
 * at least `compactionMinRecords` records and more than twice as many as there are live
 * offsets, the active segment is rolled, every live offset is appended again after it, the log
 * is flushed, and the log start offset is moved to the first rewritten record, which deletes
 * the segments before it. A crash before the start offset moved replays the old records and
 * then the rewrite (the same values, the later winning); after it, the rewrite and what came
 * since. So the log and the replay at startup grow with the live offsets, not with every commit.
 */
import type { Logger } from '../logger.js'
import { Reader } from '../protocol/reader.js'
import { Writer } from '../protocol/writer.js'
import type { Log } from '../storage/log.js'
import type { LogManager } from '../storage/log-manager.js'
import type { LogConfig } from '../storage/types.js'

export const OFFSETS_TOPIC = '__consumer_offsets'
export const OFFSETS_PARTITION = 0
const KEY_VERSION = 1
const VALUE_VERSION = 3
/** offset.metadata.max.bytes */
export const OFFSET_METADATA_MAX_BYTES = 4096
const REPLAY_READ_BYTES = 1024 * 1024
/** The default of `compactionMinRecords`: below this many records the log is left as it is. */
export const COMPACTION_MIN_RECORDS = 10_000
/** Live offsets rewritten per batch when the log is compacted. */
const REWRITE_BATCH_RECORDS = 1000

/** No time or size retention (the store compacts the log itself), 100 MiB segments (offsets.topic.segment.bytes). */
export const OFFSETS_LOG_CONFIG: Partial<LogConfig> = { retentionMs: -1, retentionBytes: -1, segmentBytes: 100 * 1024 * 1024 }

export interface CommittedOffset {
  offset: bigint
  leaderEpoch: number
  metadata: string | null
  commitTimestamp: bigint
}

export interface OffsetCommitEntry extends CommittedOffset {
  topic: string
  partition: number
}

export function encodeOffsetKey(group: string, topic: string, partition: number): Buffer {
  return new Writer(64).int16(KEY_VERSION).string(group).string(topic).int32(partition).finish()
}

export function decodeOffsetKey(key: Buffer): { group: string; topic: string; partition: number } {
  const r = new Reader(key)
  const version = r.int16()
  if (version !== KEY_VERSION) throw new Error(`unknown offset key version ${version}`)
  return { group: r.string(), topic: r.string(), partition: r.int32() }
}

export function encodeOffsetValue(v: CommittedOffset): Buffer {
  return new Writer(64).int16(VALUE_VERSION).int64(v.offset).int32(v.leaderEpoch).nullableString(v.metadata).int64(v.commitTimestamp).finish()
}

export function decodeOffsetValue(value: Buffer): CommittedOffset {
  const r = new Reader(value)
  const version = r.int16()
  if (version !== VALUE_VERSION) throw new Error(`unknown offset value version ${version}`)
  return { offset: r.int64(), leaderEpoch: r.int32(), metadata: r.nullableString(), commitTimestamp: r.int64() }
}

/** group -> "topic\0partition" -> offset */
type GroupOffsets = Map<string, Map<string, OffsetCommitEntry>>

export class OffsetStore {
  private readonly log: Log
  private readonly logger: Logger
  private readonly compactionMinRecords: number
  private readonly offsets: GroupOffsets = new Map()
  /** Live offsets, all groups together. */
  private live = 0
  private compacting: Promise<void> | null = null
  /** After a failed compaction, the log end offset below which none is tried again. */
  private retryFrom = 0n

  private constructor(log: Log, logger: Logger, compactionMinRecords: number) {
    this.log = log
    this.logger = logger
    this.compactionMinRecords = compactionMinRecords
  }

  /** Opens (or creates) the internal log and replays it into memory. */
  static async open(logManager: LogManager, logger: Logger, options: { compactionMinRecords?: number } = {}): Promise<OffsetStore> {
    const log = await logManager.getOrCreateLog(OFFSETS_TOPIC, OFFSETS_PARTITION, { config: OFFSETS_LOG_CONFIG })
    const store = new OffsetStore(log, logger, options.compactionMinRecords ?? COMPACTION_MIN_RECORDS)
    const started = Date.now()
    const { records, skipped } = store.replay()
    if (skipped > 0) logger.warn('skipped offsets-log records that are not commits', { log: `${OFFSETS_TOPIC}-${OFFSETS_PARTITION}`, skipped })
    logger.info('loaded committed offsets', { records, groups: store.offsets.size, ms: Date.now() - started })
    store.maybeCompact()
    return store
  }

  /** Applies every record of the log in order; records that do not decode are counted and skipped. */
  private replay(): { records: number; skipped: number } {
    let offset = this.log.logStartOffset()
    const end = this.log.logEndOffset()
    let records = 0
    let skipped = 0
    while (offset < end) {
      const batches = this.log.readBatches(offset, { maxBytes: REPLAY_READ_BYTES, isolation: 'LOG_END' })
      if (batches.length === 0) break
      for (const batch of batches) {
        for (const record of batch.records) {
          if (record.offset < offset || batch.isControl) continue
          try {
            const { group, topic, partition } = decodeOffsetKey(record.key ?? Buffer.alloc(0))
            if (record.value === null) this.forget(group, topic, partition)
            else this.remember(group, { topic, partition, ...decodeOffsetValue(record.value) })
            records++
          } catch {
            skipped++
          }
        }
        offset = batch.lastOffset + 1n
      }
    }
    return { records, skipped }
  }

  /** Appends the commits as one batch, then applies them. */
  commit(group: string, entries: readonly OffsetCommitEntry[]): void {
    if (entries.length === 0) return
    this.log.append(commitRecords(group, entries))
    for (const entry of entries) this.remember(group, entry)
    this.maybeCompact()
  }

  /**
   * Deletes the committed offsets of these partitions that exist: one tombstone each, all in one
   * batch (all or nothing), then forgotten. Returns how many were deleted.
   */
  delete(group: string, partitions: ReadonlyArray<{ topic: string; partition: number }>): number {
    const offsets = this.offsets.get(group)
    const seen = new Set<string>()
    const doomed = partitions.filter((p) => {
      const key = entryKey(p.topic, p.partition)
      if (seen.has(key) || !offsets?.has(key)) return false
      seen.add(key)
      return true
    })
    if (doomed.length === 0) return 0
    const timestamp = BigInt(Date.now())
    this.log.append(doomed.map((p) => ({ key: encodeOffsetKey(group, p.topic, p.partition), value: null, timestamp })))
    for (const p of doomed) this.forget(group, p.topic, p.partition)
    this.maybeCompact()
    return doomed.length
  }

  /** Deletes every committed offset of a group (DeleteGroups); see `delete`. */
  deleteGroup(group: string): number {
    return this.delete(group, this.all(group))
  }

  /** Resolves once no compaction is running (for shutdown and tests). */
  async idle(): Promise<void> {
    while (this.compacting) await this.compacting
  }

  /** Starts a compaction (see the module's comment) if the log has grown enough since the last. */
  private maybeCompact(): void {
    const end = this.log.logEndOffset()
    if (this.compacting || end < this.retryFrom) return
    const records = Number(end - this.log.logStartOffset())
    if (records < this.compactionMinRecords || records <= 2 * this.live) return
    this.compacting = this.compact(records).then(
      // Commits that came meanwhile may call for another already.
      () => {
        this.compacting = null
        try {
          this.maybeCompact()
        } catch {
          // The log closed meanwhile: the next open compacts it.
        }
      },
      (err: Error) => {
        this.compacting = null
        this.retryFrom = end + BigInt(this.compactionMinRecords)
        this.logger.warn('compacting the offsets log failed; it is left as it was', { error: err.message })
      },
    )
  }

  private async compact(records: number): Promise<void> {
    this.log.roll()
    const start = this.log.logEndOffset()
    for (const [group, offsets] of this.offsets) {
      const entries = [...offsets.values()]
      for (let i = 0; i < entries.length; i += REWRITE_BATCH_RECORDS) this.log.append(commitRecords(group, entries.slice(i, i + REWRITE_BATCH_RECORDS)))
    }
    await this.log.flush()
    this.log.deleteRecordsBefore(start)
    const segments = await this.log.deleteOldSegments()
    this.logger.info('compacted the offsets log', { records, live: this.live, startOffset: start, segmentsDeleted: segments })
  }

  get(group: string, topic: string, partition: number): CommittedOffset | undefined {
    return this.offsets.get(group)?.get(entryKey(topic, partition))
  }

  /** Every committed offset of a group. */
  all(group: string): OffsetCommitEntry[] {
    return [...(this.offsets.get(group)?.values() ?? [])]
  }

  hasOffsets(group: string): boolean {
    return (this.offsets.get(group)?.size ?? 0) > 0
  }

  groupIds(): string[] {
    return [...this.offsets.keys()]
  }

  private remember(group: string, entry: OffsetCommitEntry): void {
    let offsets = this.offsets.get(group)
    if (!offsets) this.offsets.set(group, (offsets = new Map()))
    const key = entryKey(entry.topic, entry.partition)
    if (!offsets.has(key)) this.live++
    offsets.set(key, entry)
  }

  private forget(group: string, topic: string, partition: number): void {
    const offsets = this.offsets.get(group)
    if (offsets?.delete(entryKey(topic, partition))) this.live--
    if (offsets?.size === 0) this.offsets.delete(group)
  }
}

/** The records of a group's commits, one per offset. */
function commitRecords(group: string, entries: readonly OffsetCommitEntry[]): Array<{ key: Buffer; value: Buffer; timestamp: bigint }> {
  return entries.map((e) => ({ key: encodeOffsetKey(group, e.topic, e.partition), value: encodeOffsetValue(e), timestamp: e.commitTimestamp }))
}

function entryKey(topic: string, partition: number): string {
  return `${topic}\0${partition}`
}
