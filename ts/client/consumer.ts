/**
 * Kafka's KafkaConsumer for Node: reads records from assigned or subscribed partitions.
 *
 *   const consumer = new Consumer({ bootstrapServers: 'localhost:9092', groupId: 'g', 'auto.offset.reset': 'earliest' })
 *   consumer.subscribe(['orders'])          // or a RegExp, or consumer.assign([{ topic, partition }])
 *   for await (const batch of consumer) handle(batch.records)
 *
 * Keys and values are Buffers, or strings with key.deserializer / value.deserializer `string`
 * (decoded as UTF-8 straight from the fetched data): `new Consumer<string, string>({ ...,
 * 'key.deserializer': 'string', 'value.deserializer': 'string' })`.
 *
 * Configuration by Kafka's names or in camelCase (consumer-config.ts). A batch is the records of
 * one partition in offset order, at most max.poll.records. `poll()` is Kafka's poll; the async
 * iterator and `run({ eachBatch })` loop over it.
 *
 * group.protocol picks the group membership (group-membership.ts): `classic`, the default as in
 * Kafka 4 (consumer-coordinator.ts: JoinGroup/SyncGroup, eager), or `consumer`, KIP-848
 * (request-managers.ts: ConsumerGroupHeartbeat, the coordinator assigns, only the partitions that
 * move are revoked). The callbacks are the same in both and run inside poll.
 *
 * Each poll: joins the group or reconciles a new assignment when needed (on a rebalance the
 * positions of the partitions given up are committed first when enable.auto.commit), commits the positions
 * every auto.commit.interval.ms, reads committed offsets (else auto.offset.reset) for partitions
 * without a position, takes records already fetched (fetcher.ts) and sends the next fetches before
 * returning them, so they are in flight while the application works. Positions move past the
 * records returned; a commit without arguments commits them. Records handed out are processed
 * "at least once": a batch not yet yielded when the loop stops (`break`, an eachBatch that
 * throws) is sought back to, so its records are neither skipped nor committed. Nor are the
 * batches left once the group rebalances: the loop polls at once, so that the member rejoins
 * (committing what it handed out) instead of working on partitions it is about to give up.
 *
 * max.poll.interval.ms bounds the time between polls (the loops poll after each poll's
 * batches are handled): a member away longer leaves the group (consumer-coordinator.ts), its
 * partitions are lost (onPartitionsLost; a commit throws CommitFailedError) and its next poll
 * rejoins. unsubscribe() leaves the group too (LeaveGroup, unless static).
 *
 * An AbortSignal (`signal` option) closes the consumer: iteration ends, the positions are
 * committed (auto-commit), the partitions are given up (onPartitionsRevoked) and the member leaves
 * the group (classic: LeaveGroup, unless static with group.instance.id; consumer: a heartbeat with
 * epoch -1, or -2 when static). Errors are KafkaClientErrors with Kafka's codes.
 */
import { ConsumerCoordinator } from './consumer-coordinator.js'
import { assignorNamed, type PartitionAssignor } from './assignors.js'
import { consumerConfigFrom, type ConsumerConfig, type ConsumerOptions } from './consumer-config.js'
import { releaseClientSecurity } from './client-options.js'
import { KafkaClientError } from './errors.js'
import { tpKey, type TopicPartition } from './fetch-session-handler.js'
import { Fetcher, type FetchedBatch } from './fetcher.js'
import type { GroupMembership, OffsetAndMetadata, RebalanceListener } from './group-membership.js'
import { NetworkClient } from './network-client.js'
import { RequestManagers } from './request-managers.js'
import { SubscriptionState } from './subscription-state.js'
import type { ConsumerGroupMetadata } from './consumer-group-metadata.js'
import { SubscriptionPattern } from './subscription-pattern.js'

/** K and V: the records' key and value types (Buffer, or string with the `string` deserializers). */
export type ConsumerBatch<K = Buffer, V = Buffer> = FetchedBatch<K, V>

