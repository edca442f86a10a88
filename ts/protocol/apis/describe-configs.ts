/**
 * DescribeConfigs (key 32), v1-v4 (Kafka 4.0 removed v0 and with it isDefault); v4+ flexible.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { describeConfigsRequestCodec, type DescribeConfigsResource, type DescribeConfigsRequest } from '../messages/describe-configs-request.js'
import {
  describeConfigsResponseCodec,
  type DescribeConfigsSynonym,
  type DescribeConfigsResourceResult,
  type DescribeConfigsResult,
  type DescribeConfigsResponse,
} from '../messages/describe-configs-response.js'
import { servedCodec } from './api.js'

export type { DescribeConfigsResource, DescribeConfigsRequest, DescribeConfigsSynonym, DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsResponse }

export const describeConfigsCodec = servedCodec(describeConfigsRequestCodec, describeConfigsResponseCodec, 1, 4)

/** Kafka's ConfigResource.Type codes. */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
  CLIENT_METRICS: 16,
  GROUP: 32,
} as const
