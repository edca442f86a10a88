/**
 * EndTxn: commits or aborts the producer's transaction at its coordinator; answered once
 * PrepareCommit or PrepareAbort is on the ISR of `__transaction_state` (the markers follow).
 * v5 is a client of transaction version 2 (ts/coordinator/transaction/transaction-version.ts):
 * the epoch is bumped at the end, and the answer carries the producer id and epoch to use next.
 */
import type { EndTxnRequest, EndTxnResponse } from '../../protocol/apis/end-txn.js'
import type { BrokerContext } from './broker-context.js'
import { producerFencedFor } from './producer-fenced.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { transactionVersionForEndTxn } from '../../coordinator/transaction/transaction-version.js'

export function endTxnHandler(broker: BrokerContext): ApiHandler<EndTxnRequest, EndTxnResponse> {
  return async (request, context) => {
    const { header } = context
    // Kafka's: WRITE on the transactional id.
    if (!broker.auth.authorize(context, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId))
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 }
    const tv = transactionVersionForEndTxn(header.apiVersion)
    const { errorCode, producerId, producerEpoch } = await broker.transactionCoordinator.handleEndTransaction(request.transactionalId, request.producerId, request.producerEpoch, request.committed, tv)
    // producerId and producerEpoch are on the wire from v5 on (-1 below, as their defaults).
    return { throttleTimeMs: 0, errorCode: producerFencedFor(errorCode, header.apiVersion, 2), producerId, producerEpoch }
  }
}
