/**
 * The share coordinator's shard (ts/coordinator/share/share-coordinator-shard.ts), its records
 * (share-group-state-topic.ts) and the state batch combiner, as Kafka 4.4's: which record each
 * request writes, the errors it answers, and a replay of the written records on a fresh shard
 * (the coordinator's load) giving the same state.
 */
import { describe, expect, it } from 'vitest'
import { combineStateBatches } from '../../../ts/coordinator/share/persister-state-batch-combiner.js'
import { ShareCoordinatorShard, READ_UNINITIALIZED_SHARE_PARTITION, WRITE_UNINITIALIZED_SHARE_PARTITION } from '../../../ts/coordinator/share/share-coordinator-shard.js'
import { decodeShareStateRecord, sharePartitionFor, sharePartitionKey } from '../../../ts/coordinator/share/share-group-state-topic.js'
import type { CoordinatorRecord } from '../../../ts/group/coordinator-record.js'
import { ErrorCode } from '../../../ts/protocol/error-codes.js'

const AVAILABLE = 0
const ACKNOWLEDGED = 2
const ARCHIVED = 4
const topicId = Buffer.from('0123456789abcdef0123456789abcdef', 'hex')
const key = { groupId: 'g', topicId, partition: 0 }
const b = (first: number, last: number, deliveryState: number, deliveryCount: number) => ({ firstOffset: BigInt(first), lastOffset: BigInt(last), deliveryState, deliveryCount })

/** A shard whose written records are replayed into it (as the coordinator does once the ISR holds them) and kept. */
function shard(perSnapshot = 500) {
  const log: CoordinatorRecord[] = []
  const s = new ShareCoordinatorShard({ snapshotUpdateRecordsPerSnapshot: perSnapshot, topicPartitionExists: (id, p) => id.equals(topicId) && p < 3, now: () => 1000 })
  const apply = <T extends { records: CoordinatorRecord[] }>(r: T): T => {
    for (const rec of r.records) {
      log.push(rec)
      s.replay(rec.key, rec.value)
    }
    return r
  }
  return { s, log, apply }
}

describe('PersisterStateBatchCombiner', () => {
  it('lays newer batches over older ones, cuts at the start offset and joins neighbours of one state and count', () => {
    expect(combineStateBatches([b(0, 9, AVAILABLE, 1)], [b(3, 5, ACKNOWLEDGED, 1)], 0n)).toEqual([b(0, 2, AVAILABLE, 1), b(3, 5, ACKNOWLEDGED, 1), b(6, 9, AVAILABLE, 1)])
    expect(combineStateBatches([b(0, 9, AVAILABLE, 1)], [b(3, 5, ACKNOWLEDGED, 1)], 4n)).toEqual([b(4, 5, ACKNOWLEDGED, 1), b(6, 9, AVAILABLE, 1)])
    expect(combineStateBatches([b(0, 4, ARCHIVED, 2)], [b(5, 9, ARCHIVED, 2), b(2, 3, AVAILABLE, 1)], 0n)).toEqual([b(0, 1, ARCHIVED, 2), b(2, 3, AVAILABLE, 1), b(4, 9, ARCHIVED, 2)])
    expect(combineStateBatches([b(0, 9, AVAILABLE, 1)], [], 20n)).toEqual([])
  })
})

