/**
 * ListOffsets (ApiKey 2), served v1-v9; v6+ flexible. Kafka 4.0 removed v0 (KIP-896: its old
 * shape, maxNumOffsets and a list of offsets) and so does ferrolog: every client it meets
 * negotiates a newer one (kafkajs 2.2.4 sends v3, @platformatic/kafka v5+, librdkafka and Kafka's
 * clients their newest), and a Kafka 4.4 broker does not serve it either. v10 (a timeout for
 * tiered storage) and v11 are not served. The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 *
 * The timestamp of a request partition is a time or one of the special values of
 * `ListOffsetsTimestamp`; versions 7-9 are the same on the wire as 6.
 */
import { listOffsetsRequestCodec, type ListOffsetsPartition, type ListOffsetsRequest, type ListOffsetsTopic } from '../messages/list-offsets-request.js'
import { listOffsetsResponseCodec, type ListOffsetsPartitionResponse, type ListOffsetsResponse, type ListOffsetsTopicResponse } from '../messages/list-offsets-response.js'
import { servedCodec } from './api.js'

export type { ListOffsetsPartition, ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopic, ListOffsetsTopicResponse }

export const listOffsetsCodec = servedCodec(listOffsetsRequestCodec, listOffsetsResponseCodec, 1, 9)

/** The special timestamps of a ListOffsets request partition. */
export const ListOffsetsTimestamp = {
  LATEST: -1n,
  EARLIEST: -2n,
  /** v7+ */
  MAX_TIMESTAMP: -3n,
  /** v8+ */
  EARLIEST_LOCAL: -4n,
  /** v9+ */
  LATEST_TIERED: -5n,
} as const
