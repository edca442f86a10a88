/**
 * The client's view of the cluster (Kafka's client-side Metadata and its MetadataCache): the
 * brokers, and for each topic known its id and its partitions' leaders and leader epochs, as the
 * last Metadata response told. A response replaces the brokers; it replaces the topics it names
 * and, when it answered for all topics, drops those it no longer lists.
 *
 * A partition whose Metadata error is not NONE (LEADER_NOT_AVAILABLE during an election) keeps
 * its error and a leader of -1: `leaderFor` then answers undefined and the caller refreshes.
 */
import { ZERO_UUID } from '../protocol/apis/common.js'
import type { MetadataResponse } from '../protocol/apis/metadata.js'
import { ErrorCode } from '../protocol/error-codes.js'

/** A broker, as Metadata lists it (Kafka's Node). */
export interface Node {
  nodeId: number
  host: string
  port: number
  rack: string | null
}

export interface PartitionInfo {
  topic: string
  partition: number
  /** -1 when the partition has no leader. */
  leaderId: number
  leaderEpoch: number
  replicas: number[]
  isr: number[]
  errorCode: number
}

export interface TopicInfo {
  name: string
  /** ZERO_UUID when the broker has no topic ids (Metadata before v10). */
  topicId: Buffer
  isInternal: boolean
  errorCode: number
  partitions: PartitionInfo[]
}

export class Metadata {
  clusterId: string | null = null
  controllerId = -1
  /** Bumped at every update, so a caller can tell a refresh happened. */
  updateVersion = 0
  private brokers = new Map<number, Node>()
  private readonly byName = new Map<string, TopicInfo>()
  private readonly byId = new Map<string, TopicInfo>()

  /** Takes in a Metadata response; `allTopics` when it was asked for every topic. */
  update(res: MetadataResponse, allTopics: boolean): void {
    this.clusterId = res.clusterId
    this.controllerId = res.controllerId
    this.brokers = new Map(res.brokers.map((b) => [b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack }]))
    const seen = new Set<string>()
    for (const t of res.topics) {
      if (t.name === null) continue
      seen.add(t.name)
      if (t.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
        this.remove(t.name)
        continue
      }
      const info: TopicInfo = {
        name: t.name,
        topicId: t.topicId,
        isInternal: t.isInternal,
        errorCode: t.errorCode,
        partitions: t.partitions
          .map((p) => ({
            topic: t.name!,
            partition: p.partitionIndex,
            leaderId: p.errorCode === ErrorCode.NONE || p.errorCode === ErrorCode.REPLICA_NOT_AVAILABLE ? p.leaderId : -1,
            leaderEpoch: p.leaderEpoch,
            replicas: p.replicaNodes,
            isr: p.isrNodes,
            errorCode: p.errorCode,
          }))
          .sort((a, b) => a.partition - b.partition),
      }
      this.remove(t.name)
      this.byName.set(t.name, info)
      if (!t.topicId.equals(ZERO_UUID)) this.byId.set(t.topicId.toString('hex'), info)
    }
    if (allTopics) for (const name of [...this.byName.keys()]) if (!seen.has(name)) this.remove(name)
    this.updateVersion++
  }

  get nodes(): Node[] {
    return [...this.brokers.values()]
  }

  node(nodeId: number): Node | undefined {
    return this.brokers.get(nodeId)
  }

  topic(name: string): TopicInfo | undefined {
    return this.byName.get(name)
  }

  topicById(topicId: Buffer): TopicInfo | undefined {
    return this.byId.get(topicId.toString('hex'))
  }

  get topics(): TopicInfo[] {
    return [...this.byName.values()]
  }

  partition(topic: string, partition: number): PartitionInfo | undefined {
    return this.byName.get(topic)?.partitions.find((p) => p.partition === partition)
  }

  /** The leader of a partition, when it has one that Metadata listed. */
  leaderFor(topic: string, partition: number): Node | undefined {
    const p = this.partition(topic, partition)
    return p && p.leaderId >= 0 ? this.brokers.get(p.leaderId) : undefined
  }

  private remove(name: string): void {
    const old = this.byName.get(name)
    if (!old) return
    this.byName.delete(name)
    const key = old.topicId.toString('hex')
    if (this.byId.get(key) === old) this.byId.delete(key)
  }
}
