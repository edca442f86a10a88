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
 */
import { ErrorCode } from '../protocol/error-codes.js'
import type { TopicPartition } from '../replica/fetch-params.js'
import { AlterPartitionError, type AlterPartitionManager, type AlterPartitionRequest, type PartitionRegistration } from '../replica/partition-registration.js'
import type { BrokerRegistration } from './broker-registration.js'
import { BROKERS, SHUTDOWN, brokerKey, decode, type BrokerRecord, type ShutdownRecord } from './keys.js'
import type { MetadataStore } from './metadata-store.js'
import { casPartition, readPartition } from './partition-state.js'

export interface EtcdAlterPartitionManagerOptions {
  store: MetadataStore
  /** The leader's own registration (broker id and epoch). */
  registration: BrokerRegistration
}

export class EtcdAlterPartitionManager implements AlterPartitionManager {
  private readonly store: MetadataStore
  private readonly registration: BrokerRegistration

  constructor(options: EtcdAlterPartitionManagerOptions) {
    this.store = options.store
    this.registration = options.registration
  }

  async submit(tp: TopicPartition & { readonly topicId: Buffer }, request: AlterPartitionRequest): Promise<PartitionRegistration> {
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
      const next: PartitionRegistration = { replicas: cur.replicas, isr, leader: cur.leader, leaderEpoch: cur.leaderEpoch, partitionEpoch: cur.partitionEpoch + 1 }
      let written
      try {
        written = await casPartition(this.store, tp.topicId, tp.partition, stored.modRevision, next, [{ key: brokerKey(id), target: 'Mod', value: brokerEpoch }])
      } catch (e) {
        throw new AlterPartitionError(ErrorCode.REQUEST_TIMED_OUT, `${name}: etcd unreachable: ${(e as Error).message}`)
      }
      if (written !== null) return next
      if (attempt >= 5) throw new AlterPartitionError(ErrorCode.REQUEST_TIMED_OUT, `${name}: the registration kept changing`)
    }
  }

  /** Live brokers (with their epochs) and those in controlled shutdown, as etcd has them now. */
  private async eligibleBrokers(): Promise<{ epochs: Map<number, bigint>; shuttingDown: Set<number> }> {
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
