/**
 * ListPartitionReassignments (key 46, KIP-455), served v0 as Kafka 4.4; flexible. The
 * reassignments in progress, of every partition (topics null) or of those named:
 * `kafka-reassign-partitions.sh --verify` / `--list` and the admin clients'
 * listPartitionReassignments send it. The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions served.
 */
import { listPartitionReassignmentsRequestCodec, type ListPartitionReassignmentsRequest } from '../messages/list-partition-reassignments-request.js'
import { listPartitionReassignmentsResponseCodec, type ListPartitionReassignmentsResponse } from '../messages/list-partition-reassignments-response.js'
import { servedCodec } from './api.js'

export type { ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse }

export const listPartitionReassignmentsCodec = servedCodec(listPartitionReassignmentsRequestCodec, listPartitionReassignmentsResponseCodec, 0, 0)
