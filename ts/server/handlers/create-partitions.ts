/**
 * CreatePartitions: raises a topic's partition count (`Broker.addPartitions`). A count that is not
 * larger -> INVALID_PARTITIONS; an unknown topic -> UNKNOWN_TOPIC_OR_PARTITION; a topic named
 * twice -> INVALID_REQUEST; manual assignments are accepted only when they name this broker, one
 * list of one broker per new partition (else INVALID_REPLICA_ASSIGNMENT). validateOnly checks
 * without changing anything. One topic may gain at most MAX_PARTITIONS_PER_REQUEST partitions,
 * and the broker's max.broker.partitions holds (POLICY_VIOLATION), as for CreateTopics.
 */
import type { CreatePartitionsRequest, CreatePartitionsResponse, CreatePartitionsTopicResult } from '../../protocol/apis/create-partitions.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function createPartitionsHandler(broker: BrokerContext): ApiHandler<CreatePartitionsRequest, CreatePartitionsResponse> {
  return async (request, context) => {
    // Kafka's: ALTER on each topic.
    const alterable = broker.auth.filterByAuthorized(
      context,
      AclOperation.ALTER,
      ResourceType.TOPIC,
      request.topics.map((t) => t.name),
    )
    const counts = new Map<string, number>()
    for (const t of request.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1)
    const results: CreatePartitionsTopicResult[] = []
    for (const t of request.topics) {
      const result: CreatePartitionsTopicResult = { name: t.name, errorCode: ErrorCode.NONE, errorMessage: null }
      results.push(result)
      try {
        if ((counts.get(t.name) ?? 0) > 1) throw new TopicError(ErrorCode.INVALID_REQUEST, `topic ${t.name} appears more than once in the request`)
        if (!alterable.has(t.name)) throw new TopicError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'The topic authorization is failed.')
        const topic = broker.topics.get(t.name)
        if (!topic) throw new TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `no topic ${t.name}`)
        if (t.count === topic.partitions) throw new TopicError(ErrorCode.INVALID_PARTITIONS, `topic ${t.name} already has ${topic.partitions} partitions`)
        if (t.count < topic.partitions) {
          throw new TopicError(ErrorCode.INVALID_PARTITIONS, `topic ${t.name} has ${topic.partitions} partitions, more than the requested ${t.count}`)
        }
        if (t.assignments !== null) {
          const added = t.count - topic.partitions
          const ok = t.assignments.length === added && t.assignments.every((a) => a.brokerIds.length === 1 && a.brokerIds[0] === broker.config.nodeId)
          if (!ok) {
            throw new TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `the ${added} new partitions need one assignment each, naming broker ${broker.config.nodeId} only`)
          }
        }
        await broker.addPartitions(t.name, t.count, request.validateOnly)
      } catch (err) {
        if (!(err instanceof TopicError)) throw err
        result.errorCode = err.errorCode
        result.errorMessage = err.message
      }
    }
    return { throttleTimeMs: 0, results }
  }
}
