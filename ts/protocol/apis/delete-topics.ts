/**
 * DeleteTopics (key 20), v1-v6 (Kafka 4.0 removed v0); v4+ flexible.
 *
 *   request  v1-v5: topicNames [string], timeoutMs
 *            v6:    topics [name (nullable), topicId], timeoutMs
 *   response throttleTimeMs
 *            responses [name (nullable v6+), topicId v6+, errorCode, errorMessage v5+ (nullable)]
 *
 * v6 names each topic by name or by id. Encoding a version that lacks a field drops it when Kafka
 * marks it ignorable (topicNames, topicId, errorMessage) and throws otherwise (a non-empty
 * `topics` before v6, a null name before v6).
 */
import { ApiKey, type ApiCodec } from './api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 4

export interface DeleteTopicState {
  /** Null to delete by topic id. */
  name: string | null
  /** All zeroes to delete by name. */
  topicId: Buffer
}

export interface DeleteTopicsRequest {
  /** v6+; [] before. */
  topics: DeleteTopicState[]
  /** v1-v5; [] from v6. */
  topicNames: string[]
  timeoutMs: number
}

export interface DeletableTopicResult {
  /** Null (v6+) for a topic asked for by an unknown id. */
  name: string | null
  /** v6+; all zeroes before. */
  topicId: Buffer
  errorCode: number
  /** v5+; null before. */
  errorMessage: string | null
}

export interface DeleteTopicsResponse {
  throttleTimeMs: number
  responses: DeletableTopicResult[]
}

export const deleteTopicsCodec: ApiCodec<DeleteTopicsRequest, DeleteTopicsResponse> = {
  apiKey: ApiKey.DeleteTopics,
  name: 'DeleteTopics',
  minVersion: 1,
  maxVersion: 6,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const topics =
      version >= 6
        ? r.compactArray((r): DeleteTopicState => {
            const topic = { name: r.compactNullableString(), topicId: r.uuid() }
            r.skipTaggedFields()
            return topic
          })
        : []
    const topicNames = version <= 5 ? r.flexStringArray(flexible) : []
    const request = { topics, topicNames, timeoutMs: r.int32() }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 6) {
      w.compactArray(request.topics, (w, topic) => {
        w.compactNullableString(topic.name).uuid(topic.topicId).taggedFields()
      })
    } else {
      if (request.topics.length > 0) cannotCarry('DeleteTopics', version, 'topics (by name or id)')
      w.flexStringArray(flexible, request.topicNames)
    }
    w.int32(request.timeoutMs).endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = r.int32()
    const responses = r.flexStructArray(flexible, (r): DeletableTopicResult => ({
      name: version >= 6 ? r.compactNullableString() : r.flexString(flexible),
      topicId: version >= 6 ? r.uuid() : Buffer.alloc(16),
      errorCode: r.int16(),
      errorMessage: version >= 5 ? r.compactNullableString() : null,
    }))
    r.endStruct(flexible)
    return { throttleTimeMs, responses }
  },

  encodeResponse(w, version, response) {
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    w.flexStructArray(flexible, response.responses, (w, result) => {
      if (version >= 6) {
        w.compactNullableString(result.name).uuid(result.topicId)
      } else {
        if (result.name === null) cannotCarry('DeleteTopics', version, 'a result without a topic name')
        w.flexString(flexible, result.name)
      }
      w.int16(result.errorCode)
      if (version >= 5) w.compactNullableString(result.errorMessage)
    })
    w.endStruct(flexible)
  },
}
