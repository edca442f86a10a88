/**
 * Writes to the offsets log as leader appends with acks=all: a commit, DeleteGroups or
 * OffsetDelete whose append or acks failed is answered with Kafka's mapping of the error and
 * changes nothing in memory; the log cleaner cleaning the log while writes are under way (their
 * acks held, or appended during its round) leaves a log that replays to what the coordinator
 * answered. Failures are injected between the store and a real standalone replica manager over
 * real logs.
 */
import { describe, expect, it } from 'vitest'
import type { OffsetsReplicaManager } from '../../ts/group/offset-store.js'
import { OFFSETS_TOPIC, type OffsetCommitEntry } from '../../ts/group/offsets-topic.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { ProduceAcksResult, ReplicaManager } from '../../ts/replica/replica-manager.js'
import { GROUP, harness, isSettled, offsetsLogShape } from './harness.js'

const entry = (partition: number, offset: bigint, metadata: string | null = null): OffsetCommitEntry => ({
  topic: 'orders',
  partition,
  offset,
  leaderEpoch: 0,
  metadata,
  commitTimestamp: 1_700_000_000_000n,
})

/** A replica manager whose appends or acks answer an injected error, or whose acks are held until released. */
class Faults {
  append: number = ErrorCode.NONE
  /** The acks' answer for batches of this many records (any when null). */
  acks: number = ErrorCode.NONE
  acksForRecords: number | null = null
  hold = false
  private held: Array<() => void> = []

  wrap = (rm: ReplicaManager): OffsetsReplicaManager => ({
    logManager: rm.logManager,
    getLog: (tp) => rm.getLog(tp),
    appendRecords: (tp, records, acks) => {
      if (this.append !== ErrorCode.NONE) return { errorCode: this.append, errorMessage: 'injected', info: null, logStartOffset: -1n, partition: null, leaderEpoch: -1 }
      return rm.appendRecords(tp, records, acks)
    },
    maybeAddDelayedProduce: (acks, timeoutMs, appends, callback) => {
      const records = appends[0].result.info?.recordCount
      if (this.acks !== ErrorCode.NONE && (this.acksForRecords === null || this.acksForRecords === records)) {
        callback(appends.map((a): ProduceAcksResult => ({ topic: a.topic, partition: a.partition, errorCode: this.acks })))
        return () => {}
      }
      if (this.hold) {
        this.held.push(() => rm.maybeAddDelayedProduce(acks, timeoutMs, appends, callback))
        return () => {}
      }
      return rm.maybeAddDelayedProduce(acks, timeoutMs, appends, callback)
    },
  })

  release(): void {
    this.hold = false
    for (const go of this.held.splice(0)) go()
  }
}

