/**
 * A group coordinator over a fresh data dir, with a hand-driven clock and no sweep timer: its
 * offsets go through a standalone replica manager, and it is elected as a standalone broker's.
 * With `cleaner` the log manager has a log cleaner without threads: a test runs its rounds
 * (`cleanOffsetsLog`), over an offsets log of small segments.
 */
import { afterEach } from 'vitest'
import { GroupCoordinator } from '../../ts/group/group-coordinator.js'
import type { TopicsImage } from '../../ts/group/consumer/consumer-group-manager.js'
import type { ConsumerGroupMigrationPolicy } from '../../ts/group/consumer/classic-group-migration.js'
import type { JoinGroupParams } from '../../ts/group/group-metadata-manager.js'
import type { JoinResult, SyncResult } from '../../ts/group/member-metadata.js'
import { OffsetStore, type OffsetsReplicaManager } from '../../ts/group/offset-store.js'
import { OFFSETS_PARTITION, OFFSETS_TOPIC, offsetsLogConfig } from '../../ts/group/offsets-topic.js'
import { silentLogger } from '../../ts/logger.js'
import { PARTITION_LEADER_EPOCH } from '../../ts/replica/leader-epoch.js'
import { ReplicaManager } from '../../ts/replica/replica-manager.js'
import type { BackendName } from '../../ts/storage/backends.js'
import { LogManager } from '../../ts/storage/log-manager.js'
import { DEFAULT_CLEANER_CONFIG } from '../../ts/storage/log-cleaner.js'
import type { LogConfig } from '../../ts/storage/types.js'
import type { Log } from '../../ts/storage/log.js'
import { tempDir } from '../helpers/tmp.js'

const open: Array<{ logManager: LogManager; replicaManager: ReplicaManager }> = []

afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.replicaManager.shutdown()
    await o.logManager.close()
  }
})

export const GROUP = 'group'
export const SESSION_TIMEOUT_MS = 10_000
export const REBALANCE_TIMEOUT_MS = 30_000

export interface Harness {
  coordinator: GroupCoordinator
  logManager: LogManager
  replicaManager: ReplicaManager
  dataDir: string
  /** Moves the clock on and runs the sweep, as the periodic timer would. */
  advance(ms: number): void
  /** A JoinGroup with test defaults (v4+ unless `requireKnownMemberId: false`). */
  join(p?: Partial<JoinGroupParams>): Promise<JoinResult>
  /** Joins a new member through MEMBER_ID_REQUIRED; resolves to its pending second join. */
  joinNew(p?: Partial<JoinGroupParams>): Promise<{ memberId: string; joined: Promise<JoinResult> }>
  sync(memberId: string, generationId: number, assignments?: Array<{ memberId: string; assignment: Buffer }>): Promise<SyncResult>
  /**
   * Runs cleaner rounds (on the first dirty section past the active segment, the active segment
   * rolled first) until one finds nothing to clean; how many ran. Needs `cleaner`.
   */
  cleanOffsetsLog(nowMs?: number): Promise<number>
  /** Closes the logs and opens a new coordinator over the same data dir (with these options changed). */
  restart(overrides?: Partial<HarnessOptions>): Promise<Harness>
}

export interface HarnessOptions {
  initialRebalanceDelayMs?: number
  dataDir?: string
  /**
   * A log cleaner (no threads: `cleanOffsetsLog` runs its rounds) and the offsets log compacted
   * with these settings over offsetsLogConfig's; small segments and min.cleanable.dirty.ratio 0
   * unless given.
   */
  cleaner?: Partial<LogConfig>
  backend?: BackendName
  /** Elect the coordinator (as a standalone broker's) before returning; default true. */
  elect?: boolean
  /** What the offset store sees of the replica manager (a test wraps it to inject failures). */
  replicas?: (replicaManager: ReplicaManager) => OffsetsReplicaManager
  /** The topics consumer groups (KIP-848) subscribe to. */
  topics?: TopicsImage
  /** group.consumer.regex.refresh.interval.ms (the coordinator's default when not given). */
  consumerGroupRegexRefreshIntervalMs?: number
  /** group.consumer.migration.policy (the coordinator's default, bidirectional, when not given). */
  consumerGroupMigrationPolicy?: ConsumerGroupMigrationPolicy
}

