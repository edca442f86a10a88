/**
 * The leader side of replication on real logs of both backends, driven by two fake followers'
 * fetches (`Partition.fetchRecords` with a replicaId and a clock of the test's, and
 * `ReplicaManager.fetchMessages`): ISR expansion and shrinking through an AlterPartitionManager
 * (the in-process one of __test__/helpers), the high watermark while a change is in flight
 * (Kafka's maximal ISR), refusals, min.insync.replicas, and acks=all produces waiting in the
 * produce purgatory.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { silentLogger } from '../../ts/logger.js'
import { buildBatch } from '../../ts/protocol/batch-builder.js'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { Partition, type PartitionState } from '../../ts/replica/partition.js'
import type { PartitionRegistration } from '../../ts/replica/partition-registration.js'
import { ReplicaManager, type ProduceAcksResult } from '../../ts/replica/replica-manager.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { LogManager } from '../../ts/storage/log-manager.js'
import { InMemoryAlterPartitionManager } from '../helpers/alter-partition.js'
import { tempDir } from '../helpers/tmp.js'

const TP = { topic: 't', partition: 0 }
const LAG = 1000
/** The test's clock: far from 0, so that "never caught up" (time 0) is far behind. */
const T = 10_000_000

let manager: LogManager | undefined
afterEach(async () => {
  await manager?.close()
  manager = undefined
})

async function open(backend: BackendName) {
  manager = await LogManager.open({ dataDir: tempDir('ferrolog-isr-'), backend, highWatermark: 'managed', retentionCheckIntervalMs: 0, logger: silentLogger })
  return manager.getOrCreateLog(TP.topic, TP.partition)
}

const records = (...values: string[]) => buildBatch(values.map((value) => ({ value })))
const settle = () => new Promise((resolve) => setImmediate(resolve))

function registration(isr: number[], overrides: Partial<PartitionRegistration> = {}): PartitionRegistration {
  return { replicas: [0, 1, 2], isr, leader: 0, leaderEpoch: 1, partitionEpoch: 0, ...overrides }
}

/** A partition led by broker 0 with followers 1 and 2, registered in `apm` with this ISR. */
async function leader(backend: BackendName, isr: number[], options: Partial<PartitionState> = {}) {
  const log = await open(backend)
  const apm = new InMemoryAlterPartitionManager()
  const wakeUps = { n: 0 }
  const p = new Partition(TP, log, {
    localBrokerId: 0,
    leaderEpoch: 0,
    replicaLagTimeMaxMs: LAG,
    alterPartitionManager: apm,
    delayedOperations: { checkAndCompleteAll: () => void wakeUps.n++ },
    alterPartitionRetryBackoffMs: 5,
    ...options,
  })
  expect(p.applyLeaderRegistration(apm.register(TP, registration(isr)), T)).toBe(true)
  return { log, apm, p, wakeUps }
}

/** A follower's fetch at `offset` (its log end), at the test's time `nowMs`. */
function fetch(p: Partition, replicaId: number, offset: bigint, nowMs: number) {
  const params = { replicaId, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false }
  return p.fetchRecords(params, { ...TP, fetchOffset: offset, partitionMaxBytes: 1 << 20, logStartOffset: 0n }, 'LOG_END', 1 << 20, true, true, nowMs)
}

