/**
 * Kafka's `AlterPartitionManager` on etcd: a partition's leader changes its ISR by a
 * compare-and-swap of the partition's registration (ts/cluster/partition-state.ts), checked as
 * Kafka's controller checks an AlterPartition (ReplicationControlManager.alterPartition):
 *
 * - the partition must exist: UNKNOWN_TOPIC_OR_PARTITION;
 * - this broker must still be registered at its broker epoch: STALE_BROKER_EPOCH (a fenced broker
 *   changes nothing; the write also compares the registration's mod revision);
 * - the request's leader epoch must be the partition's: FENCED_LEADER_EPOCH; and this broker its
 *   leader: NOT_LEADER_OR_FOLLOWER;
 * - the request's partition epoch must be the partition's: INVALID_UPDATE_VERSION (the view the
 *   leader computed the ISR from is stale; it retries once the newer registration reaches it);
 * - the ISR must hold the leader and only replicas, once each: INVALID_REQUEST;
 * - every member must be alive and not in controlled shutdown: INELIGIBLE_REPLICA.
 *
 * A write that loses the race (the registration moved between the read and the write) is
 * checked again against the newer registration, which then refuses it with the code above.
 * Changes submitted while a write is under way go together in the next transaction (a broker
 * rejoining thousands of ISRs after a restart asks for them all at once).
 */
import { ErrorCode } from '../protocol/error-codes.js'
import type { TopicPartition } from '../replica/fetch-params.js'
import { AlterPartitionError, type AlterPartitionManager, type AlterPartitionRequest, type PartitionRegistration } from '../replica/partition-registration.js'
import type { BrokerRegistration } from './broker-registration.js'
import { BROKERS, SHUTDOWN, brokerKey, decode, type BrokerRecord, type ShutdownRecord } from './keys.js'
import type { MetadataStore } from './metadata-store.js'
import { casBatchSize, casPartition, casPartitions, readPartition, type PartitionWrite, type StoredPartition } from './partition-state.js'

export interface EtcdAlterPartitionManagerOptions {
  store: MetadataStore
  /** The leader's own registration (broker id and epoch). */
  registration: BrokerRegistration
}

interface Pending {
  tp: TopicPartition & { readonly topicId: Buffer }
  request: AlterPartitionRequest
  resolve: (registration: PartitionRegistration) => void
  reject: (error: unknown) => void
}

type Eligible = { epochs: Map<number, bigint>; shuttingDown: Set<number> }

export class EtcdAlterPartitionManager implements AlterPartitionManager {
  private readonly store: MetadataStore
  private readonly registration: BrokerRegistration
  /** Requests waiting for the batch under way (Kafka's AlterPartitionManager sends what is queued in one request). */
  private readonly queue: Pending[] = []
  private flushing = false

  constructor(options: EtcdAlterPartitionManagerOptions) {
    this.store = options.store
    this.registration = options.registration
  }

  /**
   * Queues the change; the changes queued while a batch is written go together in the next one:
   * their reads side by side, their writes in one transaction (one revision, one watch batch),
   * at most `casBatchSize` of them. A batch whose transaction fails (a registration moved
   * meanwhile) is done again one change at a time, each read and checked afresh.
   */
  submit(tp: TopicPartition & { readonly topicId: Buffer }, request: AlterPartitionRequest): Promise<PartitionRegistration> {
    return new Promise((resolve, reject) => {
      this.queue.push({ tp, request, resolve, reject })
      if (!this.flushing) void this.flush()
    })
  }

  private async flush(): Promise<void> {
    this.flushing = true
    try {
      while (this.queue.length > 0) {
        // One change per partition in a transaction (etcd refuses a key written twice in one).
        const batch: Pending[] = []
        const keys = new Set<string>()
        const size = casBatchSize([{ key: '', target: 'Mod', value: 0n }])
        for (let i = 0; i < this.queue.length && batch.length < size;) {
          const item = this.queue[i]!
          const key = `${item.tp.topicId.toString('base64url')}/${item.tp.partition}`
          if (keys.has(key)) {
            i++
            continue
          }
          keys.add(key)
          batch.push(item)
          this.queue.splice(i, 1)
        }
        await this.submitBatch(batch)
      }
    } finally {
      this.flushing = false
    }
  }

  private async submitBatch(batch: Pending[]): Promise<void> {
    const brokerEpoch = this.registration.brokerEpoch
    const id = this.registration.brokerId
    if (batch.length === 1 || brokerEpoch === null) {
      for (const item of batch) await this.submitOne(item.tp, item.request).then(item.resolve, item.reject)
      return
    }
    let eligible: Eligible
    let stored: Array<StoredPartition | null>
    try {
      ;[eligible, stored] = await Promise.all([this.eligibleBrokers(), Promise.all(batch.map((item) => readPartition(this.store, item.tp.topicId, item.tp.partition)))])
    } catch (e) {
      for (const item of batch) item.reject(new AlterPartitionError(ErrorCode.REQUEST_TIMED_OUT, `${item.tp.topic}-${item.tp.partition}: etcd unreachable: ${(e as Error).message}`))
      return
    }
    const ready: Array<{ item: Pending; write: PartitionWrite }> = []
    batch.forEach((item, i) => {
      try {
        const base = this.checkedBase(item, stored[i] ?? null, eligible, brokerEpoch)
        ready.push({ item, write: { topicId: item.tp.topicId, partition: item.tp.partition, expected: base.modRevision, next: next(base.registration, item.request) } })
      } catch (e) {
        item.reject(e)
      }
    })
    if (ready.length === 0) return
    let written
    try {
      written = await casPartitions(
        this.store,
        ready.map((r) => r.write),
        [{ key: brokerKey(id), target: 'Mod', value: brokerEpoch }],
      )
    } catch (e) {
      for (const { item } of ready) item.reject(new AlterPartitionError(ErrorCode.REQUEST_TIMED_OUT, `${item.tp.topic}-${item.tp.partition}: etcd unreachable: ${(e as Error).message}`))
      return
    }
    if (written !== null) {
      for (const { item, write } of ready) item.resolve(write.next)
      return
    }
    for (const { item } of ready) await this.submitOne(item.tp, item.request).then(item.resolve, item.reject)
  }

