/**
 * What the five share coordinator requests (KIP-932's inter-broker APIs: Initialize, Read, Write,
 * Delete and ReadSummary ShareGroupState) have in common, as Kafka's KafkaApis handles them:
 * CLUSTER_ACTION on the cluster, else every partition CLUSTER_AUTHORIZATION_FAILED; an empty
 * group id is INVALID_REQUEST for every partition; else each partition goes to the share
 * coordinator on its own (ts/coordinator/share/share-coordinator.ts) and the answers keep the
 * request's topics and partitions in order.
 */
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation } from '../../security/authorizer/acl.js'
import { TopicError } from '../topic-error.js'
import type { ShareStateKey } from '../../coordinator/share/share-group-state-topic.js'
import type { ShareStateResult } from '../../coordinator/share/share-coordinator.js'
import type { BrokerContext } from './broker-context.js'
import type { RequestContext } from '../kafka-apis.js'

interface StateRequest<P extends { partition: number }> {
  groupId: string
  topics: Array<{ topicId: Buffer; partitions: P[] }>
}

/** Each partition's answer: `answer(partition, errorCode, errorMessage, data)` per topic, in the request's order. */
export async function perPartition<P extends { partition: number }, T, R>(
  broker: BrokerContext,
  context: RequestContext,
  request: StateRequest<P>,
  op: (key: ShareStateKey, p: P) => Promise<ShareStateResult<T>>,
  answer: (partition: number, errorCode: number, errorMessage: string | null, data: T | null) => R,
): Promise<Array<{ topicId: Buffer; partitions: R[] }>> {
  const authorized = broker.auth.authorizeCluster(context, AclOperation.CLUSTER_ACTION)
  let unavailable: string | null = null
  if (authorized && request.groupId !== '') {
    try {
      await broker.ensureShareGroupStateTopic()
    } catch (err) {
      if (!(err instanceof TopicError)) throw err
      unavailable = err.message
    }
  }
  return Promise.all(
    request.topics.map(async (t) => ({
      topicId: t.topicId,
      partitions: await Promise.all(
        t.partitions.map(async (p) => {
          if (!authorized) return answer(p.partition, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null, null)
          if (request.groupId === '') return answer(p.partition, ErrorCode.INVALID_REQUEST, 'Group id must be set.', null)
          if (unavailable !== null) return answer(p.partition, ErrorCode.COORDINATOR_NOT_AVAILABLE, unavailable, null)
          const r = await op({ groupId: request.groupId, topicId: t.topicId, partition: p.partition }, p)
          return answer(p.partition, r.errorCode, r.errorMessage, r.data)
        }),
      ),
    })),
  )
}
