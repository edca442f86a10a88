/** DescribeTransactions: each transactional id's state at this coordinator (TRANSACTIONAL_ID_NOT_FOUND for one it does not know). */
import type { DescribeTransactionsRequest, DescribeTransactionsResponse } from '../../protocol/apis/describe-transactions.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'

export function describeTransactionsHandler(broker: BrokerContext): ApiHandler<DescribeTransactionsRequest, DescribeTransactionsResponse> {
  return (request, context) => {
    // Kafka's: DESCRIBE on each transactional id; of its partitions, those of topics the principal may DESCRIBE.
    const states = broker.transactionCoordinator.describeTransactions(request.transactionalIds).map((s) => {
      if (!broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, s.transactionalId))
        return {
          ...s,
          errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
          transactionState: '',
          transactionTimeoutMs: 0,
          transactionStartTimeMs: -1n,
          producerId: -1n,
          producerEpoch: -1,
          topics: [],
        }
      return { ...s, topics: s.topics.filter((t) => broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic)) }
    })
    return { throttleTimeMs: 0, transactionStates: states }
  }
}
