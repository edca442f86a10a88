/**
 * Kafka's `ShareCoordinatorShard`: the share-partition states of one partition of
 * `__share_group_state` (./share-group-state-topic.ts), kept in memory as the log's records left
 * them (`replay`), and the records each request writes. Requests name one share partition
 * (group, topic id, partition); the service (./share-coordinator.ts) splits them and appends the
 * records a request returns before it answers, replaying them once written.
 *
 * The state of a share partition (Kafka's `ShareGroupOffset`): its snapshot epoch, state epoch,
 * leader epoch, start offset, delivery-complete count and state batches. Replay: a ShareSnapshot
 * replaces it (a tombstone removes it), a ShareUpdate merges into it (its batches laid over the
 * current ones from its start offset on: ./persister-state-batch-combiner.ts) and counts one more
 * update since the last snapshot.
 *
 * As Kafka 4.4's shard:
 * - InitializeShareGroupState writes a ShareSnapshot: snapshot epoch one past the current one (0
 *   for a new key), the request's state epoch and start offset, leader epoch 0, no batches,
 *   delivery-complete count -1 when the start offset is -1 (not yet known) else 0. Refused:
 *   INVALID_REQUEST (negative partition or state epoch), FENCED_STATE_EPOCH (older than the
 *   recorded one), UNKNOWN_TOPIC_OR_PARTITION (no such topic partition).
 * - WriteShareGroupState of an uninitialized key is INVALID_REQUEST; else FENCED_LEADER_EPOCH or
 *   FENCED_STATE_EPOCH when older than recorded. It writes a ShareUpdate with the request's
 *   batches, or, once `snapshotUpdateRecordsPerSnapshot` updates followed the last snapshot, a
 *   ShareSnapshot of the whole merged state (snapshot epoch + 1). The start offset never moves
 *   back (the larger of the request's and the current); the leader epoch written is the current
 *   one (only a read sets it).
 * - ReadShareGroupState of an uninitialized key is INVALID_REQUEST; a negative leader epoch too;
 *   FENCED_LEADER_EPOCH when older than recorded. It answers the state, and when the request's
 *   leader epoch is new, writes it (a record as a write would, with no batches).
 * - ReadShareGroupStateSummary answers the state epoch, leader epoch, start offset and
 *   delivery-complete count (no write).
 * - DeleteShareGroupState writes a tombstone of the key (nothing for a key not there).
 *
 * Pruning (Kafka's `ShareCoordinatorOffsetsManager` and `lastRedundantOffset`): the log offset
 * of each key's latest ShareSnapshot is kept; every record below the smallest of them is
 * redundant (each key's state is rebuilt from its latest snapshot on), and with no key left,
 * every record up to the last snapshot or tombstone. The coordinator deletes them.
 */
import { ErrorCode } from '../../protocol/error-codes.js'
import type { CoordinatorRecord } from '../../group/coordinator-record.js'
import { combineStateBatches, type PersisterStateBatch } from './persister-state-batch-combiner.js'
import { DEFAULT_SNAPSHOT_UPDATE_RECORDS_PER_SNAPSHOT, decodeShareStateRecord, shareSnapshotRecord, shareTombstoneRecord, shareUpdateRecord, type ShareStateKey } from './share-group-state-topic.js'

/** Kafka's `ShareGroupOffset`: a share partition's state as the coordinator keeps it. */
export interface ShareGroupOffset {
  snapshotEpoch: number
  stateEpoch: number
  leaderEpoch: number
  startOffset: bigint
  deliveryCompleteCount: number
  createTimestamp: bigint
  writeTimestamp: bigint
  stateBatches: PersisterStateBatch[]
}

/** One share partition's error or state, as the request's partition result carries it. */
export interface ShardResult<T> {
  records: CoordinatorRecord[]
  errorCode: number
  errorMessage: string | null
  /** The answer's data when errorCode is NONE. */
  data: T | null
}

export interface WriteStateData {
  stateEpoch: number
  leaderEpoch: number
  startOffset: bigint
  deliveryCompleteCount: number
  stateBatches: PersisterStateBatch[]
}

/** ReadShareGroupState's answer. */
export interface ReadStateData {
  stateEpoch: number
  startOffset: bigint
  stateBatches: PersisterStateBatch[]
}

