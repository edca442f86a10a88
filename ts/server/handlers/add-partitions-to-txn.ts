/**
 * AddPartitionsToTxn: the partitions join the producer's transaction at its coordinator
 * (ts/coordinator/transaction/). As Kafka's handler: when a partition does not exist (internal
 * topics included: clients do not produce to them) it is UNKNOWN_TOPIC_OR_PARTITION, none is
 * added and the others are OPERATION_NOT_ATTEMPTED; otherwise every partition gets the
 * coordinator's one answer. v0-v3 carry one transaction at the top level; v4 batches them (broker
 * to coordinator), and `verifyOnly` asks whether each partition is in the ongoing transaction
 * without adding it. Without verifyOnly, v4+ is a partition leader adding the partition of a
 * transactional Produce or TxnOffsetCommit of a transaction version 2 client (Kafka's
 * `transactionVersionForAddPartitionsToTxn`: v4+ is version 2, v0-v3 version 0); its partitions
 * may be `__consumer_offsets`'s (TxnOffsetCommit's), which clients' requests may not name. v5 is
 * v4 where the answer may be TRANSACTION_ABORTABLE.
 */
import {
  ADD_PARTITIONS_TO_TXN_BATCHED_FROM,
  type AddPartitionsToTxnRequest,
  type AddPartitionsToTxnResponse,
  type AddPartitionsToTxnTopicResult,
  type AddPartitionsToTxnTransaction,
} from '../../protocol/apis/add-partitions-to-txn.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { transactionVersionForAddPartitionsToTxn } from '../../coordinator/transaction/transaction-version.js'
import { isInternalTopic } from '../internal-topics.js'
import type { BrokerContext } from './broker-context.js'
import { producerFencedFor } from './producer-fenced.js'
import type { ApiHandler, RequestContext } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

function results(t: AddPartitionsToTxnTransaction, errorOf: (topic: string, partition: number) => number): AddPartitionsToTxnTopicResult[] {
  return t.topics.map((topic) => ({
    name: topic.name,
    resultsByPartition: topic.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: errorOf(topic.name, partitionIndex) })),
  }))
}

export function addPartitionsToTxnHandler(broker: BrokerContext): ApiHandler<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> {
  const coordinator = () => broker.transactionCoordinator

  const addOne = async (t: AddPartitionsToTxnTransaction, version: number, context: RequestContext): Promise<AddPartitionsToTxnTopicResult[]> => {
    // Kafka's, for clients (v0-3): WRITE on the transactional id, then on each topic (the others NOT_ATTEMPTED).
    if (version < ADD_PARTITIONS_TO_TXN_BATCHED_FROM) {
      if (!broker.auth.authorize(context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, t.transactionalId)) return results(t, () => ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
      const writable = broker.auth.filterByAuthorized(
        context,
        AclOperation.WRITE,
        ResourceType.TOPIC,
        t.topics.map((topic) => topic.name),
      )
      if (t.topics.some((topic) => !writable.has(topic.name))) return results(t, (topic) => (writable.has(topic) ? ErrorCode.OPERATION_NOT_ATTEMPTED : ErrorCode.TOPIC_AUTHORIZATION_FAILED))
    }
    const unknown = new Set<string>()
    const partitions: Array<{ topic: string; partition: number }> = []
    for (const topic of t.topics) {
      const info = broker.topics.get(topic.name)
      // A broker's request (v4+) may name an internal topic (TxnOffsetCommit's offsets partition).
      const internal = version >= ADD_PARTITIONS_TO_TXN_BATCHED_FROM && isInternalTopic(topic.name)
      for (const partition of topic.partitions) {
        if (internal ? partition < 0 : !info || partition < 0 || partition >= info.partitions) unknown.add(`${topic.name}\0${partition}`)
        else partitions.push({ topic: topic.name, partition })
      }
    }
    if (t.verifyOnly) {
      const verified = coordinator().handleVerifyPartitionsInTransaction(t.transactionalId, t.producerId, t.producerEpoch, partitions)
      const byKey = new Map(verified.map((v) => [`${v.topic}\0${v.partition}`, v.errorCode]))
      return results(t, (topic, p) => byKey.get(`${topic}\0${p}`) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    }
    if (unknown.size > 0) {
      return results(t, (topic, p) => (unknown.has(`${topic}\0${p}`) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED))
    }
    const errorCode = await coordinator().handleAddPartitionsToTransaction(t.transactionalId, t.producerId, t.producerEpoch, partitions, transactionVersionForAddPartitionsToTxn(version))
    return results(t, () => producerFencedFor(errorCode, version, 2))
  }

  return async (request, context) => {
    const version = context.header.apiVersion
    if (version < ADD_PARTITIONS_TO_TXN_BATCHED_FROM) {
      // v0-v3: one transaction, at the top level, answered at the top level.
      const t: AddPartitionsToTxnTransaction = {
        transactionalId: request.v3AndBelowTransactionalId,
        producerId: request.v3AndBelowProducerId,
        producerEpoch: request.v3AndBelowProducerEpoch,
        verifyOnly: false,
        topics: request.v3AndBelowTopics,
      }
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction: [], resultsByTopicV3AndBelow: await addOne(t, version, context) }
    }
    // Kafka's: brokers' requests (v4+) need CLUSTER_ACTION.
    if (!broker.auth.authorizeCluster(context, AclOperation.CLUSTER_ACTION))
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [], resultsByTopicV3AndBelow: [] }
    const resultsByTransaction = await Promise.all(request.transactions.map(async (t) => ({ transactionalId: t.transactionalId, topicResults: await addOne(t, version, context) })))
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, resultsByTransaction, resultsByTopicV3AndBelow: [] }
  }
}
