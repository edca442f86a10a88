/**
 * Kafka's ExponentialBackoff: attempt n (from 0) waits initial * multiplier^n, at most max, times
 * a random factor in [1 - jitter, 1 + jitter] so that clients that failed together do not come
 * back together. Defaults are the client's reconnect.backoff.ms (50), reconnect.backoff.max.ms
 * (1000), multiplier 2 and jitter 0.2.
 */
export const DEFAULT_RECONNECT_BACKOFF_MS = 50
export const DEFAULT_RECONNECT_BACKOFF_MAX_MS = 1000

export class ExponentialBackoff {
  constructor(
    readonly initialMs = DEFAULT_RECONNECT_BACKOFF_MS,
    readonly maxMs = DEFAULT_RECONNECT_BACKOFF_MAX_MS,
    readonly multiplier = 2,
    readonly jitter = 0.2,
    private readonly random: () => number = Math.random,
  ) {}

  backoff(attempts: number): number {
    if (this.initialMs <= 0) return 0
    const term = Math.min(this.maxMs, this.initialMs * this.multiplier ** Math.max(0, attempts))
    const factor = this.jitter > 0 ? 1 - this.jitter + this.random() * 2 * this.jitter : 1
    return Math.round(term * factor)
  }
}