describe('failed writes to the offsets log', () => {
  it.each([
    ['an append refused for a small ISR', 'append', ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_NOT_AVAILABLE],
    ['an append on a broker no longer the leader', 'append', ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR, ErrorCode.NOT_COORDINATOR],
    ['a storage error', 'append', ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NOT_COORDINATOR, ErrorCode.NOT_COORDINATOR],
    ['a batch too large', 'append', ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.INVALID_COMMIT_OFFSET_SIZE, ErrorCode.UNKNOWN_SERVER_ERROR],
    ['acks that timed out', 'acks', ErrorCode.REQUEST_TIMED_OUT, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_NOT_AVAILABLE],
    ['an ISR that shrank under min.insync.replicas', 'acks', ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_NOT_AVAILABLE],
    ['a leader that changed before the acks', 'acks', ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR, ErrorCode.NOT_COORDINATOR],
  ] as const)("%s: the commit and the deletions are answered with Kafka's mapping and change nothing", async (_what, where, appendError, commitAnswer, deleteAnswer) => {
    const faults = new Faults()
    const h = await harness({ replicas: faults.wrap })
    const c = h.coordinator
    expect(await c.commitOffsets('kept', '', -1, [entry(0, 5n)])).toBe(ErrorCode.NONE)
    faults[where] = appendError

    expect(await c.commitOffsets('kept', '', -1, [entry(0, 6n), entry(1, 1n)])).toBe(commitAnswer)
    expect(c.offsets.all('kept')).toEqual([entry(0, 5n)])
    // A group made for a commit that failed is not left behind.
    expect(await c.commitOffsets('new', '', -1, [entry(0, 1n)])).toBe(commitAnswer)
    expect(c.group('new')).toBeUndefined()
    expect(c.offsets.hasOffsets('new')).toBe(false)

    expect(await c.deleteOffsets('kept', [{ topic: 'orders', partition: 0 }])).toEqual({ errorCode: deleteAnswer, partitions: [] })
    expect(c.offsets.get('kept', 'orders', 0)?.offset).toBe(5n)
    // A group whose tombstones failed is back, Empty, with its offsets.
    expect(await c.deleteGroups(['kept'])).toEqual([{ groupId: 'kept', errorCode: deleteAnswer }])
    expect(c.group('kept')?.state).toBe('Empty')
    expect(c.offsets.get('kept', 'orders', 0)?.offset).toBe(5n)

    faults[where] = ErrorCode.NONE
    expect(await c.commitOffsets('kept', '', -1, [entry(0, 9n)])).toBe(ErrorCode.NONE)
    expect(c.offsets.get('kept', 'orders', 0)?.offset).toBe(9n)
  })

  it("a commit whose acks timed out stays in the log: the next load shows it, as Kafka's", async () => {
    const faults = new Faults()
    let h = await harness({ replicas: faults.wrap })
    faults.acks = ErrorCode.REQUEST_TIMED_OUT
    expect(await h.coordinator.commitOffsets('g', '', -1, [entry(0, 77n)])).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    expect(h.coordinator.offsets.get('g', 'orders', 0)).toBeUndefined()
    h = await h.restart({ replicas: undefined })
    expect(h.coordinator.offsets.get('g', 'orders', 0)?.offset).toBe(77n)
  })

  it('a commit past max.message.bytes is INVALID_COMMIT_OFFSET_SIZE, from the real log, and applies nothing', async () => {
    const h = await harness()
    const big = Array.from({ length: 300 }, (_, p) => entry(p, 1n, 'm'.repeat(4096)))
    expect(await h.coordinator.commitOffsets('big', '', -1, big)).toBe(ErrorCode.INVALID_COMMIT_OFFSET_SIZE)
    expect(h.coordinator.offsets.all('big')).toEqual([])
    expect(h.logManager.getLog(OFFSETS_TOPIC, 0)!.logEndOffset()).toBe(0n)
  })

  it('commits are visible only once acknowledged', async () => {
    const faults = new Faults()
    const h = await harness({ replicas: faults.wrap })
    faults.hold = true
    const committing = h.coordinator.commitOffsets('g', '', -1, [entry(0, 3n)])
    await new Promise((resolve) => setImmediate(resolve))
    expect(h.logManager.getLog(OFFSETS_TOPIC, 0)!.logEndOffset()).toBe(1n)
    expect(h.coordinator.offsets.get('g', 'orders', 0)).toBeUndefined()
    // Waiting for its acks, the commit keeps its new group.
    h.advance(60_000)
    expect(h.coordinator.group('g')?.state).toBe('Empty')
    faults.release()
    expect(await committing).toBe(ErrorCode.NONE)
    expect(h.coordinator.offsets.get('g', 'orders', 0)?.offset).toBe(3n)
  })

  it('DeleteGroups also writes tombstones for commits still waiting for their acks, which then do not apply', async () => {
    const faults = new Faults()
    let h = await harness({ replicas: faults.wrap })
    expect(await h.coordinator.commitOffsets('g', '', -1, [entry(0, 1n)])).toBe(ErrorCode.NONE)
    faults.hold = true
    const pending = h.coordinator.commitOffsets('g', '', -1, [entry(1, 2n)])
    await new Promise((resolve) => setImmediate(resolve))
    faults.hold = false
    expect(await h.coordinator.deleteGroups(['g'])).toEqual([{ groupId: 'g', errorCode: ErrorCode.NONE }])
    faults.release()
    // Acknowledged (the record is on the ISR), but its group is gone.
    expect(await pending).toBe(ErrorCode.NONE)
    expect(h.coordinator.offsets.all('g')).toEqual([])
    expect(h.coordinator.group('g')).toBeUndefined()
    h = await h.restart({ replicas: undefined })
    expect(h.coordinator.offsets.all('g')).toEqual([])
    expect(h.coordinator.listGroups()).toEqual([])
  })
})

