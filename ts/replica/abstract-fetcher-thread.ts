/**
 * Kafka's `AbstractFetcherThread` as an async loop (Node has no threads to spare for it): one
 * fetcher per source broker (and fetcher id, ts/replica/replica-fetcher-manager.ts), holding the
 * fetch state of each partition it replicates from that broker and sending one Fetch at a time.
 *
 * Each round (`doWork`): the partitions ready to fetch (state Fetching, not delayed) go into one
 * Fetch (`LeaderEndPoint.fetch`); nothing ready -> wait replica.fetch.backoff.ms, or less when a
 * delay ends sooner, or until partitions are added. Then, per partition of the response whose
 * fetch state is still the one the request was built from (same fetch offset; a partition
 * removed, re-added or truncated meanwhile is skipped), as Kafka's `processFetchRequest`:
 *
 * - NONE with a divergingEpoch (KIP-320): nothing is appended; the log is truncated
 *   (`truncateOnFetchResponse` -> `getOffsetTruncationState`: to min(the leader's end offset of
 *   that epoch, our end offset of it, our log end) when we know the epoch; to the end of our
 *   largest epoch below it when we do not, and fetch on so the leader answers again), then fetched
 *   again from there with the epoch of our new log end as lastFetchedEpoch;
 * - NONE: `processPartitionData` (the follower's append, high watermark, log start offset);
 *   the fetch offset moves to the last offset appended + 1 and lastFetchedEpoch to the log's
 *   latest epoch; CORRUPT_MESSAGE / INVALID_RECORD delay the partition (a transient state of the
 *   leader's log: fetched again later), any other failure marks it failed;
 * - OFFSET_OUT_OF_RANGE (`fetchOffsetAndTruncate`): the leader's latest offset (ListOffsets
 *   as a replica: its log end) below our log end -> truncate to it (an unclean election);
 *   else the leader's earliest offset above our log end -> truncate fully and start there (we
 *   were away while retention or DeleteRecords moved the leader's log start past us); else
 *   fetch on from our log end;
 * - FENCED_LEADER_EPOCH: our epoch is older than the leader's: the partition is marked failed
 *   (it waits for the metadata to say more) unless its epoch moved on since the request;
 * - UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID
 *   and every other error: the partition is delayed by replica.fetch.backoff.ms.
 *
 * A failed send (connection refused or lost, a timeout) delays every partition of the request
 * by replica.fetch.backoff.ms (the leader end point's connection backs off on its own too).
 *
 * Truncation and appends of one fetcher's partitions run inside its response processing, one
 * at a time; `removePartitions` takes the partitions out at once and resolves when processing
 * under way is done, so a caller that then makes the partition a leader (or hands it to another
 * fetcher) never races a truncation. Partitions marked failed leave the fetcher and are reported
 * through `onPartitionFailed` (Kafka's `FailedPartitions`) until they are added again.
 */
import type { Logger } from '../logger.js'
import type { PartitionData } from '../protocol/apis/fetch.js'
import { ErrorCode } from '../protocol/error-codes.js'
import type { LogAppendInfo } from '../storage/types.js'
import type { TopicPartition } from './fetch-params.js'
import { NO_EPOCH } from './leader-epoch.js'
import type { BrokerEndPoint } from './partition-registration.js'

/** replica.fetch.backoff.ms (Kafka's default 1000). */
export const DEFAULT_REPLICA_FETCH_BACKOFF_MS = 1000

const UNDEFINED_EPOCH = -1
const UNDEFINED_EPOCH_OFFSET = -1n

export const tpKey = (tp: TopicPartition): string => `${tp.topic}-${tp.partition}`

/** Kafka's `ReplicaState` of a fetch state: Fetching, or Truncating (waiting for an epoch answer). */
export type FetchStatus = 'fetching' | 'truncating'

/** Kafka's `PartitionFetchState`: where a partition's fetching stands. Immutable: each change is a new one. */
export interface PartitionFetchState {
  readonly topicId: Buffer
  readonly fetchOffset: bigint
  /** The leader's high watermark minus our next offset at the last fetch; null before the first. */
  readonly lag: bigint | null
  readonly currentLeaderEpoch: number
  /** No fetch before this time (ms since the epoch); 0: not delayed. */
  readonly delayUntilMs: number
  readonly status: FetchStatus
  /** The epoch of the last batch fetched (our log's latest epoch); -1 unknown. */
  readonly lastFetchedEpoch: number
}

