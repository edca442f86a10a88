/**
 * WriteTxnMarkers (key 27), served v1 only; flexible. Sent by a transaction coordinator to the
 * leaders of a transaction's partitions.
 *
 * As Kafka 4.x: Kafka 4.0 removed v0 (KIP-896; its schema says "Version 1 is the new baseline"),
 * so a Kafka 4.4 broker neither serves nor sends it, and the generated codecs do not know it.
 * v2 (KIP-1228) adds the marker's transactionVersion, so that a leader can hold a transaction
 * version 2 marker to a strictly higher epoch than the producer's; ferrolog runs transaction
 * version 2 (its markers carry the bumped epoch) but does not send or serve v2 yet:
 * transactionVersion stays 0 and a marker's epoch is checked as version 0's (not below the
 * producer's).
 * The codecs are generated from Kafka's schemas (ts/protocol/messages).
 */
import { writeTxnMarkersRequestCodec, type WriteTxnMarkersRequest, type WritableTxnMarker, type WritableTxnMarkerTopic } from '../messages/write-txn-markers-request.js'
import {
  writeTxnMarkersResponseCodec,
  type WriteTxnMarkersResponse,
  type WritableTxnMarkerResult,
  type WritableTxnMarkerTopicResult,
  type WritableTxnMarkerPartitionResult,
} from '../messages/write-txn-markers-response.js'
import { servedCodec } from './api.js'

export type { WriteTxnMarkersRequest, WritableTxnMarker, WritableTxnMarkerTopic, WriteTxnMarkersResponse, WritableTxnMarkerResult, WritableTxnMarkerTopicResult, WritableTxnMarkerPartitionResult }

export const writeTxnMarkersCodec = servedCodec(writeTxnMarkersRequestCodec, writeTxnMarkersResponseCodec, 1, 1)
