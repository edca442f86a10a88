/**
 * Kafka's `MetadataCache`: what this broker knows of the cluster, as the Metadata, FindCoordinator
 * and DescribeCluster handlers answer it: the live brokers, the controller, and each partition's
 * registration (leader, leader epoch, replicas, ISR; ts/replica/partition-registration.ts).
 *
 * A standalone broker (no `cluster.metadata`) is the whole cluster: `StandaloneMetadataCache`
 * lists it alone, as the controller, leading every partition of its topics at
 * PARTITION_LEADER_EPOCH with itself as the only replica. In a cluster the cache follows the
 * metadata in etcd (ts/cluster/).
 */
import { PARTITION_LEADER_EPOCH } from '../replica/leader-epoch.js'
import type { BrokerEndPoint, PartitionRegistration } from '../replica/partition-registration.js'

export interface MetadataCache {
  /** The brokers alive now, this one included, by id. */
  aliveBrokers(): BrokerEndPoint[]
  /** The controller's broker id (-1 while none is elected). */
  controllerId(): number
  /** A partition's registration; undefined for a partition the cache does not know. */
  partitionRegistration(topic: string, partition: number): PartitionRegistration | undefined
}

export class StandaloneMetadataCache implements MetadataCache {
  private readonly self: () => BrokerEndPoint
  private readonly registration: PartitionRegistration

  /** `self`: this broker as clients reach it (its advertised port may be known only once it listens). */
  constructor(nodeId: number, self: () => BrokerEndPoint) {
    this.self = self
    this.registration = { replicas: [nodeId], isr: [nodeId], leader: nodeId, leaderEpoch: PARTITION_LEADER_EPOCH, partitionEpoch: 0 }
  }

  aliveBrokers(): BrokerEndPoint[] {
    return [this.self()]
  }

  controllerId(): number {
    return this.self().id
  }

  partitionRegistration(): PartitionRegistration {
    return this.registration
  }
}
