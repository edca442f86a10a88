/**
 * DescribeClientQuotas (key 48, KIP-546), served v0-v1; flexible from v1. The client quotas
 * matching a filter (kafka-configs.sh --describe --entity-type users|clients|ips, which asks it
 * before the users' SCRAM credentials). The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 */
import { describeClientQuotasRequestCodec, type DescribeClientQuotasRequest } from '../messages/describe-client-quotas-request.js'
import { describeClientQuotasResponseCodec, type DescribeClientQuotasResponse } from '../messages/describe-client-quotas-response.js'
import { servedCodec } from './api.js'

export type { DescribeClientQuotasRequest, DescribeClientQuotasResponse }

/** ComponentData.matchType (Kafka's ClientQuotaFilterComponent). */
export const MatchType = { EXACT: 0, DEFAULT: 1, SPECIFIED: 2 } as const

export const describeClientQuotasCodec = servedCodec(describeClientQuotasRequestCodec, describeClientQuotasResponseCodec, 0, 1)
