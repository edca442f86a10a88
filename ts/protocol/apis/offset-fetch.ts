/**
 * OffsetFetch (key 9), served v1-v9; v6+ flexible. Kafka 4.0 removed v0 (KIP-896). From v8 one
 * request asks for several groups (KIP-709) and the fields of v1-7 are gone, so a handler answers
 * in the shape of the version asked. Topic ids replace names only in v10 (Kafka 4.1+), not served
 * here, so the topicId of a v8+ group's topics stays all zeroes. The codecs are generated from
 * Kafka's schemas (ts/protocol/messages); this module names the versions the broker serves.
 */
import { offsetFetchRequestCodec, type OffsetFetchRequest, type OffsetFetchRequestTopic, type OffsetFetchRequestGroup, type OffsetFetchRequestTopics } from '../messages/offset-fetch-request.js'
import {
  offsetFetchResponseCodec,
  type OffsetFetchResponse,
  type OffsetFetchResponseTopic,
  type OffsetFetchResponsePartition,
  type OffsetFetchResponseGroup,
  type OffsetFetchResponseTopics,
  type OffsetFetchResponsePartitions,
} from '../messages/offset-fetch-response.js'
import { servedCodec } from './api.js'

export type {
  OffsetFetchRequest,
  OffsetFetchRequestTopic,
  OffsetFetchRequestGroup,
  OffsetFetchRequestTopics,
  OffsetFetchResponse,
  OffsetFetchResponseTopic,
  OffsetFetchResponsePartition,
  OffsetFetchResponseGroup,
  OffsetFetchResponseTopics,
  OffsetFetchResponsePartitions,
}

export const offsetFetchCodec = servedCodec(offsetFetchRequestCodec, offsetFetchResponseCodec, 1, 9)
