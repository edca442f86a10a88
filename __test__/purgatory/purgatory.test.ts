/**
 * DelayedOperation and DelayedOperationPurgatory: Kafka's rules for parking, waking and expiring
 * operations (docs/fetch.md "Long polls"), on vitest's fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DelayedOperation } from '../../ts/purgatory/delayed-operation.js'
import { DelayedOperationPurgatory, topicPartitionOperationKey } from '../../ts/purgatory/purgatory.js'
import { SystemTimer } from '../../ts/purgatory/timing-wheel.js'

/** Completes when `ready` is set (as a fetch completes when minBytes arrived). */
class TestOperation extends DelayedOperation {
  ready = false
  tries = 0
  completions = 0
  expirations = 0
  /** Runs inside onComplete (to test re-entrancy). */
  whenComplete: (() => void) | null = null

  tryComplete(): boolean {
    this.tries++
    return this.ready ? this.forceComplete() : false
  }

  onComplete(): void {
    this.completions++
    this.whenComplete?.()
  }

  onExpiration(): void {
    this.expirations++
  }
}

describe('DelayedOperationPurgatory', () => {
  let purgatory: DelayedOperationPurgatory<TestOperation>

  beforeEach(() => {
    vi.useFakeTimers()
    purgatory = new DelayedOperationPurgatory<TestOperation>('Fetch', { purgeInterval: 1000 })
  })

  afterEach(() => {
    purgatory.shutdown()
    vi.useRealTimers()
  })

  it('completes a ready operation at once without watching or timing it', () => {
    const op = new TestOperation(500)
    op.ready = true
    expect(purgatory.tryCompleteElseWatch(op, ['t-0'])).toBe(true)
    expect(op.completions).toBe(1)
    expect(purgatory.watched()).toBe(0)
    expect(purgatory.numDelayed()).toBe(0)
    expect(purgatory.completedTotal()).toBe(1)
  })

  it('remove drops a parked operation (its client went away): out of the timer and every watch list, never completed', () => {
    const op = new TestOperation(500)
    const other = new TestOperation(500)
    purgatory.tryCompleteElseWatch(op, ['t-0', 't-1'])
    purgatory.tryCompleteElseWatch(other, ['t-0'])
    expect(purgatory.remove(op, ['t-0', 't-1'])).toBe(true)
    expect(purgatory.remove(op, ['t-0', 't-1'])).toBe(false)
    expect(purgatory.numDelayed()).toBe(1)
    expect(purgatory.watched()).toBe(1)
    expect(purgatory.watchedKeys()).toBe(1)
    op.ready = other.ready = true
    expect(purgatory.checkAndComplete('t-0')).toBe(1)
    expect(op.forceComplete()).toBe(false)
    vi.advanceTimersByTime(1_000)
    expect([op.completions, op.expirations, other.completions]).toEqual([0, 0, 1])
    expect([purgatory.droppedTotal(), purgatory.completedTotal(), purgatory.expiredTotal()]).toEqual([1, 1, 0])
  })

  it('refuses an empty key list', () => {
    expect(() => purgatory.tryCompleteElseWatch(new TestOperation(10), [])).toThrow(/can not be empty/)
  })

  it('tryCompleteElseWatch tries again after watching, so an event in between is not lost until expiry', () => {
    const op = new TestOperation(500)
    // The first try fails; the data "arrives" before the second try (as an append between the two).
    const original = op.tryComplete.bind(op)
    op.tryComplete = () => {
      const done = original()
      op.ready = true
      return done
    }
    expect(purgatory.tryCompleteElseWatch(op, ['t-0', 't-1'])).toBe(true)
    expect(op.tries).toBe(2)
    expect(op.completions).toBe(1)
    expect(purgatory.numDelayed()).toBe(0) // never reached the timer
    vi.advanceTimersByTime(1_000)
    expect(op.expirations).toBe(0)
  })

  it('parks an operation under every key and in the timer, then expires it after its delay', () => {
    const op = new TestOperation(500)
    expect(purgatory.tryCompleteElseWatch(op, ['t-0', 't-1', 'u-0'])).toBe(false)
    expect(purgatory.watched()).toBe(3)
    expect(purgatory.watchedKeys()).toBe(3)
    expect(purgatory.numDelayed()).toBe(1)
    vi.advanceTimersByTime(499)
    expect(op.isCompleted()).toBe(false)
    vi.advanceTimersByTime(1)
    expect(op.completions).toBe(1)
    expect(op.expirations).toBe(1)
    expect(purgatory.numDelayed()).toBe(0)
    expect(purgatory.expiredTotal()).toBe(1)
    expect(purgatory.completedTotal()).toBe(0)
  })

  it('checkAndComplete completes the ready watchers of that key only and returns how many', () => {
    const a1 = new TestOperation(500)
    const a2 = new TestOperation(500)
    const b1 = new TestOperation(500)
    purgatory.tryCompleteElseWatch(a1, ['a'])
    purgatory.tryCompleteElseWatch(a2, ['a'])
    purgatory.tryCompleteElseWatch(b1, ['b'])
    a1.ready = true
    b1.ready = true
    expect(purgatory.checkAndComplete('a')).toBe(1)
    expect(a1.completions).toBe(1)
    expect(b1.completions).toBe(0)
    expect(purgatory.numDelayed()).toBe(2) // the completed one left the timer
    expect(purgatory.watched()).toBe(2) // a2 under a, b1 under b
    expect(purgatory.checkAndComplete('nobody')).toBe(0)
    vi.advanceTimersByTime(500)
    expect(a1.expirations).toBe(0)
    expect(a2.expirations).toBe(1)
  })

  it('completes an operation watched under several keys once, whichever key wakes it', () => {
    const op = new TestOperation(500)
    purgatory.tryCompleteElseWatch(op, ['t-0', 't-1'])
    op.ready = true
    expect(purgatory.checkAndComplete('t-1')).toBe(1)
    expect(purgatory.checkAndComplete('t-0')).toBe(0)
    expect(op.completions).toBe(1)
    expect(purgatory.watched()).toBe(0)
    expect(purgatory.watchedKeys()).toBe(0)
  })

  it('forceComplete wins exactly once', () => {
    const op = new TestOperation(500)
    purgatory.tryCompleteElseWatch(op, ['k'])
    expect(op.forceComplete()).toBe(true)
    expect(op.forceComplete()).toBe(false)
    op.ready = true
    expect(op.safeTryComplete()).toBe(false)
    expect(op.completions).toBe(1)
    expect(purgatory.numDelayed()).toBe(0)
  })

  describe.each(['checkAndComplete first', 'expiry first'])('completion exactly once when a checkAndComplete and the expiry fall due together (%s)', (order) => {
    it('runs onComplete once, and onExpiration only if expiry won', () => {
      const op = new TestOperation(100)
      const wake = () => {
        op.ready = true
        purgatory.checkAndComplete('k')
      }
      // Both fire at t = 100 ms; Node runs timers due at the same time in the order they were set.
      if (order === 'checkAndComplete first') setTimeout(wake, 100)
      purgatory.tryCompleteElseWatch(op, ['k'])
      if (order === 'expiry first') setTimeout(wake, 100)
      vi.advanceTimersByTime(100)
      expect(op.completions).toBe(1)
      expect(op.expirations).toBe(order === 'expiry first' ? 1 : 0)
      expect(purgatory.expiredTotal() + purgatory.completedTotal()).toBe(1)
      expect(purgatory.numDelayed()).toBe(0)
      vi.advanceTimersByTime(1_000)
      expect(op.completions).toBe(1)
    })
  })

  it('completes once when onComplete re-enters checkAndComplete for the same key', () => {
    const ops = Array.from({ length: 5 }, () => new TestOperation(500))
    for (const op of ops) purgatory.tryCompleteElseWatch(op, ['k', 'j'])
    for (const op of ops) {
      op.ready = true
      op.whenComplete = () => {
        purgatory.checkAndComplete('k')
        purgatory.checkAndComplete('j')
      }
    }
    expect(purgatory.checkAndComplete('k')).toBeGreaterThanOrEqual(1)
    expect(ops.map((o) => o.completions)).toEqual([1, 1, 1, 1, 1])
    expect(purgatory.completedTotal()).toBe(5)
    purgatory.checkAndComplete('j')
    expect(purgatory.watched()).toBe(0)
    expect(purgatory.watchedKeys()).toBe(0)
  })

  it('keeps every still-waiting watcher when a re-entrant checkAndComplete runs in the middle of a pass', () => {
    const [first, waitingA, waitingB, last] = Array.from({ length: 4 }, () => new TestOperation(500))
    for (const op of [first, waitingA, waitingB, last]) purgatory.tryCompleteElseWatch(op, ['k'])
    first.ready = true
    last.ready = true
    first.whenComplete = () => purgatory.checkAndComplete('k') // an append from inside a completion
    expect(purgatory.checkAndComplete('k')).toBe(1)
    expect(last.completions).toBe(1)
    expect(purgatory.watched()).toBe(2)
    // Both waiting operations are still watched: a later event on the key wakes each of them.
    waitingA.ready = true
    waitingB.ready = true
    expect(purgatory.checkAndComplete('k')).toBe(2)
    expect(purgatory.watchedKeys()).toBe(0)
  })

  it("purges completed operations from other keys' watch lists once more than purgeInterval pile up", () => {
    purgatory.shutdown()
    purgatory = new DelayedOperationPurgatory<TestOperation>('Fetch', { purgeInterval: 10 })
    const ops = Array.from({ length: 100 }, () => new TestOperation(5_000))
    for (const op of ops) purgatory.tryCompleteElseWatch(op, ['a', 'b'])
    expect(purgatory.watched()).toBe(200)
    for (const op of ops) op.ready = true
    expect(purgatory.checkAndComplete('a')).toBe(100)
    // 'a' dropped its entries; 'b' still holds 100 completed operations.
    expect(purgatory.watched()).toBe(100)
    expect(purgatory.watchedKeys()).toBe(1)
    expect(purgatory.purgeCount()).toBe(0)
    // 100 completed-but-watched > purgeInterval 10: the next watch purges.
    purgatory.tryCompleteElseWatch(new TestOperation(5_000), ['c'])
    expect(purgatory.purgeCount()).toBe(1)
    expect(purgatory.watched()).toBe(1)
    expect(purgatory.watchedKeys()).toBe(1) // 'b' was emptied and removed
  })

  it('does not purge while completed-but-watched operations stay within purgeInterval', () => {
    purgatory.shutdown()
    purgatory = new DelayedOperationPurgatory<TestOperation>('Fetch', { purgeInterval: 10 })
    const ops = Array.from({ length: 10 }, () => new TestOperation(5_000))
    for (const op of ops) purgatory.tryCompleteElseWatch(op, ['a', 'b'])
    for (const op of ops) op.forceComplete()
    purgatory.tryCompleteElseWatch(new TestOperation(5_000), ['c'])
    expect(purgatory.purgeCount()).toBe(0)
    expect(purgatory.watched()).toBe(21)
  })

  it("cancelForKey returns the key's operations, takes them out of the timer, and does not complete them", () => {
    const op1 = new TestOperation(500)
    const op2 = new TestOperation(500)
    const other = new TestOperation(500)
    purgatory.tryCompleteElseWatch(op1, ['gone'])
    purgatory.tryCompleteElseWatch(op2, ['gone'])
    purgatory.tryCompleteElseWatch(other, ['stays'])
    expect(purgatory.cancelForKey('gone')).toEqual([op1, op2])
    expect(purgatory.cancelForKey('gone')).toEqual([])
    expect(purgatory.watched()).toBe(1)
    expect(purgatory.numDelayed()).toBe(1)
    vi.advanceTimersByTime(1_000)
    expect(op1.completions + op2.completions).toBe(0)
    expect(other.expirations).toBe(1)
  })

  it('labels a topic-partition key as Kafka does', () => {
    expect(topicPartitionOperationKey('orders-eu', 3)).toBe('orders-eu-3')
  })

  it('expires 100,000 operations on 1,000 keys with one Node timer and leaves nothing behind', () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout')
    const timer = purgatory.timer as SystemTimer
    const keys = Array.from({ length: 1_000 }, (_, i) => topicPartitionOperationKey('topic', i))
    const heapBefore = process.memoryUsage().heapUsed
    for (let i = 0; i < 100_000; i++) {
      const op = new TestOperation(500 + (i % 100))
      purgatory.tryCompleteElseWatch(op, [keys[i % 1_000], keys[(i * 7 + 1) % 1_000]])
    }
    expect(purgatory.numDelayed()).toBe(100_000)
    expect(purgatory.watched()).toBe(200_000)
    expect(purgatory.watchedKeys()).toBe(1_000)
    expect(vi.getTimerCount()).toBe(1)
    expect(timer.pendingNodeTimers()).toBe(1)
    // A parked operation with its two watch entries is a few hundred bytes at most (loose bound:
    // no gc here, so garbage counts too).
    expect((process.memoryUsage().heapUsed - heapBefore) / 100_000).toBeLessThan(1_000)

    for (let t = 0; t < 700; t += 50) {
      vi.advanceTimersByTime(50)
      expect(vi.getTimerCount()).toBeLessThanOrEqual(1)
    }
    expect(purgatory.expiredTotal()).toBe(100_000)
    expect(purgatory.numDelayed()).toBe(0)
    // The purge after the expiring advance emptied every watch list and dropped every key.
    expect(purgatory.watched()).toBe(0)
    expect(purgatory.watchedKeys()).toBe(0)
    expect(timer.queuedBuckets()).toBe(0)
    expect(timer.pendingNodeTimers()).toBe(0)
    expect(setTimeoutSpy.mock.calls.length).toBe(timer.nodeTimerArms)
    expect(timer.nodeTimerArms).toBeLessThan(200) // one per bucket (100 delays), not per operation
    setTimeoutSpy.mockRestore()
  })

  it('shutdown stops the timer: parked operations neither expire nor keep the process alive', () => {
    const op = new TestOperation(100)
    purgatory.tryCompleteElseWatch(op, ['k'])
    purgatory.shutdown()
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(1_000)
    expect(op.isCompleted()).toBe(false)
    expect(() => purgatory.tryCompleteElseWatch(new TestOperation(1), ['k'])).toThrow(/shut down/)
  })

  it('works with a shared timer and with the timer disabled', () => {
    const shared = new SystemTimer()
    const p1 = new DelayedOperationPurgatory<TestOperation>('Produce', { timer: shared })
    const p2 = new DelayedOperationPurgatory<TestOperation>('Noop', { timerEnabled: false })
    const timed = new TestOperation(10)
    const untimed = new TestOperation(10)
    p1.tryCompleteElseWatch(timed, ['k'])
    p2.tryCompleteElseWatch(untimed, ['k'])
    vi.advanceTimersByTime(100)
    expect(timed.expirations).toBe(1)
    expect(untimed.isCompleted()).toBe(false)
    untimed.ready = true
    expect(p2.checkAndComplete('k')).toBe(1)
    p1.shutdown()
    p2.shutdown()
    expect(shared.pendingNodeTimers()).toBe(0)
    shared.shutdown()
  })
})
