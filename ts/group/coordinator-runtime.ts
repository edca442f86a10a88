/**
 * Whether this broker coordinates the groups of one partition of `__consumer_offsets`, and the
 * load that makes it so: the election and loading state of that partition (a slice of Kafka's
 * `CoordinatorRuntime`: one coordinator context's epoch and state, its load on election and its
 * unload on resignation; ./group-coordinator-service.ts keeps one per partition).
 *
 * Election (Kafka's `onElection` / `onResignation`, driven by the replica manager's
 * `onLeadershipChange` through the group coordinator service; a standalone broker elects itself
 * for every partition at start): the broker that leads `__consumer_offsets-N` coordinates the
 * groups whose id hashes to N (ts/coordinator/partition-for.ts). Elected in a
 * leader epoch newer than any it saw, the coordinator loads the offsets log (groups known by
 * their offsets come back Empty); until it is loaded, group requests are answered
 * COORDINATOR_LOAD_IN_PROGRESS (a Heartbeat NONE, as Kafka answers it blindly). Resigning (in
 * an epoch at least its own, or with none given) drops every group and the offsets: held
 * JoinGroup and SyncGroup answers, and every later group request, get NOT_COORDINATOR, and the
 * clients look the coordinator up again. Before any election the coordinator is not one either.
 */
import type { Logger } from '../logger.js'
import { ErrorCode } from '../protocol/error-codes.js'
import { OFFSETS_PARTITION } from './offsets-topic.js'

/** What loading and unloading do, for the group coordinator. */
export interface CoordinatorRuntimeHooks {
  /**
   * Starts loading the offsets log as its leader in `leaderEpoch`: true once loaded, false when
   * an unload or another load came first; rejects when the log cannot be read.
   */
  load(leaderEpoch: number): Promise<boolean>
  /** The load completed; the coordinator serves once this returns. */
  loaded(): void
  /** Resigned, or the load failed: every group and the offsets are dropped. */
  unload(): void
  /** How many groups are known (for the log). */
  groupCount(): number
}

export class CoordinatorRuntime {
  private readonly hooks: CoordinatorRuntimeHooks
  private readonly logger: Logger
  /** The partition of `__consumer_offsets` whose elections count; others are ignored. */
  private readonly partition: number
  private stopped = false
  /** Not the coordinator (never elected, or resigned), loading the offsets log, or serving. */
  private status: 'inactive' | 'loading' | 'active' = 'inactive'
  /** The newest leader epoch of the offsets partition seen in an election or resignation (Kafka's `epochForPartitionId`). */
  private epoch: number | null = null
  /** The load under way, while loading. */
  private loading: Promise<void> | null = null

  constructor(hooks: CoordinatorRuntimeHooks, logger: Logger, partition: number = OFFSETS_PARTITION) {
    this.hooks = hooks
    this.logger = logger
    this.partition = partition
  }

  /**
   * The error that answers every group request while this broker does not coordinate the
   * groups: COORDINATOR_LOAD_IN_PROGRESS while it loads the offsets log, NOT_COORDINATOR when it
   * is not (or no longer) the coordinator or is stopped; NONE when it serves.
   */
  statusError(): number {
    if (this.stopped || this.status === 'inactive') return ErrorCode.NOT_COORDINATOR
    return this.status === 'loading' ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE
  }

  /**
   * Kafka's `onElection`: this broker leads the offsets partition in `leaderEpoch`. A newer
   * epoch than any seen starts the load, unless one is loaded or loading already (then only the
   * epoch moves, as Kafka's coordinator runtime does); an older or equal one is ignored.
   * Resolves once the load under way ended (loaded, abandoned or failed: a failure is logged,
   * and the coordinator stays inactive until the next election).
   */
  onElection(partition: number, leaderEpoch: number): Promise<void> {
    if (partition !== this.partition || this.stopped) return Promise.resolve()
    if (this.epoch !== null && leaderEpoch <= this.epoch) {
      this.logger.warn('ignored an election as group coordinator: not a newer epoch', { partition, leaderEpoch, currentEpoch: this.epoch })
      return this.loading ?? Promise.resolve()
    }
    this.epoch = leaderEpoch
    if (this.status !== 'inactive') return this.loading ?? Promise.resolve()
    this.status = 'loading'
    this.logger.info('elected group coordinator; loading the offsets log', { partition, leaderEpoch })
    const loading: Promise<void> = this.hooks.load(leaderEpoch).then(
      (loaded) => {
        if (!loaded || this.loading !== loading) return
        this.loading = null
        this.hooks.loaded()
        this.status = 'active'
      },
      (err: Error) => {
        if (this.loading !== loading) return
        this.logger.error('cannot load the offsets log: not coordinating the groups', { partition, leaderEpoch, error: err.message })
        this.resign()
      },
    )
    this.loading = loading
    return loading
  }

  /**
   * Kafka's `onResignation`: this broker no longer leads the offsets partition. Unless the
   * coordinator was elected in a newer epoch than `leaderEpoch` (absent: any), every group is
   * dropped (held JoinGroup and SyncGroup answers go out NOT_COORDINATOR) and the offsets with them.
   */
  onResignation(partition: number, leaderEpoch?: number): void {
    if (partition !== this.partition || this.stopped) return
    if (leaderEpoch !== undefined && this.epoch !== null && this.epoch > leaderEpoch) {
      this.logger.warn('ignored a resignation as group coordinator: elected in a newer epoch', { partition, leaderEpoch, currentEpoch: this.epoch })
      return
    }
    if (leaderEpoch !== undefined) this.epoch = leaderEpoch
    if (this.status === 'inactive') return
    this.logger.info('resigned as group coordinator', { partition, leaderEpoch, groups: this.hooks.groupCount() })
    this.resign()
  }

  /** No more elections or resignations; every group request is answered NOT_COORDINATOR. */
  stop(): void {
    this.stopped = true
  }

  private resign(): void {
    this.status = 'inactive'
    this.loading = null
    this.hooks.unload()
  }
}
