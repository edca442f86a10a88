/**
 * DeleteTopics: by name (v1-v5 `topicNames`, v6 `topics` with a name) or by id (v6, name null).
 * Unknown name -> UNKNOWN_TOPIC_OR_PARTITION, unknown id -> UNKNOWN_TOPIC_ID (name null); a topic
 * named twice, or a v6 entry with both or neither of name and id -> INVALID_REQUEST, as Kafka's
 * controller (`ControllerApis.deleteTopics`) does; `__consumer_offsets` -> INVALID_TOPIC_EXCEPTION
 * (an internal topic is not deleted; Kafka's kafka-topics.sh refuses it too). The answer has the
 * shape of the version asked: v6 results carry the topic id, older ones only the name.
 */
import { ZERO_UUID } from '../../protocol/apis/common.js'
import type { DeletableTopicResult, DeleteTopicsRequest, DeleteTopicsResponse } from '../../protocol/apis/delete-topics.js'
import { ErrorCode } from '../../protocol/error-codes.js'
import { TopicError } from '../topic-error.js'
import type { BrokerContext } from './broker-context.js'
import type { ApiHandler } from '../kafka-apis.js'
import { AclOperation, ResourceType } from '../../security/authorizer/acl.js'

export function deleteTopicsHandler(broker: BrokerContext): ApiHandler<DeleteTopicsRequest, DeleteTopicsResponse> {
  return async (request, context) => {
    const { header } = context
    const v6 = header.apiVersion >= 6
    const wanted = v6 ? request.topics : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }))
    // Resolve every mention to a name first, to find duplicates (by name or by id).
    const resolved = wanted.map((t) => {
      if (t.name !== null) return { asked: t, name: t.name, known: broker.visibleTopic(t.name) !== undefined }
      const topic = broker.visibleTopicById(t.topicId)
      return { asked: t, name: topic?.name ?? null, known: topic !== undefined }
    })
    const counts = new Map<string, number>()
    for (const r of resolved) if (r.name !== null) counts.set(r.name, (counts.get(r.name) ?? 0) + 1)

    const responses: DeletableTopicResult[] = []
    for (const r of resolved) {
      const topicId = v6 ? (r.name !== null ? (broker.visibleTopic(r.name)?.topicId ?? r.asked.topicId) : r.asked.topicId) : ZERO_UUID
      const result: DeletableTopicResult = { name: r.name, topicId, errorCode: ErrorCode.NONE, errorMessage: null }
      responses.push(result)
      if (r.asked.name === null && r.asked.topicId.equals(ZERO_UUID)) {
        result.errorCode = ErrorCode.INVALID_REQUEST
        result.errorMessage = 'neither topic name nor id were specified'
      } else if (r.asked.name !== null && !r.asked.topicId.equals(ZERO_UUID)) {
        result.errorCode = ErrorCode.INVALID_REQUEST
        result.errorMessage = 'you may not specify both topic name and topic id'
      } else if (r.name === null) {
        result.errorCode = ErrorCode.UNKNOWN_TOPIC_ID
        result.errorMessage = 'no topic with this id'
      } else if ((counts.get(r.name) ?? 0) > 1) {
        result.errorCode = ErrorCode.INVALID_REQUEST
        result.errorMessage = `topic ${r.name} appears more than once in the request`
      } else if (r.asked.name === null && !broker.auth.authorize(context, AclOperation.DESCRIBE, ResourceType.TOPIC, r.name)) {
        // Kafka's: a topic named by id without DESCRIBE is not told apart from an unknown id.
        result.name = null
        result.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        result.errorMessage = 'Topic authorization failed.'
      } else if (!broker.auth.authorize(context, AclOperation.DELETE, ResourceType.TOPIC, r.name)) {
        result.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        result.errorMessage = 'Topic authorization failed.'
      } else if (!r.known) {
        result.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        result.errorMessage = `no topic ${r.name}`
      } else {
        try {
          await broker.deleteTopic(r.name)
        } catch (err) {
          if (!(err instanceof TopicError)) throw err
          result.errorCode = err.errorCode
          result.errorMessage = err.message
        }
      }
      if (header.apiVersion < 5) result.errorMessage = null
    }
    return { throttleTimeMs: 0, responses }
  }
}
