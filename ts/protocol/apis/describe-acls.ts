/**
 * DescribeAcls (key 29), v1-v3; v2+ flexible (v0 left Kafka in 4.0).
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { describeAclsRequestCodec, type DescribeAclsRequest } from '../messages/describe-acls-request.js'
import { describeAclsResponseCodec, type DescribeAclsResponse } from '../messages/describe-acls-response.js'
import { servedCodec } from './api.js'

export type { DescribeAclsRequest, DescribeAclsResponse }

export const describeAclsCodec = servedCodec(describeAclsRequestCodec, describeAclsResponseCodec, 1, 3)
