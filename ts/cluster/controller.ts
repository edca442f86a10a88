/**
 * The cluster's controller (Kafka's QuorumController with its ReplicationControlManager's
 * leader-election duties), elected through etcd instead of a quorum of our own.
 *
 * Election: every broker runs a Controller; while the `controller` key is absent each tries to
 * create it (transaction: create revision == 0) under its own registration lease, holding
 * {@link ControllerRecord}. The winner is the controller until its lease ends (it dies, is fenced,
 * or shuts down), when the key vanishes with the lease and the others try again. The controller
 * epoch is the key's create revision; every write of the controller compares it, so a deposed
 * controller that has not noticed yet writes nothing.
 *
 * Duties, all as compare-and-swap writes of partition registrations (ts/cluster/partition-state.ts,
 * up to `casBatchSize` partitions to a transaction; a transaction that fails is redone one
 * partition at a time, each retried on conflict with a fresh read, so a leader's concurrent
 * AlterPartition is never lost):
 * - a broker vanishes (its lease expired) or comes back as another process (a new incarnation):
 *   it leaves the ISR of every partition (unless it is the last member: Kafka without ELR keeps the
 *   last ISR), and every partition it led gets the first replica (assignment order) that is in the
 *   ISR, alive and not shutting down; none -> leader -1 (`unclean.leader.election.enable=false`:
 *   never a replica outside the ISR). A leader change bumps the leader epoch; every change bumps
 *   the partition epoch.
 * - a broker registers: partitions without a leader whose ISR holds it get it as leader.
 * - controlled shutdown (`shutdown/<id>`): the broker leaves every ISR it is not the last member
 *   of, and its leadership moves to another ISR member (none: leader -1, as Kafka does); once a
 *   pass finds nothing left to change the request is marked done, which the broker waits for.
 */
import { EventEmitter } from 'node:events'
import { ErrorCode } from '../protocol/error-codes.js'
import { NO_LEADER, type PartitionRegistration } from '../replica/partition-registration.js'
import type { BrokerRegistration } from './broker-registration.js'
import { ClusterMetadataError } from './errors.js'
import { CONTROLLER, encode, shutdownKey, type ControllerRecord, type ShutdownRecord } from './keys.js'
import type { MetadataCache, PartitionState } from './metadata-cache.js'
import { compare, type MetadataStore } from './metadata-store.js'
import { casBatchSize, casPartition, casPartitions, readPartition, sameList, type Guard } from './partition-state.js'

export interface ControllerOptions {
  store: MetadataStore
  registration: BrokerRegistration
  /** This broker's metadata cache (started by the caller). */
  cache: MetadataCache
}

export interface ControllerEvents {
  /** This broker became the controller at this epoch. */
  activated: [controllerEpoch: bigint]
  /** This broker is no longer the controller. */
  deactivated: []
  /** A write or election failed (etcd away, usually); retried on the next change. */
  controllerError: [error: Error]
}

/**
 * The registration `reg` should have given the live brokers and those shutting down (Kafka's
 * PartitionChangeBuilder for fencing, controlled shutdown and unfencing); null: no change.
 */
export function electLeader(reg: PartitionRegistration, isAlive: (id: number) => boolean, isShuttingDown: (id: number) => boolean): PartitionRegistration | null {
  let isr = reg.isr.filter((b) => isAlive(b) && !isShuttingDown(b))
  if (isr.length === 0) isr = [...reg.isr] // the last ISR stays (no unclean election)
  const eligible = (b: number) => isAlive(b) && !isShuttingDown(b) && isr.includes(b)
  const leader = eligible(reg.leader) ? reg.leader : (reg.replicas.find(eligible) ?? NO_LEADER)
  if (leader === reg.leader && sameList(isr, reg.isr)) return null
  return {
    replicas: reg.replicas,
    isr,
    leader,
    leaderEpoch: leader === reg.leader ? reg.leaderEpoch : reg.leaderEpoch + 1,
    partitionEpoch: reg.partitionEpoch + 1,
  }
}

