/**
 * Kafka's `ShareCoordinatorService` with the part of its `CoordinatorRuntime` it needs: the
 * share-partition states of every partition of `__share_group_state` this broker leads (one
 * ./share-coordinator-shard.ts each), loaded from the partition's log when this broker becomes
 * its leader, and the five inter-broker requests of KIP-932 (InitializeShareGroupState,
 * ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState, ReadShareGroupStateSummary)
 * served from them.
 *
 * Election and resignation (driven by the replica manager's leadership changes; a standalone
 * broker elects itself for every partition at start), each partition on its own: elected in a
 * leader epoch newer than any seen for it, the coordinator replays that partition's log (records
 * past the high watermark too: on the leader they are on their way to the ISR); meanwhile a
 * request for one of its keys is answered COORDINATOR_LOAD_IN_PROGRESS, and before any election
 * or after a resignation NOT_COORDINATOR.
 *
 * A request is split by share partition (Kafka's `SharePartitionKey`), each routed to the
 * partition of its key (./share-group-state-topic.ts). The operations of one partition of the
 * topic run one after another (Kafka's runtime runs a shard's writes in order): the shard makes
 * the records, they are appended to the partition as one batch with acks=all, and once the ISR
 * holds them they are replayed into the shard and the request answered; a failed append changes
 * nothing and maps to the coordinator errors (ts/coordinator/coordinator-errors.ts).
 *
 * The partition count (`numPartitions`) is the topic's as it exists, else
 * share.coordinator.state.topic.num.partitions (an existing topic keeps its count).
 *
 * Pruning (Kafka's `setupRecordPruning`): every share.coordinator.state.topic.prune.interval.ms
 * the records of each coordinated partition below its shard's `lastRedundantOffset` are deleted
 * (as DeleteRecords does: the log start offset moves up, never past the high watermark), which
 * keeps the log small as the snapshots supersede what came before.
 */
import type { Logger } from '../../logger.js'
import { buildBatch } from '../../protocol/batch-builder.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { ACKS_ALL } from '../../replica/partition.js'
import type { AppendRecordsResult, LeadershipChange, ReplicaManager } from '../../replica/replica-manager.js'
import { kafkaErrorCodeOf } from '../../storage/errors.js'
import type { CoordinatorRecord } from '../../group/coordinator-record.js'
import { coordinatorErrorOf } from '../coordinator-errors.js'
import { loadCoordinatorLog } from '../coordinator-loader.js'
import type { LogRecord, RecordBatch } from '../../protocol/record-types.js'
import { ShareCoordinatorShard, type ReadStateData, type ReadStateSummaryData, type ShardResult, type WriteStateData } from './share-coordinator-shard.js'
import { SHARE_GROUP_STATE_TOPIC, sharePartitionFor, type ShareStateKey } from './share-group-state-topic.js'

/** How long a write waits for the ISR (Kafka's share.coordinator.write.timeout.ms, 5 s). */
export const DEFAULT_SHARE_COORDINATOR_WRITE_TIMEOUT_MS = 5000

export type ShareStateReplicaManager = Pick<ReplicaManager, 'appendRecords' | 'maybeAddDelayedProduce' | 'getLog' | 'deleteRecords'>

/** share.coordinator.state.topic.prune.interval.ms: Kafka's default, 5 minutes. */
export const DEFAULT_SHARE_COORDINATOR_STATE_TOPIC_PRUNE_INTERVAL_MS = 5 * 60 * 1000

export interface ShareCoordinatorOptions {
  /** The partitions of `__share_group_state`: the topic's own count once it exists, else share.coordinator.state.topic.num.partitions. */
  numPartitions: () => number
  /** share.coordinator.snapshot.update.records.per.snapshot */
  snapshotUpdateRecordsPerSnapshot: number
  /** Whether a topic partition exists (the shard refuses others: UNKNOWN_TOPIC_OR_PARTITION). */
  topicPartitionExists: (topicId: Buffer, partition: number) => boolean
  writeTimeoutMs?: number
  /** share.coordinator.state.topic.prune.interval.ms; 0: never. */
  pruneIntervalMs?: number
}

/** One partition of `__share_group_state` as this broker knows it. */
class StatePartition {
  status: 'inactive' | 'loading' | 'active' = 'inactive'
  epoch: number | null = null
  /** Bumped by every load and unload: work begun under an older one changes nothing. */
  generation = 0
  shard: ShareCoordinatorShard
  /** The operations of this partition, one after another. */
  queue: Promise<unknown> = Promise.resolve()
  readonly waiting = new Set<(errorCode: number) => void>()

  constructor(shard: ShareCoordinatorShard) {
    this.shard = shard
  }
}

/** One share partition's answer: the shard's data, or an error. */
export interface ShareStateResult<T> {
  errorCode: number
  errorMessage: string | null
  data: T | null
}

export class ShareCoordinator {
  private readonly partitions = new Map<number, StatePartition>()
  private stopped = false
  private readonly writeTimeoutMs: number
  private pruneTimer: NodeJS.Timeout | null = null

