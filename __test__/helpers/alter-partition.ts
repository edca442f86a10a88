/**
 * An in-process stand-in for the cluster metadata's AlterPartitionManager: registrations in a Map,
 * changed by the compare-and-swap rules the etcd one applies (ts/replica/partition-registration.ts):
 *
 * - an unknown partition: UNKNOWN_TOPIC_OR_PARTITION;
 * - a leader epoch other than the registration's: FENCED_LEADER_EPOCH;
 * - a partition epoch other than the registration's: INVALID_UPDATE_VERSION;
 * - an ISR without the leader, or with a broker that is not a replica: INVALID_REQUEST;
 * - an ISR member that is not alive (`alive`, default everyone): INELIGIBLE_REPLICA;
 * - the same ISR: the registration as it is (no new partition epoch), else the new ISR at
 *   partition epoch + 1.
 *
 * `hold()` keeps the answers back until `release()` (a change in flight); `failNext(code)` makes
 * the next submissions fail with that code; every submission is recorded in `submitted`.
 */
import { ErrorCode } from '../../ts/protocol/error-codes.js'
import type { TopicPartition } from '../../ts/replica/fetch-params.js'
import { AlterPartitionError, type AlterPartitionManager, type AlterPartitionRequest, type PartitionRegistration } from '../../ts/replica/partition-registration.js'

const key = (tp: TopicPartition) => `${tp.topic}-${tp.partition}`

export class InMemoryAlterPartitionManager implements AlterPartitionManager {
  readonly registrations = new Map<string, PartitionRegistration>()
  readonly submitted: { tp: TopicPartition; request: AlterPartitionRequest }[] = []
  alive: (brokerId: number) => boolean = () => true
  private held: (() => void)[] | null = null
  private failures: number[] = []

  register(tp: TopicPartition, registration: PartitionRegistration): PartitionRegistration {
    this.registrations.set(key(tp), registration)
    return registration
  }

  get(tp: TopicPartition): PartitionRegistration | undefined {
    return this.registrations.get(key(tp))
  }

  /** Answers are kept back until `release`. */
  hold(): void {
    this.held ??= []
  }

  release(): void {
    const held = this.held ?? []
    this.held = null
    for (const answer of held) answer()
  }

  /** The next submissions fail with these error codes, one each. */
  failNext(...errorCodes: number[]): void {
    this.failures.push(...errorCodes)
  }

  submit(tp: TopicPartition & { readonly topicId: Buffer }, request: AlterPartitionRequest): Promise<PartitionRegistration> {
    this.submitted.push({ tp: { topic: tp.topic, partition: tp.partition }, request })
    const apply = () => this.apply(tp, request)
    if (this.held === null) return Promise.resolve().then(apply)
    const held = this.held
    return new Promise((resolve, reject) => held.push(() => Promise.resolve().then(apply).then(resolve, reject)))
  }

  private apply(tp: TopicPartition, request: AlterPartitionRequest): PartitionRegistration {
    const failure = this.failures.shift()
    if (failure !== undefined) throw new AlterPartitionError(failure, `failing as told (${failure})`)
    const current = this.registrations.get(key(tp))
    if (current === undefined) throw new AlterPartitionError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no partition ${key(tp)}`)
    if (request.leaderEpoch !== current.leaderEpoch) throw new AlterPartitionError(ErrorCode.FENCED_LEADER_EPOCH, `leader epoch ${request.leaderEpoch}, not ${current.leaderEpoch}`)
    if (request.partitionEpoch !== current.partitionEpoch) throw new AlterPartitionError(ErrorCode.INVALID_UPDATE_VERSION, `partition epoch ${request.partitionEpoch}, not ${current.partitionEpoch}`)
    if (!request.isr.includes(current.leader) || request.isr.some((id) => !current.replicas.includes(id))) {
      throw new AlterPartitionError(ErrorCode.INVALID_REQUEST, `ISR ${request.isr} is not the leader and some of the replicas ${current.replicas}`)
    }
    const dead = request.isr.filter((id) => !this.alive(id))
    if (dead.length > 0) throw new AlterPartitionError(ErrorCode.INELIGIBLE_REPLICA, `brokers ${dead} are not alive`)
    const same = request.isr.length === current.isr.length && request.isr.every((id) => current.isr.includes(id))
    if (same) return current
    const next = { ...current, isr: [...request.isr], partitionEpoch: current.partitionEpoch + 1 }
    this.registrations.set(key(tp), next)
    return next
  }
}
