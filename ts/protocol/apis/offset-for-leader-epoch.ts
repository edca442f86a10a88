/**
 * OffsetForLeaderEpoch (key 23), v2-v4 (Kafka 4.0 removed v0-v1); v4+ flexible.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { offsetForLeaderEpochRequestCodec, type OffsetForLeaderPartition, type OffsetForLeaderTopic, type OffsetForLeaderEpochRequest } from '../messages/offset-for-leader-epoch-request.js'
import { offsetForLeaderEpochResponseCodec, type EpochEndOffset, type OffsetForLeaderTopicResult, type OffsetForLeaderEpochResponse } from '../messages/offset-for-leader-epoch-response.js'
import { servedCodec } from './api.js'

export type { OffsetForLeaderPartition, OffsetForLeaderTopic, OffsetForLeaderEpochRequest, EpochEndOffset, OffsetForLeaderTopicResult, OffsetForLeaderEpochResponse }

export const offsetForLeaderEpochCodec = servedCodec(offsetForLeaderEpochRequestCodec, offsetForLeaderEpochResponseCodec, 2, 4)

export const CONSUMER_REPLICA_ID = -1

export const DEBUGGING_REPLICA_ID = -2
