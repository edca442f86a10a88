/**
 * DescribeProducers: the producer state of partitions this broker leads (ts/replica/producer-state.ts):
 * each producer's id, epoch, last sequence and timestamp, the coordinator epoch of its last
 * marker and the first offset of its open transaction (-1 none). A partition this broker does
 * not lead is NOT_LEADER_OR_FOLLOWER, an unknown one UNKNOWN_TOPIC_OR_PARTITION.
 */
import type { DescribeProducersPartition, DescribeProducersRequest, DescribeProducersResponse } from '../../protocol/apis/describe-producers.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function describeProducersHandler(broker: BrokerContext): ApiHandler<DescribeProducersRequest, DescribeProducersResponse> {
  const describe = (topic: string, partitionIndex: number): DescribeProducersPartition => {
    const none = (errorCode: number, errorMessage: string | null = null) => ({ partitionIndex, errorCode, errorMessage, activeProducers: [] })
    const info = broker.visibleTopic(topic)
    if (!info || partitionIndex < 0 || partitionIndex >= info.partitions) return none(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    const partition = broker.replicaManager.getPartition({ topic, partition: partitionIndex })
    if (!partition || !partition.isLeader) return none(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    const activeProducers = [...partition.producerState().entries()].map((e) => ({
      producerId: e.producerId,
      producerEpoch: e.producerEpoch,
      lastSequence: e.batches.length > 0 ? e.batches[e.batches.length - 1]!.lastSeq : -1,
      lastTimestamp: e.lastTimestamp,
      coordinatorEpoch: e.coordinatorEpoch,
      currentTxnStartOffset: e.currentTxnFirstOffset ?? -1n,
    }))
    return { partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers }
  }
  return (request, context) => {
    // Kafka's: READ on each topic.
    const readable = broker.auth.filterByAuthorized(
      context,
      AclOperation.READ,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    )
    const denied = (partitionIndex: number) => ({ partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: null, activeProducers: [] })
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => (readable.has(t.name) ? describe(t.name, p) : denied(p))) })),
    }
  }
}
