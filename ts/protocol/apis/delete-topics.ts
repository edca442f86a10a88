/**
 * DeleteTopics (key 20), served v1-v6 (Kafka 4.0 removed v0); v4+ flexible. v1-v5 name topics in
 * topicNames; v6 names each by name or by id in topics. The codecs are generated from Kafka's
 * schemas (ts/protocol/messages); this module names the versions the broker serves.
 */
import { deleteTopicsRequestCodec, type DeleteTopicsRequest, type DeleteTopicState } from '../messages/delete-topics-request.js'
import { deleteTopicsResponseCodec, type DeleteTopicsResponse, type DeletableTopicResult } from '../messages/delete-topics-response.js'
import { servedCodec } from './api.js'

export type { DeleteTopicsRequest, DeleteTopicState, DeleteTopicsResponse, DeletableTopicResult }

export const deleteTopicsCodec = servedCodec(deleteTopicsRequestCodec, deleteTopicsResponseCodec, 1, 6)