describe("a classic group's assignment written to the offsets log", () => {
  it('is handed out once acknowledged; a write that failed answers the SyncGroups with its error and the group rebalances', async () => {
    const faults = new Faults()
    const h = await harness({ replicas: faults.wrap })
    const member = await h.joinNew()
    const joined = await member.joined
    faults.hold = true
    const syncing = h.sync(member.memberId, joined.generationId, [{ memberId: member.memberId, assignment: Buffer.from('A') }])
    // Written, not yet acknowledged: the group still completes its rebalance.
    expect(await isSettled(syncing)).toBe(false)
    expect(h.coordinator.group(GROUP)?.state).toBe('CompletingRebalance')
    faults.release()
    expect(await syncing).toMatchObject({ errorCode: ErrorCode.NONE, assignment: Buffer.from('A') })
    expect(h.coordinator.group(GROUP)?.state).toBe('Stable')

    // The next generation's assignment cannot be written.
    const rejoined = await h.join({ memberId: member.memberId })
    faults.append = ErrorCode.NOT_ENOUGH_REPLICAS
    expect(await h.sync(member.memberId, rejoined.generationId, [{ memberId: member.memberId, assignment: Buffer.from('B') }])).toMatchObject({
      errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    })
    expect(h.coordinator.group(GROUP)).toMatchObject({ state: 'PreparingRebalance', generationId: rejoined.generationId })
    expect(h.coordinator.group(GROUP)!.get(member.memberId)!.assignment).toEqual(Buffer.alloc(0))
  })
})

describe('the log cleaner under leader appends', () => {
  it.each(['js', 'native'] as const)('a write whose acks are held while the log is cleaned is kept, and applied when acknowledged (%s backend)', async (backend) => {
    const faults = new Faults()
    let h = await harness({ cleaner: {}, backend, replicas: faults.wrap })
    const store = h.coordinator.offsets
    for (let i = 0; i < 30; i++) expect(await store.commit('g', [entry(i % 3, BigInt(i))])).toBe(ErrorCode.NONE)
    // W1 appended (record 30), its acks held through a cleaning of everything up to it.
    faults.hold = true
    const w1 = store.commit('g', [entry(0, 100n)])
    await new Promise((resolve) => setImmediate(resolve))
    faults.hold = false
    expect(await h.cleanOffsetsLog()).toBeGreaterThan(0)
    expect(offsetsLogShape(h.logManager.getLog(OFFSETS_TOPIC, 0)!).offsets).toEqual([28n, 29n, 30n])
    expect(store.get('g', 'orders', 0)?.offset).toBe(27n)
    faults.release()
    expect(await w1).toBe(ErrorCode.NONE)
    expect(store.get('g', 'orders', 0)?.offset).toBe(100n)
    h = await h.restart({ replicas: undefined })
    expect(
      h.coordinator.offsets
        .all('g')
        .map((e) => [e.partition, e.offset])
        .sort((a, b) => Number(a[0]) - Number(b[0])),
    ).toEqual([
      [0, 100n],
      [1, 28n],
      [2, 29n],
    ])
  })

  it.each(['js', 'native'] as const)('commits appended while a cleaning round runs are all kept, the latest winning on reload (%s backend)', async (backend) => {
    let h = await harness({ cleaner: {}, backend })
    const store = h.coordinator.offsets
    for (let i = 0; i < 300; i++) expect(await store.commit('g', [entry(i % 5, BigInt(i))])).toBe(ErrorCode.NONE)
    const cleaning = h.cleanOffsetsLog()
    const commits: Array<Promise<number>> = []
    for (let i = 300; i < 400; i++) commits.push(store.commit('g', [entry(i % 5, BigInt(i))]))
    expect(await Promise.all(commits)).toEqual(commits.map(() => ErrorCode.NONE))
    expect(await cleaning).toBeGreaterThan(0)
    await h.cleanOffsetsLog()
    const expected = [0, 1, 2, 3, 4].map((p) => [p, BigInt(395 + p)])
    const byPartition = (entries: OffsetCommitEntry[]) => entries.map((e) => [e.partition, e.offset]).sort((a, b) => Number(a[0]) - Number(b[0]))
    expect(byPartition(store.all('g'))).toEqual(expected)
    expect(offsetsLogShape(h.logManager.getLog(OFFSETS_TOPIC, 0)!).records).toBe(5)
    h = await h.restart()
    expect(byPartition(h.coordinator.offsets.all('g'))).toEqual(expected)
  })
})
