/**
 * Kafka's hierarchical timing wheel (server-common `org.apache.kafka.server.util.timer`:
 * `TimingWheel`, `TimerTaskList`, `SystemTimer`), for a single-threaded Node process.
 *
 * Layout. The level-1 wheel has `wheelSize` buckets (20) of `tickMs` (1 ms) each, covering
 * `interval = tickMs * wheelSize` (20 ms) from its `currentTimeMs`. A task that expires further out
 * goes to an overflow wheel whose tick is the lower wheel's interval (20 ms, then 400 ms, 8 s,
 * 160 s, ...), created on demand. A bucket is a doubly linked cyclic list with a sentinel root, so a
 * task is removed in O(1) when it is cancelled; adding a task is O(levels).
 *
 * Expiration is by bucket, never by task: each bucket with tasks has one expiration time (the start
 * of its slot) and sits once in a min-heap ordered by that time. When the earliest bucket is due,
 * the wheel's clock advances to the bucket's expiration and its tasks are re-added: a task from an
 * overflow wheel falls to a finer wheel, a task whose time has come (expiration < currentTime +
 * tickMs) runs. Kafka polls a `DelayQueue` from a reaper thread; here ONE Node timer (`setTimeout`,
 * unref'd) is armed for the earliest bucket's expiration and re-armed as buckets come and go, so
 * 100,000 parked operations cost one libuv timer, not 100,000.
 *
 * Tasks and buckets are in timer-task-list.ts.
 */
import { createLogger, type Logger } from '../logger.js'
import { BucketQueue, DUE, IDLE, SCHEDULED, TimerTask, TimerTaskList } from './timer-task-list.js'

export { BucketQueue, TimerTask, TimerTaskList }

/** Kafka's defaults: `new SystemTimer(name)` uses tickMs 1 and wheelSize 20. */
export const DEFAULT_TICK_MS = 1
export const DEFAULT_WHEEL_SIZE = 20
/** setTimeout treats larger delays as 1 ms. */
const MAX_NODE_TIMEOUT_MS = 2 ** 31 - 1

/** One level of the hierarchy. Not a timer by itself: `SystemTimer` drives it. */
export class TimingWheel {
  readonly interval: number
  private readonly buckets: TimerTaskList[]
  /** A multiple of tickMs: the start of the current slot. */
  currentTimeMs: number
  overflowWheel: TimingWheel | null = null

  constructor(
    readonly tickMs: number,
    readonly wheelSize: number,
    startMs: number,
    private readonly counter: { count: number },
    private readonly queue: BucketQueue,
  ) {
    this.interval = tickMs * wheelSize
    this.currentTimeMs = startMs - (startMs % tickMs)
    this.buckets = Array.from({ length: wheelSize }, () => new TimerTaskList(counter))
  }

  /** Puts the task in its bucket; false if it is already expired (the caller runs it). */
  add(task: TimerTask): boolean {
    const expiration = task.timerExpirationMs
    if (expiration < this.currentTimeMs + this.tickMs) return false
    if (expiration < this.currentTimeMs + this.interval) {
      const virtualId = Math.floor(expiration / this.tickMs)
      const bucket = this.buckets[virtualId % this.wheelSize]!
      bucket.add(task)
      // A bucket is queued once per expiration: only a reused slot (the wheel moved on) changes it.
      if (bucket.setExpiration(virtualId * this.tickMs)) this.queue.offer(bucket)
      return true
    }
    if (this.overflowWheel === null) {
      this.overflowWheel = new TimingWheel(this.interval, this.wheelSize, this.currentTimeMs, this.counter, this.queue)
    }
    return this.overflowWheel.add(task)
  }

  advanceClock(timeMs: number): void {
    if (timeMs >= this.currentTimeMs + this.tickMs) {
      this.currentTimeMs = timeMs - (timeMs % this.tickMs)
      if (this.overflowWheel !== null) this.overflowWheel.advanceClock(this.currentTimeMs)
    }
  }

  /** How many wheels, this one included (for tests and metrics). */
  levels(): number {
    return 1 + (this.overflowWheel === null ? 0 : this.overflowWheel.levels())
  }
}

/** What a purgatory needs of a timer (Kafka's `Timer`). */
export interface Timer {
  /** Schedules `task.run()` after `task.delayMs`; an already-expired task runs on the next turn. */
  add(task: TimerTask): void
  /** Expires every due bucket at `nowMs` (default: the clock); true if any bucket was due. */
  advanceClock(nowMs?: number): boolean
  /** Tasks waiting in buckets. */
  size(): number
  /** Drops every pending task without running it and disarms the Node timer. */
  shutdown(): void
}

export interface SystemTimerOptions {
  tickMs?: number
  wheelSize?: number
  /** Monotonic milliseconds; default `performance.now()` (faked by vitest's fake timers). */
  now?: () => number
  /** Called after each advance driven by the Node timer (the purgatory purges there). */
  onAdvance?: () => void
  /** Where an exception thrown by a task's run() goes; default: a stderr logger. */
  logger?: Logger
}

