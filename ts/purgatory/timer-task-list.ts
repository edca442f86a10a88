/**
 * The parts of Kafka's timer that hold tasks (`TimerTask`, `TimerTaskList`, and the `DelayQueue`
 * of buckets), for `SystemTimer` in timing-wheel.ts.
 *
 * A bucket (`TimerTaskList`) is a doubly linked cyclic list with a sentinel root: adding appends at
 * the tail, removing (cancellation) is O(1). Unlike Kafka, a task is its own list entry (Kafka
 * allocates a `TimerTaskEntry` per add), so a parked operation costs one object, not two; a task
 * is in at most one bucket at a time.
 */

/** @internal task states */
export const IDLE = 0
/** @internal */
export const SCHEDULED = 1
/** @internal */
export const DUE = 2

/** A node of a bucket's doubly linked list: the sentinel root or a task. */
class TimerTaskNode {
  /** @internal */ timerPrev: TimerTaskNode | null = null
  /** @internal */ timerNext: TimerTaskNode | null = null
}

/**
 * Work to run once after `delayMs`, unless cancelled first. Subclasses implement `run()`.
 */
export abstract class TimerTask extends TimerTaskNode {
  /** @internal the absolute expiration (timer clock, ms), set when added to a timer */
  timerExpirationMs = -1
  /** @internal the bucket holding this task, or null */
  timerList: TimerTaskList | null = null
  /** @internal IDLE, SCHEDULED (in a bucket) or DUE (expired, waiting to run) */
  timerState = IDLE

  constructor(readonly delayMs: number) {
    super()
    if (!Number.isFinite(delayMs)) throw new RangeError(`timer task delay must be a finite number of ms, got ${delayMs}`)
  }

  abstract run(): void

  /** Removes the task from its timer in O(1); it will not run (unless added again). */
  cancel(): void {
    if (this.timerList !== null) this.timerList.remove(this)
    this.timerState = IDLE
  }

  /** True while the task waits in a timer. */
  isScheduled(): boolean {
    return this.timerState !== IDLE
  }
}

/** A bucket: the tasks of one slot of one wheel, with the slot's expiration time. */
export class TimerTaskList {
  private readonly root = new TimerTaskNode()
  /** -1 when the bucket is not in the delay queue. */
  expirationMs = -1
  /** @internal position in the delay queue's heap, -1 when not queued */
  heapIndex = -1

  constructor(private readonly counter: { count: number }) {
    this.root.timerNext = this.root
    this.root.timerPrev = this.root
  }

  /** Sets the expiration; true if it changed (the bucket must then be (re)queued). */
  setExpiration(expirationMs: number): boolean {
    const changed = this.expirationMs !== expirationMs
    this.expirationMs = expirationMs
    return changed
  }

  add(task: TimerTask): void {
    if (task.timerList !== null) task.timerList.remove(task)
    const tail = this.root.timerPrev!
    task.timerNext = this.root
    task.timerPrev = tail
    task.timerList = this
    tail.timerNext = task
    this.root.timerPrev = task
    this.counter.count++
  }

  remove(task: TimerTask): void {
    if (task.timerList !== this) return
    task.timerNext!.timerPrev = task.timerPrev
    task.timerPrev!.timerNext = task.timerNext
    task.timerNext = null
    task.timerPrev = null
    task.timerList = null
    this.counter.count--
  }

  /** Removes every task, handing each to `f`, and leaves the bucket unqueued. */
  flush(f: (task: TimerTask) => void): void {
    let head = this.root.timerNext!
    while (head !== this.root) {
      const task = head as TimerTask
      this.remove(task)
      f(task)
      head = this.root.timerNext!
    }
    this.expirationMs = -1
  }

  isEmpty(): boolean {
    return this.root.timerNext === this.root
  }
}

/** The buckets waiting for their expiration, earliest first (Kafka's `DelayQueue`). */
export class BucketQueue {
  private readonly heap: TimerTaskList[] = []

  get size(): number {
    return this.heap.length
  }

  peek(): TimerTaskList | undefined {
    return this.heap[0]
  }

  offer(bucket: TimerTaskList): void {
    if (bucket.heapIndex !== -1) this.removeAt(bucket.heapIndex)
    bucket.heapIndex = this.heap.length
    this.heap.push(bucket)
    this.up(bucket.heapIndex)
  }

  poll(): TimerTaskList | undefined {
    if (this.heap.length === 0) return undefined
    const top = this.heap[0]
    this.removeAt(0)
    return top
  }

  clear(): void {
    for (const b of this.heap) b.heapIndex = -1
    this.heap.length = 0
  }

  private removeAt(i: number): void {
    const heap = this.heap
    const removed = heap[i]!
    const last = heap.pop()!
    removed.heapIndex = -1
    if (i < heap.length) {
      heap[i] = last
      last.heapIndex = i
      this.down(i)
      this.up(i)
    }
  }

  private up(i: number): void {
    const heap = this.heap
    const item = heap[i]!
    while (i > 0) {
      const parent = (i - 1) >> 1
      const above = heap[parent]!
      if (above.expirationMs <= item.expirationMs) break
      heap[i] = above
      above.heapIndex = i
      i = parent
    }
    heap[i] = item
    item.heapIndex = i
  }

  private down(i: number): void {
    const heap = this.heap
    const n = heap.length
    const item = heap[i]!
    for (;;) {
      let child = 2 * i + 1
      if (child >= n) break
      let below = heap[child]!
      const right = heap[child + 1]
      if (right !== undefined && right.expirationMs < below.expirationMs) {
        child++
        below = right
      }
      if (below.expirationMs >= item.expirationMs) break
      heap[i] = below
      below.heapIndex = i
      i = child
    }
    heap[i] = item
    item.heapIndex = i
  }
}
