/**
 * CreateTopics (key 19), v2-v7 (Kafka 4.0 removed v0-v1); v5+ flexible.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { createTopicsRequestCodec, type CreatableReplicaAssignment, type CreatableTopicConfig, type CreatableTopic, type CreateTopicsRequest } from '../messages/create-topics-request.js'
import { createTopicsResponseCodec, type CreatableTopicConfigs, type CreatableTopicResult, type CreateTopicsResponse } from '../messages/create-topics-response.js'
import { servedCodec } from './api.js'

export type { CreatableReplicaAssignment, CreatableTopicConfig, CreatableTopic, CreateTopicsRequest, CreatableTopicConfigs, CreatableTopicResult, CreateTopicsResponse }

export const createTopicsCodec = servedCodec(createTopicsRequestCodec, createTopicsResponseCodec, 2, 7)