export class Controller extends EventEmitter<ControllerEvents> {
  private readonly store: MetadataStore
  private readonly registration: BrokerRegistration
  private readonly cache: MetadataCache
  private activeEpoch: bigint | null = null
  private running = false
  private dirty = false
  private electing = false
  private closed = false
  /** Incarnation of each broker as last seen by this controller: a change is a restart. */
  private readonly incarnations = new Map<number, string>()
  private readonly onChange = () => this.evaluate()

  constructor(options: ControllerOptions) {
    super()
    this.store = options.store
    this.registration = options.registration
    this.cache = options.cache
  }

  /** Starts taking part in elections (and controlling when elected). */
  start(): void {
    this.cache.on('change', this.onChange)
    this.registration.on('registered', this.onChange)
    this.registration.on('fenced', this.onChange)
    this.evaluate()
  }

  /** True while this broker is the controller. */
  get isActive(): boolean {
    return this.activeEpoch !== null
  }

  /** The controller epoch while active, else null. */
  get epoch(): bigint | null {
    return this.activeEpoch
  }

  /** Stops; the controller key (if held) goes with the registration's lease, which the caller ends. */
  close(): void {
    this.closed = true
    this.cache.off('change', this.onChange)
    this.registration.off('registered', this.onChange)
    this.registration.off('fenced', this.onChange)
    if (this.activeEpoch !== null) {
      this.activeEpoch = null
      this.emit('deactivated')
    }
  }

  private evaluate(): void {
    if (this.closed) return
    const c = this.cache.controller()
    const mine = c !== null && !this.registration.fenced && c.incarnationId === this.registration.incarnationId && c.leaseId === this.registration.leaseId
    if (mine && this.activeEpoch !== c.epoch) {
      this.activeEpoch = c.epoch
      this.incarnations.clear()
      for (const b of this.cache.brokerInfos()) this.incarnations.set(b.id, b.incarnationId)
      this.emit('activated', c.epoch)
    } else if (!mine && this.activeEpoch !== null) {
      this.activeEpoch = null
      this.emit('deactivated')
    }
    if (c === null) void this.elect()
    if (this.activeEpoch !== null) this.schedule()
  }

  private async elect(): Promise<void> {
    const leaseId = this.registration.leaseId
    if (this.electing || leaseId === null || this.closed) return
    this.electing = true
    try {
      const record: ControllerRecord = { brokerId: this.registration.brokerId, incarnationId: this.registration.incarnationId }
      await this.store.txn({ compare: [compare.createRevision(CONTROLLER, '==', 0)], success: [{ type: 'put', key: CONTROLLER, value: encode(record), lease: leaseId }] })
    } catch (e) {
      this.emit('controllerError', e as Error)
    } finally {
      this.electing = false
    }
  }

  /** Runs a reconciliation pass now, or again right after the one running. */
  private schedule(): void {
    if (this.running) {
      this.dirty = true
      return
    }
    this.running = true
    void (async () => {
      try {
        do {
          this.dirty = false
          await this.pass()
        } while (this.dirty && this.activeEpoch !== null && !this.closed)
      } catch (e) {
        this.emit('controllerError', e as Error)
        // etcd away: the next change (the cache's reload or resume) schedules another pass.
        setTimeout(() => {
          if (this.activeEpoch !== null) this.schedule()
        }, 500).unref()
      } finally {
        this.running = false
      }
    })()
  }

