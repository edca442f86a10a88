// The hand-written codec ferrolog served before issue 25 switched it to the generated one
// (ts/protocol/apis, ts/protocol/messages): kept here only as the baseline of
// bench/protocol-codecs.bench.ts. Nothing in ts/ imports it.
/**
 * Metadata (key 3), v0-v12; v9+ flexible.
 *
 *   request  topics [topicId v10+, name (nullable v10+)]      (topics nullable v1+: all topics)
 *            allowAutoTopicCreation v4+ (true before)
 *            includeClusterAuthorizedOperations v8-v10, includeTopicAuthorizedOperations v8+
 *   response throttleTimeMs v3+
 *            brokers [nodeId, host, port, rack v1+ (nullable)]
 *            clusterId v2+ (nullable), controllerId v1+
 *            topics [errorCode, name (nullable v12+), topicId v10+, isInternal v1+,
 *                    partitions [errorCode, partitionIndex, leaderId, leaderEpoch v7+,
 *                                replicaNodes, isrNodes, offlineReplicas v5+],
 *                    topicAuthorizedOperations v8+]
 *            clusterAuthorizedOperations v8-v10
 *
 * In v0 an empty topics array asks for all topics; from v1 that is a null array and an empty one
 * asks for none. Kafka 4.x also defines v13 (a top-level errorCode); not served yet.
 *
 * Encoding a version that lacks a field drops the field when Kafka marks it ignorable and
 * throws when it does not and the value is not the default (as Kafka's generated code does).
 */
import type { Reader } from '../../ts/protocol/reader.js'
import { ApiKey, type ApiCodec } from '../../ts/protocol/apis/api.js'
import { cannotCarry } from './common.js'

const FLEXIBLE_FROM = 9
/** The "authorized operations were not requested" value of the two bitfields. */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648

export interface MetadataRequestTopic {
  /** v10+; all zeroes before (and when asking by name). */
  topicId: Buffer
  /** Null (v10+) when asking by topic id. */
  name: string | null
}

export interface MetadataRequest {
  /** Null (v1+) for all topics. */
  topics: MetadataRequestTopic[] | null
  /** v4+; true before. */
  allowAutoTopicCreation: boolean
  /** v8-v10; false otherwise. */
  includeClusterAuthorizedOperations: boolean
  /** v8+; false before. */
  includeTopicAuthorizedOperations: boolean
}

export interface MetadataResponseBroker {
  nodeId: number
  host: string
  port: number
  /** v1+; null before. */
  rack: string | null
}

export interface MetadataResponsePartition {
  errorCode: number
  partitionIndex: number
  leaderId: number
  /** v7+; -1 before. */
  leaderEpoch: number
  replicaNodes: number[]
  isrNodes: number[]
  /** v5+; [] before. */
  offlineReplicas: number[]
}

export interface MetadataResponseTopic {
  errorCode: number
  /** Null (v12+) for an unknown topic asked for by id. */
  name: string | null
  /** v10+; all zeroes before (and for an unknown topic asked for by name). */
  topicId: Buffer
  /** v1+; false before. */
  isInternal: boolean
  partitions: MetadataResponsePartition[]
  /** v8+; AUTHORIZED_OPERATIONS_OMITTED before. */
  topicAuthorizedOperations: number
}

export interface MetadataResponse {
  /** v3+; 0 before. */
  throttleTimeMs: number
  brokers: MetadataResponseBroker[]
  /** v2+; null before. */
  clusterId: string | null
  /** v1+; -1 before. */
  controllerId: number
  topics: MetadataResponseTopic[]
  /** v8-v10; AUTHORIZED_OPERATIONS_OMITTED otherwise. */
  clusterAuthorizedOperations: number
}

