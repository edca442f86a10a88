/**
 * DescribeProducers (key 61, KIP-664), served v0; flexible. The active producers of partitions
 * (kafka-transactions.sh describe-producers). The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 */
import { describeProducersRequestCodec, type DescribeProducersRequest } from '../messages/describe-producers-request.js'
import { describeProducersResponseCodec, type DescribeProducersResponse, type PartitionResponse, type ProducerState } from '../messages/describe-producers-response.js'
import { servedCodec } from './api.js'

export type { DescribeProducersRequest, DescribeProducersResponse }
/** One producer's state (Kafka's ProducerState). */
export type ProducerStateDescription = ProducerState
/** One partition's answer (Kafka's PartitionResponse). */
export type DescribeProducersPartition = PartitionResponse

export const describeProducersCodec = servedCodec(describeProducersRequestCodec, describeProducersResponseCodec, 0, 0)