/** ReadShareGroupStateSummary's answer. */
export interface ReadStateSummaryData {
  stateEpoch: number
  leaderEpoch: number
  startOffset: bigint
  deliveryCompleteCount: number
}

export interface ShareCoordinatorShardOptions {
  /** share.coordinator.snapshot.update.records.per.snapshot */
  snapshotUpdateRecordsPerSnapshot?: number
  /** Whether the topic partition exists (Kafka checks its metadata image). */
  topicPartitionExists: (topicId: Buffer, partition: number) => boolean
  now?: () => number
}

export const NULL_TOPIC_ID = 'The topic id cannot be null.'
export const NEGATIVE_PARTITION_ID = 'The partition id cannot be a negative number.'
export const NEGATIVE_LEADER_EPOCH = 'The leader epoch cannot be a negative number.'
export const NEGATIVE_STATE_EPOCH = 'The state epoch cannot be a negative number.'
export const WRITE_UNINITIALIZED_SHARE_PARTITION = 'Write operation on uninitialized share partition not allowed.'
export const READ_UNINITIALIZED_SHARE_PARTITION = 'Read operation on uninitialized share partition not allowed.'

const ZERO_UUID = Buffer.alloc(16)

export class ShareCoordinatorShard {
  private readonly states = new Map<string, ShareGroupOffset>()
  private readonly leaderEpochs = new Map<string, number>()
  private readonly stateEpochs = new Map<string, number>()
  private readonly snapshotUpdateCount = new Map<string, number>()
  /** The log offset of each key's latest ShareSnapshot, and of the last snapshot or tombstone replayed. */
  private readonly snapshotOffsets = new Map<string, bigint>()
  private lastSnapshotOffset: bigint | null = null
  private readonly perSnapshot: number
  private readonly now: () => number

  constructor(private readonly options: ShareCoordinatorShardOptions) {
    this.perSnapshot = options.snapshotUpdateRecordsPerSnapshot ?? DEFAULT_SNAPSHOT_UPDATE_RECORDS_PER_SNAPSHOT
    this.now = options.now ?? Date.now
  }

  /** The state of a share partition, or undefined when it has none. */
  state(key: ShareStateKey): ShareGroupOffset | undefined {
    return this.states.get(mapKey(key))
  }

  /** How many share partitions have a state here. */
  get size(): number {
    return this.states.size
  }

  /**
   * The offset below which every record of the log is redundant (Kafka's `lastRedundantOffset`),
   * or null when none is yet.
   */
  lastRedundantOffset(): bigint | null {
    if (this.snapshotOffsets.size === 0) return this.lastSnapshotOffset === null ? null : this.lastSnapshotOffset + 1n
    let min: bigint | null = null
    for (const o of this.snapshotOffsets.values()) if (min === null || o < min) min = o
    return min
  }

  /** Applies one record of the log at `offset` (Kafka's `replay`); records of other types are skipped. */
  replay(keyBytes: Buffer, valueBytes: Buffer | null, offset?: bigint): void {
    const record = decodeShareStateRecord(keyBytes, valueBytes)
    if (record === null) return
    const k = mapKey(record.key)
    if (record.type === 'snapshot') {
      if (offset !== undefined) {
        this.lastSnapshotOffset = offset
        if (record.value === null) this.snapshotOffsets.delete(k)
        else this.snapshotOffsets.set(k, offset)
      }
      const v = record.value
      if (v === null) {
        this.states.delete(k)
        this.leaderEpochs.delete(k)
        this.stateEpochs.delete(k)
        this.snapshotUpdateCount.delete(k)
        return
      }
      this.raise(this.leaderEpochs, k, v.leaderEpoch)
      this.raise(this.stateEpochs, k, v.stateEpoch)
      this.states.set(k, { ...v, stateBatches: v.stateBatches.map((b) => ({ ...b })) })
      if ((this.snapshotUpdateCount.get(k) ?? 0) >= this.perSnapshot) this.snapshotUpdateCount.set(k, 0)
      return
    }
    const v = record.value
    if (v === null) return
    this.raise(this.leaderEpochs, k, v.leaderEpoch)
    const current = this.states.get(k)
    if (current === undefined) {
      this.states.set(k, {
        snapshotEpoch: v.snapshotEpoch,
        stateEpoch: 0,
        leaderEpoch: v.leaderEpoch,
        startOffset: v.startOffset,
        deliveryCompleteCount: v.deliveryCompleteCount,
        createTimestamp: 0n,
        writeTimestamp: 0n,
        stateBatches: v.stateBatches.map((b) => ({ ...b })),
      })
    } else {
      const startOffset = v.startOffset === -1n ? current.startOffset : v.startOffset
      this.states.set(k, {
        ...current,
        startOffset,
        leaderEpoch: v.leaderEpoch === -1 ? current.leaderEpoch : v.leaderEpoch,
        deliveryCompleteCount: v.deliveryCompleteCount,
        stateBatches: combineStateBatches(current.stateBatches, v.stateBatches, startOffset),
      })
    }
    const count = this.snapshotUpdateCount.get(k)
    this.snapshotUpdateCount.set(k, count === undefined ? 0 : count + 1)
  }

