/**
 * DescribeGroups (key 15), v0-v6; v5+ flexible.
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { describeGroupsRequestCodec, type DescribeGroupsRequest } from '../messages/describe-groups-request.js'
import { describeGroupsResponseCodec, type DescribedGroupMember, type DescribedGroup, type DescribeGroupsResponse } from '../messages/describe-groups-response.js'
import { servedCodec } from './api.js'

export type { DescribeGroupsRequest, DescribedGroupMember, DescribedGroup, DescribeGroupsResponse }

export const describeGroupsCodec = servedCodec(describeGroupsRequestCodec, describeGroupsResponseCodec, 0, 6)

/** The "authorized operations were not requested" value of authorizedOperations. */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648