  constructor(
    private readonly replicas: ShareStateReplicaManager,
    private readonly logger: Logger,
    private readonly options: ShareCoordinatorOptions,
  ) {
    this.writeTimeoutMs = options.writeTimeoutMs ?? DEFAULT_SHARE_COORDINATOR_WRITE_TIMEOUT_MS
  }

  /** Kafka's `partitionFor`: the partition of `__share_group_state` holding a share partition's state. */
  partitionFor(key: ShareStateKey): number {
    return sharePartitionFor(key.groupId, key.topicId, key.partition, this.options.numPartitions())
  }

  /** NONE while the key's partition is coordinated here, COORDINATOR_LOAD_IN_PROGRESS while it loads, else NOT_COORDINATOR. */
  statusError(key: ShareStateKey): number {
    if (this.stopped) return ErrorCode.NOT_COORDINATOR
    const status = this.partitions.get(this.partitionFor(key))?.status ?? 'inactive'
    return status === 'active' ? ErrorCode.NONE : status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NOT_COORDINATOR
  }

  /** The replica manager's `onLeadershipChange`, for `__share_group_state`. */
  onLeadershipChange(leaders: readonly LeadershipChange[], followers: readonly LeadershipChange[]): void {
    for (const p of leaders) if (p.topic === SHARE_GROUP_STATE_TOPIC) void this.onElection(p.partition, p.leaderEpoch)
    for (const p of followers) if (p.topic === SHARE_GROUP_STATE_TOPIC) this.onResignation(p.partition, p.leaderEpoch)
  }

  /** Elected leader of `partition` in `leaderEpoch`: replays its log unless an election in a newer epoch came first. */
  async onElection(partition: number, leaderEpoch: number): Promise<void> {
    if (this.stopped) return
    const state = this.partition(partition)
    if (state.epoch !== null && leaderEpoch <= state.epoch && (state.status !== 'inactive' || leaderEpoch < state.epoch)) return
    state.epoch = leaderEpoch
    if (state.status !== 'inactive') return
    const generation = this.drop(state)
    state.status = 'loading'
    const started = Date.now()
    let records = 0
    try {
      const log = this.replicas.getLog({ topic: SHARE_GROUP_STATE_TOPIC, partition })
      if (log !== undefined) {
        const replay = (batch: RecordBatch, record: LogRecord) => {
          if (batch.isControl || record.key === null) return
          state.shard.replay(record.key, record.value, record.offset)
          records++
        }
        if (!(await loadCoordinatorLog(log, replay, () => generation === state.generation))) return
      }
    } catch (err) {
      if (generation !== state.generation) return
      this.logger.error('cannot load the share group state log: not coordinating its share partitions', { partition, leaderEpoch, error: (err as Error).message })
      state.status = 'inactive'
      this.drop(state)
      return
    }
    if (generation !== state.generation || this.stopped) return
    state.status = 'active'
    this.startPruning()
    if (records > 0) this.logger.info('loaded the share group state log', { partition, records, sharePartitions: state.shard.size, leaderEpoch, ms: Date.now() - started })
  }

  /** Resigned as leader of `partition` in `leaderEpoch` (absent: any): unless elected in a newer one, its states are dropped. */
  onResignation(partition: number, leaderEpoch?: number): void {
    const state = this.partitions.get(partition)
    if (!state || this.stopped) return
    if (leaderEpoch !== undefined && state.epoch !== null && state.epoch > leaderEpoch) return
    if (leaderEpoch !== undefined) state.epoch = leaderEpoch
    if (state.status === 'inactive') return
    this.logger.info('resigned as share coordinator', { partition, leaderEpoch, sharePartitions: state.shard.size })
    state.status = 'inactive'
    this.drop(state)
  }

  /** Deletes the records each coordinated partition's snapshots made redundant; answers how many partitions moved their log start offset. */
  pruneRecords(): number {
    let pruned = 0
    for (const [partition, state] of this.partitions) {
      if (state.status !== 'active') continue
      const offset = state.shard.lastRedundantOffset()
      const log = this.replicas.getLog({ topic: SHARE_GROUP_STATE_TOPIC, partition })
      if (offset === null || log === undefined || offset <= log.logStartOffset()) continue
      const bound = offset < log.highWatermark() ? offset : log.highWatermark()
      if (bound <= log.logStartOffset()) continue
      const r = this.replicas.deleteRecords({ topic: SHARE_GROUP_STATE_TOPIC, partition }, bound)
      if (r.errorCode === ErrorCode.NONE) pruned++
      else this.logger.warn('cannot prune the share group state log', { partition, offset: String(bound), errorCode: r.errorCode })
    }
    return pruned
  }

  private startPruning(): void {
    const every = this.options.pruneIntervalMs ?? DEFAULT_SHARE_COORDINATOR_STATE_TOPIC_PRUNE_INTERVAL_MS
    if (this.pruneTimer !== null || every <= 0 || this.stopped) return
    this.pruneTimer = setInterval(() => this.pruneRecords(), every)
    this.pruneTimer.unref()
  }

