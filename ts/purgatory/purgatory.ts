/**
 * Kafka's `DelayedOperationPurgatory`: delayed operations parked under keys (a fetch under every
 * topic-partition it reads), woken by `checkAndComplete(key)` when something happens to a key (an
 * append, an HW or LSO advance), and expired by a timing wheel when their delay passes.
 *
 * Watchers. Each key has a list of the operations watching it. An operation watched under several
 * keys and completed through one of them stays in the others' lists until a pass over those lists
 * drops it: `checkAndComplete` drops completed entries of the key it visits, and a purge sweeps all
 * lists when the number of completed-but-still-watched operations, estimated as
 * `estimatedTotalOperations - numDelayed()`, passes `purgeInterval` (Kafka: 1000, the broker's
 * `*.purgatory.purge.interval.requests`). Empty lists are removed, so a key costs nothing once
 * its operations are gone.
 *
 * Kafka runs the purge check from its expiration reaper thread; here it runs after each advance of
 * the timer (the one Node timer fired) and on each `tryCompleteElseWatch`, so memory stays
 * bounded whether operations expire or complete.
 */
import { createLogger, type Logger } from '../logger.js'
import type { CompletionListener, DelayedOperation } from './delayed-operation.js'
import { SystemTimer, type Timer } from './timing-wheel.js'

export const DEFAULT_PURGE_INTERVAL = 1000

/** Kafka's `TopicPartitionOperationKey.keyLabel`: `<topic>-<partition>`. */
export function topicPartitionOperationKey(topic: string, partition: number): string {
  return `${topic}-${partition}`
}

export interface PurgatoryOptions {
  /** The timer to expire operations with; default: a SystemTimer of its own (tick 1 ms, 20 slots). */
  timer?: Timer
  /** Purge the watcher lists when this many completed operations may still sit in them. */
  purgeInterval?: number
  /** False: never expire (tests, or operations that only complete). Default true. */
  timerEnabled?: boolean
  logger?: Logger
}

/** The operations watching one key. */
class Watchers<T extends DelayedOperation> {
  ops: T[] = []
  /** Passes over `ops` in progress (a pass can re-enter through onComplete). */
  depth = 0

  constructor(readonly key: string) {}
}

export class DelayedOperationPurgatory<T extends DelayedOperation> {
  private readonly watchersByKey = new Map<string, Watchers<T>>()
  /** The timer that expires this purgatory's operations. */
  readonly timer: Timer
  private readonly ownsTimer: boolean
  private readonly purgeInterval: number
  private readonly timerEnabled: boolean
  private readonly logger: Logger
  /** Operations added to watch lists since the last purge (Kafka's estimate). */
  private estimatedTotalOperations = 0
  /** Entries in all watch lists (an operation counts once per key). */
  private watchedEntries = 0
  private expired = 0
  private completed = 0
  private purges = 0
  private dropped = 0
  private closed = false
  private readonly listener: CompletionListener = {
    operationCompleted: (expired) => {
      if (expired) this.expired++
      else this.completed++
    },
  }

  constructor(
    readonly purgatoryName: string,
    options: PurgatoryOptions = {},
  ) {
    this.purgeInterval = options.purgeInterval ?? DEFAULT_PURGE_INTERVAL
    this.timerEnabled = options.timerEnabled ?? true
    this.logger = options.logger ?? createLogger({ fields: { component: 'purgatory', purgatory: purgatoryName } })
    this.ownsTimer = options.timer === undefined
    this.timer = options.timer ?? new SystemTimer({ onAdvance: () => this.maybePurge(), logger: this.logger })
  }

  /**
   * Completes `operation` now if it can; otherwise watches it under every key, adds it to the
   * timer, and tries once more (Kafka does the same: an event between the first try and the watch
   * would otherwise be missed until expiry). True if the caller's operation completed here.
   */
  tryCompleteElseWatch(operation: T, watchKeys: readonly string[]): boolean {
    if (watchKeys.length === 0) throw new Error('The watch key list can not be empty')
    if (this.closed) throw new Error(`purgatory ${this.purgatoryName} is shut down`)
    operation.completionListener = this.listener
    if (operation.safeTryComplete()) return true

    for (const key of watchKeys) {
      if (operation.isCompleted()) break
      this.watchForOperation(key, operation)
    }
    this.estimatedTotalOperations++

    // The second try: from here on every event on a key finds the operation in its list.
    if (operation.safeTryComplete()) return true

    if (!operation.isCompleted()) {
      if (this.timerEnabled) this.timer.add(operation)
      if (operation.isCompleted()) operation.cancel()
    }
    this.maybePurge()
    return false
  }

