/**
 * DescribeClientQuotas: the stored client quotas matching the filter, answered from the broker's
 * quotas (ts/quota/client-quotas-image.ts, which validates the filter with Kafka's errors and
 * messages). kafka-configs.sh --describe --entity-type users|clients|ips asks it.
 *
 * Authorization (Kafka's KafkaApis): DESCRIBE_CONFIGS on the CLUSTER resource, else
 * CLUSTER_AUTHORIZATION_FAILED.
 */
import type { DescribeClientQuotasRequest, DescribeClientQuotasResponse } from '../../protocol/apis/describe-client-quotas.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation } from '../../security/authorizer/acl.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'

export function describeClientQuotasHandler(broker: BrokerContext): ApiHandler<DescribeClientQuotasRequest, DescribeClientQuotasResponse> {
  return (request, context) => {
    if (!broker.auth.authorizeCluster(context, AclOperation.DESCRIBE_CONFIGS)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', entries: null }
    }
    return broker.clientQuotas.image.describe(request)
  }
}
