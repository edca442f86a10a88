/**
 * An operation that waits at most `delayMs` for a condition (Kafka's `DelayedOperation`): a fetch
 * waiting for minBytes, a produce waiting for acks. `onComplete()` runs exactly once, from
 * `forceComplete()`, which is reached either from `tryComplete()` when the condition holds or from
 * the timer when `delayMs` passed (then `onExpiration()` follows).
 *
 * Node runs JavaScript on one thread, so Kafka's per-operation lock has nothing to guard against;
 * what remains is re-entrancy (an `onComplete()` that appends, which calls `checkAndComplete()`,
 * which reaches this operation again), and the `completed` flag answers it: the first
 * `forceComplete()` wins, every later one returns false.
 */
import { TimerTask } from './timer-task-list.js'

/** @internal how an operation tells its purgatory that it finished */
export interface CompletionListener {
  operationCompleted(expired: boolean): void
}

export abstract class DelayedOperation extends TimerTask {
  private completed = false
  /** @internal set by the purgatory that watches this operation */
  completionListener: CompletionListener | null = null

  constructor(delayMs: number) {
    super(delayMs)
  }

  /**
   * Checks whether the operation can complete now; if so calls `forceComplete()` and returns its
   * result, else returns false.
   */
  abstract tryComplete(): boolean

  /** The completion logic (send the response). Called exactly once, from `forceComplete()`. */
  abstract onComplete(): void

  /** Called after `onComplete()` when the operation completed because it timed out. */
  abstract onExpiration(): void

  /**
   * Completes the operation if nobody did yet: cancels its timer task and calls `onComplete()`.
   * True only for the one call that completed it.
   */
  forceComplete(): boolean {
    return this.complete(false)
  }

  /**
   * Marks the operation done without completing it, because nobody waits for its answer any more
   * (the client's connection closed): the timer task is cancelled, `onComplete()` never runs, and
   * every later `forceComplete()` returns false. True if it was still pending. Use
   * `DelayedOperationPurgatory.remove`, which also takes it out of its watch lists.
   */
  abandon(): boolean {
    if (this.completed) return false
    this.completed = true
    this.cancel()
    return true
  }

  isCompleted(): boolean {
    return this.completed
  }

  /** `tryComplete()` unless already completed (Kafka's `safeTryComplete`). */
  safeTryComplete(): boolean {
    return this.completed ? false : this.tryComplete()
  }

  /** The timer's entry point: the operation timed out. */
  override run(): void {
    if (this.complete(true)) this.onExpiration()
  }

  private complete(expired: boolean): boolean {
    if (this.completed) return false
    this.completed = true
    this.cancel()
    this.completionListener?.operationCompleted(expired)
    this.onComplete()
    return true
  }
}