  stop(): void {
    this.stopped = true
    if (this.pruneTimer !== null) clearInterval(this.pruneTimer)
    this.pruneTimer = null
    for (const state of this.partitions.values()) {
      state.status = 'inactive'
      this.drop(state)
    }
  }

  initializeState(key: ShareStateKey, stateEpoch: number, startOffset: bigint): Promise<ShareStateResult<null>> {
    return this.run(key, (shard) => shard.initializeState(key, stateEpoch, startOffset))
  }

  readState(key: ShareStateKey, leaderEpoch: number): Promise<ShareStateResult<ReadStateData>> {
    return this.run(key, (shard) => shard.readState(key, leaderEpoch))
  }

  writeState(key: ShareStateKey, data: WriteStateData): Promise<ShareStateResult<null>> {
    return this.run(key, (shard) => shard.writeState(key, data))
  }

  deleteState(key: ShareStateKey): Promise<ShareStateResult<null>> {
    return this.run(key, (shard) => shard.deleteState(key))
  }

  readStateSummary(key: ShareStateKey): Promise<ShareStateResult<ReadStateSummaryData>> {
    return this.run(key, (shard) => shard.readStateSummary(key))
  }

  /** Runs one operation on the key's shard after the partition's earlier ones: its records written, then replayed. */
  private run<T>(key: ShareStateKey, op: (shard: ShareCoordinatorShard) => ShardResult<T>): Promise<ShareStateResult<T>> {
    const status = this.statusError(key)
    if (status !== ErrorCode.NONE) return Promise.resolve({ errorCode: status, errorMessage: null, data: null })
    const partition = this.partitionFor(key)
    const state = this.partitions.get(partition)!
    const generation = state.generation
    const result = state.queue.then(async (): Promise<ShareStateResult<T>> => {
      if (generation !== state.generation || state.status !== 'active') return { errorCode: ErrorCode.NOT_COORDINATOR, errorMessage: null, data: null }
      const r = op(state.shard)
      if (r.errorCode !== ErrorCode.NONE || r.records.length === 0) return { errorCode: r.errorCode, errorMessage: r.errorMessage, data: r.data }
      const { errorCode: appendError, firstOffset } = await this.appendAndWait(state, partition, r.records)
      if (generation !== state.generation || state.status !== 'active') return { errorCode: ErrorCode.NOT_COORDINATOR, errorMessage: null, data: null }
      if (appendError !== ErrorCode.NONE) {
        this.logger.warn('share group state not written', { partition, appendError })
        return { errorCode: coordinatorErrorOf(appendError, 'share'), errorMessage: null, data: null }
      }
      r.records.forEach((record, i) => state.shard.replay(record.key, record.value, firstOffset + BigInt(i)))
      return { errorCode: ErrorCode.NONE, errorMessage: null, data: r.data }
    })
    state.queue = result.catch(() => undefined)
    return result
  }

  private partition(partition: number): StatePartition {
    let p = this.partitions.get(partition)
    if (!p) this.partitions.set(partition, (p = new StatePartition(this.newShard())))
    return p
  }

  private newShard(): ShareCoordinatorShard {
    return new ShareCoordinatorShard({ snapshotUpdateRecordsPerSnapshot: this.options.snapshotUpdateRecordsPerSnapshot, topicPartitionExists: this.options.topicPartitionExists })
  }

  private drop(state: StatePartition): number {
    state.shard = this.newShard()
    for (const answer of [...state.waiting]) answer(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    return ++state.generation
  }

  private async appendAndWait(state: StatePartition, partition: number, records: readonly CoordinatorRecord[]): Promise<{ errorCode: number; firstOffset: bigint }> {
    const tp = { topic: SHARE_GROUP_STATE_TOPIC, partition }
    const nowMs = Date.now()
    let appended: AppendRecordsResult
    try {
      const batch = buildBatch(
        records.map((r) => ({ key: r.key, value: r.value, timestamp: BigInt(nowMs) })),
        { nowMs },
      )
      const result = this.replicas.appendRecords(tp, batch, ACKS_ALL, 'COORDINATOR')
      appended = result instanceof Promise ? await result : result
    } catch (err) {
      return { errorCode: kafkaErrorCodeOf(err), firstOffset: -1n }
    }
    if (appended.errorCode !== ErrorCode.NONE || appended.info === null) return { errorCode: appended.errorCode, firstOffset: -1n }
    const firstOffset = appended.info.firstOffset
    return new Promise((resolve) => {
      const answer = (code: number) => {
        if (!state.waiting.delete(answer)) return
        resolve({ errorCode: code, firstOffset })
      }
      state.waiting.add(answer)
      this.replicas.maybeAddDelayedProduce(ACKS_ALL, this.writeTimeoutMs, [{ ...tp, result: appended }], (results) => answer(results[0]!.errorCode))
    })
  }
}
