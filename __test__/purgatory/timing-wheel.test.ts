/**
 * The hierarchical timing wheel (Kafka's TimingWheel + SystemTimer) driven by one Node timer.
 * Most cases run on vitest's fake timers, which also fake performance.now(), the timer's clock.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SystemTimer, TimerTask, TimingWheel, BucketQueue } from '../../ts/purgatory/timing-wheel.js'

class RecordingTask extends TimerTask {
  firedAt: number[] = []
  readonly addedAt: number

  constructor(delayMs: number) {
    super(delayMs)
    this.addedAt = Math.floor(performance.now())
  }

  run(): void {
    this.firedAt.push(performance.now())
  }
}

describe('timing wheel on fake timers', () => {
  let timer: SystemTimer

  beforeEach(() => {
    vi.useFakeTimers()
    timer = new SystemTimer({ tickMs: 1, wheelSize: 20 })
  })

  afterEach(() => {
    timer.shutdown()
    vi.useRealTimers()
  })

  it('expires every task at its delay, never early and at most one tick late', () => {
    const tasks: RecordingTask[] = []
    let seed = 7
    for (let i = 0; i < 2_000; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      const task = new RecordingTask(1 + (seed % 3_000))
      timer.add(task)
      tasks.push(task)
      if (i % 100 === 0) vi.advanceTimersByTime(3) // add at different clock times too
    }
    expect(timer.size()).toBeGreaterThan(1_900)
    vi.advanceTimersByTime(3_500)
    for (const t of tasks) {
      expect(t.firedAt).toHaveLength(1)
      const late = t.firedAt[0] - (t.addedAt + t.delayMs)
      expect(late).toBeGreaterThanOrEqual(0)
      expect(late).toBeLessThanOrEqual(1)
    }
    expect(timer.size()).toBe(0)
    expect(timer.pendingNodeTimers()).toBe(0)
  })

  it('puts a 30000 ms timeout in overflow wheels created on demand and fires it on time', () => {
    expect(timer.levels()).toBe(1)
    const short = new RecordingTask(19)
    timer.add(short)
    expect(timer.levels()).toBe(1) // 19 ms fits the 20 x 1 ms wheel
    const long = new RecordingTask(30_000)
    timer.add(long)
    // 20 ms, 400 ms, 8 s, 160 s: 30 s needs the fourth wheel.
    expect(timer.levels()).toBe(4)
    vi.advanceTimersByTime(29_999)
    expect(short.firedAt).toHaveLength(1)
    expect(long.firedAt).toHaveLength(0)
    expect(timer.size()).toBe(1) // cascaded down, still waiting
    vi.advanceTimersByTime(1)
    expect(long.firedAt).toEqual([long.addedAt + 30_000])
    expect(timer.size()).toBe(0)
  })

  it('keeps a short task in the first wheel after the timer sat idle for hours', () => {
    vi.advanceTimersByTime(10 * 3_600_000)
    const task = new RecordingTask(5)
    timer.add(task)
    expect(timer.levels()).toBe(1)
    vi.advanceTimersByTime(5)
    expect(task.firedAt).toEqual([task.addedAt + 5])
  })

  it('refuses a delay that is not a finite number', () => {
    expect(() => new RecordingTask(Infinity)).toThrow(RangeError)
    expect(() => new RecordingTask(NaN)).toThrow(RangeError)
  })

  it('cancels a task in its bucket: it never runs and leaves the count', () => {
    const kept = new RecordingTask(50)
    const cancelled = new RecordingTask(50)
    const cancelledLong = new RecordingTask(10_000)
    timer.add(kept)
    timer.add(cancelled)
    timer.add(cancelledLong)
    expect(timer.size()).toBe(3)
    cancelled.cancel()
    cancelledLong.cancel()
    expect(timer.size()).toBe(1)
    expect(cancelled.isScheduled()).toBe(false)
    vi.advanceTimersByTime(20_000)
    expect(kept.firedAt).toHaveLength(1)
    expect(cancelled.firedAt).toHaveLength(0)
    expect(cancelledLong.firedAt).toHaveLength(0)
    // An empty bucket expiring is harmless, and nothing stays armed.
    expect(timer.pendingNodeTimers()).toBe(0)
  })

  it('runs an already-expired task on the next turn, not inside add, and cancel still stops it', () => {
    const now = new RecordingTask(0)
    const stopped = new RecordingTask(0)
    timer.add(now)
    timer.add(stopped)
    expect(now.firedAt).toHaveLength(0)
    stopped.cancel()
    vi.advanceTimersByTime(0)
    expect(now.firedAt).toHaveLength(1)
    expect(stopped.firedAt).toHaveLength(0)
  })

  it('re-adding a task moves it: it runs once, at the new time', () => {
    const task = new RecordingTask(100)
    timer.add(task)
    vi.advanceTimersByTime(50)
    timer.add(task) // expires at 150 now
    expect(timer.size()).toBe(1)
    vi.advanceTimersByTime(99)
    expect(task.firedAt).toHaveLength(0)
    vi.advanceTimersByTime(1)
    expect(task.firedAt).toHaveLength(1)
  })

  it('holds one Node timer for 100,000 tasks and arms it once per bucket, not per task', () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout')
    const tasks: RecordingTask[] = []
    for (let i = 0; i < 100_000; i++) {
      const task = new RecordingTask(100 + (i % 1_000))
      timer.add(task)
      tasks.push(task)
    }
    expect(vi.getTimerCount()).toBe(1)
    expect(timer.pendingNodeTimers()).toBe(1)
    let maxPending = 0
    for (let t = 0; t < 1_200; t += 10) {
      vi.advanceTimersByTime(10)
      maxPending = Math.max(maxPending, vi.getTimerCount())
    }
    expect(maxPending).toBeLessThanOrEqual(1)
    expect(tasks.every((t) => t.firedAt.length === 1)).toBe(true)
    // At most one arm per distinct bucket expiration (1,000 delays, plus cascades): far from 100,000.
    expect(setTimeoutSpy.mock.calls.length).toBe(timer.nodeTimerArms)
    expect(timer.nodeTimerArms).toBeLessThan(1_200)
    setTimeoutSpy.mockRestore()
  })

  it('a task that throws does not stop the others', () => {
    const errors: string[] = []
    timer.shutdown()
    timer = new SystemTimer({
      logger: {
        error: (msg) => errors.push(msg),
        warn() {},
        info() {},
        debug() {},
        child() {
          return this
        },
      },
    })
    class Throwing extends TimerTask {
      run(): void {
        throw new Error('boom')
      }
    }
    const after = new RecordingTask(5)
    timer.add(new Throwing(5))
    timer.add(after)
    vi.advanceTimersByTime(5)
    expect(errors).toEqual(['timer task failed'])
    expect(after.firedAt).toHaveLength(1)
  })

  it('shutdown drops pending tasks and disarms the Node timer', () => {
    const task = new RecordingTask(10)
    timer.add(task)
    timer.shutdown()
    expect(timer.pendingNodeTimers()).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
    expect(timer.size()).toBe(0)
    vi.advanceTimersByTime(100)
    expect(task.firedAt).toHaveLength(0)
    timer.add(new RecordingTask(1)) // ignored after shutdown
    expect(timer.size()).toBe(0)
  })
})

describe('timing wheel without a Node timer (advanceClock by hand)', () => {
  it('places tasks by slot and expires them bucket by bucket, as Kafka does', () => {
    let clock = 1_000
    const timer = new SystemTimer({ now: () => clock })
    const fired: number[] = []
    class At extends TimerTask {
      run(): void {
        fired.push(this.delayMs)
      }
    }
    for (const d of [1, 2, 19, 20, 21, 399, 400, 401, 8_000]) timer.add(new At(d))
    for (clock = 1_000; clock <= 9_001; clock++) timer.advanceClock(clock)
    expect(fired).toEqual([1, 2, 19, 20, 21, 399, 400, 401, 8_000])
    expect(timer.advanceClock(clock)).toBe(false)
    timer.shutdown()
  })

  it('rounds the start time down to a tick and sends a task beyond the interval to the overflow wheel', () => {
    const counter = { count: 0 }
    const wheel = new TimingWheel(10, 20, 1_234, counter, new BucketQueue())
    expect(wheel.currentTimeMs).toBe(1_230)
    expect(wheel.interval).toBe(200)
    class Nop extends TimerTask {
      run(): void {}
    }
    const near = new Nop(0)
    near.timerExpirationMs = 1_239 // before currentTime + tickMs: already expired
    expect(wheel.add(near)).toBe(false)
    const inWheel = new Nop(0)
    inWheel.timerExpirationMs = 1_429
    expect(wheel.add(inWheel)).toBe(true)
    expect(wheel.overflowWheel).toBeNull()
    const beyond = new Nop(0)
    beyond.timerExpirationMs = 1_430
    expect(wheel.add(beyond)).toBe(true)
    expect(wheel.overflowWheel?.tickMs).toBe(200)
    expect(counter.count).toBe(2)
  })
})

describe('timing wheel on real time', () => {
  it('fires a 30 ms task after 30 ms and well within a bounded wait', async () => {
    const timer = new SystemTimer()
    const start = performance.now()
    const firedAt = await new Promise<number>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error('task did not fire within 2 s')), 2_000)
      class Resolve extends TimerTask {
        run(): void {
          clearTimeout(guard)
          resolve(performance.now())
        }
      }
      timer.add(new Resolve(30))
    })
    const elapsed = firedAt - start
    // The clock is in whole ms: never more than one tick early.
    expect(elapsed).toBeGreaterThanOrEqual(29)
    expect(elapsed).toBeLessThan(500) // a loaded machine may be late, never early
    expect(timer.pendingNodeTimers()).toBe(0)
    timer.shutdown()
  })
})
