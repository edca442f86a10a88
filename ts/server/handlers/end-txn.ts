/**
 * EndTxn: commits or aborts the producer's transaction at its coordinator; answered once
 * PrepareCommit or PrepareAbort is on the ISR of `__transaction_state` (the markers follow).
 */
import type { EndTxnRequest, EndTxnResponse } from '../../protocol/apis/end-txn.js'
import type { BrokerContext } from './broker-context.js'
import { producerFencedFor } from './producer-fenced.js'
import type { ApiHandler } from '../kafka-apis.js'

export function endTxnHandler(broker: BrokerContext): ApiHandler<EndTxnRequest, EndTxnResponse> {
  return async (request, { header }) => {
    const errorCode = await broker.transactionCoordinator.handleEndTransaction(request.transactionalId, request.producerId, request.producerEpoch, request.committed)
    // producerId and producerEpoch are v5's (transaction version 2), which is not served.
    return { throttleTimeMs: 0, errorCode: producerFencedFor(errorCode, header.apiVersion, 2), producerId: -1n, producerEpoch: -1 }
  }
}
