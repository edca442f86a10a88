/**
 * CreateTopics (key 19), v2-v7 (Kafka 4.0 removed v0-v1); v5+ flexible.
 *
 *   request  topics [name, numPartitions, replicationFactor,
 *                    assignments [partitionIndex, brokerIds], configs [name, value (nullable)]]
 *            timeoutMs, validateOnly
 *   response throttleTimeMs
 *            topics [name, topicId v7+, errorCode, errorMessage (nullable),
 *                    numPartitions v5+, replicationFactor v5+,
 *                    configs v5+ (nullable) [name, value (nullable), readOnly, configSource, isSensitive],
 *                    tagged v5+: 0 topicConfigErrorCode]
 *
 * Every field added after v2 is ignorable: encoding an older version drops it.
 */
import type { Reader } from '../reader.js'
import { ApiKey, type ApiCodec } from './api.js'

const FLEXIBLE_FROM = 5
const TAG_TOPIC_CONFIG_ERROR_CODE = 0

export interface CreatableReplicaAssignment {
  partitionIndex: number
  brokerIds: number[]
}

export interface CreatableTopicConfig {
  name: string
  value: string | null
}

export interface CreatableTopic {
  name: string
  /** -1 with manual assignments or for the broker's default. */
  numPartitions: number
  /** -1 with manual assignments or for the broker's default. */
  replicationFactor: number
  assignments: CreatableReplicaAssignment[]
  configs: CreatableTopicConfig[]
}

export interface CreateTopicsRequest {
  topics: CreatableTopic[]
  timeoutMs: number
  validateOnly: boolean
}

export interface CreatableTopicConfigs {
  name: string
  value: string | null
  readOnly: boolean
  configSource: number
  isSensitive: boolean
}

export interface CreatableTopicResult {
  name: string
  /** v7+; all zeroes before. */
  topicId: Buffer
  errorCode: number
  errorMessage: string | null
  /** v5+ (tag 0); 0 before and when absent. */
  topicConfigErrorCode: number
  /** v5+; -1 before. */
  numPartitions: number
  /** v5+; -1 before. */
  replicationFactor: number
  /** v5+; [] before. */
  configs: CreatableTopicConfigs[] | null
}

export interface CreateTopicsResponse {
  throttleTimeMs: number
  topics: CreatableTopicResult[]
}

export const createTopicsCodec: ApiCodec<CreateTopicsRequest, CreateTopicsResponse> = {
  apiKey: ApiKey.CreateTopics,
  name: 'CreateTopics',
  minVersion: 2,
  maxVersion: 7,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const topics = r.flexStructArray(flexible, (r): CreatableTopic => ({
      name: r.flexString(flexible),
      numPartitions: r.int32(),
      replicationFactor: r.int16(),
      assignments: r.flexStructArray(flexible, (r): CreatableReplicaAssignment => ({
        partitionIndex: r.int32(),
        brokerIds: r.flexInt32Array(flexible),
      })),
      configs: r.flexStructArray(flexible, (r): CreatableTopicConfig => ({
        name: r.flexString(flexible),
        value: r.flexNullableString(flexible),
      })),
    }))
    const request = { topics, timeoutMs: r.int32(), validateOnly: r.bool() }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    w.flexStructArray(flexible, request.topics, (w, topic) => {
      w.flexString(flexible, topic.name).int32(topic.numPartitions).int16(topic.replicationFactor)
      w.flexStructArray(flexible, topic.assignments, (w, a) => {
        w.int32(a.partitionIndex).flexInt32Array(flexible, a.brokerIds)
      })
      w.flexStructArray(flexible, topic.configs, (w, c) => {
        w.flexString(flexible, c.name).flexNullableString(flexible, c.value)
      })
    })
    w.int32(request.timeoutMs).bool(request.validateOnly).endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = r.int32()
    const topics = r.flexArray(flexible, (r): CreatableTopicResult => {
      const result: CreatableTopicResult = {
        name: r.flexString(flexible),
        topicId: version >= 7 ? r.uuid() : Buffer.alloc(16),
        errorCode: r.int16(),
        errorMessage: r.flexNullableString(flexible),
        topicConfigErrorCode: 0,
        numPartitions: version >= 5 ? r.int32() : -1,
        replicationFactor: version >= 5 ? r.int16() : -1,
        configs: version >= 5 ? r.compactNullableArray(readConfigs) : [],
      }
      if (flexible) {
        r.readTaggedFields({ [TAG_TOPIC_CONFIG_ERROR_CODE]: (v) => (result.topicConfigErrorCode = v.int16()) })
      }
      return result
    })
    r.endStruct(flexible)
    return { throttleTimeMs, topics }
  },

  encodeResponse(w, version, response) {
    const flexible = version >= FLEXIBLE_FROM
    w.int32(response.throttleTimeMs)
    w.flexArray(flexible, response.topics, (w, topic) => {
      w.flexString(flexible, topic.name)
      if (version >= 7) w.uuid(topic.topicId)
      w.int16(topic.errorCode).flexNullableString(flexible, topic.errorMessage)
      if (version >= 5) {
        w.int32(topic.numPartitions).int16(topic.replicationFactor)
        w.compactNullableArray(topic.configs, (w, c) => {
          w.compactString(c.name).compactNullableString(c.value)
          w.bool(c.readOnly).int8(c.configSource).bool(c.isSensitive).taggedFields()
        })
        const code = topic.topicConfigErrorCode
        w.writeTaggedFields([[TAG_TOPIC_CONFIG_ERROR_CODE, code === 0 ? null : (v) => v.int16(code)]])
      }
    })
    w.endStruct(flexible)
  },
}

function readConfigs(r: Reader): CreatableTopicConfigs {
  const config = {
    name: r.compactString(),
    value: r.compactNullableString(),
    readOnly: r.bool(),
    configSource: r.int8(),
    isSensitive: r.bool(),
  }
  r.skipTaggedFields()
  return config
}
