/** DescribeTransactions: each transactional id's state at this coordinator (TRANSACTIONAL_ID_NOT_FOUND for one it does not know). */
import type { DescribeTransactionsRequest, DescribeTransactionsResponse } from '../../protocol/apis/describe-transactions.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'

export function describeTransactionsHandler(broker: BrokerContext): ApiHandler<DescribeTransactionsRequest, DescribeTransactionsResponse> {
  return (request) => ({ throttleTimeMs: 0, transactionStates: broker.transactionCoordinator.describeTransactions(request.transactionalIds) })
}