  /**
   * Tries to complete the operations watching `key` (call after an append, an HW or LSO advance).
   * Drops completed entries from the key's list. Returns how many operations this call completed.
   */
  checkAndComplete(key: string): number {
    const watchers = this.watchersByKey.get(key)
    if (watchers === undefined) return 0
    const ops = watchers.ops
    let completedHere = 0
    if (watchers.depth > 0) {
      // Re-entered from an onComplete of the outer pass over this list: try, but leave the
      // compaction to the outer pass.
      for (let i = 0; i < ops.length; i++) {
        const op = ops[i]!
        if (!op.isCompleted() && op.safeTryComplete()) completedHere++
      }
      return completedHere
    }
    watchers.depth++
    let kept = 0
    let i = 0
    try {
      // ops.length is read each round: operations watched during the pass are visited too.
      for (; i < ops.length; i++) {
        const op = ops[i]!
        if (op.isCompleted()) continue
        if (op.safeTryComplete()) {
          completedHere++
          continue
        }
        ops[kept++] = op
      }
    } finally {
      watchers.depth--
      // A pass that threw keeps the operation that threw and the unvisited tail.
      while (i < ops.length) ops[kept++] = ops[i++]!
      this.compact(watchers, kept)
    }
    return completedHere
  }

  /**
   * Stops watching `key`: its operations are returned, their timer tasks cancelled, and they are
   * not completed (Kafka's `cancelForKey`, used when a partition goes away).
   */
  cancelForKey(key: string): T[] {
    const watchers = this.watchersByKey.get(key)
    if (watchers === undefined) return []
    this.watchersByKey.delete(key)
    // During a pass over this list (cancelForKey from an onComplete) it may hold an entry twice.
    const cancelled = watchers.depth > 0 ? [...new Set(watchers.ops)] : watchers.ops.slice()
    this.watchedEntries -= watchers.ops.length
    watchers.ops.length = 0
    for (const op of cancelled) op.cancel()
    return cancelled
  }

  /**
   * Drops a parked operation whose requester went away (a closed connection): it leaves the timer
   * and the watch lists of `watchKeys` and is never completed (`DelayedOperation.abandon`). True
   * if it was still pending.
   */
  remove(operation: T, watchKeys: readonly string[]): boolean {
    if (!operation.abandon()) return false
    this.dropped++
    for (const key of watchKeys) {
      const watchers = this.watchersByKey.get(key)
      // During a pass over this list, the pass drops the (now completed) entry itself.
      if (watchers === undefined || watchers.depth > 0) continue
      const ops = watchers.ops
      let kept = 0
      for (let i = 0; i < ops.length; i++) if (ops[i] !== operation) ops[kept++] = ops[i]!
      this.compact(watchers, kept)
    }
    return true
  }

  /** Entries in all watch lists; completed operations not yet purged still count (Kafka's `PurgatorySize`). */
  watched(): number {
    return this.watchedEntries
  }

  /** Operations waiting in the timer (Kafka's `NumDelayedOperations`). */
  numDelayed(): number {
    return this.timer.size()
  }

  /** Keys with a watch list. */
  watchedKeys(): number {
    return this.watchersByKey.size
  }

  /** Operations of this purgatory completed by expiry, since it was created. */
  expiredTotal(): number {
    return this.expired
  }

  /** Operations of this purgatory completed before expiry (tryComplete or forceComplete). */
  completedTotal(): number {
    return this.completed
  }

  /** Operations of this purgatory dropped by `remove` (their requester went away). */
  droppedTotal(): number {
    return this.dropped
  }

  /** How many purges of the watch lists ran. */
  purgeCount(): number {
    return this.purges
  }

  /** Stops the timer (if it is the purgatory's own); parked operations are dropped, not completed. */
  shutdown(): void {
    this.closed = true
    if (this.ownsTimer) this.timer.shutdown()
  }

  /** Runs a purge when Kafka would: more completed-but-watched operations than purgeInterval. */
  maybePurge(): void {
    if (this.estimatedTotalOperations - this.numDelayed() <= this.purgeInterval) return
    this.estimatedTotalOperations = this.numDelayed()
    let purged = 0
    for (const watchers of this.watchersByKey.values()) {
      if (watchers.depth > 0) continue
      const ops = watchers.ops
      let kept = 0
      for (let i = 0; i < ops.length; i++) {
        if (!ops[i]!.isCompleted()) ops[kept++] = ops[i]!
      }
      purged += ops.length - kept
      this.compact(watchers, kept)
    }
    this.purges++
    this.logger.debug('purged watch lists', { purged })
  }

  private watchForOperation(key: string, operation: T): void {
    let watchers = this.watchersByKey.get(key)
    if (watchers === undefined) {
      watchers = new Watchers<T>(key)
      this.watchersByKey.set(key, watchers)
    }
    watchers.ops.push(operation)
    this.watchedEntries++
  }

  /** Truncates a list to its first `kept` entries (the survivors) and removes it if empty. */
  private compact(watchers: Watchers<T>, kept: number): void {
    const ops = watchers.ops
    // cancelForKey may have emptied the list during the pass.
    const length = Math.min(kept, ops.length)
    if (length !== ops.length) {
      this.watchedEntries -= ops.length - length
      ops.length = length
    }
    if (length === 0 && this.watchersByKey.get(watchers.key) === watchers) this.watchersByKey.delete(watchers.key)
  }
}
