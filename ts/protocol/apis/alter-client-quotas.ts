/**
 * AlterClientQuotas (key 49, KIP-546), served v0-v1; flexible from v1. Sets or removes quotas of
 * user / client-id / ip entities (kafka-configs.sh --alter --entity-type users|clients|ips
 * --add-config producer_byte_rate=...). The codecs are generated from Kafka's schemas
 * (ts/protocol/messages); this module names the versions the broker serves.
 */
import { alterClientQuotasRequestCodec, type AlterClientQuotasRequest } from '../messages/alter-client-quotas-request.js'
import { alterClientQuotasResponseCodec, type AlterClientQuotasResponse } from '../messages/alter-client-quotas-response.js'
import { servedCodec } from './api.js'

export type { AlterClientQuotasRequest, AlterClientQuotasResponse }

export const alterClientQuotasCodec = servedCodec(alterClientQuotasRequestCodec, alterClientQuotasResponseCodec, 0, 1)
