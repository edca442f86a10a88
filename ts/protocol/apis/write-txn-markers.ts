/**
 * WriteTxnMarkers (key 27), v1-v2 as Kafka 4.4; flexible. Sent by a transaction coordinator to
 * the leaders of a transaction's partitions.
 *
 * As Kafka 4.x: Kafka 4.0 removed v0 (KIP-896; its schema says "Version 1 is the new baseline"),
 * so a Kafka 4.4 broker neither serves nor sends it, and the generated codecs do not know it.
 * v2 (KIP-1228) adds each marker's transactionVersion (the transaction's, as the coordinator
 * keeps it): the leader holds a transaction version 2 marker to an epoch strictly above the
 * producer's (its coordinator bumped it at the transaction's end), and a version 0/1 marker (or
 * any from a v1 request, where the field is 0) to one not below it.
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

export const writeTxnMarkersCodec = servedCodec(writeTxnMarkersRequestCodec, writeTxnMarkersResponseCodec, 1, 2)
