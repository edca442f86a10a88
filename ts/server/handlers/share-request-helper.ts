/**
 * What ShareFetch and ShareAcknowledge share: the group's share configs (its overrides, else
 * the broker's group.share.* settings) handed to the share partition manager with each request,
 * topic ids resolved to the topics clients may see, and a partition's current leader as the
 * responses give it.
 */
import type { ShareGroupConfig } from '../../share/share-partition-manager.js'
import type { SharePartitionRef } from '../../share/share-session-cache.js'
import type { BrokerContext } from './broker-context.js'

/** Reads the group's configs and gives them to the share partition manager; answers them. */
export async function refreshShareGroupConfig(broker: BrokerContext, groupId: string): Promise<ShareGroupConfig> {
  const overrides = await broker.groupConfigs.overrides(groupId)
  const num = (name: string, fallback: number) => (overrides[name] !== undefined ? Number(overrides[name]) : fallback)
  const config: ShareGroupConfig = {
    recordLockDurationMs: num('share.record.lock.duration.ms', broker.config.groupShareRecordLockDurationMs),
    deliveryCountLimit: num('share.delivery.count.limit', broker.config.groupShareDeliveryCountLimit),
    maxInFlightRecords: num('share.partition.max.record.locks', broker.config.groupSharePartitionMaxRecordLocks),
    autoOffsetReset: overrides['share.auto.offset.reset'] ?? 'latest',
    isolationLevel: overrides['share.isolation.level'] === 'read_committed' ? 'read_committed' : 'read_uncommitted',
  }
  broker.sharePartitionManager.setGroupConfig(groupId, config)
  return config
}

/** A topic id and partition as a share partition reference, or null for a topic id clients cannot see. */
export function sharePartitionRef(broker: BrokerContext, topicId: Buffer, partition: number): SharePartitionRef | null {
  const topic = broker.visibleTopicById(topicId)
  return topic === undefined ? null : { topicId: topicId.toString('hex'), topic: topic.name, partition }
}

/** The partition's leader and epoch as this broker knows them ({-1, -1} when it does not). */
export function currentLeader(broker: BrokerContext, ref: SharePartitionRef | null): { leaderId: number; leaderEpoch: number } {
  if (ref === null) return { leaderId: -1, leaderEpoch: -1 }
  const partition = broker.replicaManager.getPartition({ topic: ref.topic, partition: ref.partition })
  if (partition === undefined) return { leaderId: -1, leaderEpoch: -1 }
  return partition.isLeader ? { leaderId: broker.config.nodeId, leaderEpoch: partition.leaderEpoch } : { leaderId: -1, leaderEpoch: partition.leaderEpoch }
}
