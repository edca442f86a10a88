/**
 * ListPartitionReassignments: the reassignments in progress, of every partition (topics null) or
 * of those named (unknown topics and partitions left out, as Kafka's controller does). None is
 * ever in progress here (AlterPartitionReassignments moves no replicas yet: see
 * alter-partition-reassignments.ts), so the answer lists no topic.
 *
 * Authorization (Kafka's ControllerApis): DESCRIBE on the CLUSTER resource, else
 * CLUSTER_AUTHORIZATION_FAILED.
 */
import type { ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse } from '../../protocol/apis/list-partition-reassignments.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation } from '../../security/authorizer/acl.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'

export function listPartitionReassignmentsHandler(broker: BrokerContext): ApiHandler<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse> {
  return (_request, context) => {
    if (!broker.auth.authorizeCluster(context, AclOperation.DESCRIBE)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', topics: [] }
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, topics: [] }
  }
}