/** Kafka's `InitialFetchState`: where a partition starts fetching from its leader. */
export interface InitialFetchState {
  readonly topicId: Buffer
  readonly leader: BrokerEndPoint
  readonly currentLeaderEpoch: number
  /** Our log end offset (Kafka: the initial fetch offset is the LEO; truncation comes from divergingEpoch). */
  readonly initOffset: bigint
}

/** Kafka's `OffsetTruncationState`. */
export interface OffsetTruncationState {
  readonly offset: bigint
  readonly truncationCompleted: boolean
}

/** A leader's answer for an epoch: Kafka's `EpochEndOffset` (a divergingEpoch or OffsetForLeaderEpoch). */
export interface EpochEndOffset {
  readonly errorCode: number
  readonly leaderEpoch: number
  readonly endOffset: bigint
}

/** One partition as it went into a Fetch. */
export interface SentPartition {
  readonly tp: TopicPartition
  readonly fetchOffset: bigint
  readonly currentLeaderEpoch: number
}

/** A Fetch's result: the partitions the session sent (by tpKey) and the response's data (by tpKey). */
export interface FetchResult {
  readonly sent: ReadonlyMap<string, SentPartition>
  readonly partitions: ReadonlyMap<string, PartitionData>
  /** The response could not be used (a session or top-level error): back off before the next. */
  readonly unusable?: boolean
}

/** An error answered by the leader for a partition, with its Kafka error code. */
export class LeaderPartitionError extends Error {
  readonly errorCode: number
  constructor(errorCode: number, message: string) {
    super(message)
    this.name = 'LeaderPartitionError'
    this.errorCode = errorCode
  }
}

/** Kafka's `LeaderEndPoint`: how a fetcher talks to the broker it fetches from. */
export interface LeaderEndPoint {
  /** One Fetch of these partitions (Kafka's `buildFetch` + `fetch`); rejects when the send failed. */
  fetch(partitions: ReadonlyArray<{ tp: TopicPartition; state: PartitionFetchState }>): Promise<FetchResult>
  /** ListOffsets EARLIEST as a replica; rejects with LeaderPartitionError. */
  fetchEarliestOffset(tp: TopicPartition, currentLeaderEpoch: number): Promise<{ offset: bigint; epoch: number }>
  /** ListOffsets LATEST as a replica (the leader's log end); rejects with LeaderPartitionError. */
  fetchLatestOffset(tp: TopicPartition, currentLeaderEpoch: number): Promise<{ offset: bigint; epoch: number }>
  /** Whether the leader answers divergingEpoch in Fetch (v12+: lastFetchedEpoch). */
  readonly isTruncationOnFetchSupported: boolean
  close(): Promise<void>
}

export interface AbstractFetcherThreadOptions {
  name: string
  sourceBroker: BrokerEndPoint
  leader: LeaderEndPoint
  fetchBackOffMs?: number
  logger: Logger
  /** A partition left this fetcher as failed (storage error, fenced): it waits for new metadata. */
  onPartitionFailed?: (tp: TopicPartition) => void
}

export abstract class AbstractFetcherThread {
  readonly name: string
  readonly sourceBroker: BrokerEndPoint
  readonly leader: LeaderEndPoint
  readonly fetchBackOffMs: number
  protected readonly logger: Logger
  private readonly onPartitionFailed: (tp: TopicPartition) => void
  /** The partitions' fetch states, in fetch order (Kafka's `PartitionStates`: updates move to the end). */
  private readonly states = new Map<string, { tp: TopicPartition; state: PartitionFetchState }>()
  private running = false
  private loop: Promise<void> | null = null
  private wake: (() => void) | null = null
  /** The processing of the last response (appends, truncations); settled when idle. */
  private processing: Promise<void> = Promise.resolve()
  /** Fetches sent and answered with partition data, and failed sends (for tests and metrics). */
  fetchesAnswered = 0
  fetchesFailed = 0

  protected constructor(options: AbstractFetcherThreadOptions) {
    this.name = options.name
    this.sourceBroker = options.sourceBroker
    this.leader = options.leader
    this.fetchBackOffMs = options.fetchBackOffMs ?? DEFAULT_REPLICA_FETCH_BACKOFF_MS
    this.logger = options.logger
    this.onPartitionFailed = options.onPartitionFailed ?? (() => {})
  }

