/**
 * WriteTxnMarkers: a transaction coordinator (on another broker) has this broker, the leader of
 * some of the transaction's partitions, append the COMMIT or ABORT markers
 * (ts/server/txn-marker-writer.ts); answered per partition once their ISR holds them.
 */
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../protocol/apis/write-txn-markers.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation } from '../../security/authorizer/acl.js'
import { ErrorCode } from '../../protocol/error-codes.js'

export function writeTxnMarkersHandler(broker: BrokerContext): ApiHandler<WriteTxnMarkersRequest, WriteTxnMarkersResponse> {
  return async (request, context) => {
    // Kafka's: ALTER or CLUSTER_ACTION on the cluster, else every partition CLUSTER_AUTHORIZATION_FAILED.
    if (!broker.auth.authorizeCluster(context, AclOperation.ALTER) && !broker.auth.authorizeCluster(context, AclOperation.CLUSTER_ACTION)) {
      return {
        markers: request.markers.map((m) => ({
          producerId: m.producerId,
          topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })) })),
        })),
      }
    }
    return { markers: await broker.txnMarkerWriter.writeTxnMarkers(request.markers) }
  }
}
