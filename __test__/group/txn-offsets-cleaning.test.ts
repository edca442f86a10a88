/**
 * Transactional offset commits (TxnOffsetCommit) in a cleaned offsets log: the log cleaner
 * removes the aborted commits and keeps each transaction's marker while any of its records are
 * left, so a reload applies exactly the committed transactions' offsets (and none of the aborted
 * ones), before and after the markers' delete horizon. The markers are written as the
 * transaction coordinator's marker writer writes them (control batches, leader appends).
 */
import { describe, expect, it } from 'vitest'
import { OFFSETS_TOPIC_PARTITION, type OffsetCommitEntry } from '../../ts/group/offsets-topic.js'
import { buildEndTxnMarker } from '../../ts/protocol/control-record.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { ACKS_ALL } from '../../ts/replica/partition.js'
import { harness, offsetsLogShape, type Harness } from './harness.js'

const entry = (partition: number, offset: bigint): OffsetCommitEntry => ({ topic: 'orders', partition, offset, leaderEpoch: -1, metadata: null, commitTimestamp: 1_700_000_000_000n })

/** Writes the marker of `producerId`'s transaction to the offsets log and completes it in the coordinator. */
async function endTransaction(h: Harness, producerId: bigint, commit: boolean): Promise<void> {
  const batch = buildEndTxnMarker({ type: commit ? 'COMMIT' : 'ABORT', producerId, producerEpoch: 0, coordinatorEpoch: 0 })
  const result = await h.replicaManager.appendRecords(OFFSETS_TOPIC_PARTITION, batch, ACKS_ALL, 'COORDINATOR')
  expect(result.errorCode).toBe(ErrorCode.NONE)
  h.coordinator.onTransactionCompleted(producerId, commit)
}

/** The offsets of group `tx`, as [partition, offset]. */
const committed = (h: Harness) =>
  h.coordinator.offsets
    .all('tx')
    .map((e) => [e.partition, e.offset])
    .sort((a, b) => Number(a[0]) - Number(b[0]))

describe.each(['js', 'native'] as const)('transactional offset commits in a cleaned offsets log (%s backend)', (backend) => {
  it('keeps the committed transactions, drops the aborted ones, and a reload applies exactly what was committed', async () => {
    let h = await harness({ cleaner: { deleteRetentionMs: 1000 }, backend })
    const store = h.coordinator.offsets
    // Committed: partition 0 = 5. Aborted: partition 1 = 6. Committed but superseded by a later plain commit: partition 2.
    expect(await store.commitTransactional('tx', 1000n, 0, [entry(0, 5n)])).toBe(ErrorCode.NONE)
    expect(await store.commitTransactional('tx', 1001n, 0, [entry(1, 6n), entry(3, 60n)])).toBe(ErrorCode.NONE)
    expect(await store.commitTransactional('tx', 1002n, 0, [entry(2, 7n)])).toBe(ErrorCode.NONE)
    expect(await store.commit('tx', [entry(2, 8n)])).toBe(ErrorCode.NONE)
    await endTransaction(h, 1000n, true)
    await endTransaction(h, 1001n, false)
    await endTransaction(h, 1002n, true)
    // Plain commits of another group fill segments after them (and an older partition-1 value of tx).
    expect(await store.commit('tx', [entry(1, 1n)])).toBe(ErrorCode.NONE)
    for (let i = 0; i < 200; i++) expect(await store.commit('other', [entry(i % 4, BigInt(i))])).toBe(ErrorCode.NONE)
    const expected = [
      [0, 5n],
      [1, 1n],
      [2, 8n],
    ]
    expect(committed(h)).toEqual(expected)

    const now = Date.now()
    expect(await h.cleanOffsetsLog(now)).toBeGreaterThan(0)
    const log = () => h.logManager.getLog(OFFSETS_TOPIC_PARTITION.topic, 0)!
    const shape = () => {
      const batches = log().readBatches(0n, { maxBytes: 1 << 24, isolation: 'LOG_END' })
      return {
        markers: batches.filter((b) => b.isControl && b.records.length > 0).map((b) => b.producerId),
        transactional: batches.filter((b) => !b.isControl && b.isTransactional).flatMap((b) => b.records.map(() => b.producerId)),
      }
    }
    // The aborted records are gone (their ABORT marker stays this round), the committed one left has its marker.
    expect(shape().transactional).toEqual([1000n])
    expect(shape().markers).toContain(1000n)
    expect(offsetsLogShape(log()).records).toBe(3 + 4)
    h = await h.restart()
    expect(committed(h)).toEqual(expected)
    expect(h.coordinator.offsets.hasPendingTransactionalOffsets('tx', 'orders', 0)).toBe(false)

    // Rounds past every horizon: the commit of 1000 keeps its marker. (The others' markers stay
    // too while their producers are active: the cleaner keeps a producer's last data batch,
    // emptied, for its producer state, as Kafka does, and a marker while a batch of its
    // transaction is seen.)
    for (const [i, at] of [now + 60_000, now + 120_000].entries()) {
      expect(await h.coordinator.offsets.commit('other', [entry(0, 1000n + BigInt(i))])).toBe(ErrorCode.NONE)
      expect(await h.cleanOffsetsLog(at)).toBeGreaterThan(0)
    }
    expect(shape().transactional).toEqual([1000n])
    expect(shape().markers).toContain(1000n)
    expect(offsetsLogShape(log()).records).toBe(3 + 4)
    h = await h.restart()
    expect(committed(h)).toEqual(expected)
    expect(h.coordinator.offsets.get('other', 'orders', 0)?.offset).toBe(1001n)
  })

  it('an undecided transaction is not cleaned past: its commit waits for the marker across a cleaning and a reload', async () => {
    let h = await harness({ cleaner: {}, backend })
    expect(await h.coordinator.offsets.commitTransactional('tx', 2000n, 0, [entry(0, 9n)])).toBe(ErrorCode.NONE)
    for (let i = 0; i < 100; i++) expect(await h.coordinator.offsets.commit('tx', [entry(0, BigInt(i))])).toBe(ErrorCode.NONE)
    await h.cleanOffsetsLog()
    h = await h.restart()
    expect(h.coordinator.offsets.hasPendingTransactionalOffsets('tx', 'orders', 0)).toBe(true)
    expect(h.coordinator.offsets.get('tx', 'orders', 0)?.offset).toBe(99n)
    await endTransaction(h, 2000n, true)
    await h.cleanOffsetsLog()
    h = await h.restart()
    // The transactional commit is older in the log than the plain ones: they win, as in Kafka.
    expect(h.coordinator.offsets.hasPendingTransactionalOffsets('tx', 'orders', 0)).toBe(false)
    expect(h.coordinator.offsets.get('tx', 'orders', 0)?.offset).toBe(99n)
  })
})
