/**
 * ConsumerGroupDescribe (key 69, KIP-848), v0-v1 as Kafka 4.4 serves it; flexible from v0: a
 * consumer group's state, epochs, assignor and members with their current and target
 * assignments. The codecs are generated from Kafka's schemas (ts/protocol/messages).
 */
import { consumerGroupDescribeRequestCodec, type ConsumerGroupDescribeRequest } from '../messages/consumer-group-describe-request.js'
import {
  consumerGroupDescribeResponseCodec,
  type ConsumerGroupDescribeResponse,
  type DescribedGroup as ConsumerGroupDescribedGroup,
  type Member as ConsumerGroupDescribedMember,
} from '../messages/consumer-group-describe-response.js'
import { servedCodec } from './api.js'

export type { ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupDescribedGroup, ConsumerGroupDescribedMember }

export const consumerGroupDescribeCodec = servedCodec(consumerGroupDescribeRequestCodec, consumerGroupDescribeResponseCodec, 0, 1)