  initializeState(key: ShareStateKey, stateEpoch: number, startOffset: bigint): ShardResult<null> {
    const invalid = invalidKey(key)
    if (invalid !== null) return error(ErrorCode.INVALID_REQUEST, invalid)
    if (stateEpoch < 0) return error(ErrorCode.INVALID_REQUEST, NEGATIVE_STATE_EPOCH)
    const k = mapKey(key)
    const recorded = this.stateEpochs.get(k)
    if (recorded !== undefined && recorded > stateEpoch) return error(ErrorCode.FENCED_STATE_EPOCH, 'The share coordinator was fenced by a newer state epoch.')
    if (!this.options.topicPartitionExists(key.topicId, key.partition)) return error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.')
    const current = this.states.get(k)
    const now = BigInt(this.now())
    const record = shareSnapshotRecord(key, {
      snapshotEpoch: current === undefined ? 0 : current.snapshotEpoch + 1,
      stateEpoch,
      leaderEpoch: 0,
      startOffset,
      deliveryCompleteCount: startOffset === -1n ? -1 : 0,
      createTimestamp: now,
      writeTimestamp: now,
      stateBatches: [],
    })
    return { records: [record], errorCode: ErrorCode.NONE, errorMessage: null, data: null }
  }

  writeState(key: ShareStateKey, data: WriteStateData): ShardResult<null> {
    const invalid = invalidKey(key)
    if (invalid !== null) return error(ErrorCode.INVALID_REQUEST, invalid)
    if (data.leaderEpoch < 0) return error(ErrorCode.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH)
    if (data.stateEpoch < 0) return error(ErrorCode.INVALID_REQUEST, NEGATIVE_STATE_EPOCH)
    const k = mapKey(key)
    const current = this.states.get(k)
    if (current === undefined) return error(ErrorCode.INVALID_REQUEST, WRITE_UNINITIALIZED_SHARE_PARTITION)
    const leaderEpoch = this.leaderEpochs.get(k)
    if (leaderEpoch !== undefined && leaderEpoch > data.leaderEpoch) return error(ErrorCode.FENCED_LEADER_EPOCH, 'The leader epoch in the request is older than the epoch on the broker.')
    const stateEpoch = this.stateEpochs.get(k)
    if (stateEpoch !== undefined && stateEpoch > data.stateEpoch) return error(ErrorCode.FENCED_STATE_EPOCH, 'The share coordinator was fenced by a newer state epoch.')
    if (!this.options.topicPartitionExists(key.topicId, key.partition)) return error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.')
    return { records: [this.stateRecord(key, current, data, false)], errorCode: ErrorCode.NONE, errorMessage: null, data: null }
  }