describe.each(['native', 'js'] as BackendName[])('ISR changes on the %s backend', (backend) => {
  it('a follower that reaches the high watermark joins the ISR; the registration recorded is applied', async () => {
    const { p, apm, log } = await leader(backend, [0, 1])
    expect([p.leaderEpoch, p.partitionEpoch, [...p.isr]]).toEqual([1, 0, [0, 1]])
    p.appendRecordsToLeader(records('a', 'b', 'c'))
    expect(log.highWatermark()).toBe(0n)
    expect(fetch(p, 1, 3n, T + 10).highWatermarkMoved).toBe(true)
    expect(log.highWatermark()).toBe(3n)
    // Follower 2 fetches from 0: below the high watermark, not proposed.
    expect(fetch(p, 2, 0n, T + 20).result.info!.records.size).toBeGreaterThan(0)
    await settle()
    expect(apm.submitted).toEqual([])
    // At 3 it has the high watermark: proposed as ISR + 2, in assignment order.
    fetch(p, 2, 3n, T + 30)
    expect(p.isrChange.kind).toBe('pendingExpand')
    expect([...p.isr]).toEqual([0, 1]) // the committed ISR until the answer
    expect([...p.maximalIsr()]).toEqual([0, 1, 2])
    await settle()
    expect(apm.submitted.map((s) => s.request)).toEqual([{ leaderEpoch: 1, partitionEpoch: 0, isr: [0, 1, 2] }])
    expect(p.isrChange.kind).toBe('committed')
    expect([p.partitionEpoch, [...p.isr]]).toEqual([1, [0, 1, 2]])
    expect(apm.get(TP)).toMatchObject({ partitionEpoch: 1, isr: [0, 1, 2] })
    // The echo of the change from the metadata changes nothing; an older registration is skipped.
    expect(p.applyLeaderRegistration(apm.get(TP)!, T + 40)).toBe(true)
    expect(p.applyLeaderRegistration(registration([0]), T + 40)).toBe(false)
    expect([p.partitionEpoch, [...p.isr]]).toEqual([1, [0, 1, 2]])
    expect(p.followerReplica(2)!.logEndOffset).toBe(3n) // same leader epoch: follower states kept
  })

  it("a follower must also have the leader epoch's start offset to join", async () => {
    const { p, apm, log } = await leader(backend, [0, 1, 2])
    p.appendRecordsToLeader(records('a', 'b', 'c'))
    fetch(p, 1, 3n, T + 1)
    fetch(p, 2, 1n, T + 1)
    expect(log.highWatermark()).toBe(1n)
    // Elected again at a new epoch without follower 2: the epoch starts at the log end (3),
    // above the high watermark (1).
    p.applyLeaderRegistration(apm.register(TP, registration([0, 1], { leaderEpoch: 2, partitionEpoch: 1 })), T + 2)
    expect(p.leaderEpochStartOffset).toBe(3n)
    expect(log.highWatermark()).toBe(1n)
    // Follower 2 has the high watermark, not the epoch's start: not proposed.
    fetch(p, 2, 1n, T + 3)
    await settle()
    expect(apm.submitted).toEqual([])
    fetch(p, 1, 3n, T + 4)
    expect(log.highWatermark()).toBe(3n)
    fetch(p, 2, 3n, T + 5)
    await settle()
    expect(apm.submitted.map((s) => s.request)).toEqual([{ leaderEpoch: 2, partitionEpoch: 1, isr: [0, 1, 2] }])
    expect([...p.isr]).toEqual([0, 1, 2])
  })

  it('while an expansion is in flight the new member holds the high watermark back (maximal ISR)', async () => {
    const { p, apm, log } = await leader(backend, [0, 1])
    p.appendRecordsToLeader(records('a', 'b', 'c'))
    fetch(p, 1, 3n, T + 10)
    fetch(p, 2, 0n, T + 20)
    apm.hold()
    p.appendRecordsToLeader(records('d', 'e'))
    expect(log.highWatermark()).toBe(3n)
    fetch(p, 2, 3n, T + 30) // reaches the high watermark: pending expand
    expect(p.isrChange.kind).toBe('pendingExpand')
    // Long after, follower 1 has everything; follower 2 is behind by the lag rule but proposed.
    expect(fetch(p, 1, 5n, T + 30 + 5 * LAG).highWatermarkMoved).toBe(false)
    expect(log.highWatermark()).toBe(3n)
    // At most one change in flight: no shrink meanwhile either.
    expect(p.maybeShrinkIsr(T + 30 + 5 * LAG)).toBe(false)
    apm.release()
    await settle()
    expect([...p.isr]).toEqual([0, 1, 2])
    fetch(p, 2, 5n, T + 31 + 5 * LAG)
    expect(log.highWatermark()).toBe(5n)
  })

  it('followers that did not catch up within replica.lag.time.max.ms leave the ISR; the shrink counts them until answered', async () => {
    const { p, apm, log, wakeUps } = await leader(backend, [0, 1, 2])
    p.appendRecordsToLeader(records('a', 'b', 'c'))
    fetch(p, 1, 3n, T + 10)
    fetch(p, 2, 3n, T + 10)
    expect(log.highWatermark()).toBe(3n)
    p.appendRecordsToLeader(records('d', 'e'))
    fetch(p, 1, 5n, T + 20)
    expect(log.highWatermark()).toBe(3n) // follower 2 (in the ISR) has 3
    // Within the lag time nobody is out of sync.
    expect(p.maybeShrinkIsr(T + 10 + LAG)).toBe(false)
    apm.hold()
    expect(p.maybeShrinkIsr(T + 11 + LAG)).toBe(true)
    expect(p.isrChange.kind).toBe('pendingShrink')
    // Not answered yet: follower 2 still holds the high watermark back, and no second change goes out.
    fetch(p, 1, 5n, T + 12 + LAG)
    expect(log.highWatermark()).toBe(3n)
    expect(p.maybeShrinkIsr(T + 13 + LAG)).toBe(false)
    const before = wakeUps.n
    apm.release()
    await settle()
    expect(apm.submitted.map((s) => s.request)).toEqual([{ leaderEpoch: 1, partitionEpoch: 0, isr: [0, 1] }])
    expect([p.partitionEpoch, [...p.isr]]).toEqual([1, [0, 1]])
    expect(log.highWatermark()).toBe(5n) // the ISR moved: so did the high watermark
    expect(wakeUps.n).toBeGreaterThan(before) // and delayed fetches and produces were checked
    // Follower 2 catches up: it joins again.
    fetch(p, 2, 5n, T + 20 + LAG)
    await settle()
    expect([p.partitionEpoch, [...p.isr]]).toEqual([2, [0, 1, 2]])
  })

  it('INVALID_UPDATE_VERSION and FENCED_LEADER_EPOCH leave the change pending until the metadata delivers the registration', async () => {
    for (const refusal of ['partition epoch', 'leader epoch'] as const) {
      const { p, apm } = await leader(backend, [0, 1, 2])
      p.appendRecordsToLeader(records('a'))
      fetch(p, 1, 1n, T)
      // The metadata moved on without this leader knowing yet.
      const moved = refusal === 'partition epoch' ? registration([0, 1, 2], { partitionEpoch: 1, replicas: [0, 1, 2] }) : registration([0, 1, 2], { leaderEpoch: 2, partitionEpoch: 1 })
      apm.register(TP, moved)
      expect(p.maybeShrinkIsr(T + 2 * LAG)).toBe(true)
      await settle()
      expect(p.isrChange.kind).toBe('pendingShrink')
      expect([p.partitionEpoch, [...p.isr]]).toEqual([0, [0, 1, 2]])
      expect(p.maybeShrinkIsr(T + 2 * LAG)).toBe(false) // still in flight, not retried
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(apm.submitted).toHaveLength(1)
      // The registration arrives: committed; the next check proposes on top of it.
      p.applyLeaderRegistration(moved, T + 2 * LAG)
      expect(p.isrChange.kind).toBe('committed')
      expect(p.partitionEpoch).toBe(1)
      fetch(p, 1, 1n, T + 2 * LAG)
      expect(p.maybeShrinkIsr(T + 4 * LAG)).toBe(true)
      await settle()
      expect(apm.submitted[1].request).toEqual({ leaderEpoch: moved.leaderEpoch, partitionEpoch: 1, isr: [0, 1] })
      expect([p.partitionEpoch, [...p.isr]]).toEqual([2, [0, 1]])
      await manager!.close()
      manager = undefined
    }
  })

  it('a retriable failure is submitted again later; INELIGIBLE_REPLICA goes back to the committed ISR', async () => {
    const { p, apm } = await leader(backend, [0, 1])
    p.appendRecordsToLeader(records('a'))
    fetch(p, 1, 1n, T)
    apm.failNext(ErrorCode.REQUEST_TIMED_OUT)
    fetch(p, 2, 1n, T + 1)
    await settle()
    expect(p.isrChange.kind).toBe('pendingExpand') // failed once, waiting to retry
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(apm.submitted).toHaveLength(2)
    expect([...p.isr]).toEqual([0, 1, 2])

    const second = await leader(backend, [0, 1])
    second.apm.alive = (id) => id !== 2
    second.p.appendRecordsToLeader(records('a'))
    fetch(second.p, 1, 1n, T)
    fetch(second.p, 2, 1n, T + 1)
    await settle()
    expect(second.p.isrChange.kind).toBe('committed')
    expect([...second.p.isr]).toEqual([0, 1])
    // Alive again: its next fetch proposes it again.
    second.apm.alive = () => true
    fetch(second.p, 2, 1n, T + 2)
    await settle()
    expect([...second.p.isr]).toEqual([0, 1, 2])
  })

  it('an answer that comes after a leadership change or a newer registration is ignored', async () => {
    const { p, apm } = await leader(backend, [0, 1, 2])
    p.appendRecordsToLeader(records('a'))
    apm.hold()
    expect(p.maybeShrinkIsr(T + 2 * LAG)).toBe(true)
    // Re-elected at a new epoch with the ISR the controller chose.
    p.applyLeaderRegistration(registration([0, 2], { leaderEpoch: 2, partitionEpoch: 5 }), T + 2 * LAG)
    apm.release()
    await settle()
    expect([p.leaderEpoch, p.partitionEpoch, [...p.isr]]).toEqual([2, 5, [0, 2]])
    expect(p.isrChange.kind).toBe('committed')

    // At the same leader epoch: a registration from the metadata overtook the answer, which
    // would otherwise look current (same leader epoch, partition epoch not older).
    const second = await leader(backend, [0, 1, 2])
    second.p.appendRecordsToLeader(records('a'))
    second.apm.hold()
    expect(second.p.maybeShrinkIsr(T + 2 * LAG)).toBe(true)
    second.p.applyLeaderRegistration(registration([0, 1, 2], { partitionEpoch: 1 }), T + 2 * LAG)
    second.apm.release()
    await settle()
    expect(second.apm.get(TP)).toMatchObject({ isr: [0], partitionEpoch: 1 }) // what the store answered
    expect([second.p.partitionEpoch, [...second.p.isr]]).toEqual([1, [0, 1, 2]])
  })

  it('without an AlterPartitionManager (a standalone broker) the ISR never changes', async () => {
    const log = await open(backend)
    const p = new Partition(TP, log, { localBrokerId: 0, leaderEpoch: 0, assignment: [0, 1, 2], isr: [0, 1], replicaLagTimeMaxMs: LAG })
    p.appendRecordsToLeader(records('a'))
    fetch(p, 2, 1n, T)
    expect(p.maybeShrinkIsr(T + 10 * LAG)).toBe(false)
    await settle()
    expect([...p.isr]).toEqual([0, 1])
    expect(p.isrChange.kind).toBe('committed')
  })

  it('min.insync.replicas: acks=all is refused before the append when the ISR is too small; acks=1 is not', async () => {
    const minIsr = { n: 2 }
    const { p, log } = await leader(backend, [0], { minInSyncReplicas: () => minIsr.n })
    const refused = await p.appendRecordsToLeader(records('a'), -1)
    expect(refused.errorCode).toBe(ErrorCode.NOT_ENOUGH_REPLICAS)
    expect(refused.errorMessage).toMatch(/insufficient to satisfy the min.isr requirement of 2/)
    expect(log.logEndOffset()).toBe(0n) // nothing appended
    expect((await p.appendRecordsToLeader(records('a'), 1)).errorCode).toBe(ErrorCode.NONE)
    expect(p.isUnderMinIsr()).toBe(true)
    minIsr.n = 1 // AlterConfigs: read on every produce
    expect((await p.appendRecordsToLeader(records('b'), -1)).errorCode).toBe(ErrorCode.NONE)
    // A single replica: min.insync.replicas counts at most the replicas (Kafka's effectiveMinIsr).
    const single = new Partition({ topic: 't', partition: 1 }, await manager!.getOrCreateLog('t', 1), { localBrokerId: 0, leaderEpoch: 0, minInSyncReplicas: () => 3 })
    expect((await single.appendRecordsToLeader(records('a'), -1)).errorCode).toBe(ErrorCode.NONE)
  })

  it('checkEnoughReplicasReachOffset: the high watermark at the offset, and NOT_ENOUGH_REPLICAS_AFTER_APPEND under min.insync.replicas', async () => {
    const { p, apm } = await leader(backend, [0, 1, 2], { minInSyncReplicas: () => 2 })
    p.appendRecordsToLeader(records('a', 'b'))
    expect(p.checkEnoughReplicasReachOffset(2n)).toEqual({ hasEnough: false, errorCode: ErrorCode.NONE })
    fetch(p, 1, 2n, T)
    fetch(p, 2, 2n, T)
    expect(p.checkEnoughReplicasReachOffset(2n)).toEqual({ hasEnough: true, errorCode: ErrorCode.NONE })
    p.appendRecordsToLeader(records('c'))
    expect(p.maybeShrinkIsr(T + 2 * LAG)).toBe(true)
    await settle()
    expect([...p.isr]).toEqual([0])
    expect(apm.get(TP)!.isr).toEqual([0])
    expect(p.checkEnoughReplicasReachOffset(3n)).toEqual({ hasEnough: true, errorCode: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND })
  })
  it('a follower never proposes ISR changes: it holds no replica states, so its ISR check would shrink everyone out', async () => {
    const { p, apm } = await leader(backend, [0, 1, 2])
    // Broker 1 leads now; this broker (0) follows it.
    p.makeFollower(registration([0, 1, 2], { leader: 1, leaderEpoch: 2, partitionEpoch: 1 }))
    expect(p.maybeShrinkIsr(T + 10 * LAG)).toBe(false)
    await settle()
    expect(apm.submitted).toEqual([])
    expect([...p.isr]).toEqual([0, 1, 2])
  })
})