export interface ConsumerConstructorOptions extends ConsumerOptions {
  /** Aborting closes the consumer. */
  signal?: AbortSignal
  /** Called before partitions are given up in a rebalance (after their auto-commit) or at unsubscribe. */
  onPartitionsRevoked?: (partitions: TopicPartition[]) => void | Promise<void>
  onPartitionsAssigned?: (partitions: TopicPartition[]) => void | Promise<void>
  /**
   * Called when partitions were lost with the member's generation (it left after
   * max.poll.interval.ms, or the group dropped it): other members may read them already, and
   * their positions are not committed. Kafka's default: onPartitionsRevoked.
   */
  onPartitionsLost?: (partitions: TopicPartition[]) => void | Promise<void>
}

export interface AssignedPartition extends TopicPartition {
  /** Where to start; else the committed offset (with a groupId), else auto.offset.reset. */
  offset?: bigint
}

export interface RunOptions<K = Buffer, V = Buffer> {
  eachBatch: (batch: ConsumerBatch<K, V>) => void | Promise<void>
  signal?: AbortSignal
}

/** K and V must match key.deserializer and value.deserializer (Buffer for `buffer`, string for `string`). */
export class Consumer<K = Buffer, V = Buffer> implements AsyncIterable<ConsumerBatch<K, V>> {
  readonly config: ConsumerConfig
  private readonly client: NetworkClient
  private readonly coordinatorClient: NetworkClient | null
  private readonly subscriptions: SubscriptionState
  private readonly fetcher: Fetcher<K, V>
  private readonly coordinator: GroupMembership | null
  private readonly signal: AbortSignal | undefined
  private readonly userListener: Pick<ConsumerConstructorOptions, 'onPartitionsRevoked' | 'onPartitionsAssigned' | 'onPartitionsLost'>
  private nextAutoCommitAt: number
  private nextMetadataRefreshAt = 0
  private polling: Promise<unknown> | null = null
  private closing: Promise<void> | null = null
  private closed = false

  constructor(options: ConsumerConstructorOptions) {
    const { signal, onPartitionsAssigned, onPartitionsRevoked, onPartitionsLost, ...rest } = options
    this.config = consumerConfigFrom(rest)
    const c = this.config
    this.signal = signal
    this.userListener = { onPartitionsAssigned, onPartitionsRevoked, onPartitionsLost }
    const clientOptions = { bootstrapServers: c.bootstrapServers, clientId: c.clientId, requestTimeoutMs: c.requestTimeoutMs, security: c.security }
    this.client = new NetworkClient(clientOptions)
    this.subscriptions = new SubscriptionState(c.autoOffsetReset)
    this.fetcher = new Fetcher(
      this.client,
      {
        isolationLevel: c.isolationLevel === 'read_committed' ? 1 : 0,
        maxWaitMs: c.fetchMaxWaitMs,
        minBytes: c.fetchMinBytes,
        maxBytes: c.fetchMaxBytes,
        partitionMaxBytes: c.maxPartitionFetchBytes,
        rackId: c.clientRack,
        metadataMaxAgeMs: c.metadataMaxAgeMs,
        maxDecompressedBytes: c.maxDecompressedBytes,
        keyDeserializer: c.keyDeserializer,
        valueDeserializer: c.valueDeserializer,
      },
      this.subscriptions,
    )
    if (c.groupId !== null) {
      this.coordinatorClient = new NetworkClient(clientOptions)
      const listener: RebalanceListener = {
        onRevoke: (partitions) => this.onRevoke(partitions),
        onLost: (partitions) => this.onLost(partitions),
        onAssign: (partitions) => this.onAssign(partitions),
        onRejoinNeeded: () => this.fetcher.wake(),
      }
      const rackId = c.clientRack === '' ? null : c.clientRack
      const requireStable = c.isolationLevel === 'read_committed'
      if (c.groupProtocol === 'consumer') {
        this.coordinator = new RequestManagers(this.coordinatorClient, this.client, this.subscriptions, listener, {
          groupId: c.groupId,
          groupInstanceId: c.groupInstanceId,
          serverAssignor: c.groupRemoteAssignor === '' ? null : c.groupRemoteAssignor,
          rebalanceTimeoutMs: c.maxPollIntervalMs,
          rackId,
          maxPollIntervalMs: c.maxPollIntervalMs,
          retryBackoffMs: c.retryBackoffMs,
          retryBackoffMaxMs: c.retryBackoffMaxMs,
          requireStable,
          closeTimeoutMs: c.requestTimeoutMs,
        })
      } else {
        const assignors: PartitionAssignor[] = c.partitionAssignmentStrategy.map((name) => {
          const a = assignorNamed(name)
          if (!a) throw new KafkaClientError('INVALID_CONFIG', `partition.assignment.strategy: no assignor ${name} (range, roundrobin)`)
          return a
        })
        this.coordinator = new ConsumerCoordinator(this.coordinatorClient, this.client, this.subscriptions, listener, {
          groupId: c.groupId,
          groupInstanceId: c.groupInstanceId,
          sessionTimeoutMs: c.sessionTimeoutMs,
          rebalanceTimeoutMs: c.maxPollIntervalMs,
          heartbeatIntervalMs: c.heartbeatIntervalMs,
          maxPollIntervalMs: c.maxPollIntervalMs,
          retryBackoffMs: c.retryBackoffMs,
          rackId,
          requireStable,
          assignors,
        })
      }
    } else {
      this.coordinatorClient = null
      this.coordinator = null
    }
    this.nextAutoCommitAt = Date.now() + c.autoCommitIntervalMs
    if (signal) {
      if (signal.aborted) this.closed = true
      else signal.addEventListener('abort', () => void this.close().catch(() => undefined), { once: true })
    }
  }

