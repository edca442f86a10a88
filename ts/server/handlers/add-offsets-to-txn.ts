/**
 * AddOffsetsToTxn: the `__consumer_offsets` partition of the group joins the producer's
 * transaction, so that its TxnOffsetCommit records get the transaction's marker.
 */
import type { AddOffsetsToTxnRequest, AddOffsetsToTxnResponse } from '../../protocol/apis/add-offsets-to-txn.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import { producerFencedFor } from './producer-fenced.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function addOffsetsToTxnHandler(broker: BrokerContext): ApiHandler<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse> {
  return async (request, context) => {
    const { header } = context
    // Kafka's: WRITE on the transactional id, then READ on the group.
    if (!broker.auth.authorize(context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId))
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED }
    if (!broker.auth.authorize(context, AclOperation.READ, ResourceType.GROUP, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }
    if (request.groupId === '') return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_GROUP_ID }
    const errorCode = await broker.transactionCoordinator.handleAddOffsetsToTransaction(
      request.transactionalId,
      request.producerId,
      request.producerEpoch,
      broker.groupCoordinator.partitionFor(request.groupId),
    )
    return { throttleTimeMs: 0, errorCode: producerFencedFor(errorCode, header.apiVersion, 2) }
  }
}