describe('ShareCoordinatorShard', () => {
  it('places a share partition as Kafka does: "groupId:topicId:partition", Java hashCode over the partitions', () => {
    expect(sharePartitionKey('g', topicId, 0)).toBe(`g:${topicId.toString('base64url')}:0`)
    expect(sharePartitionKey('g', topicId, 0)).toBe('g:ASNFZ4mrze8BI0VniavN7w:0')
    // Java: Math.abs("g:ASNFZ4mrze8BI0VniavN7w:0".hashCode()) % 50
    let h = 0
    for (const c of 'g:ASNFZ4mrze8BI0VniavN7w:0') h = (Math.imul(31, h) + c.charCodeAt(0)) | 0
    expect(sharePartitionFor('g', topicId, 0, 50)).toBe(Math.abs(h) % 50)
  })

  it('refuses reads and writes of a share partition never initialized, and bad keys, as Kafka 4.4', () => {
    const { s } = shard()
    expect(s.readState(key, 0)).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: READ_UNINITIALIZED_SHARE_PARTITION, records: [] })
    expect(s.writeState(key, { stateEpoch: 0, leaderEpoch: 0, startOffset: 0n, deliveryCompleteCount: 0, stateBatches: [] })).toMatchObject({
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: WRITE_UNINITIALIZED_SHARE_PARTITION,
    })
    expect(s.readState({ ...key, partition: -1 }, 0).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(s.readState({ ...key, topicId: Buffer.alloc(16) }, 0).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(s.readState(key, -1).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(s.initializeState({ ...key, partition: 7 }, 0, 0n).errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    expect(s.initializeState(key, -1, 0n).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(s.deleteState(key)).toMatchObject({ errorCode: ErrorCode.NONE, records: [] })
  })

  it('initializes with a ShareSnapshot, writes ShareUpdates, a ShareSnapshot after snapshot.update.records.per.snapshot of them, and a replay gives the same state', () => {
    const { s, log, apply } = shard(2)
    expect(apply(s.initializeState(key, 0, 10n)).errorCode).toBe(ErrorCode.NONE)
    const read = apply(s.readState(key, 3))
    expect(read.data).toEqual({ stateEpoch: 0, startOffset: 10n, stateBatches: [] })
    // A new leader epoch read is written (a ShareUpdate with no batches).
    expect(read.records).toHaveLength(1)
    const write = (startOffset: number, ...stateBatches: ReturnType<typeof b>[]) =>
      apply(s.writeState(key, { stateEpoch: 0, leaderEpoch: 3, startOffset: BigInt(startOffset), deliveryCompleteCount: 0, stateBatches }))
    expect(write(10, b(10, 14, ACKNOWLEDGED, 1), b(15, 19, AVAILABLE, 1)).errorCode).toBe(ErrorCode.NONE)
    expect(write(15, b(15, 16, ARCHIVED, 2)).errorCode).toBe(ErrorCode.NONE)
    expect(write(15, b(17, 17, ACKNOWLEDGED, 2)).errorCode).toBe(ErrorCode.NONE)
    expect(log.map((r) => decodeShareStateRecord(r.key, r.value)!.type)).toEqual(['snapshot', 'update', 'update', 'update', 'snapshot'])
    const last = decodeShareStateRecord(log[4]!.key, log[4]!.value)!
    expect(last.value).toMatchObject({ snapshotEpoch: 1, stateEpoch: 0, leaderEpoch: 3, startOffset: 15n, stateBatches: [b(15, 16, ARCHIVED, 2), b(17, 17, ACKNOWLEDGED, 2), b(18, 19, AVAILABLE, 1)] })
    expect(s.readState(key, 3).data).toEqual({ stateEpoch: 0, startOffset: 15n, stateBatches: [b(15, 16, ARCHIVED, 2), b(17, 17, ACKNOWLEDGED, 2), b(18, 19, AVAILABLE, 1)] })
    // The start offset never moves back.
    write(12, b(12, 12, ACKNOWLEDGED, 1))
    expect(s.readState(key, 3).data!.startOffset).toBe(15n)

    const fresh = new ShareCoordinatorShard({ snapshotUpdateRecordsPerSnapshot: 2, topicPartitionExists: () => true })
    for (const r of log) fresh.replay(r.key, r.value)
    expect(fresh.state(key)).toEqual(s.state(key))
  })

  it('fences older leader and state epochs, and a tombstone deletes the state', () => {
    const { s, log, apply } = shard()
    apply(s.initializeState(key, 2, 0n))
    apply(s.readState(key, 5))
    expect(s.readState(key, 4).errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH)
    expect(s.writeState(key, { stateEpoch: 2, leaderEpoch: 4, startOffset: 0n, deliveryCompleteCount: 0, stateBatches: [] }).errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH)
    expect(s.writeState(key, { stateEpoch: 1, leaderEpoch: 5, startOffset: 0n, deliveryCompleteCount: 0, stateBatches: [] }).errorCode).toBe(ErrorCode.FENCED_STATE_EPOCH)
    expect(s.initializeState(key, 1, 0n).errorCode).toBe(ErrorCode.FENCED_STATE_EPOCH)
    expect(s.readStateSummary(key).data).toEqual({ stateEpoch: 2, leaderEpoch: 5, startOffset: 0n, deliveryCompleteCount: 0 })
    const deleted = apply(s.deleteState(key))
    expect(deleted.records).toEqual([{ key: log[0]!.key, value: null }])
    expect(s.readState(key, 5).errorMessage).toBe(READ_UNINITIALIZED_SHARE_PARTITION)
  })

  it("prunes below the oldest latest snapshot of the keys (Kafka's lastRedundantOffset), everything once no key is left", () => {
    const s = new ShareCoordinatorShard({ snapshotUpdateRecordsPerSnapshot: 0, topicPartitionExists: () => true })
    const other = { ...key, partition: 1 }
    let offset = 0n
    const apply = (r: { records: CoordinatorRecord[] }) => {
      for (const rec of r.records) s.replay(rec.key, rec.value, offset++)
    }
    expect(s.lastRedundantOffset()).toBeNull()
    apply(s.initializeState(key, 0, 0n)) // 0: snapshot of key
    apply(s.initializeState(other, 0, 0n)) // 1: snapshot of other
    expect(s.lastRedundantOffset()).toBe(0n)
    // With 0 updates per snapshot, every write is a snapshot.
    apply(s.writeState(key, { stateEpoch: 0, leaderEpoch: 0, startOffset: 1n, deliveryCompleteCount: 0, stateBatches: [] })) // 2
    expect(s.lastRedundantOffset()).toBe(1n)
    apply(s.writeState(other, { stateEpoch: 0, leaderEpoch: 0, startOffset: 1n, deliveryCompleteCount: 0, stateBatches: [] })) // 3
    expect(s.lastRedundantOffset()).toBe(2n)
    apply(s.deleteState(key)) // 4: tombstone
    expect(s.lastRedundantOffset()).toBe(3n)
    apply(s.deleteState(other)) // 5: tombstone
    expect(s.lastRedundantOffset()).toBe(6n)
  })

  it('frames its records as Kafka: key = int16 record type (0 ShareSnapshot, 1 ShareUpdate) then the key, value = int16 version 0 then the value', () => {
    const { s, apply } = shard()
    const init = apply(s.initializeState(key, 0, 0n)).records[0]!
    expect(init.key.readInt16BE(0)).toBe(0)
    expect(init.value!.readInt16BE(0)).toBe(0)
    const update = apply(s.writeState(key, { stateEpoch: 0, leaderEpoch: 0, startOffset: 0n, deliveryCompleteCount: 0, stateBatches: [b(0, 0, ACKNOWLEDGED, 1)] })).records[0]!
    expect(update.key.readInt16BE(0)).toBe(1)
    // Keys are not flexible: groupId "g" (int16 length), the 16 bytes of the topic id, the partition.
    expect(update.key.subarray(2, 5)).toEqual(Buffer.from([0, 1, 0x67]))
    expect(update.key.subarray(5, 21)).toEqual(topicId)
    expect(update.key.readInt32BE(21)).toBe(0)
    expect(update.key.length).toBe(25)
  })
})
