/**
 * What a keyed Admin call answers (Kafka's CreateTopicsResult, DeleteTopicsResult, ... with
 * their KafkaFutures): `values()` a promise per item (a topic, a group, a partition: keys are
 * topic names, group ids, config resources as `TYPE:name`, partitions as `topic-partition`,
 * Kafka's TopicPartition.toString()), each settling on its own, so one item's error (a topic
 * that exists) fails that item only; `all()` the whole map, rejecting with an item's error
 * when any failed.
 *
 * A promise of `values()` that rejects and is never awaited is not an unhandled rejection: the
 * caller may look at `all()` only.
 */
import { KafkaClientError } from './errors.js'

export interface Deferred<V> {
  promise: Promise<V>
  resolve(value: V): void
  reject(error: KafkaClientError): void
  settled: boolean
}

export function deferred<V>(): Deferred<V> {
  let resolve!: (value: V) => void
  let reject!: (error: KafkaClientError) => void
  const promise = new Promise<V>((res, rej) => {
    resolve = res
    reject = rej
  })
  promise.catch(() => undefined)
  const d: Deferred<V> = {
    promise,
    settled: false,
    resolve: (value) => {
      if (d.settled) return
      d.settled = true
      resolve(value)
    },
    reject: (error) => {
      if (d.settled) return
      d.settled = true
      reject(error)
    },
  }
  return d
}

export class AdminResult<V> {
  private readonly futures: ReadonlyMap<string, Promise<V>>

  constructor(futures: ReadonlyMap<string, Promise<V>>) {
    this.futures = futures
  }

  /** A promise per item, by key. */
  values(): ReadonlyMap<string, Promise<V>> {
    return this.futures
  }

  /** The item `key`'s promise (rejects with INVALID_REQUEST for a key the call did not have). */
  value(key: string): Promise<V> {
    return this.futures.get(key) ?? Promise.reject(new KafkaClientError('INVALID_REQUEST', `no item ${key} in this result`))
  }

  /** Every item's value once all succeeded; rejects with the first item error otherwise. */
  async all(): Promise<Map<string, V>> {
    const keys = [...this.futures.keys()]
    const values = await Promise.all(keys.map((k) => this.futures.get(k)!))
    return new Map(keys.map((k, i) => [k, values[i]!]))
  }
}

/** Kafka's TopicPartition.toString(): the key of a partition's item. */
export function topicPartitionKey(tp: { topic: string; partition: number }): string {
  return `${tp.topic}-${tp.partition}`
}