  /** One reconciliation of every partition with the brokers' liveness. */
  private async pass(): Promise<void> {
    const epoch = this.activeEpoch
    if (epoch === null) return
    const store = this.store
    const guard: Guard[] = [{ key: CONTROLLER, target: 'Create', value: epoch }]

    // A broker that came back as another process is dead to this pass: it lost its state.
    const restarted = new Set<number>()
    for (const b of this.cache.brokerInfos()) {
      const seen = this.incarnations.get(b.id)
      if (seen !== undefined && seen !== b.incarnationId) restarted.add(b.id)
    }
    for (const id of [...this.incarnations.keys()]) if (!this.cache.isAlive(id)) this.incarnations.delete(id)
    const shutdownRequests = this.cache.shutdownRequests().filter((r) => this.cache.broker(r.brokerId)?.incarnationId === r.incarnationId)
    const shuttingDown = new Set(shutdownRequests.map((r) => r.brokerId))
    const isAlive = (id: number) => this.cache.isAlive(id) && !restarted.has(id)
    const isShuttingDown = (id: number) => shuttingDown.has(id)

    let changed = false
    // The changes as the cache has them, written in bulk (a broker's failure or shutdown touches
    // thousands of partitions: one transaction, one revision and one watch batch per
    // casBatchSize of them); a batch whose transaction fails (a leader's AlterPartition came first,
    // or we are deposed) is done again one partition at a time, each read afresh.
    const writes: Array<{ p: PartitionState; next: PartitionRegistration }> = []
    for (const p of this.cache.partitionStates()) {
      const next = electLeader(p.registration, isAlive, isShuttingDown)
      if (next) writes.push({ p, next })
    }
    const batchSize = casBatchSize(guard)
    for (let i = 0; i < writes.length; i += batchSize) {
      if (this.activeEpoch !== epoch) return
      const batch = writes.slice(i, i + batchSize)
      const written = await casPartitions(
        store,
        batch.map(({ p, next }) => ({ topicId: p.topicId, partition: p.partition, expected: p.modRevision, next })),
        guard,
      )
      if (written !== null) {
        changed = true
        continue
      }
      for (const { p } of batch) {
        const one = await this.reconcilePartition(p, epoch, guard, isAlive, isShuttingDown)
        if (one === 'deposed') return
        if (one === 'changed') changed = true
      }
    }
    for (const id of restarted) this.incarnations.set(id, this.cache.broker(id)!.incarnationId)
    for (const b of this.cache.brokerInfos()) if (!this.incarnations.has(b.id)) this.incarnations.set(b.id, b.incarnationId)
    if (restarted.size > 0) this.dirty = true // now hand them back what they can lead

    // Nothing left to move for the brokers shutting down: tell them.
    if (!changed && restarted.size === 0) {
      for (const r of shutdownRequests) {
        if (r.done) continue
        const done: ShutdownRecord = { brokerId: r.brokerId, incarnationId: r.incarnationId, done: true }
        const key = shutdownKey(r.brokerId)
        await store.txn({
          compare: [compare.modRevision(key, '==', r.modRevision), compare.createRevision(CONTROLLER, '==', epoch)],
          success: [{ type: 'put', key, value: encode(done), ignoreLease: true }],
        })
      }
    } else {
      this.dirty = true
    }
  }

  /** One partition's change, compare-and-swapped until it lands or is no longer needed (read again after each lost race). */
  private async reconcilePartition(
    p: PartitionState,
    epoch: bigint,
    guard: Guard[],
    isAlive: (id: number) => boolean,
    isShuttingDown: (id: number) => boolean,
  ): Promise<'changed' | 'unchanged' | 'deposed'> {
    const store = this.store
    let current: { registration: PartitionRegistration; modRevision: bigint } | null = p
    for (let attempt = 0; current; attempt++) {
      const next = electLeader(current.registration, isAlive, isShuttingDown)
      if (!next) return 'unchanged'
      if (this.activeEpoch !== epoch) return 'deposed'
      const written = await casPartition(store, p.topicId, p.partition, current.modRevision, next, guard)
      if (written !== null) return 'changed'
      if (attempt >= 20) throw new ClusterMetadataError(ErrorCode.REQUEST_TIMED_OUT, `controller: ${p.topic}-${p.partition} kept changing under 20 attempts`)
      // Someone wrote first (a leader's AlterPartition, or we are deposed): read again.
      const c = this.cache.controller()
      if (!c || c.epoch !== epoch) {
        const fresh = await store.get(CONTROLLER)
        if (fresh?.createRevision !== epoch) return 'deposed'
      }
      current = await readPartition(store, p.topicId, p.partition)
    }
    return 'unchanged'
  }
}