  /**
   * Subscribes to topics (by name, a RegExp matched here, or a SubscriptionPattern the group
   * coordinator resolves: group.protocol=consumer only); the group hands out their partitions.
   */
  subscribe(topics: string | string[] | RegExp | SubscriptionPattern): void {
    if (!this.coordinator) throw new KafkaClientError('INVALID_GROUP_ID', 'subscribe needs a group.id (use assign without one)')
    if (topics instanceof SubscriptionPattern && this.config.groupProtocol !== 'consumer') {
      throw new KafkaClientError('INVALID_CONFIG', 'a SubscriptionPattern is resolved by the group coordinator: it needs group.protocol=consumer (a RegExp works with classic)')
    }
    this.subscriptions.subscribe(typeof topics === 'string' ? [topics] : topics)
    this.nextMetadataRefreshAt = 0
    this.coordinator.requestRejoin()
    this.fetcher.wake()
  }

  /**
   * Who this consumer is in its group (Kafka's groupMetadata()): the group id, the member id and
   * the generation (the member epoch with group.protocol=consumer), for a transactional producer's
   * sendOffsetsToTransaction, which the coordinator fences if the member has moved on.
   */
  groupMetadata(): ConsumerGroupMetadata {
    if (!this.coordinator) throw new KafkaClientError('INVALID_GROUP_ID', 'groupMetadata needs a group.id')
    return this.coordinator.groupMetadata()
  }

  /** Reads these partitions, no group membership (commits still go to group.id if set). */
  assign(partitions: AssignedPartition[]): void {
    this.subscriptions.assignFromUser(partitions, this.config.autoOffsetReset, this.coordinator !== null)
    for (const p of partitions) if (p.offset !== undefined) this.subscriptions.assignedState(p.topic, p.partition).seek(p.offset)
    this.fetcher.clearBufferedDataForUnassignedPartitions()
    this.fetcher.requestMetadataUpdate()
    this.fetcher.wake()
  }

  /**
   * Drops the subscription (or the assignment) and stops fetching. A group member gives its
   * partitions up (onPartitionsRevoked, or onPartitionsLost when its generation is gone; no
   * commit, as Kafka's unsubscribe) and leaves the group: a dynamic member sends LeaveGroup, so
   * that the group hands its partitions to the others at once; a static one (group.instance.id)
   * does not, as in Kafka, and keeps its place until session.timeout.ms. Call it between polls.
   */
  async unsubscribe(): Promise<void> {
    this.undelivered = []
    try {
      if (this.coordinator && this.subscriptions.subscribed) {
        const owned = this.assignment()
        this.subscriptions.assignFromSubscribed([])
        this.fetcher.clearBufferedDataForUnassignedPartitions()
        try {
          if (owned.length > 0) await (this.coordinator.generationLost ? this.onLost(owned) : this.userListener.onPartitionsRevoked?.(owned))
        } finally {
          await this.coordinator.maybeLeaveGroup('the consumer unsubscribed from all topics')
        }
      }
    } finally {
      this.subscriptions.unsubscribe()
      this.fetcher.clearBufferedDataForUnassignedPartitions()
    }
  }

