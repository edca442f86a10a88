/**
 * ListOffsets: earliest (-2), latest (-1: the log end for a follower, the high watermark for
 * consumers, the last stable offset for READ_COMMITTED), max timestamp (-3), or the first offset
 * at or after a time: the partition's answer (`Partition.fetchOffsetForTimestamp`). A follower
 * answers NOT_LEADER_OR_FOLLOWER, except to the debugging replica id (-2). A partition whose
 * leadership here is given but not yet applied is answered once it is.
 */
import type { ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsResponse } from '../../protocol/apis/list-offsets.js'
import { fetchIsolation } from '../../replica/fetch-params.js'
import { NO_EPOCH } from '../../replica/leader-epoch.js'
import type { ApiHandler } from '../kafka-apis.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'
import type { BrokerContext } from './broker-context.js'

/** ListOffsetsRequest.DEBUGGING_REPLICA_ID: a tool reading any replica, the leader or not. */
const DEBUGGING_REPLICA_ID = -2

export function listOffsetsHandler(broker: BrokerContext): ApiHandler<ListOffsetsRequest, ListOffsetsResponse> {
  return (request, context) => {
    const { header } = context
    const isolation = fetchIsolation(request)
    // Kafka's: DESCRIBE on each topic, else TOPIC_AUTHORIZATION_FAILED on its partitions.
    const describable = broker.auth.filterByAuthorized(
      context,
      AclOperation.DESCRIBE,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    )
    // A partition this broker was just made the leader of, its log still being made: answered
    // once the leadership is applied, as for Produce (ReplicaManager.leadershipApplied).
    const pending = broker.replicaManager.leadershipApplied(request.topics.flatMap((t) => (describable.has(t.name) ? t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex })) : [])))
    if (pending) return pending.then(() => answer())
    return answer()

    function answer(): ListOffsetsResponse {
      return {
        throttleTimeMs: 0,
        topics: request.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p): ListOffsetsPartitionResponse => {
            // A negative currentLeaderEpoch is no epoch here (ListOffsets never fenced on one).
            const currentLeaderEpoch = p.currentLeaderEpoch >= 0 ? p.currentLeaderEpoch : NO_EPOCH
            // Only Kafka's debugging replica id (-2) may ask a follower.
            const fetchOnlyFromLeader = request.replicaId !== DEBUGGING_REPLICA_ID
            const r = !describable.has(t.name)
              ? { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, offset: -1n, timestamp: -1n, leaderEpoch: -1 }
              : broker.replicaManager.fetchOffsetForTimestamp({ topic: t.name, partition: p.partitionIndex }, p.timestamp, isolation, currentLeaderEpoch, fetchOnlyFromLeader)
            return { partitionIndex: p.partitionIndex, errorCode: r.errorCode, timestamp: r.timestamp, offset: r.offset, leaderEpoch: header.apiVersion >= 4 ? r.leaderEpoch : -1 }
          }),
        })),
      }
    }
  }
}
