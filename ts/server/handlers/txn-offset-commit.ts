/**
 * TxnOffsetCommit: offsets committed inside the producer's transaction, by the group coordinator
 * (ts/group/offset-metadata-manager.ts): per partition UNKNOWN_TOPIC_OR_PARTITION and
 * OFFSET_METADATA_TOO_LARGE as OffsetCommit; the rest written as one transactional batch of the
 * producer to `__consumer_offsets`, visible once the transaction commits. The producer's epoch is
 * checked by that append against the partition's producer state (older: INVALID_PRODUCER_EPOCH).
 * As a transactional Produce, the first commit of a transaction is verified with the transaction
 * coordinator first (KIP-890 part 1, ts/server/add-partitions-to-txn-manager.ts): without
 * AddOffsetsToTxn the offsets partition gets no marker, and the commit would stay pending for
 * ever, so it is refused (INVALID_TXN_STATE; TRANSACTION_ABORTABLE from v4 on). From v5 on (a
 * client of transaction version 2, KIP-890 part 2, which sends no AddOffsetsToTxn) the
 * coordinator adds the offsets partition to the transaction instead.
 */
import type { TxnOffsetCommitRequest, TxnOffsetCommitResponse } from '../../protocol/apis/txn-offset-commit.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { OFFSETS_TOPIC } from '../../group/offsets-topic.js'
import { checkOffsetCommits } from './offset-commit.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { TransactionSupportedOperation, txnOffsetCommitTransactionOperation } from '../add-partitions-to-txn-manager.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

/** NONE when the offsets partition needs no verification or the coordinator says it is in the transaction (v5+: added it). */
async function verifyTransaction(broker: BrokerContext, request: TxnOffsetCommitRequest, version: number): Promise<number> {
  const operation = txnOffsetCommitTransactionOperation(version)
  if (operation !== TransactionSupportedOperation.ADD_PARTITION && !broker.config.transactionPartitionVerificationEnable) return ErrorCode.NONE
  if (broker.groupCoordinator.statusError(request.groupId) !== ErrorCode.NONE) return ErrorCode.NONE
  // The group's partition of __consumer_offsets, the one AddOffsetsToTxn (v1) or this request (v2) adds to the transaction.
  const tp = { topic: OFFSETS_TOPIC, partition: broker.groupCoordinator.partitionFor(request.groupId) }
  const partition = broker.replicaManager.getPartition(tp)
  const entry = partition?.isLeader ? partition.producerState().lastEntry(request.producerId) : undefined
  if (entry && entry.producerEpoch === request.producerEpoch && entry.currentTxnFirstOffset !== null) return ErrorCode.NONE
  const errorCode = await broker.addPartitionsToTxnManager.addOrVerifyTransaction(request.transactionalId, request.producerId, request.producerEpoch, tp, operation)
  // The retriable ones, as the group coordinator maps a failed append: COORDINATOR_NOT_AVAILABLE.
  return errorCode === ErrorCode.NOT_ENOUGH_REPLICAS ? ErrorCode.COORDINATOR_NOT_AVAILABLE : errorCode
}

export function txnOffsetCommitHandler(broker: BrokerContext): ApiHandler<TxnOffsetCommitRequest, TxnOffsetCommitResponse> {
  return async (request, context) => {
    // Kafka's: WRITE on the transactional id, READ on the group (every partition answered with the error), READ on each topic.
    const denied = !broker.auth.authorize(context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)
      ? ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
      : !broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, request.groupId)
        ? ErrorCode.GROUP_AUTHORIZATION_FAILED
        : ErrorCode.NONE
    if (denied !== ErrorCode.NONE)
      return {
        throttleTimeMs: 0,
        topics: request.topics.map((t) => ({ name: t.name, topicId: t.topicId, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: denied })) })),
      }
    const readable = broker.auth.filterByAuthorized(
      context,
      AclOperation.READ,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    )
    const { errors, valid } = checkOffsetCommits(
      broker,
      request.topics.filter((t) => readable.has(t.name)),
    )
    for (const t of request.topics) if (!readable.has(t.name)) for (const p of t.partitions) errors.set(`${t.name}\0${p.partitionIndex}`, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    const verified = valid.length > 0 ? await verifyTransaction(broker, request, context.header.apiVersion) : ErrorCode.NONE
    const groupError =
      verified !== ErrorCode.NONE
        ? verified
        : valid.length > 0 || errors.size === 0
          ? await broker.groupCoordinator.commitTransactionalOffsets(
              request.groupId,
              request.producerId,
              request.producerEpoch,
              request.memberId,
              request.generationIdOrMemberEpoch,
              request.groupInstanceId,
              valid,
            )
          : ErrorCode.NONE
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: errors.get(`${t.name}\0${p.partitionIndex}`) ?? groupError })),
      })),
    }
  }
}