  /** The partitions assigned now. */
  assignment(): TopicPartition[] {
    return this.subscriptions.assignedPartitions.map((s) => ({ topic: s.topic, partition: s.partition }))
  }

  /** The offset of the next record to return from a partition (null until known). */
  position(topic: string, partition: number): bigint | null {
    return this.subscriptions.assignedState(topic, partition).position
  }

  /** The next poll returns records of this partition from `offset`. */
  seek(topic: string, partition: number, offset: bigint): void {
    if (typeof offset !== 'bigint' || offset < 0n) throw new KafkaClientError('INVALID_REQUEST', `seek offset must be a bigint >= 0 (got ${String(offset)})`)
    this.subscriptions.assignedState(topic, partition).seek(offset)
    this.undelivered = this.undelivered.filter((b) => b.topic !== topic || b.partition !== partition)
    this.fetcher.wake()
  }

  pause(partitions: TopicPartition[]): void {
    for (const p of partitions) this.subscriptions.assignedState(p.topic, p.partition).paused = true
  }

  resume(partitions: TopicPartition[]): void {
    for (const p of partitions) this.subscriptions.assignedState(p.topic, p.partition).paused = false
    this.fetcher.wake()
  }

  paused(): TopicPartition[] {
    return this.subscriptions.assignedPartitions.filter((s) => s.paused).map((s) => ({ topic: s.topic, partition: s.partition }))
  }

  /** The group's committed offsets of these partitions (absent: none). */
  async committed(partitions: TopicPartition[]): Promise<Map<string, bigint>> {
    const coordinator = this.requireGroup('committed')
    return coordinator.fetchCommittedOffsets(partitions, Date.now() + this.config.defaultApiTimeoutMs)
  }

  /**
   * Commits `offsets` (each the offset of the next record to read), or the positions of every
   * assigned partition, that is past every record returned so far.
   */
  async commit(offsets?: Array<TopicPartition & OffsetAndMetadata>): Promise<void> {
    const coordinator = this.requireGroup('commit')
    const map = new Map<string, TopicPartition & OffsetAndMetadata>()
    if (offsets) for (const o of offsets) map.set(tpKey(o.topic, o.partition), o)
    else for (const [key, o] of this.consumedOffsets()) map.set(key, o)
    await coordinator.commitOffsets(map, Date.now() + this.config.defaultApiTimeoutMs)
  }

  private requireGroup(what: string): GroupMembership {
    if (!this.coordinator) throw new KafkaClientError('INVALID_GROUP_ID', `${what} needs a group.id`)
    return this.coordinator
  }

  private consumedOffsets(partitions?: TopicPartition[]): Map<string, TopicPartition & OffsetAndMetadata> {
    const out = new Map<string, TopicPartition & OffsetAndMetadata>()
    const states = partitions ? partitions.map((p) => this.subscriptions.state(p.topic, p.partition)).filter((s) => s !== undefined) : this.subscriptions.assignedPartitions
    for (const s of states) if (s.position !== null) out.set(tpKey(s.topic, s.partition), { topic: s.topic, partition: s.partition, offset: s.position })
    return out
  }

  private async onRevoke(partitions: TopicPartition[]): Promise<void> {
    if (this.config.enableAutoCommit) {
      try {
        await this.coordinator!.commitOffsets(this.consumedOffsets(partitions), Date.now() + this.config.defaultApiTimeoutMs, true)
      } catch {
        // The group moved on without us (our generation is gone): another member reads from the last commit.
      }
    }
    await this.userListener.onPartitionsRevoked?.(partitions)
  }