export const metadataCodec: ApiCodec<MetadataRequest, MetadataResponse> = {
  apiKey: ApiKey.Metadata,
  name: 'Metadata',
  minVersion: 0,
  maxVersion: 12,
  flexibleFrom: FLEXIBLE_FROM,

  decodeRequest(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const readTopic = (r: Reader): MetadataRequestTopic => {
      const topicId = version >= 10 ? r.uuid() : Buffer.alloc(16)
      const name = version >= 10 ? r.flexNullableString(flexible) : r.flexString(flexible)
      return { topicId, name }
    }
    const request: MetadataRequest = {
      topics: version >= 1 ? r.flexNullableStructArray(flexible, readTopic) : r.array(readTopic),
      allowAutoTopicCreation: version >= 4 ? r.bool() : true,
      includeClusterAuthorizedOperations: version >= 8 && version <= 10 ? r.bool() : false,
      includeTopicAuthorizedOperations: version >= 8 ? r.bool() : false,
    }
    r.endStruct(flexible)
    return request
  },

  encodeRequest(w, version, request) {
    const flexible = version >= FLEXIBLE_FROM
    if (request.topics === null && version < 1) cannotCarry('Metadata', version, 'a null topics array (all topics)')
    w.flexNullableStructArray(flexible, request.topics, (w, topic) => {
      if (version >= 10) {
        w.uuid(topic.topicId).flexNullableString(flexible, topic.name)
      } else {
        if (topic.name === null) cannotCarry('Metadata', version, 'a topic without a name')
        w.flexString(flexible, topic.name)
      }
    })
    if (version >= 4) w.bool(request.allowAutoTopicCreation)
    else if (!request.allowAutoTopicCreation) cannotCarry('Metadata', version, 'allowAutoTopicCreation=false')
    if (version >= 8 && version <= 10) w.bool(request.includeClusterAuthorizedOperations)
    else if (request.includeClusterAuthorizedOperations) cannotCarry('Metadata', version, 'includeClusterAuthorizedOperations')
    if (version >= 8) w.bool(request.includeTopicAuthorizedOperations)
    else if (request.includeTopicAuthorizedOperations) cannotCarry('Metadata', version, 'includeTopicAuthorizedOperations')
    w.endStruct(flexible)
  },

  decodeResponse(r, version) {
    const flexible = version >= FLEXIBLE_FROM
    const throttleTimeMs = version >= 3 ? r.int32() : 0
    const brokers = r.flexStructArray(flexible, (r): MetadataResponseBroker => ({
      nodeId: r.int32(),
      host: r.flexString(flexible),
      port: r.int32(),
      rack: version >= 1 ? r.flexNullableString(flexible) : null,
    }))
    const clusterId = version >= 2 ? r.flexNullableString(flexible) : null
    const controllerId = version >= 1 ? r.int32() : -1
    const topics = r.flexStructArray(flexible, (r): MetadataResponseTopic => {
      const errorCode = r.int16()
      const name = version >= 12 ? r.compactNullableString() : r.flexString(flexible)
      const topicId = version >= 10 ? r.uuid() : Buffer.alloc(16)
      const isInternal = version >= 1 ? r.bool() : false
      const partitions = r.flexStructArray(flexible, (r): MetadataResponsePartition => ({
        errorCode: r.int16(),
        partitionIndex: r.int32(),
        leaderId: r.int32(),
        leaderEpoch: version >= 7 ? r.int32() : -1,
        replicaNodes: r.flexInt32Array(flexible),
        isrNodes: r.flexInt32Array(flexible),
        offlineReplicas: version >= 5 ? r.flexInt32Array(flexible) : [],
      }))
      const topicAuthorizedOperations = version >= 8 ? r.int32() : AUTHORIZED_OPERATIONS_OMITTED
      return { errorCode, name, topicId, isInternal, partitions, topicAuthorizedOperations }
    })
    const clusterAuthorizedOperations = version >= 8 && version <= 10 ? r.int32() : AUTHORIZED_OPERATIONS_OMITTED
    r.endStruct(flexible)
    return { throttleTimeMs, brokers, clusterId, controllerId, topics, clusterAuthorizedOperations }
  },

  encodeResponse(w, version, response) {
    // Ignorable (dropped by older versions): throttleTimeMs, rack, clusterId, controllerId,
    // topicId, isInternal, leaderEpoch, offlineReplicas.
    const flexible = version >= FLEXIBLE_FROM
    if (version >= 3) w.int32(response.throttleTimeMs)
    w.flexStructArray(flexible, response.brokers, (w, broker) => {
      w.int32(broker.nodeId).flexString(flexible, broker.host).int32(broker.port)
      if (version >= 1) w.flexNullableString(flexible, broker.rack)
    })
    if (version >= 2) w.flexNullableString(flexible, response.clusterId)
    if (version >= 1) w.int32(response.controllerId)
    w.flexStructArray(flexible, response.topics, (w, topic) => {
      w.int16(topic.errorCode)
      if (version >= 12) {
        w.compactNullableString(topic.name)
      } else {
        if (topic.name === null) cannotCarry('Metadata', version, 'a topic without a name')
        w.flexString(flexible, topic.name)
      }
      if (version >= 10) w.uuid(topic.topicId)
      if (version >= 1) w.bool(topic.isInternal)
      w.flexStructArray(flexible, topic.partitions, (w, p) => {
        w.int16(p.errorCode).int32(p.partitionIndex).int32(p.leaderId)
        if (version >= 7) w.int32(p.leaderEpoch)
        w.flexInt32Array(flexible, p.replicaNodes).flexInt32Array(flexible, p.isrNodes)
        if (version >= 5) w.flexInt32Array(flexible, p.offlineReplicas)
      })
      if (version >= 8) w.int32(topic.topicAuthorizedOperations)
      else if (topic.topicAuthorizedOperations !== AUTHORIZED_OPERATIONS_OMITTED) {
        cannotCarry('Metadata', version, 'topicAuthorizedOperations')
      }
    })
    if (version >= 8 && version <= 10) w.int32(response.clusterAuthorizedOperations)
    else if (response.clusterAuthorizedOperations !== AUTHORIZED_OPERATIONS_OMITTED) {
      cannotCarry('Metadata', version, 'clusterAuthorizedOperations')
    }
    w.endStruct(flexible)
  },
}
