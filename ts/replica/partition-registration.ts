/**
 * A partition's replication state as the cluster's metadata records it (Kafka's
 * `PartitionRegistration` in KRaft, `LeaderAndIsr` in the ZooKeeper era), and the two ways the
 * replication layer talks to whatever keeps that metadata (in cluster mode: etcd, ts/cluster/):
 *
 * - the metadata layer tells the `ReplicaManager` every change of a partition's registration
 *   (`ReplicaManager.applyPartitionChanges`, Kafka's `applyDelta`): this broker becomes the
 *   partition's leader, one of its followers, or stops holding it;
 * - a partition's leader asks to change its ISR through an `AlterPartitionManager` (Kafka's
 *   AlterPartition request to the controller); here the metadata layer applies it as a
 *   compare-and-swap on the partition epoch, so a stale leader (an older leader epoch) or a stale
 *   view (an older partition epoch) is refused and nothing changes.
 *
 * Epochs: `leaderEpoch` moves on every change of leader (and is what Fetch / Produce clients
 * and followers are fenced with); `partitionEpoch` moves on every change at all (leader, ISR,
 * replicas). Both start at 0 when the partition is created.
 *
 * A standalone broker (no cluster) has no registrations: each of its partitions is led by itself
 * alone at PARTITION_LEADER_EPOCH (ts/replica/leader-epoch.ts) and never changes its ISR.
 */
import type { TopicPartition } from './fetch-params.js'

/** A leader of -1: the partition has no leader (none of its ISR is alive). */
export const NO_LEADER = -1

export interface PartitionRegistration {
  /** The replicas, in assignment order (the first is the preferred leader). */
  readonly replicas: readonly number[]
  /** The in-sync replicas, the leader among them. */
  readonly isr: readonly number[]
  /** The leader's broker id, or NO_LEADER. */
  readonly leader: number
  readonly leaderEpoch: number
  readonly partitionEpoch: number
}

/** A partition's registration with the topic it belongs to. */
export interface PartitionChange extends TopicPartition {
  readonly topicId: Buffer
  /** null: the partition was deleted (its topic deleted) or moved off this broker. */
  readonly registration: PartitionRegistration | null
}

/** The ISR a leader proposes (Kafka's AlterPartition request for one partition). */
export interface AlterPartitionRequest {
  readonly leaderEpoch: number
  /** The partition epoch the leader's view is at: the change applies only on top of it. */
  readonly partitionEpoch: number
  readonly isr: readonly number[]
}

/**
 * Why an ISR change was refused: Kafka's error codes FENCED_LEADER_EPOCH (the proposer is not
 * the leader at that epoch any more), INVALID_UPDATE_VERSION (the partition epoch moved on),
 * INELIGIBLE_REPLICA (a proposed member is not alive or fenced), UNKNOWN_TOPIC_OR_PARTITION,
 * or REQUEST_TIMED_OUT / a storage error when the metadata store could not be reached.
 */
export class AlterPartitionError extends Error {
  readonly errorCode: number
  constructor(errorCode: number, message: string) {
    super(message)
    this.name = 'AlterPartitionError'
    this.errorCode = errorCode
  }
}

/** Kafka's `AlterPartitionManager`: how a partition's leader changes its ISR. */
export interface AlterPartitionManager {
  /**
   * Proposes a new ISR. Resolves to the registration recorded (partition epoch moved on), which
   * the metadata layer also delivers through `applyPartitionChanges`; rejects with an
   * AlterPartitionError when refused.
   */
  submit(tp: TopicPartition & { readonly topicId: Buffer }, request: AlterPartitionRequest): Promise<PartitionRegistration>
}

/** Where a broker can be reached (Kafka's `BrokerEndPoint`), for follower fetchers and Metadata. */
export interface BrokerEndPoint {
  readonly id: number
  /** The inter-broker listener's advertised host and port (what followers and markers connect to). */
  readonly host: string
  readonly port: number
  readonly rack: string | null
  /**
   * Each listener's advertised endpoint (Kafka's Broker endpoints): clients are answered with the
   * one of the listener they came in on. Absent (a registration by a broker before listeners):
   * `host`/`port` for every listener.
   */
  readonly endpoints?: readonly ListenerEndPointInfo[]
}

/** One listener's advertised endpoint of a broker. */
export interface ListenerEndPointInfo {
  readonly listenerName: string
  readonly securityProtocol: string
  readonly host: string
  readonly port: number
}

/**
 * Where a client of listener `listenerName` reaches `broker` (Kafka's Broker.node(listenerName));
 * undefined when the broker has no such listener.
 */
export function endPointFor(broker: BrokerEndPoint, listenerName: string): { host: string; port: number } | undefined {
  if (!broker.endpoints) return { host: broker.host, port: broker.port }
  return broker.endpoints.find((e) => e.listenerName === listenerName)
}
