/**
 * The committed offsets in memory (Kafka's offsets cache: `GroupMetadata.offsets` and
 * `pendingOffsetCommits`, or the newer `OffsetMetadataManager.Offsets`), as ./offset-store.ts
 * has applied them from the offsets log: group -> partition -> offset, each with the log offset
 * of the record that wrote it, so that an older record never replaces a newer one.
 *
 * Beside them, the keys written and not acknowledged yet ("pending"): a group with pending
 * commits is not forgotten, and its pending keys are deleted by DeleteGroups / OffsetDelete too.
 */
import type { CommittedOffset, OffsetCommitEntry } from './offsets-topic.js'

/** An offset in the map, with the log offset of the record that wrote it. */
interface AppliedOffset {
  entry: OffsetCommitEntry
  at: bigint
}

export class OffsetsCache {
  /** group -> "topic\0partition" -> offset */
  private readonly offsets = new Map<string, Map<string, AppliedOffset>>()
  /** Live offsets, all groups together. */
  private live = 0
  /** Keys written and not acknowledged yet: group -> "topic\0partition" -> writes. */
  private readonly pending = new Map<string, Map<string, { topic: string; partition: number; writes: number }>>()

  /** Live offsets, all groups together. */
  get liveOffsets(): number {
    return this.live
  }

  get(group: string, topic: string, partition: number): CommittedOffset | undefined {
    return this.offsets.get(group)?.get(entryKey(topic, partition))?.entry
  }

  /** Every committed offset of a group. */
  all(group: string): OffsetCommitEntry[] {
    return [...(this.offsets.get(group)?.values() ?? [])].map((o) => o.entry)
  }

  /** Whether a group has committed offsets, or commits on their way to the ISR (Kafka's `hasOffsets`). */
  hasOffsets(group: string): boolean {
    return (this.offsets.get(group)?.size ?? 0) > 0 || this.pending.has(group)
  }

  groupIds(): string[] {
    return [...this.offsets.keys()]
  }

  /** Every live offset with its group, group by group. */
  *entries(): Generator<[string, OffsetCommitEntry]> {
    for (const [group, offsets] of this.offsets) {
      for (const { entry } of offsets.values()) yield [group, entry]
    }
  }

  /** The partitions among these whose offsets exist or are being written, each once. */
  existing<P extends { topic: string; partition: number }>(group: string, partitions: readonly P[]): P[] {
    const offsets = this.offsets.get(group)
    const pending = this.pending.get(group)
    const seen = new Set<string>()
    return partitions.filter((p) => {
      const key = entryKey(p.topic, p.partition)
      if (seen.has(key) || !(offsets?.has(key) || pending?.has(key))) return false
      seen.add(key)
      return true
    })
  }

  /** A group's partitions with commits on their way to the ISR. */
  pendingPartitions(group: string): Array<{ topic: string; partition: number }> {
    return [...(this.pending.get(group)?.values() ?? [])]
  }

  /** Drops every applied offset (pending writes are counted until they settle). */
  clear(): void {
    this.offsets.clear()
    this.live = 0
  }

  addPending(group: string, entries: readonly OffsetCommitEntry[], delta: 1 | -1): void {
    if (entries.length === 0) return
    let keys = this.pending.get(group)
    if (!keys) this.pending.set(group, (keys = new Map()))
    for (const e of entries) {
      const key = entryKey(e.topic, e.partition)
      const p = keys.get(key) ?? { topic: e.topic, partition: e.partition, writes: 0 }
      p.writes += delta
      if (p.writes > 0) keys.set(key, p)
      else keys.delete(key)
    }
    if (keys.size === 0) this.pending.delete(group)
  }

  /** Applies a commit written at log offset `at`, unless a later record of its key is applied already. */
  remember(group: string, entry: OffsetCommitEntry, at: bigint): void {
    let offsets = this.offsets.get(group)
    if (!offsets) this.offsets.set(group, (offsets = new Map()))
    const key = entryKey(entry.topic, entry.partition)
    const applied = offsets.get(key)
    if (applied !== undefined && applied.at > at) return
    if (applied === undefined) this.live++
    offsets.set(key, { entry, at })
  }

  /** Applies a tombstone written at log offset `at`. */
  forget(group: string, topic: string, partition: number, at: bigint): void {
    const offsets = this.offsets.get(group)
    const key = entryKey(topic, partition)
    const applied = offsets?.get(key)
    if (!offsets || applied === undefined || applied.at > at) return
    offsets.delete(key)
    this.live--
    if (offsets.size === 0) this.offsets.delete(group)
  }
}

function entryKey(topic: string, partition: number): string {
  return `${topic}\0${partition}`
}
