/** ListTransactions: the transactional ids this coordinator knows, filtered by state, producer id and (v1) running time. */
import type { ListTransactionsRequest, ListTransactionsResponse } from '../../protocol/apis/list-transactions.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function listTransactionsHandler(broker: BrokerContext): ApiHandler<ListTransactionsRequest, ListTransactionsResponse> {
  return (request, context) => {
    const listed = broker.transactionCoordinator.listTransactions(request.stateFilters, request.producerIdFilters, request.durationFilter)
    // Kafka's: only the transactional ids the principal may DESCRIBE.
    return {
      throttleTimeMs: 0,
      ...listed,
      transactionStates: listed.transactionStates.filter((s) => broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, s.transactionalId)),
    }
  }
}
