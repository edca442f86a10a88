/**
 * DeleteRecords: raises each partition's log start offset to the given offset (-1: the high
 * watermark) and answers the new low watermark. An offset above the high watermark, or below -1,
 * -> OFFSET_OUT_OF_RANGE; an offset below the log start changes nothing and answers the current
 * one, as Kafka does.
 */
import type { DeleteRecordsRequest, DeleteRecordsResponse } from '../../protocol/apis/delete-records.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function deleteRecordsHandler(broker: BrokerContext): ApiHandler<DeleteRecordsRequest, DeleteRecordsResponse> {
  return (request, context) => {
    // Kafka's: DELETE on each topic, else TOPIC_AUTHORIZATION_FAILED (before telling whether it exists).
    const deletable = broker.auth.filterByAuthorized(
      context,
      AclOperation.DELETE,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    )
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          if (!deletable.has(t.name)) return { partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED }
          if (p.offset < -1n) return { partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE }
          const { errorCode, lowWatermark } = broker.replicaManager.deleteRecords({ topic: t.name, partition: p.partitionIndex }, p.offset)
          return { partitionIndex: p.partitionIndex, lowWatermark, errorCode }
        }),
      })),
    }
  }
}
