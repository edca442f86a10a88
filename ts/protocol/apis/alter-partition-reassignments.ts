/**
 * AlterPartitionReassignments (key 45, KIP-455), served v0-v1 as Kafka 4.4; every version
 * flexible; v1 adds AllowReplicationFactorChange (KIP-860). Moves a partition's replicas to
 * other brokers, or cancels a move in progress (replicas null): `kafka-reassign-partitions.sh
 * --execute` and the admin clients' alterPartitionReassignments send it. The codecs are
 * generated from Kafka's schemas (ts/protocol/messages); this module names the versions served.
 */
import { alterPartitionReassignmentsRequestCodec, type AlterPartitionReassignmentsRequest } from '../messages/alter-partition-reassignments-request.js'
import { alterPartitionReassignmentsResponseCodec, type AlterPartitionReassignmentsResponse } from '../messages/alter-partition-reassignments-response.js'
import { servedCodec } from './api.js'

export type { AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse }

export const alterPartitionReassignmentsCodec = servedCodec(alterPartitionReassignmentsRequestCodec, alterPartitionReassignmentsResponseCodec, 0, 1)