describe.each(['native', 'js'] as BackendName[])('acks=all through the ReplicaManager on the %s backend', (backend) => {
  async function setup(minIsr = 1) {
    const log = await open(backend)
    const apm = new InMemoryAlterPartitionManager()
    // A long lag time: the replica manager's own ISR check stays out of the way.
    const rm = new ReplicaManager(manager!, { brokerId: 0, alterPartitionManager: apm, replicaLagTimeMaxMs: 60_000, minInSyncReplicas: () => minIsr })
    const p = rm.getPartition(TP)!
    p.applyLeaderRegistration(apm.register(TP, registration([0, 1], { replicas: [0, 1] })))
    return { log, apm, rm, p }
  }
  const followerFetch = (rm: ReplicaManager, offset: bigint) =>
    new Promise<bigint>((resolve) =>
      rm.fetchMessages({ replicaId: 1, maxBytes: 1 << 20, isolationLevel: 0, hardMaxBytesLimit: false, minBytes: 1, maxWaitMs: 0 }, [{ ...TP, fetchOffset: offset, partitionMaxBytes: 1 << 20 }], (r) =>
        resolve(r[0].highWatermark),
      ),
    )
  async function produce(rm: ReplicaManager, timeoutMs: number, ...values: string[]) {
    const result = await rm.appendRecords(TP, records(...values), -1)
    const answers: ProduceAcksResult[][] = []
    const drop = rm.maybeAddDelayedProduce(-1, timeoutMs, [{ ...TP, result }], (r) => answers.push(r))
    return { result, answers, drop }
  }

  it("waits until the follower's fetch says it has the records, then answers NONE", async () => {
    const { rm, log } = await setup()
    const { result, answers } = await produce(rm, 30_000, 'a', 'b')
    expect(result.errorCode).toBe(ErrorCode.NONE)
    expect(answers).toEqual([])
    expect(rm.delayedProduceStats()).toMatchObject({ parked: 1, parkedTotal: 1 })
    await followerFetch(rm, 0n) // gets the records; the leader does not know it has them yet
    expect(log.highWatermark()).toBe(0n)
    expect(answers).toEqual([])
    await followerFetch(rm, 2n)
    expect(log.highWatermark()).toBe(2n)
    expect(answers).toEqual([[{ ...TP, errorCode: ErrorCode.NONE }]])
    expect(rm.delayedProduceStats()).toMatchObject({ parked: 0, completed: 1, expired: 0 })
    // acks=1 answers at once.
    const one = await rm.appendRecords(TP, records('c'), 1)
    const at: ProduceAcksResult[][] = []
    rm.maybeAddDelayedProduce(1, 30_000, [{ ...TP, result: one }], (r) => at.push(r))
    expect(at).toEqual([[{ ...TP, errorCode: ErrorCode.NONE }]])
    rm.shutdown()
  })

  it('times out with REQUEST_TIMED_OUT when the follower never fetches', async () => {
    const { rm } = await setup()
    const { answers } = await produce(rm, 50, 'a')
    await new Promise((resolve) => setTimeout(resolve, 150))
    expect(answers).toEqual([[{ ...TP, errorCode: ErrorCode.REQUEST_TIMED_OUT }]])
    expect(rm.delayedProduceStats()).toMatchObject({ expired: 1, expiredPartitions: 1 })
    rm.shutdown()
  })

  it('answers NOT_LEADER_OR_FOLLOWER when the leader changed meanwhile, and a dropped one never answers', async () => {
    const { rm, p, apm } = await setup()
    const waiting = await produce(rm, 30_000, 'a')
    const dropped = await produce(rm, 30_000, 'b')
    dropped.drop()
    p.applyLeaderRegistration(apm.register(TP, registration([0, 1], { replicas: [0, 1], leaderEpoch: 2, partitionEpoch: 1 })))
    expect(waiting.answers).toEqual([[{ ...TP, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER }]])
    expect(dropped.answers).toEqual([])
    expect(rm.delayedProduceStats()).toMatchObject({ dropped: 1 })
    rm.shutdown()
  })

  it('a partition without followers answers at once, as today', async () => {
    const log = await open(backend)
    const rm = new ReplicaManager(manager!, { brokerId: 0, alterPartitionManager: new InMemoryAlterPartitionManager(), replicaLagTimeMaxMs: 60_000 })
    const result = await rm.appendRecords(TP, records('a'), -1)
    expect(log.highWatermark()).toBe(1n) // the partition owns the high watermark: a single replica's follows its end
    const answers: ProduceAcksResult[][] = []
    rm.maybeAddDelayedProduce(-1, 30_000, [{ ...TP, result }], (r) => answers.push(r))
    expect(answers).toEqual([[{ ...TP, errorCode: ErrorCode.NONE }]])
    // Answered without a DelayedProduce: nothing went through the purgatory, not even to complete at once.
    expect(rm.delayedProduceStats()).toMatchObject({ parked: 0, parkedTotal: 0, completed: 0, expired: 0 })
    expect(rm.delayedProducePurgatory.watched()).toBe(0)
    rm.shutdown()
  })

  it('the ISR check (every replica.lag.time.max.ms / 2) shrinks a silent follower out and answers NOT_ENOUGH_REPLICAS_AFTER_APPEND', async () => {
    const log = await open(backend)
    const apm = new InMemoryAlterPartitionManager()
    const rm = new ReplicaManager(manager!, { brokerId: 0, alterPartitionManager: apm, replicaLagTimeMaxMs: 100, minInSyncReplicas: () => 2 })
    rm.getPartition(TP)!.applyLeaderRegistration(apm.register(TP, registration([0, 1], { replicas: [0, 1] })))
    const { answers } = await produce(rm, 30_000, 'a')
    expect(answers).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(apm.get(TP)).toMatchObject({ isr: [0], partitionEpoch: 1 })
    expect(answers).toEqual([[{ ...TP, errorCode: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND }]])
    expect(log.highWatermark()).toBe(1n)
    expect(rm.isrStats()).toMatchObject({ shrinks: 1, underMinIsrPartitions: 1 })
    // Now acks=all is refused before the append.
    expect((await rm.appendRecords(TP, records('b'), -1)).errorCode).toBe(ErrorCode.NOT_ENOUGH_REPLICAS)
    expect(log.logEndOffset()).toBe(1n)
    rm.shutdown()
  })
})
