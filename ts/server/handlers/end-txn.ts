/**
 * EndTxn: commits or aborts the producer's transaction at its coordinator; answered once
 * PrepareCommit or PrepareAbort is on the ISR of `__transaction_state` (the markers follow).
 */
import type { EndTxnRequest, EndTxnResponse } from '../../protocol/apis/end-txn.js'
import type { BrokerContext } from './broker-context.js'
import { producerFencedFor } from './producer-fenced.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'

export function endTxnHandler(broker: BrokerContext): ApiHandler<EndTxnRequest, EndTxnResponse> {
  return async (request, context) => {
    const { header } = context
    // Kafka's: WRITE on the transactional id.
    if (!broker.auth.authorize(context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId))
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 }
    const errorCode = await broker.transactionCoordinator.handleEndTransaction(request.transactionalId, request.producerId, request.producerEpoch, request.committed)
    // producerId and producerEpoch are v5's (transaction version 2), which is not served.
    return { throttleTimeMs: 0, errorCode: producerFencedFor(errorCode, header.apiVersion, 2), producerId: -1n, producerEpoch: -1 }
  }
}
