/** ListTransactions: the transactional ids this coordinator knows, filtered by state, producer id and (v1) running time. */
import type { ListTransactionsRequest, ListTransactionsResponse } from '../../protocol/apis/list-transactions.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function listTransactionsHandler(broker: BrokerContext): ApiHandler<ListTransactionsRequest, ListTransactionsResponse> {
  return (request) => ({
    throttleTimeMs: 0,
    ...broker.transactionCoordinator.listTransactions(request.stateFilters, request.producerIdFilters, request.durationFilter),
  })
}
