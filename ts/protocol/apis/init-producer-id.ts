/**
 * InitProducerId (key 22), served v0-v5; v2+ flexible. v3 (KIP-360) lets a producer bump its epoch
 * by sending the producer id and epoch it has; encoding an older version with either set (they are
 * not ignorable) throws. v6 (KIP-939, two-phase commit) is not served: enable2Pc and
 * keepPreparedTxn stay false, ongoingTxnProducerId and ongoingTxnProducerEpoch -1. The codecs are
 * generated from Kafka's schemas (ts/protocol/messages); this module names the versions served.
 */
import { initProducerIdRequestCodec, type InitProducerIdRequest } from '../messages/init-producer-id-request.js'
import { initProducerIdResponseCodec, type InitProducerIdResponse } from '../messages/init-producer-id-response.js'
import { servedCodec } from './api.js'

export type { InitProducerIdRequest, InitProducerIdResponse }

export const initProducerIdCodec = servedCodec(initProducerIdRequestCodec, initProducerIdResponseCodec, 0, 5)
