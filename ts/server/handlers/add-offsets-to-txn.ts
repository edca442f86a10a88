/**
 * AddOffsetsToTxn: the `__consumer_offsets` partition of the group joins the producer's
 * transaction, so that its TxnOffsetCommit records get the transaction's marker.
 */
import type { AddOffsetsToTxnRequest, AddOffsetsToTxnResponse } from '../../protocol/apis/add-offsets-to-txn.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import { producerFencedFor } from './producer-fenced.js'
import type { ApiHandler } from '../kafka-apis.js'

export function addOffsetsToTxnHandler(broker: BrokerContext): ApiHandler<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse> {
  return async (request, { header }) => {
    if (request.groupId === '') return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_GROUP_ID }
    const errorCode = await broker.transactionCoordinator.handleAddOffsetsToTransaction(request.transactionalId, request.producerId, request.producerEpoch, request.groupId)
    return { throttleTimeMs: 0, errorCode: producerFencedFor(errorCode, header.apiVersion, 2) }
  }
}