  readState(key: ShareStateKey, leaderEpoch: number): ShardResult<ReadStateData> {
    const invalid = invalidKey(key)
    if (invalid !== null) return error(ErrorCode.INVALID_REQUEST, invalid)
    if (leaderEpoch < 0) return error(ErrorCode.INVALID_REQUEST, NEGATIVE_LEADER_EPOCH)
    const k = mapKey(key)
    const current = this.states.get(k)
    if (current === undefined) return error(ErrorCode.INVALID_REQUEST, READ_UNINITIALIZED_SHARE_PARTITION)
    const recorded = this.leaderEpochs.get(k)
    if (recorded !== undefined && recorded > leaderEpoch) return error(ErrorCode.FENCED_LEADER_EPOCH, 'The leader epoch in the request is older than the epoch on the broker.')
    if (!this.options.topicPartitionExists(key.topicId, key.partition)) return error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.')
    const data = { stateEpoch: current.stateEpoch, startOffset: current.startOffset, stateBatches: current.stateBatches.map((b) => ({ ...b })) }
    if (recorded === leaderEpoch) return { records: [], errorCode: ErrorCode.NONE, errorMessage: null, data }
    const write: WriteStateData = { stateEpoch: current.stateEpoch, leaderEpoch, startOffset: current.startOffset, deliveryCompleteCount: current.deliveryCompleteCount, stateBatches: [] }
    return { records: [this.stateRecord(key, current, write, true)], errorCode: ErrorCode.NONE, errorMessage: null, data }
  }

  readStateSummary(key: ShareStateKey): ShardResult<ReadStateSummaryData> {
    const invalid = invalidKey(key)
    if (invalid !== null) return error(ErrorCode.INVALID_REQUEST, invalid)
    const current = this.states.get(mapKey(key))
    if (current === undefined) return error(ErrorCode.INVALID_REQUEST, READ_UNINITIALIZED_SHARE_PARTITION)
    if (!this.options.topicPartitionExists(key.topicId, key.partition)) return error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.')
    const data = { stateEpoch: current.stateEpoch, leaderEpoch: current.leaderEpoch, startOffset: current.startOffset, deliveryCompleteCount: current.deliveryCompleteCount }
    return { records: [], errorCode: ErrorCode.NONE, errorMessage: null, data }
  }

  deleteState(key: ShareStateKey): ShardResult<null> {
    const invalid = invalidKey(key)
    if (invalid !== null) return error(ErrorCode.INVALID_REQUEST, invalid)
    const records = this.states.has(mapKey(key)) ? [shareTombstoneRecord(key)] : []
    return { records, errorCode: ErrorCode.NONE, errorMessage: null, data: null }
  }

  /** Kafka's `generateShareStateRecord`: a ShareUpdate, or a ShareSnapshot once enough updates followed the last one. */
  private stateRecord(key: ShareStateKey, current: ShareGroupOffset, data: WriteStateData, updateLeaderEpoch: boolean): CoordinatorRecord {
    const now = BigInt(this.now())
    const leaderEpoch = updateLeaderEpoch ? data.leaderEpoch : current.leaderEpoch
    const startOffset = data.startOffset > current.startOffset ? data.startOffset : current.startOffset
    let deliveryCompleteCount = data.deliveryCompleteCount
    if (data.startOffset === current.startOffset) deliveryCompleteCount = Math.max(data.deliveryCompleteCount, current.deliveryCompleteCount)
    else if (data.startOffset < current.startOffset) deliveryCompleteCount = current.deliveryCompleteCount
    if ((this.snapshotUpdateCount.get(mapKey(key)) ?? 0) >= this.perSnapshot) {
      return shareSnapshotRecord(key, {
        snapshotEpoch: current.snapshotEpoch + 1,
        stateEpoch: current.stateEpoch,
        leaderEpoch,
        startOffset,
        deliveryCompleteCount,
        createTimestamp: now,
        writeTimestamp: now,
        stateBatches: combineStateBatches(current.stateBatches, data.stateBatches, startOffset),
      })
    }
    return shareUpdateRecord(key, { snapshotEpoch: current.snapshotEpoch, leaderEpoch, startOffset, deliveryCompleteCount, stateBatches: combineStateBatches([], data.stateBatches, startOffset) })
  }

  private raise(map: Map<string, number>, k: string, epoch: number): void {
    const was = map.get(k)
    if (was === undefined || was < epoch) map.set(k, epoch)
  }
}

function mapKey(key: ShareStateKey): string {
  return `${key.groupId}\u0000${key.topicId.toString('hex')}\u0000${key.partition}`
}

function invalidKey(key: ShareStateKey): string | null {
  if (key.topicId.equals(ZERO_UUID)) return NULL_TOPIC_ID
  if (key.partition < 0) return NEGATIVE_PARTITION_ID
  return null
}

function error<T>(errorCode: number, errorMessage: string): ShardResult<T> {
  return { records: [], errorCode, errorMessage, data: null }
}
