/**
 * One keyed Admin call and its retries (Kafka's KafkaAdminClient.Call with its
 * AdminApiDriver): the items still pending are sent again and again until each has settled
 * or the call's deadline (`default.api.timeout.ms`, or the call's `timeoutMs`) passes.
 *
 * An attempt answers each item it handled as `ok` (done), `fail` (done, with Kafka's error)
 * or `retry` (a retriable error: NOT_CONTROLLER, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
 * LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, ...; the item is sent again, after the attempt
 * re-finds where it goes). An attempt that throws a retriable error (the connection failed, the
 * request timed out) leaves every pending item to the next attempt; one that throws another
 * error fails them all with it. Attempts are spaced by retry.backoff.ms, doubling up to
 * retry.backoff.max.ms. At the deadline the items still pending fail with REQUEST_TIMED_OUT
 * (Kafka's TimeoutException), naming the last retriable error they met, even when a request of
 * the attempt is still waiting for its answer.
 */
import { ErrorCode } from '../protocol/error-codes.js'
import { AdminResult, deferred, type Deferred } from './admin-result.js'
import { KafkaClientError, isRetriable } from './errors.js'
import { ExponentialBackoff } from './exponential-backoff.js'

/** What an attempt says of the items it handled. */
export interface Outcomes<V> {
  ok(key: string, value: V): void
  fail(key: string, error: KafkaClientError): void
  /** A retriable error: the item goes into the next attempt. */
  retry(key: string, error: KafkaClientError): void
  /** `errorCode` for `key`: ok is not called; fail or retry as the code is retriable. */
  error(key: string, errorCode: number, what: string, message?: string | null): void
}

/** An attempt at the pending items (their keys). */
export type Attempt<V> = (pending: string[], outcomes: Outcomes<V>) => Promise<void>

export interface CallOptions {
  deadline: number
  retryBackoffMs: number
  retryBackoffMaxMs: number
  /** Whether an item's `errorCode` is retried (default: adminRetriable). */
  retriable?: (errorCode: number) => boolean
}

/**
 * The item errors an Admin call retries: Kafka's RetriableException errors and NOT_CONTROLLER
 * (the Admin asks the new controller), but not an unknown topic, which fails the item at once
 * (describeTopics, deleteTopics, describeConfigs, ... of a topic that does not exist).
 * Partition-leader calls retry UNKNOWN_TOPIC_OR_PARTITION from a leader (its metadata may lag)
 * after their own metadata found the topic.
 */
export function adminRetriable(errorCode: number): boolean {
  if (errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || errorCode === ErrorCode.UNKNOWN_TOPIC_ID) return false
  return isRetriable(errorCode) || errorCode === ErrorCode.NOT_CONTROLLER
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Runs `attempt` over `keys` until each settled or the deadline passed; the result at once. */
export function runCall<V>(what: string, keys: string[], options: CallOptions, attempt: Attempt<V>): AdminResult<V> {
  const futures = new Map<string, Deferred<V>>()
  for (const key of keys) if (!futures.has(key)) futures.set(key, deferred<V>())
  void drive(what, futures, options, attempt)
  return new AdminResult(new Map([...futures].map(([k, d]) => [k, d.promise])))
}

async function drive<V>(what: string, futures: Map<string, Deferred<V>>, options: CallOptions, attempt: Attempt<V>): Promise<void> {
  const retriable = options.retriable ?? adminRetriable
  const backoff = new ExponentialBackoff(options.retryBackoffMs, options.retryBackoffMaxMs)
  const lastError = new Map<string, KafkaClientError>()
  const pending = () => [...futures].filter(([, d]) => !d.settled).map(([k]) => k)
  const outcomes: Outcomes<V> = {
    ok: (key, value) => futures.get(key)?.resolve(value),
    fail: (key, error) => futures.get(key)?.reject(error),
    retry: (key, error) => lastError.set(key, error),
    error: (key, errorCode, itemWhat, message) => {
      const error = KafkaClientError.fromErrorCode(errorCode, itemWhat, message)
      if (retriable(errorCode)) lastError.set(key, error)
      else futures.get(key)?.reject(error)
    },
  }
  /** Fails the items still pending with REQUEST_TIMED_OUT, naming the last error each met. */
  const expire = () => {
    for (const key of pending()) {
      const last = lastError.get(key)
      const why = last ? `; last error ${last.code}: ${last.message}` : ''
      futures.get(key)!.reject(new KafkaClientError('REQUEST_TIMED_OUT', `${what} ${key}: timed out waiting for the call to complete${why}`, { cause: last }))
    }
  }
  for (let tries = 0; ; tries++) {
    const keys = pending()
    if (keys.length === 0) return
    try {
      // the deadline ends the call even with a request of the attempt still in flight (its
      // request.timeout.ms may be longer); what that attempt answers later is ignored
      const running = attempt(keys, outcomes)
      running.catch(() => undefined)
      let timer: NodeJS.Timeout | undefined
      const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), Math.max(0, options.deadline - Date.now()))))
      try {
        if ((await Promise.race([running, expired])) === 'expired') {
          expire()
          return
        }
      } finally {
        clearTimeout(timer)
      }
    } catch (err) {
      const e = err instanceof KafkaClientError ? err : new KafkaClientError('UNKNOWN_SERVER_ERROR', `${what}: ${(err as Error).message}`, { cause: err })
      if (e.retriable || retriable(e.errorCode)) for (const key of keys) lastError.set(key, e)
      else for (const key of keys) futures.get(key)?.reject(e)
    }
    const left = pending()
    if (left.length === 0) return
    const wait = backoff.backoff(tries)
    if (Date.now() + wait >= options.deadline) {
      expire()
      return
    }
    await sleep(wait)
  }
}