  // The follower's log, as the subclass reaches it (Kafka's abstract methods of the same names).
  protected abstract processPartitionData(tp: TopicPartition, fetchOffset: bigint, data: PartitionData): LogAppendInfo | null
  protected abstract truncate(tp: TopicPartition, state: OffsetTruncationState): Promise<void>
  protected abstract truncateFullyAndStartAt(tp: TopicPartition, offset: bigint): Promise<void>
  protected abstract latestEpoch(tp: TopicPartition): number | null
  protected abstract logStartOffset(tp: TopicPartition): bigint
  protected abstract logEndOffset(tp: TopicPartition): bigint
  /** Our largest epoch <= `epoch` and where it ends; null when we know none. */
  protected abstract endOffsetForEpoch(tp: TopicPartition, epoch: number): { epoch: number; endOffset: bigint } | null

  get isRunning(): boolean {
    return this.running
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.loop = this.run()
  }

  /** Stops the loop (a Fetch in flight is abandoned: the end point closes) and waits for it. */
  async shutdown(): Promise<void> {
    this.running = false
    this.wake?.()
    await this.leader.close()
    await this.loop
    await this.processing
  }

  get partitionCount(): number {
    return this.states.size
  }

  partitions(): TopicPartition[] {
    return [...this.states.values()].map((s) => s.tp)
  }

  fetchState(tp: TopicPartition): PartitionFetchState | undefined {
    return this.states.get(tpKey(tp))?.state
  }

  /**
   * Kafka's `addPartitions`: a partition already here at the same leader epoch keeps its state;
   * otherwise it starts at its initial offset, Fetching with our latest epoch as lastFetchedEpoch
   * (the leader answers divergingEpoch when our log parted from its own), or Truncating when the
   * leader cannot answer that (Fetch below v12) or our log has no epoch to say.
   */
  addPartitions(initial: ReadonlyArray<{ tp: TopicPartition; state: InitialFetchState }>): void {
    for (const { tp, state } of initial) {
      const key = tpKey(tp)
      const current = this.states.get(key)
      if (current && current.state.currentLeaderEpoch === state.currentLeaderEpoch) {
        this.moveToEnd(key, tp, current.state)
        continue
      }
      const latest = this.latestEpoch(tp)
      const fetching = this.leader.isTruncationOnFetchSupported && (latest !== null || state.initOffset <= this.logStartOffset(tp))
      this.moveToEnd(key, tp, {
        topicId: state.topicId,
        fetchOffset: state.initOffset,
        lag: null,
        currentLeaderEpoch: state.currentLeaderEpoch,
        delayUntilMs: 0,
        status: fetching ? 'fetching' : 'truncating',
        lastFetchedEpoch: latest ?? NO_EPOCH,
      })
    }
    this.wake?.()
  }

  /**
   * Kafka's `removePartitions`: the partitions leave at once (a response still coming for them is
   * ignored); resolves with their last states once the processing under way (a truncation, an
   * append) is done.
   */
  async removePartitions(tps: readonly TopicPartition[]): Promise<Map<string, PartitionFetchState>> {
    const removed = new Map<string, PartitionFetchState>()
    for (const tp of tps) {
      const key = tpKey(tp)
      const s = this.states.get(key)
      if (s) {
        removed.set(key, s.state)
        this.states.delete(key)
      }
    }
    await this.processing
    return removed
  }

  private moveToEnd(key: string, tp: TopicPartition, state: PartitionFetchState): void {
    this.states.delete(key)
    this.states.set(key, { tp, state })
  }