function defaultNow(): number {
  return Math.floor(performance.now())
}

/** The timer: a `TimingWheel` hierarchy, a bucket queue and one Node timer. */
export class SystemTimer implements Timer {
  private readonly counter = { count: 0 }
  private readonly queue = new BucketQueue()
  private readonly wheel: TimingWheel
  private readonly now: () => number
  private readonly onAdvance: (() => void) | undefined
  private readonly logger: Logger
  /** Tasks found expired (on add or on flush), run after the current pass. */
  private due: TimerTask[] = []
  private handle: ReturnType<typeof setTimeout> | null = null
  /** The clock time the Node timer is armed for; Infinity when disarmed. */
  private armedForMs = Infinity
  private closed = false
  /** How many times a Node timer was armed (setTimeout calls), for tests and metrics. */
  nodeTimerArms = 0

  constructor(options: SystemTimerOptions = {}) {
    this.now = options.now ?? defaultNow
    this.onAdvance = options.onAdvance
    this.logger = options.logger ?? createLogger({ fields: { component: 'timer' } })
    this.wheel = new TimingWheel(options.tickMs ?? DEFAULT_TICK_MS, options.wheelSize ?? DEFAULT_WHEEL_SIZE, Math.floor(this.now()), this.counter, this.queue)
  }

  add(task: TimerTask): void {
    if (this.closed) return
    const now = Math.floor(this.now())
    // An idle timer (no bucket queued) may move its clock to now: no queued bucket can be reused
    // under it. Otherwise a task added after a long idle spell would climb to overflow wheels
    // sized for the idle gap and cascade down from them.
    if (this.queue.size === 0) this.wheel.advanceClock(now)
    task.timerExpirationMs = now + Math.max(0, task.delayMs)
    this.addTask(task)
    this.arm()
  }

  advanceClock(nowMs: number = this.now()): boolean {
    let advanced = false
    for (let bucket = this.queue.peek(); bucket !== undefined && bucket.expirationMs <= nowMs; bucket = this.queue.peek()) {
      this.queue.poll()
      advanced = true
      this.wheel.advanceClock(bucket.expirationMs)
      bucket.flush(this.reinsert)
    }
    this.runDue()
    this.arm()
    return advanced
  }

  size(): number {
    return this.counter.count
  }

  /** Node timers this timer holds right now: 0 or 1. */
  pendingNodeTimers(): number {
    return this.handle === null ? 0 : 1
  }

  /** Wheels in the hierarchy (1 until a timeout beyond tickMs * wheelSize was added). */
  levels(): number {
    return this.wheel.levels()
  }

  /** Buckets waiting in the delay queue. */
  queuedBuckets(): number {
    return this.queue.size
  }

  shutdown(): void {
    this.closed = true
    this.disarm()
    for (let bucket = this.queue.poll(); bucket !== undefined; bucket = this.queue.poll()) {
      bucket.flush((task) => {
        task.timerState = IDLE
      })
    }
    for (const task of this.due) task.timerState = IDLE
    this.due = []
  }

  private readonly reinsert = (task: TimerTask): void => {
    this.addTask(task)
  }

  private addTask(task: TimerTask): void {
    if (this.wheel.add(task)) {
      task.timerState = SCHEDULED
    } else {
      task.timerState = DUE
      this.due.push(task)
    }
  }

  private runDue(): void {
    while (this.due.length > 0) {
      const batch = this.due
      this.due = []
      for (const task of batch) {
        // Cancelled (or re-added) since it was found expired.
        if (task.timerState !== DUE || task.timerList !== null) continue
        task.timerState = IDLE
        try {
          task.run()
        } catch (err) {
          this.logger.error('timer task failed', { err: String((err as Error)?.stack ?? err) })
        }
      }
    }
  }

  private readonly fire = (): void => {
    this.handle = null
    this.armedForMs = Infinity
    if (this.closed) return
    this.advanceClock()
    this.onAdvance?.()
  }

  /** Keeps the one Node timer armed for the earliest due time (a due task or bucket). */
  private arm(): void {
    if (this.closed) return
    const next = this.due.length > 0 ? -Infinity : (this.queue.peek()?.expirationMs ?? Infinity)
    if (next === Infinity) {
      this.disarm()
      return
    }
    if (this.handle !== null && this.armedForMs <= next) return
    this.disarm()
    const now = this.now()
    const delay = next === -Infinity ? 0 : Math.min(MAX_NODE_TIMEOUT_MS, Math.max(0, Math.ceil(next - now)))
    this.armedForMs = next
    this.nodeTimerArms++
    this.handle = setTimeout(this.fire, delay)
    this.handle.unref()
  }

  private disarm(): void {
    if (this.handle !== null) {
      clearTimeout(this.handle)
      this.handle = null
    }
    this.armedForMs = Infinity
  }
}
