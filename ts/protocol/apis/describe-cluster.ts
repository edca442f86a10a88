/**
 * DescribeCluster (key 60, KIP-700), v0-v2; every version flexible. The AdminClient's
 * `describeCluster` (and the tools built on it) ask this instead of Metadata.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { describeClusterRequestCodec, type DescribeClusterRequest } from '../messages/describe-cluster-request.js'
import { describeClusterResponseCodec, type DescribeClusterBroker, type DescribeClusterResponse } from '../messages/describe-cluster-response.js'
import { servedCodec } from './api.js'

export type { DescribeClusterRequest, DescribeClusterBroker, DescribeClusterResponse }

export const describeClusterCodec = servedCodec(describeClusterRequestCodec, describeClusterResponseCodec, 0, 2)

/** KIP-919's endpoint types. */
export const EndpointType = { BROKER: 1, CONTROLLER: 2 } as const

/** Kafka's "authorized operations were not asked for". */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648
