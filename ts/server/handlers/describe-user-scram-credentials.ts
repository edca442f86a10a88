/**
 * DescribeUserScramCredentials: users' SCRAM mechanisms and iteration counts from the broker's
 * credentials (ts/security/scram/scram-image.ts), never a salt or a key.
 *
 * Authorization (Kafka's KafkaApis): DESCRIBE on the CLUSTER resource, else every user named is
 * answered CLUSTER_AUTHORIZATION_FAILED. The authorizer plugs in here.
 */
import type { DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse } from '../../protocol/apis/describe-user-scram-credentials.js'
import { describeScramCredentials } from '../../security/scram/scram-image.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'

export function describeUserScramCredentialsHandler(broker: BrokerContext): ApiHandler<DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse> {
  return (request) => describeScramCredentials(request, broker.scramCredentials.cache)
}