export async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = options.dataDir ?? tempDir('ferrolog-group-')
  const offsetsConfig: Partial<LogConfig> = options.cleaner ? { ...offsetsLogConfig(1024), minCleanableDirtyRatio: 0, ...options.cleaner } : offsetsLogConfig()
  const logManager = await LogManager.open({
    dataDir,
    backend: options.backend ?? 'js',
    logger: silentLogger,
    retentionCheckIntervalMs: 0,
    checkpointIntervalMs: 0,
    topicConfig: (topic) => (topic === OFFSETS_TOPIC ? offsetsConfig : undefined),
    cleaner: options.cleaner ? { ...DEFAULT_CLEANER_CONFIG, numThreads: 0, dedupeBufferSize: 1024 * 1024 } : undefined,
  })
  const replicaManager = new ReplicaManager(logManager, { brokerId: 0, logger: silentLogger })
  const opened = { logManager, replicaManager }
  open.push(opened)
  let now = 1_000_000
  const coordinator = new GroupCoordinator(
    new OffsetStore(options.replicas?.(replicaManager) ?? replicaManager, silentLogger),
    {
      initialRebalanceDelayMs: options.initialRebalanceDelayMs ?? 0,
      minSessionTimeoutMs: 1000,
      maxSessionTimeoutMs: 300_000,
      sweepIntervalMs: 0,
      clock: () => now,
      topics: options.topics,
      consumerGroupRegexRefreshIntervalMs: options.consumerGroupRegexRefreshIntervalMs,
      consumerGroupMigrationPolicy: options.consumerGroupMigrationPolicy,
    },
    silentLogger,
  )
  await logManager.getOrCreateLog(OFFSETS_TOPIC, OFFSETS_PARTITION)
  if (options.elect ?? true) await coordinator.onElection(OFFSETS_PARTITION, PARTITION_LEADER_EPOCH)
  const h: Harness = {
    coordinator,
    logManager,
    replicaManager,
    dataDir,
    advance(ms) {
      now += ms
      coordinator.sweep()
    },
    join: (p = {}) =>
      coordinator.joinGroup({
        groupId: GROUP,
        memberId: '',
        groupInstanceId: null,
        clientId: 'client',
        clientHost: '/127.0.0.1',
        sessionTimeoutMs: SESSION_TIMEOUT_MS,
        rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: Buffer.from('subscription') }],
        requireKnownMemberId: true,
        ...p,
      }),
    async joinNew(p = {}) {
      const first = await h.join({ ...p, memberId: '' })
      return { memberId: first.memberId, joined: h.join({ ...p, memberId: first.memberId }) }
    },
    sync: (memberId, generationId, assignments = []) => coordinator.syncGroup({ groupId: GROUP, generationId, memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments }),
    async cleanOffsetsLog(nowMs) {
      const cleaner = logManager.cleaner
      if (!cleaner) throw new Error('the harness has no cleaner (options.cleaner)')
      logManager.getLog(OFFSETS_TOPIC, OFFSETS_PARTITION)!.roll()
      let rounds = 0
      while (rounds < 100 && (await cleaner.cleanFilthiestLog(0, nowMs))) rounds++
      return rounds
    },
    async restart(overrides = {}) {
      coordinator.stop()
      await coordinator.offsets.idle()
      open.splice(open.indexOf(opened), 1)
      await replicaManager.shutdown()
      await logManager.close()
      return harness({ ...options, ...overrides, dataDir })
    },
  }
  return h
}

/** Whether a promise has settled, after letting pending callbacks run. */
export async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false
  void promise.then(() => (settled = true))
  await new Promise((resolve) => setImmediate(resolve))
  return settled
}

/** Two members in a Stable group: the leader's and the follower's ids, and the generation. */
export async function stableGroupOfTwo(h: Harness): Promise<{ leader: string; follower: string; generationId: number }> {
  const a = await h.joinNew()
  const first = await a.joined
  await h.sync(a.memberId, first.generationId, [{ memberId: a.memberId, assignment: Buffer.from('all') }])
  const b = await h.joinNew()
  const aRejoin = h.join({ memberId: a.memberId })
  const [aJoin, bJoin] = await Promise.all([aRejoin, b.joined])
  const leader = aJoin.leader
  const follower = leader === a.memberId ? b.memberId : a.memberId
  const syncs = [
    h.sync(leader, aJoin.generationId, [
      { memberId: leader, assignment: Buffer.from('L') },
      { memberId: follower, assignment: Buffer.from('F') },
    ]),
    h.sync(follower, bJoin.generationId),
  ]
  await Promise.all(syncs)
  return { leader, follower, generationId: aJoin.generationId }
}

/** The offsets log's records from its start (all of them, control batches aside), its segments and their bytes. */
export function offsetsLogShape(log: Log): { records: number; offsets: bigint[]; segments: number; bytes: number } {
  const offsets: bigint[] = []
  for (let at = log.logStartOffset(); at < log.logEndOffset();) {
    const batches = log.readBatches(at, { maxBytes: 1 << 20, isolation: 'LOG_END' })
    if (batches.length === 0) break
    for (const batch of batches) {
      if (!batch.isControl) for (const r of batch.records) if (r.offset >= at) offsets.push(r.offset)
      at = batch.lastOffset + 1n
    }
  }
  const segments = log.segments()
  return { records: offsets.length, offsets, segments: segments.length, bytes: segments.reduce((n, s) => n + s.size, 0) }
}