  /** Replaces a partition's state only if it is still `expected` (not removed or re-added meanwhile). */
  private updateIfCurrent(key: string, expected: PartitionFetchState, next: PartitionFetchState): boolean {
    const s = this.states.get(key)
    if (!s || s.state !== expected) return false
    this.moveToEnd(key, s.tp, next)
    return true
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.doWork()
      } catch (err) {
        // Nothing here should throw; if it does, the loop survives it after a pause.
        this.logger.error('replica fetcher round failed', { fetcher: this.name, error: String(err) })
        await this.waitFor(this.fetchBackOffMs)
      }
    }
  }

  /** Kafka's `doWork`: truncate what must be, then fetch. */
  private async doWork(): Promise<void> {
    const now = Date.now()
    const ready: Array<{ tp: TopicPartition; state: PartitionFetchState }> = []
    let nextDelayEnd = Infinity
    const truncating: string[] = []
    for (const [key, s] of this.states) {
      if (s.state.delayUntilMs > now) {
        nextDelayEnd = Math.min(nextDelayEnd, s.state.delayUntilMs)
        continue
      }
      if (s.state.status === 'truncating') truncating.push(key)
      else ready.push(s)
    }
    if (truncating.length > 0) await this.track(this.truncateWithoutEpochAnswer(truncating))
    if (ready.length === 0) {
      if (truncating.length === 0) await this.waitFor(Math.min(this.fetchBackOffMs, nextDelayEnd - now))
      return
    }
    await this.processFetchRequest(ready)
  }

  /** Waits `ms`, or less when partitions are added or the fetcher shuts down. */
  private waitFor(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        if (this.wake === done) this.wake = null
        resolve()
      }
      const timer = setTimeout(done, Math.max(0, ms))
      timer.unref?.()
      this.wake = done
    })
  }

  /** Runs `work` as the fetcher's processing (what `removePartitions` waits for). */
  private track(work: Promise<void>): Promise<void> {
    this.processing = work.catch((err) => this.logger.error('replica fetcher processing failed', { fetcher: this.name, error: String(err) }))
    return this.processing
  }

  private async processFetchRequest(ready: ReadonlyArray<{ tp: TopicPartition; state: PartitionFetchState }>): Promise<void> {
    let result: FetchResult
    try {
      result = await this.leader.fetch(ready)
    } catch (err) {
      this.fetchesFailed++
      if (this.running) {
        this.logger.warn('replica fetch failed', { fetcher: this.name, leader: `${this.sourceBroker.host}:${this.sourceBroker.port}`, error: String(err) })
        this.delayPartitions([...this.states.keys()], this.fetchBackOffMs)
      }
      return
    }
    if (!this.running) return
    if (result.unusable) {
      this.delayPartitions(
        ready.map((r) => tpKey(r.tp)),
        this.fetchBackOffMs,
      )
      return
    }
    this.fetchesAnswered++
    await this.track(this.processResponse(result))
  }

  private async processResponse(result: FetchResult): Promise<void> {
    const withError = new Set<string>()
    const diverging = new Map<string, EpochEndOffset>()
    for (const [key, data] of result.partitions) {
      const s = this.states.get(key)
      const sent = result.sent.get(key)
      if (!s || !sent || sent.fetchOffset !== s.state.fetchOffset || s.state.status !== 'fetching' || s.state.delayUntilMs > Date.now()) continue
      const { tp, state } = s
      switch (data.errorCode) {
        case ErrorCode.NONE: {
          const d = data.divergingEpoch
          if (this.leader.isTruncationOnFetchSupported && d !== undefined && (d.epoch !== UNDEFINED_EPOCH || d.endOffset !== UNDEFINED_EPOCH_OFFSET)) {
            // Nothing appended, the watermarks left alone until the truncation is done.
            diverging.set(key, { errorCode: ErrorCode.NONE, leaderEpoch: d.epoch, endOffset: d.endOffset })
            break
          }
          try {
            const info = this.processPartitionData(tp, state.fetchOffset, data)
            if (info === null) break
            const nextOffset = info.validBytes > 0 ? info.lastOffset + 1n : state.fetchOffset
            const lag = data.highWatermark > nextOffset ? data.highWatermark - nextOffset : 0n
            if (info.validBytes > 0 || state.lag === null) {
              this.updateIfCurrent(key, state, { ...state, fetchOffset: nextOffset, lag, status: 'fetching', lastFetchedEpoch: this.latestEpoch(tp) ?? state.lastFetchedEpoch })
            }
          } catch (err) {
            const code = (err as { code?: unknown }).code
            if (code === 'CORRUPT_RECORD' || code === 'INVALID_RECORD') {
              // Kafka: a corrupt batch may be a transient state of the leader's log; fetched again later.
              this.logger.error('invalid records fetched', { fetcher: this.name, partition: key, offset: String(state.fetchOffset), error: String(err) })
              withError.add(key)
            } else {
              this.logger.error('cannot append fetched records', { fetcher: this.name, partition: key, offset: String(state.fetchOffset), error: String(err) })
              this.markPartitionFailed(key)
            }
          }
          break
        }
        case ErrorCode.OFFSET_OUT_OF_RANGE:
          if (!(await this.handleOutOfRangeError(key, state, sent.currentLeaderEpoch))) withError.add(key)
          break
        case ErrorCode.FENCED_LEADER_EPOCH:
          if (this.onPartitionFenced(key, sent.currentLeaderEpoch)) withError.add(key)
          break
        case ErrorCode.TOPIC_AUTHORIZATION_FAILED:
        case ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
          // The leader's authorizer refuses this broker's principal: retried after the backoff
          // (an ACL may come), loudly, since the partition cannot replicate until then.
          this.logger.error('replica fetch not authorized: the inter-broker principal needs CLUSTER_ACTION on the cluster (or to be a super user)', {
            fetcher: this.name,
            partition: key,
            errorCode: data.errorCode,
          })
          withError.add(key)
          break
        default:
          // UNKNOWN_LEADER_EPOCH (the leader has not seen our epoch yet), NOT_LEADER_OR_FOLLOWER,
          // UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID (being created or deleted), and the rest.
          this.logger.info('replica fetch partition error', { fetcher: this.name, partition: key, errorCode: data.errorCode })
          withError.add(key)
      }
    }
    if (diverging.size > 0) await this.truncateOnFetchResponse(diverging)
    if (withError.size > 0) this.delayPartitions([...withError], this.fetchBackOffMs)
  }

  /** Kafka's `truncateOnFetchResponse`: each diverging partition truncated, then fetched again from there. */
  private async truncateOnFetchResponse(epochEndOffsets: ReadonlyMap<string, EpochEndOffset>): Promise<void> {
    for (const [key, leaderEpochOffset] of epochEndOffsets) {
      const s = this.states.get(key)
      if (!s) continue
      const truncation = this.getOffsetTruncationState(s.tp, s.state, leaderEpochOffset)
      this.logger.info('truncating on diverging epoch', {
        fetcher: this.name,
        partition: key,
        leaderEpoch: leaderEpochOffset.leaderEpoch,
        leaderEndOffset: String(leaderEpochOffset.endOffset),
        truncateTo: String(truncation.offset),
      })
      if (!(await this.doTruncate(key, s.tp, truncation))) continue
      const status: FetchStatus = this.leader.isTruncationOnFetchSupported || truncation.truncationCompleted ? 'fetching' : 'truncating'
      this.updateIfCurrent(key, s.state, { ...s.state, fetchOffset: truncation.offset, status, lastFetchedEpoch: this.latestEpoch(s.tp) ?? NO_EPOCH })
    }
  }

  /**
   * Partitions in the Truncating state: the leader cannot answer divergingEpoch (Fetch below
   * v12), or our log has records and no epoch to fetch with. Our log is cut back to its high
   * watermark (Kafka's `truncateToHighWatermark`: what was committed is the leader's too), then
   * fetched from there without an epoch.
   */
  private async truncateWithoutEpochAnswer(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      const s = this.states.get(key)
      if (!s) continue
      const offset = this.highWatermark(s.tp) < s.state.fetchOffset ? this.highWatermark(s.tp) : s.state.fetchOffset
      if (!(await this.doTruncate(key, s.tp, { offset, truncationCompleted: true }))) continue
      this.updateIfCurrent(key, s.state, { ...s.state, fetchOffset: offset, status: 'fetching', lastFetchedEpoch: this.latestEpoch(s.tp) ?? NO_EPOCH })
    }
  }

  protected abstract highWatermark(tp: TopicPartition): bigint

  /** Kafka's `getOffsetTruncationState` (its rules in the order Kafka applies them). */
  private getOffsetTruncationState(tp: TopicPartition, state: PartitionFetchState, leaderEpochOffset: EpochEndOffset): OffsetTruncationState {
    const min = (a: bigint, b: bigint) => (a < b ? a : b)
    if (leaderEpochOffset.endOffset === UNDEFINED_EPOCH_OFFSET) return { offset: state.fetchOffset, truncationCompleted: true }
    const replicaEndOffset = this.logEndOffset(tp)
    if (leaderEpochOffset.leaderEpoch === UNDEFINED_EPOCH) return { offset: min(leaderEpochOffset.endOffset, replicaEndOffset), truncationCompleted: true }
    const ours = this.endOffsetForEpoch(tp, leaderEpochOffset.leaderEpoch)
    if (ours === null) return { offset: min(leaderEpochOffset.endOffset, replicaEndOffset), truncationCompleted: true }
    if (ours.epoch !== leaderEpochOffset.leaderEpoch) {
      // We do not know the leader's epoch: back to the end of our largest epoch below it, and ask again.
      return { offset: min(ours.endOffset, replicaEndOffset), truncationCompleted: false }
    }
    return { offset: min(min(ours.endOffset, leaderEpochOffset.endOffset), replicaEndOffset), truncationCompleted: true }
  }

  /** Kafka's `doTruncate`: false (and the partition failed) when the log could not be truncated. */
  private async doTruncate(key: string, tp: TopicPartition, truncation: OffsetTruncationState): Promise<boolean> {
    try {
      await this.truncate(tp, truncation)
      return true
    } catch (err) {
      this.logger.error('cannot truncate', { fetcher: this.name, partition: key, offset: String(truncation.offset), error: String(err) })
      this.markPartitionFailed(key)
      return false
    }
  }

  /**
   * Kafka's `handleOutOfRangeError`: true when the partition has a new fetch offset, or was marked
   * failed because it was fenced (no backoff needed); false to retry after the backoff.
   */
  private async handleOutOfRangeError(key: string, state: PartitionFetchState, leaderEpochInRequest: number): Promise<boolean> {
    const s = this.states.get(key)
    if (!s) return true
    try {
      const next = await this.fetchOffsetAndTruncate(s.tp, state)
      this.updateIfCurrent(key, state, next)
      this.logger.info('fetch offset out of range: reset', { fetcher: this.name, partition: key, from: String(state.fetchOffset), to: String(next.fetchOffset) })
      return true
    } catch (err) {
      if (err instanceof LeaderPartitionError && err.errorCode === ErrorCode.FENCED_LEADER_EPOCH) return this.onPartitionFenced(key, leaderEpochInRequest)
      this.logger.info('cannot fetch the leader offsets', { fetcher: this.name, partition: key, error: String(err) })
      return false
    }
  }

  /** Kafka's `fetchOffsetAndTruncate` (seed 004's `handleOffsetOutOfRange`). */
  private async fetchOffsetAndTruncate(tp: TopicPartition, state: PartitionFetchState): Promise<PartitionFetchState> {
    const replicaEndOffset = this.logEndOffset(tp)
    const latest = await this.leader.fetchLatestOffset(tp, state.currentLeaderEpoch)
    if (latest.offset < replicaEndOffset) {
      // The leader has less than we do (an unclean election): keep what it has.
      this.logger.warn("truncating to the leader's log end", { fetcher: this.name, partition: tpKey(tp), from: String(replicaEndOffset), to: String(latest.offset) })
      await this.truncate(tp, { offset: latest.offset, truncationCompleted: true })
      return { ...state, fetchOffset: latest.offset, lag: 0n, status: 'fetching', delayUntilMs: 0, lastFetchedEpoch: this.latestEpoch(tp) ?? NO_EPOCH }
    }
    const earliest = await this.leader.fetchEarliestOffset(tp, state.currentLeaderEpoch)
    const offsetToFetch = earliest.offset > replicaEndOffset ? earliest.offset : replicaEndOffset
    if (earliest.offset > replicaEndOffset) {
      // Everything we have is below the leader's log start: stale, all of it.
      this.logger.warn("truncating fully to the leader's log start", { fetcher: this.name, partition: tpKey(tp), logEnd: String(replicaEndOffset), leaderLogStart: String(earliest.offset) })
      await this.truncateFullyAndStartAt(tp, earliest.offset)
    }
    return { ...state, fetchOffset: offsetToFetch, lag: latest.offset - offsetToFetch, status: 'fetching', delayUntilMs: 0, lastFetchedEpoch: this.latestEpoch(tp) ?? NO_EPOCH }
  }

  /**
   * Kafka's `onPartitionFenced`: when our epoch is still the one the request carried, the
   * partition is marked failed (it waits for the metadata's next word) and false is returned;
   * when it moved on meanwhile, true (retry after the backoff).
   */
  private onPartitionFenced(key: string, requestEpoch: number): boolean {
    const s = this.states.get(key)
    if (!s) return false
    if (requestEpoch === s.state.currentLeaderEpoch) {
      this.logger.info('fenced by a newer leader epoch: waiting for the metadata', { fetcher: this.name, partition: key, epoch: requestEpoch })
      this.markPartitionFailed(key)
      return false
    }
    return true
  }

  private markPartitionFailed(key: string): void {
    const s = this.states.get(key)
    if (!s) return
    this.states.delete(key)
    this.onPartitionFailed(s.tp)
  }

  /** Kafka's `delayPartitions`: no fetch of these before `delayMs` passed (a delay under way is kept). */
  private delayPartitions(keys: readonly string[], delayMs: number): void {
    const until = Date.now() + delayMs
    for (const key of keys) {
      const s = this.states.get(key)
      if (s && s.state.delayUntilMs <= Date.now()) this.moveToEnd(key, s.tp, { ...s.state, delayUntilMs: until })
    }
  }

  /** Waits until the partition's processing under way (if any) is done: for tests. */
  async idle(): Promise<void> {
    await this.processing
  }
}