  private async onLost(partitions: TopicPartition[]): Promise<void> {
    await (this.userListener.onPartitionsLost ?? this.userListener.onPartitionsRevoked)?.(partitions)
  }

  private async onAssign(partitions: TopicPartition[]): Promise<void> {
    this.fetcher.clearBufferedDataForUnassignedPartitions()
    this.fetcher.requestMetadataUpdate()
    this.nextAutoCommitAt = Date.now() + this.config.autoCommitIntervalMs
    await this.userListener.onPartitionsAssigned?.(partitions)
  }

  private async maybeAutoCommit(): Promise<void> {
    if (!this.coordinator || !this.config.enableAutoCommit || Date.now() < this.nextAutoCommitAt) return
    this.nextAutoCommitAt = Date.now() + this.config.autoCommitIntervalMs
    try {
      await this.coordinator.commitOffsets(this.consumedOffsets(), Date.now() + this.config.requestTimeoutMs)
    } catch (err) {
      if (!(err instanceof KafkaClientError)) throw err
      // Kafka logs a failed auto-commit and goes on: a rebalance will rejoin, the next commit retries.
    }
  }

  /** With a pattern: every metadata.max.age.ms, the topics it matches now (a change rejoins). */
  private async maybeUpdatePatternSubscription(): Promise<void> {
    if (!this.subscriptions.subscribed || Date.now() < this.nextMetadataRefreshAt) return
    this.nextMetadataRefreshAt = Date.now() + this.config.metadataMaxAgeMs
    const before = this.partitionCounts()
    if (this.subscriptions.subscribedPattern) {
      const md = await this.client.refreshMetadata(null)
      if (this.subscriptions.matchPattern(md.topics.map((t) => t.name))) this.coordinator!.requestRejoin()
    } else if (this.subscriptions.subscription.length > 0) {
      await this.client.refreshMetadata(this.subscriptions.subscription)
    }
    // Topics created or grown since the assignment: rejoin so that the leader hands them out.
    if (!this.coordinator!.needsRejoin && this.partitionCounts() !== before) this.coordinator!.requestRejoin()
  }

  private partitionCounts(): string {
    return this.subscriptions.subscription.map((t) => `${t}:${this.client.metadata.topic(t)?.partitions.length ?? 0}`).join(',')
  }

  /** Committed offsets for newly assigned partitions; ListOffsets for the rest. */
  private async updateFetchPositions(): Promise<void> {
    const initializing = this.subscriptions.initializingPartitions
    if (initializing.length > 0 && this.coordinator) {
      const committed = await this.coordinator.fetchCommittedOffsets(
        initializing.map((s) => ({ topic: s.topic, partition: s.partition })),
        Date.now() + this.config.defaultApiTimeoutMs,
      )
      for (const s of initializing) {
        if (!s.initializing) continue
        const offset = committed.get(tpKey(s.topic, s.partition))
        if (offset !== undefined) s.seek(offset)
        else s.initializing = false
      }
    }
    await this.fetcher.maybeRefreshMetadata()
    await this.fetcher.resetPositionsIfNeeded()
  }

  /**
   * Kafka's poll: records fetched so far (at most max.poll.records, by partition), waiting up to
   * `timeoutMs` for some; [] when none came or the consumer closed.
   */
  poll(timeoutMs = this.config.fetchMaxWaitMs + 100): Promise<ConsumerBatch<K, V>[]> {
    if (this.polling) throw new KafkaClientError('INVALID_REQUEST', 'poll is already running: a consumer is polled from one loop')
    const p = this.pollOnce(timeoutMs).finally(() => {
      this.polling = null
    })
    this.polling = p
    return p
  }