  /** One change on its own: read, checked, compare-and-swapped; a lost race is checked again against the newer registration. */
  private async submitOne(tp: TopicPartition & { readonly topicId: Buffer }, request: AlterPartitionRequest): Promise<PartitionRegistration> {
    const name = `${tp.topic}-${tp.partition}`
    for (let attempt = 0; ; attempt++) {
      const brokerEpoch = this.registration.brokerEpoch
      const id = this.registration.brokerId
      if (brokerEpoch === null) throw new AlterPartitionError(ErrorCode.STALE_BROKER_EPOCH, `${name}: broker ${id} is fenced (not registered)`)
      let stored, eligible
      try {
        ;[stored, eligible] = await Promise.all([readPartition(this.store, tp.topicId, tp.partition), this.eligibleBrokers()])
      } catch (e) {
        throw new AlterPartitionError(ErrorCode.REQUEST_TIMED_OUT, `${name}: etcd unreachable: ${(e as Error).message}`)
      }
      const base = this.checkedBase({ tp, request }, stored, eligible, brokerEpoch)
      const registration = next(base.registration, request)
      let written
      try {
        written = await casPartition(this.store, tp.topicId, tp.partition, base.modRevision, registration, [{ key: brokerKey(id), target: 'Mod', value: brokerEpoch }])
      } catch (e) {
        throw new AlterPartitionError(ErrorCode.REQUEST_TIMED_OUT, `${name}: etcd unreachable: ${(e as Error).message}`)
      }
      if (written !== null) return registration
      if (attempt >= 5) throw new AlterPartitionError(ErrorCode.REQUEST_TIMED_OUT, `${name}: the registration kept changing`)
    }
  }

  /** The stored registration a change applies to, once it passes Kafka's checks (see the module comment); else throws their AlterPartitionError. */
  private checkedBase(item: Pick<Pending, 'tp' | 'request'>, stored: StoredPartition | null, eligible: Eligible, brokerEpoch: bigint): StoredPartition {
    const { tp, request } = item
    const name = `${tp.topic}-${tp.partition}`
    const id = this.registration.brokerId
    if (!stored) throw new AlterPartitionError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `${name}: no such partition (topic id ${tp.topicId.toString('base64url')})`)
    const cur = stored.registration
    if (eligible.epochs.get(id) !== brokerEpoch) {
      throw new AlterPartitionError(ErrorCode.STALE_BROKER_EPOCH, `${name}: broker ${id}'s registration at epoch ${brokerEpoch} is gone`)
    }
    if (request.leaderEpoch !== cur.leaderEpoch) {
      throw new AlterPartitionError(ErrorCode.FENCED_LEADER_EPOCH, `${name}: leader epoch ${request.leaderEpoch} is not the partition's (${cur.leaderEpoch})`)
    }
    if (cur.leader !== id) throw new AlterPartitionError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `${name}: broker ${id} is not the leader (${cur.leader})`)
    if (request.partitionEpoch !== cur.partitionEpoch) {
      throw new AlterPartitionError(ErrorCode.INVALID_UPDATE_VERSION, `${name}: partition epoch ${request.partitionEpoch} is not the partition's (${cur.partitionEpoch})`)
    }
    const isr = [...request.isr]
    if (!isr.includes(id) || new Set(isr).size !== isr.length || isr.some((b) => !cur.replicas.includes(b))) {
      throw new AlterPartitionError(ErrorCode.INVALID_REQUEST, `${name}: ISR [${isr}] must hold the leader ${id} and only replicas [${cur.replicas}], once each`)
    }
    const ineligible = isr.filter((b) => !eligible.epochs.has(b) || eligible.shuttingDown.has(b))
    if (ineligible.length > 0) {
      throw new AlterPartitionError(ErrorCode.INELIGIBLE_REPLICA, `${name}: replicas [${ineligible}] are not alive or are shutting down`)
    }
    return stored
  }

  /** Live brokers (with their epochs) and those in controlled shutdown, as etcd has them now. */
  private async eligibleBrokers(): Promise<Eligible> {
    const [brokers, shutdowns] = await Promise.all([this.store.range(BROKERS), this.store.range(SHUTDOWN)])
    const epochs = new Map<number, bigint>()
    const incarnations = new Map<number, string>()
    for (const kv of brokers.kvs) {
      const r = decode<BrokerRecord>(kv.value)
      epochs.set(r.id, kv.modRevision)
      incarnations.set(r.id, r.incarnationId)
    }
    const shuttingDown = new Set<number>()
    for (const kv of shutdowns.kvs) {
      const r = decode<ShutdownRecord>(kv.value)
      if (incarnations.get(r.brokerId) === r.incarnationId) shuttingDown.add(r.brokerId)
    }
    return { epochs, shuttingDown }
  }
}

/** The registration an accepted change writes: the request's ISR, partition epoch + 1. */
function next(cur: PartitionRegistration, request: AlterPartitionRequest): PartitionRegistration {
  return { replicas: cur.replicas, isr: [...request.isr], leader: cur.leader, leaderEpoch: cur.leaderEpoch, partitionEpoch: cur.partitionEpoch + 1 }
}
