/**
 * SharePartition's state transitions (KIP-932), on real objects: the broker's timing wheel
 * (SystemTimer) on a clock the test moves, so a lock expires exactly when the test says.
 * Acquisition, the in-flight limit, acknowledgements (accept, release, reject, gap, renew), the
 * delivery count limit, lock expiry, a member's release, and bad acknowledgements, which answer
 * Kafka's codes and change nothing.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import { SystemTimer } from '../../ts/purgatory/timing-wheel.js'
import { AcknowledgeType as Ack, RecordState, SharePartition, type ReadBatch, type SharePartitionConfig } from '../../ts/share/share-partition.js'

let clock = 0
const timers: SystemTimer[] = []
afterEach(() => {
  for (const t of timers.splice(0)) t.shutdown()
})

function setup(overrides: Partial<SharePartitionConfig> = {}, startOffset = 0n) {
  clock = 1000
  const timer = new SystemTimer({ now: () => clock })
  timers.push(timer)
  const config: SharePartitionConfig = { recordLockDurationMs: 30_000, deliveryCountLimit: 5, maxInFlightRecords: 2000, ...overrides }
  let wakeups = 0
  const sp = new SharePartition('g', 't', 0, startOffset, { timer, config: () => config, onRecordsAvailable: () => wakeups++ })
  const advance = (ms: number) => {
    clock += ms
    timer.advanceClock(clock)
  }
  return { sp, config, advance, wakeups: () => wakeups }
}

const data = (baseOffset: bigint, lastOffset: bigint): ReadBatch => ({ baseOffset, lastOffset, kind: 'data' })
const states = (sp: SharePartition, from: bigint, to: bigint) => {
  const out: Array<string> = []
  for (let o = from; o <= to; o++) {
    const s = sp.recordState(o)
    out.push(s === null ? '-' : `${Object.entries(RecordState).find(([, v]) => v === s.state)![0]}/${s.deliveryCount}${s.memberId === null ? '' : `/${s.memberId}`}`)
  }
  return out
}

describe('SharePartition', () => {
  it('acquires new records for a member, in ranges of one delivery count, and others get what is left', () => {
    const { sp } = setup()
    expect(sp.acquire('a', 4, [data(0n, 9n)])).toEqual([{ firstOffset: 0n, lastOffset: 3n, deliveryCount: 1 }])
    expect(sp.nextFetchOffset()).toBe(4n)
    expect(sp.acquire('b', 100, [data(0n, 9n)])).toEqual([{ firstOffset: 4n, lastOffset: 9n, deliveryCount: 1 }])
    expect(sp.acquire('c', 100, [data(0n, 9n)])).toEqual([])
    expect(states(sp, 2n, 5n)).toEqual(['ACQUIRED/1/a', 'ACQUIRED/1/a', 'ACQUIRED/1/b', 'ACQUIRED/1/b'])
    expect([sp.startOffset, sp.endOffset]).toEqual([0n, 10n])
  })

  it('accept moves the start offset past what is done; records before it are no longer in flight', () => {
    const { sp } = setup()
    sp.acquire('a', 10, [data(0n, 9n)])
    expect(sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 4n, acknowledgeTypes: [Ack.ACCEPT] }]).errorCode).toBe(ErrorCode.NONE)
    expect(sp.startOffset).toBe(5n)
    expect(sp.recordState(4n)).toBeNull()
    // Per-offset types: accept, reject, gap (archived), and the start moves over all three.
    expect(sp.acknowledge('a', [{ firstOffset: 5n, lastOffset: 7n, acknowledgeTypes: [Ack.ACCEPT, Ack.REJECT, Ack.GAP] }]).errorCode).toBe(ErrorCode.NONE)
    expect(sp.startOffset).toBe(8n)
    expect(sp.inFlightCount()).toBe(2)
  })

  it('release makes records available again: the next acquisition gets them with the delivery count up', () => {
    const { sp, wakeups } = setup()
    sp.acquire('a', 10, [data(0n, 9n)])
    expect(sp.acknowledge('a', [{ firstOffset: 3n, lastOffset: 4n, acknowledgeTypes: [Ack.RELEASE] }]).errorCode).toBe(ErrorCode.NONE)
    expect(wakeups()).toBe(1)
    expect(sp.nextFetchOffset()).toBe(3n)
    expect(sp.acquire('b', 10, [data(0n, 9n)])).toEqual([{ firstOffset: 3n, lastOffset: 4n, deliveryCount: 2 }])
  })

  it('a record released at the delivery count limit is archived, never delivered again', () => {
    const { sp } = setup({ deliveryCountLimit: 2 })
    sp.acquire('a', 1, [data(0n, 0n)])
    sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 0n, acknowledgeTypes: [Ack.RELEASE] }])
    expect(sp.acquire('a', 1, [data(0n, 0n)])).toEqual([{ firstOffset: 0n, lastOffset: 0n, deliveryCount: 2 }])
    sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 0n, acknowledgeTypes: [Ack.RELEASE] }])
    expect(sp.startOffset).toBe(1n)
    expect(sp.acquire('a', 1, [data(0n, 0n)])).toEqual([])
  })

  it('a lock that expires returns its records to AVAILABLE, then at the limit to ARCHIVED', () => {
    const { sp, advance, wakeups } = setup({ recordLockDurationMs: 5000, deliveryCountLimit: 2 })
    sp.acquire('a', 3, [data(0n, 2n)])
    advance(4999)
    expect(states(sp, 0n, 0n)).toEqual(['ACQUIRED/1/a'])
    advance(1)
    expect(states(sp, 0n, 2n)).toEqual(['AVAILABLE/1', 'AVAILABLE/1', 'AVAILABLE/1'])
    expect(wakeups()).toBe(1)
    expect(sp.acquire('b', 3, [data(0n, 2n)])).toEqual([{ firstOffset: 0n, lastOffset: 2n, deliveryCount: 2 }])
    advance(5000)
    expect(sp.startOffset).toBe(3n)
    expect(sp.inFlightCount()).toBe(0)
  })

  it('acknowledging after the lock expired: INVALID_RECORD_STATE, nothing changes', () => {
    const { sp, advance } = setup({ recordLockDurationMs: 5000 })
    sp.acquire('a', 2, [data(0n, 1n)])
    advance(5000)
    sp.acquire('b', 1, [data(0n, 1n)])
    const before = states(sp, 0n, 1n)
    expect(sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 1n, acknowledgeTypes: [Ack.ACCEPT] }]).errorCode).toBe(ErrorCode.INVALID_RECORD_STATE)
    expect(states(sp, 0n, 1n)).toEqual(before)
    expect(before).toEqual(['ACQUIRED/2/b', 'AVAILABLE/1'])
  })

  it("another member's records, records never acquired: INVALID_RECORD_STATE; the whole request is refused", () => {
    const { sp } = setup()
    sp.acquire('a', 2, [data(0n, 3n)])
    sp.acquire('b', 2, [data(0n, 3n)])
    const before = states(sp, 0n, 3n)
    // The first batch is fine; the second names b's record: nothing of either is applied.
    const r = sp.acknowledge('a', [
      { firstOffset: 0n, lastOffset: 1n, acknowledgeTypes: [Ack.ACCEPT] },
      { firstOffset: 2n, lastOffset: 2n, acknowledgeTypes: [Ack.ACCEPT] },
    ])
    expect(r.errorCode).toBe(ErrorCode.INVALID_RECORD_STATE)
    expect(states(sp, 0n, 3n)).toEqual(before)
    sp.acknowledge('b', [{ firstOffset: 2n, lastOffset: 2n, acknowledgeTypes: [Ack.RELEASE] }])
    expect(sp.acknowledge('b', [{ firstOffset: 2n, lastOffset: 2n, acknowledgeTypes: [Ack.ACCEPT] }]).errorCode).toBe(ErrorCode.INVALID_RECORD_STATE)
    expect(sp.startOffset).toBe(0n)
  })

  it('out of range, bad types, reversed batches: INVALID_REQUEST; below the start offset: skipped', () => {
    const { sp } = setup()
    sp.acquire('a', 4, [data(0n, 3n)])
    const before = states(sp, 0n, 3n)
    expect(sp.acknowledge('a', [{ firstOffset: 2n, lastOffset: 4n, acknowledgeTypes: [Ack.ACCEPT] }]).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(sp.acknowledge('a', [{ firstOffset: 10n, lastOffset: 12n, acknowledgeTypes: [Ack.ACCEPT] }]).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 1n, acknowledgeTypes: [5] }]).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 2n, acknowledgeTypes: [Ack.ACCEPT, Ack.ACCEPT] }]).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(sp.acknowledge('a', [{ firstOffset: 1n, lastOffset: 0n, acknowledgeTypes: [Ack.ACCEPT] }]).errorCode).toBe(ErrorCode.INVALID_REQUEST)
    expect(states(sp, 0n, 3n)).toEqual(before)
    sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 1n, acknowledgeTypes: [Ack.ACCEPT] }])
    expect(sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 2n, acknowledgeTypes: [Ack.ACCEPT] }]).errorCode).toBe(ErrorCode.NONE)
    expect(sp.startOffset).toBe(3n)
  })

  it('renew gives the records a new lock of the full duration', () => {
    const { sp, advance } = setup({ recordLockDurationMs: 5000 })
    sp.acquire('a', 2, [data(0n, 1n)])
    advance(4000)
    expect(sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 0n, acknowledgeTypes: [Ack.RENEW] }]).errorCode).toBe(ErrorCode.NONE)
    advance(1000)
    expect(states(sp, 0n, 1n)).toEqual(['ACQUIRED/1/a', 'AVAILABLE/1'])
    advance(3999)
    expect(states(sp, 0n, 0n)).toEqual(['ACQUIRED/1/a'])
    advance(1)
    expect(states(sp, 0n, 0n)).toEqual(['AVAILABLE/1'])
  })

  it('the in-flight limit stops new acquisitions until the start offset moves', () => {
    const { sp } = setup({ maxInFlightRecords: 3 })
    expect(sp.acquire('a', 10, [data(0n, 9n)])).toEqual([{ firstOffset: 0n, lastOffset: 2n, deliveryCount: 1 }])
    expect(sp.canAcquireRecords(10n)).toBe(false)
    expect(sp.acquire('b', 10, [data(3n, 9n)])).toEqual([])
    sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 1n, acknowledgeTypes: [Ack.ACCEPT] }])
    expect(sp.canAcquireRecords(10n)).toBe(true)
    expect(sp.acquire('b', 10, [data(3n, 9n)])).toEqual([{ firstOffset: 3n, lastOffset: 4n, deliveryCount: 1 }])
  })

  it('skipped batches (control records, aborted transactions) and offsets between batches are archived, never acquired', () => {
    const { sp } = setup()
    const acquired = sp.acquire('a', 100, [data(0n, 1n), { baseOffset: 2n, lastOffset: 4n, kind: 'skip' }, data(5n, 5n), data(8n, 9n)])
    expect(acquired).toEqual([
      { firstOffset: 0n, lastOffset: 1n, deliveryCount: 1 },
      { firstOffset: 5n, lastOffset: 5n, deliveryCount: 1 },
      { firstOffset: 8n, lastOffset: 9n, deliveryCount: 1 },
    ])
    expect(states(sp, 2n, 7n)).toEqual(['ARCHIVED/0', 'ARCHIVED/0', 'ARCHIVED/0', 'ACQUIRED/1/a', 'ARCHIVED/0', 'ARCHIVED/0'])
    sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 1n, acknowledgeTypes: [Ack.ACCEPT] }])
    expect(sp.startOffset).toBe(5n)
  })

  it("a member's release returns what it holds, not what others hold", () => {
    const { sp, wakeups } = setup()
    sp.acquire('a', 2, [data(0n, 3n)])
    sp.acquire('b', 2, [data(0n, 3n)])
    sp.releaseAcquiredRecords('a')
    expect(wakeups()).toBe(1)
    expect(states(sp, 0n, 3n)).toEqual(['AVAILABLE/1', 'AVAILABLE/1', 'ACQUIRED/1/b', 'ACQUIRED/1/b'])
  })

  it('the log start offset moving up archives what is below it', () => {
    const { sp } = setup()
    sp.acquire('a', 5, [data(0n, 4n)])
    sp.maybeUpdateStartOffset(3n)
    expect(sp.startOffset).toBe(3n)
    expect(states(sp, 3n, 4n)).toEqual(['ACQUIRED/1/a', 'ACQUIRED/1/a'])
    expect(sp.acknowledge('a', [{ firstOffset: 0n, lastOffset: 4n, acknowledgeTypes: [Ack.ACCEPT] }]).errorCode).toBe(ErrorCode.NONE)
    expect(sp.startOffset).toBe(5n)
    sp.maybeUpdateStartOffset(20n)
    expect([sp.startOffset, sp.endOffset]).toEqual([20n, 20n])
  })
})
