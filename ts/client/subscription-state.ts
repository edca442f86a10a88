/**
 * Kafka's SubscriptionState: what the consumer reads and where it is in each partition.
 *
 * A consumer either subscribes (a list of topics, a pattern matched here, or a SubscriptionPattern
 * the group coordinator resolves; partitions then handed out by the group) or assigns partitions
 * itself; the two do not mix. Each assigned partition has a state:
 *
 *   position          the next offset to fetch (null: unknown, to be taken from the committed
 *                     offset or reset by `resetStrategy` through ListOffsets)
 *   resetStrategy     earliest / latest (ListOffsets) or a fixed offset, used when the position
 *                     is unknown or out of range; 'none' makes that an error
 *   paused            kept assigned, not fetched (and its buffered data not returned)
 *   highWatermark, lastStableOffset, logStartOffset   as the last fetch response told
 *   preferredReadReplica   KIP-392: the replica the leader told us to read from, until it expires
 *
 * A partition is fetchable when it has a position and is not paused.
 */
import { KafkaClientError } from './errors.js'
import { tpKey, type TopicPartition } from './fetch-session-handler.js'
import { SubscriptionPattern } from './subscription-pattern.js'

export type ResetStrategy = 'earliest' | 'latest' | 'none'

export class TopicPartitionState {
  position: bigint | null = null
  /** Assigned by a group, its committed offset not read yet (Kafka's INITIALIZING). */
  initializing = false
  paused = false
  highWatermark = -1n
  lastStableOffset = -1n
  logStartOffset = -1n
  preferredReadReplica = -1
  preferredReadReplicaExpiresAt = 0
  /** Incremented at every seek or reset: a fetch sent before it is stale. */
  positionVersion = 0

  constructor(
    readonly topic: string,
    readonly partition: number,
    public resetStrategy: ResetStrategy,
  ) {}

  get hasValidPosition(): boolean {
    return this.position !== null
  }

  seek(offset: bigint | null): void {
    this.position = offset
    this.initializing = false
    this.positionVersion++
    this.preferredReadReplica = -1
  }

  /** The end of the readable log for `isolationLevel` (-1 when not known yet). */
  end(readCommitted: boolean): bigint {
    return readCommitted ? this.lastStableOffset : this.highWatermark
  }
}

export class SubscriptionState {
  private readonly assignment = new Map<string, TopicPartitionState>()
  private topics: Set<string> | null = null
  private pattern: RegExp | null = null
  private brokerPattern: SubscriptionPattern | null = null
  private userAssigned = false
  readonly defaultResetStrategy: ResetStrategy

  constructor(defaultResetStrategy: ResetStrategy = 'latest') {
    this.defaultResetStrategy = defaultResetStrategy
  }

  /** Subscribes to topics by name or pattern (replacing a previous subscription). */
  subscribe(topics: string[] | RegExp | SubscriptionPattern): void {
    if (this.userAssigned) throw new KafkaClientError('INVALID_REQUEST', 'subscribe after assign: a consumer does one or the other (unsubscribe first)')
    this.pattern = topics instanceof RegExp ? topics : null
    this.brokerPattern = topics instanceof SubscriptionPattern ? topics : null
    this.topics = new Set(Array.isArray(topics) ? topics : [])
  }

  get subscribed(): boolean {
    return this.topics !== null
  }

  get subscribedPattern(): RegExp | null {
    return this.pattern
  }

  /** The SubscriptionPattern the group coordinator resolves (its topics are those assigned). */
  get subscribedBrokerPattern(): SubscriptionPattern | null {
    return this.brokerPattern
  }

  /** The topics subscribed by name, or those of the pattern matched so far. */
  get subscription(): string[] {
    return [...(this.topics ?? [])].sort()
  }

  /** With a pattern: takes the topics it matches among `all`; whether that changed the subscription. */
  matchPattern(all: string[]): boolean {
    if (!this.pattern || !this.topics) return false
    const pattern = new RegExp(this.pattern.source, this.pattern.flags.replace(/[gy]/g, ''))
    const matched = all.filter((t) => pattern.test(t) && !t.startsWith('__')).sort()
    const before = this.subscription
    this.topics = new Set(matched)
    return matched.length !== before.length || matched.some((t, i) => t !== before[i])
  }

  /** Assigns partitions directly (no group), keeping the state of those already assigned. */
  assignFromUser(partitions: TopicPartition[], reset: ResetStrategy = this.defaultResetStrategy, initializing = false): void {
    if (this.topics !== null) throw new KafkaClientError('INVALID_REQUEST', 'assign after subscribe: a consumer does one or the other (unsubscribe first)')
    this.userAssigned = true
    this.setAssignment(partitions, reset, initializing)
  }

  /** The group handed these partitions out (after a rebalance). */
  assignFromSubscribed(partitions: TopicPartition[], initializing = true): void {
    this.setAssignment(partitions, this.defaultResetStrategy, initializing)
  }

  private setAssignment(partitions: TopicPartition[], reset: ResetStrategy, initializing = false): void {
    const keep = new Set(partitions.map((tp) => tpKey(tp.topic, tp.partition)))
    for (const key of [...this.assignment.keys()]) if (!keep.has(key)) this.assignment.delete(key)
    for (const tp of partitions) {
      const key = tpKey(tp.topic, tp.partition)
      if (this.assignment.has(key)) continue
      const state = new TopicPartitionState(tp.topic, tp.partition, reset)
      state.initializing = initializing
      this.assignment.set(key, state)
    }
  }

  unsubscribe(): void {
    this.assignment.clear()
    this.topics = null
    this.pattern = null
    this.brokerPattern = null
    this.userAssigned = false
  }

  state(topic: string, partition: number): TopicPartitionState | undefined {
    return this.assignment.get(tpKey(topic, partition))
  }

  stateOf(key: string): TopicPartitionState | undefined {
    return this.assignment.get(key)
  }

  /** The state of an assigned partition; IllegalStateException in Java when it is not assigned. */
  assignedState(topic: string, partition: number): TopicPartitionState {
    const s = this.state(topic, partition)
    if (!s) throw new KafkaClientError('UNKNOWN_TOPIC_OR_PARTITION', `${topic}-${partition} is not assigned to this consumer`)
    return s
  }

  get assignedPartitions(): TopicPartitionState[] {
    return [...this.assignment.values()]
  }

  isAssigned(topic: string, partition: number): boolean {
    return this.assignment.has(tpKey(topic, partition))
  }

  /** Partitions with a position and not paused, for which `extra` holds. */
  fetchablePartitions(extra: (key: string) => boolean = () => true): Array<[string, TopicPartitionState]> {
    const out: Array<[string, TopicPartitionState]> = []
    for (const [key, s] of this.assignment) if (s.position !== null && !s.paused && extra(key)) out.push([key, s])
    return out
  }

  /** Partitions whose position must come from ListOffsets (by their reset strategy). */
  get partitionsNeedingReset(): TopicPartitionState[] {
    return this.assignedPartitions.filter((s) => s.position === null && !s.initializing)
  }

  /** Partitions whose committed offset is to be read first. */
  get initializingPartitions(): TopicPartitionState[] {
    return this.assignedPartitions.filter((s) => s.position === null && s.initializing)
  }
}