  private async pollOnce(timeoutMs: number): Promise<ConsumerBatch<K, V>[]> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      if (this.closed) return []
      if (this.coordinator && this.subscriptions.subscribed) {
        await this.maybeUpdatePatternSubscription()
        await this.coordinator.poll(Date.now() + this.config.maxPollIntervalMs)
      }
      await this.maybeAutoCommit()
      await this.updateFetchPositions()
      const batches = this.fetcher.collectFetch(this.config.maxPollRecords)
      if (this.closed) {
        this.rewind(batches)
        return []
      }
      // The next fetches go out now, in flight while the application handles these records.
      this.fetcher.sendFetches()
      if (batches.length > 0) return batches
      const remaining = deadline - Date.now()
      if (remaining <= 0) return []
      const waitMs = this.fetcher.hasInFlightFetches ? remaining : Math.min(remaining, this.config.retryBackoffMs)
      await this.fetcher.awaitFetches(this.coordinator ? Math.min(waitMs, this.config.heartbeatIntervalMs) : waitMs, this.signal)
    }
  }

  /** Moves positions back to the first record of batches not handed to the application. */
  private rewind(batches: ConsumerBatch<K, V>[]): void {
    for (const b of batches) {
      const s = this.subscriptions.state(b.topic, b.partition)
      if (s && b.records.length > 0) s.seek(b.records[0]!.offset)
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ConsumerBatch<K, V>> {
    try {
      while (!this.closed) {
        this.undelivered = await this.poll(this.config.maxPollIntervalMs)
        while (!this.closed) {
          const batch = this.nextUndelivered()
          if (!batch) break
          yield batch
        }
      }
    } finally {
      // A `break` or close: batches fetched but not handed out are read again.
      this.rewind(this.undelivered)
      this.undelivered = []
    }
  }

  /**
   * The next batch for the application, of a partition it still holds. None once the group
   * rebalances or this member left it (max.poll.interval.ms): the rest are read again, by this
   * member or the partition's next owner, after the next poll.
   */
  private nextUndelivered(): ConsumerBatch<K, V> | undefined {
    if (this.coordinator?.needsRejoin && this.subscriptions.subscribed) {
      this.rewind(this.undelivered)
      this.undelivered = []
    }
    for (;;) {
      const batch = this.undelivered.shift()
      if (!batch || this.subscriptions.isAssigned(batch.topic, batch.partition)) return batch
    }
  }

  /** Batches a poll returned that the loop has not handed to the application yet. */
  private undelivered: ConsumerBatch<K, V>[] = []
  /** The eachBatch call running: close waits for it before committing. */
  private processing: Promise<unknown> | null = null

  /** Calls `eachBatch` for every batch until the consumer closes or `signal` aborts. */
  async run(options: RunOptions<K, V>): Promise<void> {
    const stop = () => this.fetcher.wake()
    options.signal?.addEventListener('abort', stop, { once: true })
    try {
      while (!this.closed && !options.signal?.aborted) {
        this.undelivered = await this.poll(this.config.maxPollIntervalMs)
        while (!this.closed && !options.signal?.aborted) {
          const batch = this.nextUndelivered()
          if (!batch) break
          const processing = (async () => options.eachBatch(batch))()
          this.processing = processing.catch(() => undefined)
          try {
            await processing
          } catch (err) {
            // Not processed: read again from its first record (as the later batches).
            this.undelivered.unshift(batch)
            throw err
          } finally {
            this.processing = null
          }
        }
      }
    } finally {
      this.rewind(this.undelivered)
      this.undelivered = []
      options.signal?.removeEventListener('abort', stop)
    }
  }

  /** Commits the positions (auto-commit), leaves the group, closes the connections. */
  close(): Promise<void> {
    this.closing ??= this.doClose()
    return this.closing
  }

  private async doClose(): Promise<void> {
    this.closed = true
    this.fetcher.wake()
    await this.polling?.catch(() => undefined)
    await this.processing
    // Batches the application has not been handed are not committed.
    this.rewind(this.undelivered)
    this.undelivered = []
    try {
      if (this.coordinator && this.config.enableAutoCommit && this.subscriptions.assignedPartitions.length > 0 && !this.coordinator.needsRejoin) {
        await this.coordinator.commitOffsets(this.consumedOffsets(), Date.now() + this.config.requestTimeoutMs).catch(() => undefined)
      }
      await this.coordinator?.close()
      await this.fetcher.close()
    } finally {
      await this.client.close()
      await this.coordinatorClient?.close()
      releaseClientSecurity(this.config.security)
    }
  }
}
