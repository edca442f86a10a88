/**
 * DescribeCluster: the live brokers and the controller from the metadata cache (as Metadata
 * answers), with the cluster id. Asked for the controllers' endpoints (endpointType 2), a broker
 * answers MISMATCHED_ENDPOINT_TYPE, as Kafka's brokers do.
 */
import { AUTHORIZED_OPERATIONS_OMITTED, EndpointType, type DescribeClusterRequest, type DescribeClusterResponse } from '../../protocol/apis/describe-cluster.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { endPointFor } from '../../replica/partition-registration.js'
import type { BrokerContext } from './broker-context.js'
import { controllerIdForClients } from './metadata.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, CLUSTER_NAME, ResourceType } from '../../security/authorizer/acl.js'

export function describeClusterHandler(broker: BrokerContext): ApiHandler<DescribeClusterRequest, DescribeClusterResponse> {
  return (request, context) => {
    const { connection } = context
    const { auth } = broker
    // KIP-430: with DESCRIBE on the cluster, what the principal may do on it; else 0.
    const clusterAuthorizedOperations = !request.includeClusterAuthorizedOperations
      ? AUTHORIZED_OPERATIONS_OMITTED
      : auth.authorizeCluster(context, AclOperation.DESCRIBE)
        ? auth.authorizedOperations(context, ResourceType.CLUSTER, CLUSTER_NAME)
        : 0
    const response: DescribeClusterResponse = {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      endpointType: EndpointType.BROKER,
      clusterId: broker.config.clusterId,
      controllerId: controllerIdForClients(broker),
      // The brokers as the client's listener reaches them.
      brokers: broker.metadataCache.aliveBrokers().flatMap((b) => {
        const endpoint = endPointFor(b, connection.listenerName)
        return endpoint ? [{ brokerId: b.id, host: endpoint.host, port: endpoint.port, rack: b.rack, isFenced: false }] : []
      }),
      clusterAuthorizedOperations,
    }
    if (request.endpointType !== EndpointType.BROKER) {
      return {
        ...response,
        errorCode: ErrorCode.MISMATCHED_ENDPOINT_TYPE,
        errorMessage: `The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type ${request.endpointType === EndpointType.CONTROLLER ? 'CONTROLLER' : request.endpointType}`,
        controllerId: -1,
        brokers: [],
      }
    }
    return response
  }
}
